"""A mappingproxy from outside: an argument, a global, a class's ``__dict__`` (#30).

Reads (``mp[k]``, ``in``, ``len``, iteration, ``get``, ``keys/values/items``, ``copy``,
``dict(mp)``, ``==``, ``|``) are captured whole (``fullgraph=True``), guarded through the
proxy's real mapping: a change to that dict between calls (a key added or removed, a
value changed, an attribute set on the class) is seen.  Writes raise CPython's TypeError
or AttributeError; a write to the dict through another path in the trace shows through
the proxy.  The oracle is the plain function, on the same state, over calls.
"""

from __future__ import annotations

import collections
import types

import pytest

import bcfront

from .outcomes import quiet_outcome

STORE = {"a": 1, "b": 2}
PROXY = types.MappingProxyType(STORE)


class Holder:
    x = 1

    def method(self):
        return self.x


def reads(mp):
    return (
        mp["a"],
        "a" in mp,
        "zz" in mp,
        len(mp),
        list(mp),
        mp.get("a"),
        mp.get("zz", 5),
        list(mp.items()),
        list(mp.keys()),
        list(mp.values()),
        dict(mp),
        mp.copy(),
        bool(mp),
    )


def global_reads():
    return PROXY.get("a"), len(PROXY), list(PROXY.items())


def class_reads(mp):
    return mp.get("x"), "y" in mp, "method" in mp, sorted(k for k in mp if not k.startswith("__"))


def compares(mp):
    od = collections.OrderedDict(b=2, a=1)
    return mp == {"a": 1, "b": 2}, mp != {"a": 1}, {"b": 2, "a": 1} == mp, mp == od


def merges(mp):
    return mp | {"c": 3}, {"z": 0} | mp, {**mp}, [*mp], sorted(mp.items()), list(reversed(mp))


def missing(mp):
    return mp["zz"]


def store(mp):
    mp["a"] = 5


def delete(mp):
    del mp["a"]


def update(mp):
    mp.update(a=5)


def inplace_or(mp):
    mp |= {"z": 1}


def through_the_dict(mp, d):
    d["c"] = 3
    del d["a"]
    return list(mp), mp["c"], len(mp), "a" in mp, mp.copy()


def returned(mp):
    return mp, mp.keys()


CAPTURED = [reads, compares, merges, missing, store, delete, update, inplace_or]


def _fresh():
    STORE.clear()
    STORE.update(a=1, b=2)


@pytest.mark.parametrize("fn", CAPTURED, ids=lambda f: f.__name__)
def test_proxy_argument_is_captured_whole(fn):
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):
        _fresh()
        want = quiet_outcome(fn, PROXY)
        _fresh()
        assert quiet_outcome(cf, PROXY) == want
    _fresh()


def test_writes_through_the_dict_show_through_the_proxy():
    cf = bcfront.capture(through_the_dict, fullgraph=True)
    for _ in range(2):
        _fresh()
        want = through_the_dict(PROXY, STORE), dict(STORE)
        _fresh()
        assert (cf(PROXY, STORE), dict(STORE)) == want
    _fresh()


def test_returned_proxy_is_the_object():
    got_mp, got_keys = bcfront.capture(returned, fullgraph=True)(PROXY)
    assert got_mp is PROXY
    assert list(got_keys) == list(PROXY.keys())


def test_guards_follow_the_mapping_behind_the_proxy():
    _fresh()
    cf = bcfront.capture(reads, fullgraph=True)
    cg = bcfront.capture(global_reads, fullgraph=True)
    changes = [
        lambda: None,
        lambda: STORE.__setitem__("c", 3),
        lambda: STORE.__setitem__("a", 10),
        lambda: STORE.pop("b"),
        lambda: STORE.__setitem__("a", "text"),
    ]
    for change in changes:
        change()
        assert cf(PROXY) == reads(PROXY)
        assert cg() == global_reads()
    other = types.MappingProxyType({"a": 7, "b": 8})
    assert cf(other) == reads(other)
    _fresh()


def test_class_dict_reads_follow_the_class():
    class Local:
        x = 1

    cf = bcfront.capture(class_reads, fullgraph=True)
    for change in (lambda: None, lambda: setattr(Local, "y", 2), lambda: setattr(Local, "x", 5)):
        change()
        assert cf(Local.__dict__) == class_reads(Local.__dict__)
    assert cf(Holder.__dict__) == class_reads(Holder.__dict__)


def test_proxy_over_other_mappings_still_right():
    od = types.MappingProxyType(collections.OrderedDict(b=2, a=1))
    assert bcfront.capture(reads)(od) == reads(od)
    assert bcfront.capture(compares)(od) == compares(od)


def view_mappings(d):
    made = {"m": 1}
    return d.keys().mapping, d.values().mapping, d.items().mapping, made.keys().mapping


def test_a_dict_view_s_mapping_is_a_proxy_of_its_dict():
    # it was the getset descriptor itself (a wrong result): now read natively
    got = bcfront.capture(view_mappings)(STORE)
    want = view_mappings(STORE)
    assert [type(x) for x in got] == [type(x) for x in want]
    assert got == want


def made_in_the_trace(d):
    mp = types.MappingProxyType(d)
    d["z"] = 26
    local = {"a": 1}
    lp = types.MappingProxyType(local)
    local["b"] = 2
    return mp, mp["z"], list(mp), lp, lp == local, mp is mp


def test_a_proxy_made_in_the_trace_views_that_very_dict():
    d = {"a": 1}
    got = bcfront.capture(made_in_the_trace, fullgraph=True)(d)
    assert got == made_in_the_trace({"a": 1})
    assert type(got[0]) is types.MappingProxyType
    d["after"] = 1  # the proxy returned is a view of the caller's dict, not of a copy
    assert "after" in got[0]


def iterate_across_breaks(mp, d):
    out = []
    for k, v in mp.items():
        print(k)  # a break inside the loop: the iterator crosses into the continuation
        out.append((k, v, len(mp)))
    it = iter(mp)
    first = next(it)
    print("mid")
    rest = list(it)
    for k in mp:
        print(k)
        d["x"] = 1  # natively: RuntimeError, the dict changed size during iteration
    return out, first, rest


def test_an_iterator_over_a_proxy_crosses_a_break():
    cf = bcfront.capture(iterate_across_breaks)
    for _ in range(3):
        _fresh()
        want = quiet_outcome(iterate_across_breaks, PROXY, STORE)
        _fresh()
        assert quiet_outcome(cf, PROXY, STORE) == want
    _fresh()
