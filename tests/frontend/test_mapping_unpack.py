"""``{**m}`` and ``f(**m)`` where `m` is a mapping that is no dict (a ``Mapping`` subclass,
a ``MappingProxyType``, a ChainMap, a UserDict, a dict subclass iterating otherwise)
capture whole (#30): BUILD_MAP's DICT_UPDATE and a call's DICT_MERGE run CPython's
dict_merge through `containers.merge` -- ``keys()`` then ``[]`` for each key, a key the
call already has refused before its value is read -- with the errors ceval words after
it (an AttributeError: "is not a mapping"; for a call, a repeated keyword or, 3.12+, a
KeyError out of ``[]``: "got multiple values for keyword argument").  Each case is
compared with plain Python under ``fullgraph=False`` and ``fullgraph=True``; a recorded
log shows the order.  A KeyError out of ``[]`` on 3.11 (CPython rewords it or not by how
C raised it) breaks the graph, as does a ``MappingProxyType`` from outside (not read yet).
"""

from __future__ import annotations

import collections
import collections.abc
import sys
import types

import pytest

import bcfront


class Table(collections.abc.Mapping):
    """A read-only mapping of the user's that records what dict_merge does with it."""

    def __init__(self, data, log, keys=None):
        self.data, self.log, self.key_list = data, log, keys

    def keys(self):
        self.log.append("keys()")
        return list(self.data) if self.key_list is None else self.key_list

    def __getitem__(self, k):
        self.log.append(("get", k))
        if k == "no-attr":
            raise AttributeError("inside __getitem__")
        if k == "missing":
            raise KeyError(k)
        return self.data[k]

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


class Reordered(dict):  # a dict subclass iterating otherwise: dict_merge's generic path
    def __iter__(self):
        return iter(sorted(super().keys(), reverse=True))

    def keys(self):
        return list(self)


def kw(**kwargs):
    return kwargs


def pos_and_kw(a, **kwargs):
    return a, kwargs


def _run(thunk):
    try:
        return "ok", thunk()
    except Exception as e:  # noqa: BLE001 - compared with the native exception
        return "raise", type(e), str(e)


def unpack_logged(data, keys=None):
    log: list = []
    return _run(lambda: {"first": 0, **Table(data, log, keys), "last": 9}), log


def call_logged(data, keys=None):
    log: list = []
    return _run(lambda: kw(a=1, **Table(data, log, keys))), log


def call_only_logged(data, keys=None):
    log: list = []
    return _run(lambda: pos_and_kw(0, **Table(data, log, keys))), log


def unpack_proxy(proxy):  # one from outside (the trace does not make a mappingproxy)
    return {**proxy, "z": 1}, kw(**proxy), _run(lambda: kw(a=0, **proxy))


def unpack_chain(a, b):
    return {**collections.ChainMap(a, b)}, kw(**collections.ChainMap(a, b))


def unpack_user_dict(d):
    return {**collections.UserDict(d), "z": 1}, kw(**collections.UserDict(d))


def unpack_passed(m):
    return {**m, "z": 1}, _run(lambda: kw(**m))


def unpack_reordered(d):
    return list({**Reordered(d)}), list(kw(**Reordered(d)))


def not_a_mapping(x):
    return _run(lambda: {**x}), _run(lambda: kw(**x))


def keys_not_iterable(d):
    return _run(lambda: {**Table(d, [], keys=7)}), _run(lambda: kw(**Table(d, [], keys=7)))


def non_str_key(d):
    return _run(lambda: kw(**Table(d, []))), _run(lambda: pos_and_kw(1, **Table(d, [])))


CASES = [
    (unpack_logged, lambda: ({"a": 1, "b": 2},)),
    (unpack_logged, lambda: ({"a": 1, "no-attr": 2, "b": 3},)),
    (unpack_logged, lambda: ({"a": 1, "b": 2}, 5)),
    (call_logged, lambda: ({"b": 1, "c": 2},)),
    (call_logged, lambda: ({"b": 1, "a": 2, "c": 3},)),  # a repeated keyword, before its []
    (call_logged, lambda: ({"b": 1, "no-attr": 2},)),
    (call_only_logged, lambda: ({"a": 1},)),  # the callee's own message
    (unpack_chain, lambda: ({"a": 1}, {"a": 2, "b": 3})),
    (unpack_user_dict, lambda: ({"a": 1, "b": 2},)),
    (unpack_passed, lambda: (collections.ChainMap({"a": 1}, {"b": 2}),)),
    (unpack_passed, lambda: (collections.UserDict({"a": 1}),)),
    (unpack_reordered, lambda: ({"a": 1, "c": 2, "b": 3},)),
    (not_a_mapping, lambda: (5,)),
    (not_a_mapping, lambda: ([("a", 1)],)),
    (keys_not_iterable, lambda: ({"a": 1},)),
    (non_str_key, lambda: ({1: 2},)),
]
IDS = [f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(CASES)]


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("fn, make_args", CASES, ids=IDS)
def test_unpacking_a_mapping_that_is_no_dict_captures_whole(fn, make_args, fullgraph):
    want = fn(*make_args())
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    for _ in range(2):  # the trace, then the cached entry
        assert cf(*make_args()) == want


def test_a_key_error_out_of_getitem_names_the_keyword_as_natively():
    # 3.12+ rewords any KeyError of one argument; 3.11 only one C left unnormalized: a break
    args = ({"b": 1, "missing": 2},)
    want = call_logged(*args)
    assert bcfront.capture(call_logged)(*args) == want
    if sys.version_info >= (3, 12):
        assert bcfront.capture(call_logged, fullgraph=True)(*args) == want
    else:
        assert "a KeyError out of a ** mapping" in str(bcfront.explain(call_logged, *args))


@pytest.mark.parametrize("fn", [unpack_proxy, unpack_passed])
def test_a_mappingproxy_from_outside_gives_the_native_result(fn):
    # the trace reads no mappingproxy from outside yet: its ``keys()`` breaks the graph
    def make_args():
        return (types.MappingProxyType({"a": 1, "b": 2}),)

    want = fn(*make_args())
    cf = bcfront.capture(fn)
    for _ in range(2):
        assert cf(*make_args()) == want


def test_explain_shows_no_break():
    text = str(bcfront.explain(call_logged, {"b": 1, "c": 2}))
    assert "0 graph break" in text, text
