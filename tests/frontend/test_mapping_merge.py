"""``dict(m)`` and ``d.update(m)`` where `m` is a mapping that is no dict (a ChainMap, a
UserDict, a user class with ``keys`` and ``__getitem__``) capture whole (#30): CPython's
dict_merge reads it through ``keys()`` and ``[]``, and so does the trace -- in CPython's
order (``keys`` looked up twice, ``keys()`` listed, then each key read and stored before
the next), with its errors, and leaving the pairs stored before a failing one (also
from a sequence of pairs).  Each case
is compared with plain Python under ``fullgraph=True``; a recorded log shows the order.
"""

from __future__ import annotations

import collections
import copy

import pytest

import bcfront


class Logged:
    """A mapping by duck typing that records what dict_merge does with it."""

    def __init__(self, data, log, keys_made=list, missing=()):
        self.data, self.log, self.keys_made, self.missing = data, log, keys_made, missing

    @property
    def keys(self):
        self.log.append("look up keys")
        return self._keys

    def _keys(self):
        self.log.append("keys()")
        return self.keys_made(self.data)

    def __getitem__(self, k):
        self.log.append(("get", k))
        if k in self.missing:
            raise KeyError(k)
        return self.data[k]


def chain_made_inside(a, b):
    return dict(collections.ChainMap(a, b))


def chain_passed_in(d, chain):
    d.update(chain)
    return d


def user_dict(a):
    return dict(collections.UserDict(a)), dict(collections.UserDict(a), extra=0)


def logged_order(data):
    log = []
    made = dict(Logged(data, log), z=0)
    return made, log


def logged_iterator_keys(data):
    log = []
    return dict(Logged(data, log, keys_made=lambda d: iter(reversed(list(d))))), log


def logged_reads_target(data):
    log, d = [], {"first": 1}

    class Peeking(Logged):
        def __getitem__(self, k):
            log.append(sorted(d))  # the pairs stored so far
            return super().__getitem__(k)

    d.update(Peeking(data, log))
    return d, log


def logged_failing_item(data):
    log, d = [], {"first": 1}
    try:
        d.update(Logged(data, log, missing=("b",)))
    except KeyError as e:
        return "KeyError", e.args, d, log
    return d, log


def logged_keys_not_iterable(data):
    log = []
    try:
        dict(Logged(data, log, keys_made=len))
    except TypeError as e:
        return str(e), log
    return None


def sequence_failing_pair(pairs):
    d = {"first": 1}
    try:
        d.update(pairs)
    except ValueError as e:
        return str(e), d
    return d


CASES = [
    (chain_made_inside, lambda: ({"a": 1}, {"a": 2, "b": 3})),
    (chain_passed_in, lambda: ({"x": 0, "b": 9}, collections.ChainMap({"a": 1}, {"a": 2, "b": 3}))),
    (user_dict, lambda: ({"a": 1, "b": 2},)),
    (logged_order, lambda: ({"a": 1, "b": 2, "c": 3},)),
    (logged_iterator_keys, lambda: ({"a": 1, "b": 2},)),
    (logged_reads_target, lambda: ({"a": 1, "b": 2},)),
    (logged_failing_item, lambda: ({"a": 1, "b": 2, "c": 3},)),
    (logged_keys_not_iterable, lambda: ({"a": 1},)),
    (sequence_failing_pair, lambda: ([("a", 1), ("b", 2), ("c",)],)),
]


@pytest.mark.parametrize("fn, make_args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_merging_a_mapping_that_is_no_dict_captures_whole(fn, make_args):
    native_args = make_args()
    want = fn(*native_args)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):  # the trace, then the cached entry
        args = make_args()
        assert cf(*args) == want
        assert repr(args) == repr(native_args)  # the arguments' state after, as natively


def test_a_dict_subclass_is_read_by_its_storage_not_its_methods():
    class Shadowing(dict):  # dict_merge ignores a subclass's __getitem__ and keys()
        def __getitem__(self, k):
            return "shadowed"

        def keys(self):
            return ["nope"]

    def merged(m):
        return dict(m)

    m = Shadowing(a=1)
    assert bcfront.capture(merged)(copy.copy(m)) == merged(m) == {"a": 1}
