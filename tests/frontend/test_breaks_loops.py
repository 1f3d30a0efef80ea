"""Breaks inside loops: continuations as tail calls (pure Python, 3.11-3.13, no torch).

A break inside a loop reaches the same continuation on every iteration; the
continuations run as tail calls (`frontend.regions.tailcalls`), so the stack depth
does not grow per iteration: 10,000 iterations with a break each work under
a low recursion limit.  Oracle: CPython running the same function (results,
printed output in order, exceptions).
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading

import bcfront
from bcfront.frontend.regions.tailcalls import LOOP_RECAPTURES

from .outcomes import quiet_outcome
from .test_breaks_cells import walk


def _quiet(fn, *args):
    return quiet_outcome(fn, *args)


@contextlib.contextmanager
def recursion_limit(n):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(n)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def loop_with_print(n):
    total = 0
    for i in range(n):
        total += i
        print(i % 7, end="")
        total ^= i
    return total


def while_with_two_breaks(n):
    k, acc = 0, []
    while k < n:
        print("a", end="")
        acc.append(k)
        print("b", end="")
        k += 1
    return len(acc), k


def test_ten_thousand_iterations_under_low_recursion_limit():
    cf = bcfront.capture(loop_with_print)
    expected = _quiet(loop_with_print, 10_000)
    with recursion_limit(250):  # a frame or more per iteration would overflow at once
        for _ in range(2):
            assert _quiet(cf, 10_000) == expected
    assert not cf.entries[0].native and cf.entries[0].children


def test_two_breaks_per_iteration():
    cf = bcfront.capture(while_with_two_breaks)
    with recursion_limit(250):
        for n in (3, 2000, 3):
            assert _quiet(cf, n) == _quiet(while_with_two_breaks, n)


def test_loop_recaptures_are_bounded():
    """An int loop counter changes the guards every iteration: after a few captures from
    inside its own loop the continuation runs the rest of the loop natively -- it does not
    recompile per iteration, no recompile-limit warning is issued, and the native rest of the
    loop is reported once (a loop-limit fallback, one NativeFallbackWarning)."""
    import warnings

    from bcfront.report import FallbackKind, NativeFallbackWarning

    cf = bcfront.capture(loop_with_print)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert _quiet(cf, 50) == _quiet(loop_with_print, 50)
        counts = [len(f.entries) for f in walk(cf)]
        for _ in range(2):
            assert _quiet(cf, 50) == _quiet(loop_with_print, 50)
    kinds = [(w.category, str(w.message)) for w in seen]
    assert len(kinds) == 1 and kinds[0][0] is NativeFallbackWarning, kinds
    assert f"[{FallbackKind('loop-limit')}" in kinds[0][1], kinds
    assert [len(f.entries) for f in walk(cf)] == counts  # nothing recaptured
    for f in walk(cf)[1:]:
        assert len(f.entries) <= 1 + LOOP_RECAPTURES, f.__qualname__


def test_exception_from_a_later_iteration_propagates():
    def f(n):
        out = []
        for i in range(n):
            print(i, end="")
            if i == 3:
                raise ValueError(f"at {i}")
            out.append(i)
        return out

    cf = bcfront.capture(f)
    for n in (2, 6, 6):
        assert _quiet(cf, n) == _quiet(f, n)


def test_break_in_loop_inside_try_finally_runs_finally_once():
    def f(n):
        log = []
        try:
            for i in range(n):
                print(i, end="")
                log.append(i)
        finally:
            log.append("fin")
        return log

    cf = bcfront.capture(f)
    with recursion_limit(250):
        for n in (0, 3, 1000):
            assert _quiet(cf, n) == _quiet(f, n)


REC = {}


def walk_tree(node, depth):
    total = 0
    for child in node:
        print(depth, end="")
        total += 1 + REC["f"](child, depth + 1)
    return total


def test_recursive_captured_function_with_loop_break():
    """A captured function calling itself (through a global) inside a loop with a break:
    each level runs its own chain of continuations."""
    tree = [[[], [[]]], [], [[[]]], [[[[[]]]]]]
    REC["f"] = walk_tree
    expected = _quiet(walk_tree, tree, 0)
    REC["f"] = bcfront.capture(walk_tree, recompile_limit=64)  # each subtree specializes
    try:
        for _ in range(3):
            assert _quiet(REC["f"], tree, 0) == expected
    finally:
        REC.clear()


def test_threads_share_a_looping_continuation():
    cf = bcfront.capture(loop_with_print)
    with contextlib.redirect_stdout(io.StringIO()):
        expected = loop_with_print(300)
    results, errors = [], []

    def worker():
        try:
            for _ in range(5):
                results.append(cf(300))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    with contextlib.redirect_stdout(io.StringIO()):
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and results == [expected] * 20
