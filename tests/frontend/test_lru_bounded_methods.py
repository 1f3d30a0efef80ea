"""A bounded ``lru_cache`` function is traced through only when its result, made again,
differs from the object a cache hit returns only by identity: a tuple (or namedtuple) of
constants, a frozenset, a C method bound to an object that never changes (fnmatch's cached
``re.compile(p).match``).  A result that can change -- a list, a tuple holding one, an
instance of a tuple subclass with a ``__dict__``, a method bound to a dict -- breaks, since
natively a change made through one call's result is seen by the next call's."""

from __future__ import annotations

import collections
import fnmatch
import functools
import re

import pytest

import bcfront
from bcfront.errors import GraphBreakError


@functools.lru_cache(maxsize=4)
def _matcher(pattern):
    return re.compile(pattern).match


def _matches(pattern, name):
    return _matcher(pattern)(name) is not None


@functools.lru_cache(maxsize=4)
def _getter(keys):
    return dict.fromkeys(keys, 1).__getitem__  # bound to a dict: it can change


def _get(keys, k):
    return _getter(keys)(k)


@pytest.mark.parametrize(
    "fn, calls",
    [
        (_matches, [("a+b", "aab"), ("a+b", "b"), ("x.*", "xy")]),
        (fnmatch.fnmatch, [("a.py", "*.py"), ("a.txt", "*.py"), ("B.PY", "*.py")]),
        (fnmatch.filter, [(["a.py", "b.c", "c.py"], "*.py")]),
    ],
    ids=["own-matcher", "fnmatch.fnmatch", "fnmatch.filter"],
)
def test_a_bounded_cache_returning_an_immutable_objects_c_method_captures_whole(fn, calls):
    cf = bcfront.capture(fn, fullgraph=True)
    for args in calls * 2:  # the second round: cached entries
        assert cf(*args) == fn(*args)


def test_a_method_bound_to_a_mutable_object_still_breaks():
    cf = bcfront.capture(_get, fullgraph=True)
    with pytest.raises(GraphBreakError, match="a bounded cache returning an object"):
        cf(("a", "b"), "a")
    assert bcfront.capture(_get)(("a", "b"), "a") == _get(("a", "b"), "a") == 1


Pair = collections.namedtuple("Pair", "n s")


@functools.lru_cache(maxsize=4)
def _constants(n):
    return (n, "a", (n, 2.0), frozenset({1, n}), Pair(n, str(n)))


def _read_constants(n):
    c = _constants(n)
    return c[2][0] + len(c[3]) + c[4].n, c[1] + c[4].s


def test_a_bounded_cache_returning_constants_captures_whole():
    cf = bcfront.capture(_read_constants, fullgraph=True)
    for n in (1, 2, 1, 2):
        assert cf(n) == _read_constants(n)


class Tagged(tuple):  # its instances have a __dict__: a cached one can be changed
    pass


@functools.lru_cache(maxsize=4)
def _holds_a_list(n):
    return (n, [n])


@functools.lru_cache(maxsize=4)
def _a_list(n):
    return [n]


@functools.lru_cache(maxsize=4)
def _tagged(n):
    return Tagged((n,))


def _grow_held(n):
    held = _holds_a_list(n)[1]
    held.append(0)
    return len(held)


def _grow(n):
    xs = _a_list(n)
    xs.append(0)
    return len(xs)


def _tag(n):
    t = _tagged(n)
    t.hits = getattr(t, "hits", 1) + 1
    return t.hits


@pytest.mark.parametrize(
    "fn, cache",
    [(_grow_held, _holds_a_list), (_grow, _a_list), (_tag, _tagged)],
    ids=["tuple-list", "list", "tagged"],
)
def test_a_bounded_cache_returning_what_can_change_breaks_and_stays_right(fn, cache):
    """Natively the second call sees what the first did to the cached result (2, then 3, 4);
    traced, each call would make a fresh one (2, 2, 2)."""
    with pytest.raises(GraphBreakError, match="a bounded cache returning an object"):
        bcfront.capture(fn, fullgraph=True)(1)
    cache.cache_clear()
    native = [fn(1) for _ in range(3)]
    cache.cache_clear()
    cf = bcfront.capture(fn)
    assert [cf(1) for _ in range(3)] == native and len(set(native)) == 3
