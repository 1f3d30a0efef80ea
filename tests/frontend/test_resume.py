"""Continuations that cross a break with iterators, comprehensions and 3.12+/3.13 layouts.

Pure Python (3.11-3.13, no torch).  Each case is a small function whose
breaks (`print`) sit where the continuation has to rebuild an iterator, a
comprehension's hidden stack or an exception-table entry.  Oracle: the same
function run by CPython on a deep copy of the arguments -- result, printed
output, exception and the arguments afterwards must agree.  `test_validate`
checks the continuation validator against CPython's own stack effects.
"""
from __future__ import annotations

import contextlib
import copy
import io

import pytest

import bcfront

CASES: dict = {}


def case(*calls):
    def register(fn):
        CASES[fn.__name__] = (fn, list(calls))
        return fn
    return register


@case(([],), ([1],), ([1, 2],))
def loop_over_appended_list(xs):
    """O3: the list grew before the loop; the iterator index must not be clamped."""
    xs.append(0)
    for c in xs:
        print(end="|")
    return xs


@case(([0],), ([],))
def exhausted_iterator_stays_exhausted(xs):
    """A list iterator run to its end ignores items appended later."""
    it = iter(xs)
    for _ in it:
        pass
    xs.append(1)
    print(end="")
    return list(it)


@case(([0, 1],),)
def iterator_advanced_after_growth(xs):
    """The rebuilt position is past the list's length before the appends are replayed."""
    it = iter(xs)
    next(it)
    xs.extend([5, 6])
    next(it)
    next(it)
    print(end="")
    return list(it), xs


def _run(fn, args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            out = ("ok", fn(*args))
        except Exception as e:  # compared with the oracle's
            out = ("raise", type(e), str(e))
    return out, buf.getvalue(), args


@pytest.mark.parametrize("name", sorted(CASES))
def test_continuation_matches_python(name):
    fn, calls = CASES[name]
    cf = bcfront.capture(fn)
    for args in calls + calls[:1]:
        expected = _run(fn, copy.deepcopy(args))
        assert _run(cf, copy.deepcopy(args)) == expected, f"{name}{args}"


def test_outside_exhausted_iterator_replayed_to_its_end():
    def f(it, xs):
        for _ in it:
            pass
        xs.append(1)
        return it

    xs = [0]
    it = bcfront.capture(f)(iter(xs), xs)
    assert list(it) == [] and xs == [0, 1]
