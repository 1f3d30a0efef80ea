"""Deep nesting (#30): bcfront's own recursion (wrapping an input, modelling a fold,
rebuilding a value, generating a guard) never leaks out as an internal error or a wrong
result.  An input nested deeper than ``NESTING_LIMIT`` is a graph break named
``nesting-depth`` (in ``explain``; under ``fullgraph=True`` a GraphBreakError), a
RecursionError of bcfront's own in the trace breaks at its instruction, one past the
trace runs the call natively (fallback ``nesting-depth``).  The native code then runs
with the recursion limit raised by bcfront's own frames, so it raises RecursionError at
exactly the depth plain Python does: both sides of that boundary are checked.  The
oracle is always the plain function.
"""

from __future__ import annotations

import copy
import json
import sys
import warnings

import pytest

import bcfront
from bcfront.errors import GraphBreakError
from bcfront.frontend.model.builder import NESTING_LIMIT


def nest(n):
    x: list = []
    for _ in range(n):
        x = [x]
    return x


def depth_of(x):  # no recursion of its own: captured whole while the input is shallow
    n = 0
    while x:
        x = x[0]
        n += 1
    return n


def recursive_depth(x):
    return 1 + recursive_depth(x[0]) if x else 0


def loads(text):
    return json.loads(text)


def deep_copy(x):
    return copy.deepcopy(x)


def built_repr_length(n):  # a list nested n deep made in the trace, then its repr
    x: list = []
    for _ in range(n):
        x = [x]
    return len(repr(x))


def counting(n):
    return 0 if n == 0 else 1 + counting(n - 1)


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except RecursionError:
        return "RecursionError"


def test_an_input_up_to_the_limit_is_captured_whole():
    x = nest(NESTING_LIMIT - 2)
    assert bcfront.capture(depth_of, fullgraph=True)(x) == depth_of(x)


def test_an_input_past_the_limit_is_a_named_break():
    x = nest(NESTING_LIMIT + 50)
    with pytest.raises(GraphBreakError, match="nesting-depth"):
        bcfront.capture(depth_of, fullgraph=True)(x)
    cf = bcfront.capture(depth_of)
    for _ in range(2):
        assert cf(x) == depth_of(x)
    text = str(bcfront.explain(depth_of, x))
    assert "nesting-depth" in text and "internal-error" not in text, text


CASES = [
    (recursive_depth, lambda: nest(500)),
    (loads, lambda: "[" * 500 + "]" * 500),
    (loads, lambda: "[" * 5000 + "]" * 5000),  # RecursionError natively
    (deep_copy, lambda: nest(300)),
    (deep_copy, lambda: nest(700)),  # RecursionError natively
    (built_repr_length, lambda: 900),
    (built_repr_length, lambda: 5000),  # RecursionError natively
]


@pytest.mark.parametrize("fn, make_arg", CASES, ids=[f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(CASES)])
def test_deep_values_give_the_native_outcome_and_no_internal_error(fn, make_arg):
    want = _outcome(fn, make_arg())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cf = bcfront.capture(fn)
        for _ in range(2):
            assert _outcome(cf, make_arg()) == want
    assert not [w for w in caught if "internal error" in str(w.message)]


def _both_sides(fn, captured) -> list:
    """Outcomes of `fn` and of `captured()` (a captured `fn`) at the largest n for which
    ``fn(n)`` does not raise RecursionError and at n + 1, every call made from this frame
    (at the same depth)."""
    lo, hi = 1, 20_000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _outcome(fn, mid) == "RecursionError":
            hi = mid - 1
        else:
            lo = mid
    sides = []
    for n in (lo, lo + 1):
        sides.append((_outcome(fn, n), _outcome(captured(), n)))
    return sides


BOUNDARY_CASES = [counting, built_repr_length]


@pytest.mark.parametrize("fn", BOUNDARY_CASES, ids=[fn.__name__ for fn in BOUNDARY_CASES])
def test_the_native_run_raises_recursion_error_exactly_where_python_does(fn):
    if fn is built_repr_length and sys.version_info >= (3, 12):
        pytest.skip("3.12+'s C recursion limit is fixed: bcfront's own C calls cost some of it")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a fresh capture each call: the first call's path (its region's native call)
        (below, below_captured), (above, above_captured) = _both_sides(fn, lambda: bcfront.capture(fn))
    assert below[0] == "ok" and below_captured == below
    assert above == above_captured == "RecursionError"


def test_a_cached_entry_runs_out_of_stack_where_python_does():
    cached = bcfront.capture(counting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cached(3), cached(4)
        sides = _both_sides(counting, lambda: cached)
    (below, below_captured), (above, above_captured) = sides
    assert below[0] == "ok" and above == "RecursionError"
    if sys.version_info >= (3, 12):
        assert below_captured == below and above_captured == above
    else:  # 3.11 counts the C call of a captured function or not by how its class
        # dispatches (tp_call or vectorcall), which its frames do not show: within one level
        assert below_captured == below or above_captured == above
