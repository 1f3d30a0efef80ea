"""Breaks while closures share the function's cells (pure Python, 3.11-3.13, no torch).

The closure cases of `corpus_breaks` stay compiled: the region before the
break is a graph entry, the continuation is captured (not a native fallback),
and calling again with the same arguments reuses every entry -- the cells are
new objects per call, so a guard on their identity would recompile each time.
Oracle: CPython running the function (results, printed output, in
`test_breaks.test_break_matches_python`; here also the closure's later calls).
"""

from __future__ import annotations

import contextlib
import io

import pytest

import bcfront

from . import corpus_breaks

CLOSURE_CASES = [
    "closure_made_before_break",
    "nonlocal_writes_both_sides",
    "recursive_closure",
    "cell_bound_after_break",
    "closure_made_after_break",
    "closure_escapes",
    "two_breaks_shared_cell",
    "parameter_cell_shared",
    "closure_in_default",
]


def _quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()) as buf:
        return fn(*args), buf.getvalue()


def walk(cf, seen=None):
    """Every captured function reachable from `cf` through its entries' children."""
    seen = set() if seen is None else seen
    if id(cf) in seen:
        return []
    seen.add(id(cf))
    out = [cf]
    for e in cf.entries:
        for c in e.children:
            out += walk(c, seen)
    return out


@pytest.mark.parametrize("name", CLOSURE_CASES)
def test_closure_case_stays_compiled_without_recompiles(name):
    fn = corpus_breaks.CASES[name].fn
    cf = bcfront.capture(fn)
    for _ in range(4):
        assert _quiet(cf, 3) == _quiet(fn, 3)
    funcs = walk(cf)
    assert len(funcs) >= 2, "no continuation"
    for f in funcs:
        assert len(f.entries) == 1, f"{f.__qualname__}: {[r.reason for r in f.recompiles]}"
        assert not f.entries[0].native, f"{f.__qualname__}: {f.entries[0].notes}"


def test_closure_sees_continuation_writes_after_return():
    """The closure escapes; later calls of it (outside the function) see the same cell the
    continuation wrote, exactly as with the original function."""

    def make(x):
        n = x

        def get_and_bump():
            nonlocal n
            n += 1
            return n

        print("made")
        n = n * 10
        return get_and_bump

    cf = bcfront.capture(make)
    for x in (1, 2, 2):
        (g_ref, _), (g_cap, _) = _quiet(make, x), _quiet(cf, x)
        assert [g_ref() for _ in range(3)] == [g_cap() for _ in range(3)]
    assert not cf.entries[0].native and cf.entries[0].children


def test_nested_closure_chain_over_two_levels():
    """A closure made in the continuation closes over a closure made before the break."""

    def f(x):
        base = x
        inner = lambda: base + 1  # noqa: E731 - the subject's closure is a lambda
        print("b", base)
        outer = lambda: inner() * 2  # noqa: E731 - the subject's closure is a lambda
        base = base + 10
        return outer(), inner(), base

    cf = bcfront.capture(f)
    for x in (1, 1, 4):
        assert _quiet(cf, x) == _quiet(f, x)
    assert not any(e.native for g in walk(cf) for e in g.entries)


def test_break_inside_closure_call_shares_cells():
    """The break happens inside the closure (an inlined callee): the root's cells reach both
    the callee captured on its own and the continuation after the call."""

    def f(x):
        count = x

        def tick():
            nonlocal count
            count += 1
            print("tick", count)
            return count

        a = tick()
        b = tick()
        return a, b, count

    cf = bcfront.capture(f)
    for x in (0, 0, 5):
        assert _quiet(cf, x) == _quiet(f, x)
    assert not cf.entries[0].native


def test_empty_cell_at_capture_then_full_recompiles():
    """A continuation captured with an empty shared cell must not run with a full one: the
    emptiness is guarded (a read then raises NameError natively either way)."""

    def f(flag):
        def get():
            return v

        if flag:
            v = 1
        print("p")
        try:
            return get()
        except NameError as e:
            return str(e)

    cf = bcfront.capture(f)
    for flag in (False, True, False, True):
        assert _quiet(cf, flag) == _quiet(f, flag)


def test_closure_callee_breaking_is_not_captured_once_per_call():
    """A closure made per call that breaks inside: a capture per function object would grow
    without bound; after a couple the call site runs it natively (results still match)."""

    def f(x):
        def tick(v):
            print("tick", v)
            return v + x

        return tick(x) * 2

    cf = bcfront.capture(f)
    for _ in range(6):
        assert _quiet(cf, 1) == _quiet(f, 1)
    ticks = [g for g in walk(cf) if g.__qualname__.endswith("<locals>.tick")]
    assert 1 <= len(ticks) <= 2, [g.__qualname__ for g in walk(cf)]


def test_closures_in_a_list_cross_the_break_without_recompiles():
    """Closures made per call inside a list (and a tuple) passed to the continuation are
    guarded by code, item by item: no recompile per call."""

    def f(x):
        fs = [lambda: x + 1, lambda: x * 2]
        pair = (fs[0], (lambda v: v - x,))
        print("made", len(fs))
        fs.append(lambda: 0)
        return [g() for g in fs], pair[1][0](10)

    cf = bcfront.capture(f)
    for _ in range(4):
        assert _quiet(cf, 3) == _quiet(f, 3)
    for g in walk(cf):
        assert len(g.entries) == 1, f"{g.__qualname__}: {[r.reason for r in g.recompiles]}"
        assert not g.entries[0].native
