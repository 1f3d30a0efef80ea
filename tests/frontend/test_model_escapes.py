"""No internal model reaches real code; builtins bind and fail as CPython does (#30).

A symbolic iterator's or generator's methods taken as values (``n = it.__next__``)
must be callables that work in real code too, e.g. after a graph break or when
returned; ``max(xs, key=None)`` means no key; a failed binding names the function
by its ``__qualname__``.  Oracle: the same function, run natively.  Each case runs
under ``fullgraph=False`` and ``fullgraph=True`` (where it captures whole).
"""

from __future__ import annotations

import dataclasses
import graphlib
import heapq
from collections import namedtuple

import pytest

import bcfront

from .outcomes import assert_same_outcome, quiet_outcome


def next_as_value(xs):
    n = iter(xs).__next__
    return n(), n()


def next_called_directly(xs):
    it = iter(xs)
    return it.__next__(), it.__iter__() is it


def next_of_enumerate(xs):
    n = enumerate(xs).__next__
    return n()


def next_with_argument(xs):
    return iter(xs).__next__(1)


def next_runs_out(xs):
    n = iter(xs[:1]).__next__
    n()
    return n()


def gen_send_as_value(xs):
    g = (x * 2 for x in xs)
    send = g.send
    return send(None), next(g)


def next_escapes(xs):
    return iter(xs).__next__  # handed back to real code: must be a working method


def heapq_merge(a, b):
    return list(heapq.merge(a, b))


def static_order(xs):
    return list(graphlib.TopologicalSorter({"a": {"b"}, "b": set(xs)}).static_order())


def max_min_key_none(xs):
    return max(xs, key=None), min(xs, key=None), max(*xs, key=None)


def nlargest(xs):
    return heapq.nlargest(2, xs), heapq.nsmallest(2, xs, key=None)


def max_empty(xs):
    return max(xs[:0])


def max_bad_default(xs):
    return max(1, 2, default=3)


def enumerate_no_args(xs):
    return type(enumerate(xs))()


def list_class_called(xs):
    return list(xs).__class__(xs), type(xs).__name__


P = namedtuple("P", "x y")


@dataclasses.dataclass
class Pt:
    x: int


def namedtuple_bind_error(xs):
    return P(1, 2, 3)


def dataclass_bind_error(xs):
    return Pt(1, z=3)


def renamed_bind_error(xs):
    def f(a):
        return a

    f.__qualname__ = "Renamed.method"
    return f(1, 2)


CASES = [
    next_as_value,
    next_called_directly,
    next_of_enumerate,
    next_with_argument,
    next_runs_out,
    gen_send_as_value,
    heapq_merge,
    static_order,
    max_min_key_none,
    nlargest,
    max_empty,
    max_bad_default,
    list_class_called,
    namedtuple_bind_error,
    dataclass_bind_error,
    renamed_bind_error,
]


def _args(fn):
    return ([1, 3], [2, 4]) if fn is heapq_merge else (["c"],) if fn is static_order else ([3, 1, 2],)


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_same_as_native(fn, fullgraph):
    want = quiet_outcome(fn, *_args(fn))
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    for _ in range(2):
        assert_same_outcome(quiet_outcome(cf, *_args(fn)), want)


def test_escaped_next_is_a_working_method():
    got = bcfront.capture(next_escapes)([5, 6])
    assert (got(), got()) == (5, 6)
    with pytest.raises(StopIteration):
        got()


def test_constructor_called_wrong_runs_natively(lenient):
    want = quiet_outcome(enumerate_no_args, [1])
    assert_same_outcome(quiet_outcome(bcfront.capture(enumerate_no_args), [1]), want)
