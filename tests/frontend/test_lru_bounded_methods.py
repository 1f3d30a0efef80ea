"""A bounded ``lru_cache`` function whose result is a C method bound to an object that never
changes (fnmatch's cached ``re.compile(p).match``) is traced through, as one returning a
tuple of constants is: made again, it does what the cached one does."""

from __future__ import annotations

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
