"""Guard soundness along a sequence of states: the protocol of the ``test_guard_soundness_*``
files split by theme from issue 25's extra cases (module state and hooks, torch global
state, identity relations between arguments, symbolic sizes, closures/defaults/globals,
exceptions that appear on a later call).

Each case is a function, a sequence of states `seq`, and per state `v`: `setup(v)` (idempotent:
puts the shared state, a module or a torch flag, in state v), `make(v)` (fresh arguments, built
identically for each side), `ctx(v)` (a context the call runs in) and `observe()` (a global side
effect read after the call, e.g. the RNG stream or a hook's log).  For each state the plain
function runs, then the captured one, on identically rebuilt state; their results or exceptions,
their arguments afterwards (input mutation, aliasing) and what `observe` reads must agree.  The
sequence goes back and forth (capture, cached call, change, change back), and dynamic-size cases
walk through three or more sizes so that a dimension is symbolic before it hits 0, 1, a parity
or a sign change.  `sequence_tests` makes a file's two tests: every case is never stale, and
along each sequence the plain function's outcome really changes.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import bcfront
from bcfront.testing.differential import diff

from .helpers import HAS_TORCH, outcome

if HAS_TORCH:
    import torch


def noop(*_a):
    return None


def no_ctx(_v):
    return contextlib.nullcontext()


@dataclass(frozen=True)
class Case:
    fn: Callable
    make: Callable[[Any], tuple]
    seq: tuple
    setup: Callable[[Any], None] = noop
    ctx: Callable[[Any], Any] = no_ctx
    observe: Callable[[], Any] = noop
    restore: Callable[[], None] = noop


def ab(a, b):
    """Capture on a, cached call, change to b, cached call, back to a."""
    return (a, a, b, b, a)


def sizes_case(fn, sizes, make=lambda n: torch.arange(float(n))):
    """`fn` on ``make(n)`` for each size in turn."""
    return Case(fn, lambda n: (make(n),), tuple(sizes))


def int_arg_case(fn, values, make=lambda: torch.arange(12.0)):
    """`fn` on a fresh ``make()`` and each int in turn."""
    return Case(fn, lambda n: (make(), n), tuple(values))


def one_call(fn, case: Case, v):
    case.setup(v)
    args = case.make(v)
    with case.ctx(v):
        out = outcome(fn, *args)
    return out, args, case.observe()


def run_case(name: str, case: Case, compile_fn=bcfront.capture) -> None:
    """Every state of `case` in turn: plain and `compile_fn(case.fn)` agree (the reference
    run passes ``torch.compile(backend="eager")``)."""
    cf = compile_fn(case.fn)
    try:
        for i, v in enumerate(case.seq):
            expected = one_call(case.fn, case, v)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                actual = one_call(cf, case, v)
            internal = [str(w.message) for w in caught if "internal error" in str(w.message)]
            assert not internal, f"{name}, call {i} ({v!r}): internal error: {internal[0]}"
            problem = diff(expected, actual)
            assert problem is None, f"{name}, call {i} ({v!r}): captured differs from plain {problem}"
    finally:
        case.restore()


def sequence_tests(cases: dict[str, Callable[[], Case]], open_bugs: dict[str, str] | None = None):
    """The two tests of a file of cases (name -> maker); `open_bugs`: case name -> reason, for
    cases that expose an open bug (strict xfail; docs/known-bugs.md)."""
    bugs = open_bugs or {}
    params = [
        pytest.param(n, marks=(pytest.mark.xfail(strict=True, reason=bugs[n]),) if n in bugs else ())
        for n in sorted(cases)
    ]

    @pytest.mark.parametrize("name", params)
    def never_stale(name):
        run_case(name, cases[name]())

    @pytest.mark.parametrize("name", sorted(cases))
    def depends_on_its_state(name):
        """Along the sequence the plain function's outcome really changes (else no staleness shows)."""
        case = cases[name]()
        try:
            seen = [one_call(case.fn, case, v) for v in case.seq]
        finally:
            case.restore()
        assert any(diff(seen[0], s) is not None for s in seen[1:]), f"{name}: the sequence changes nothing"

    return never_stale, depends_on_its_state
