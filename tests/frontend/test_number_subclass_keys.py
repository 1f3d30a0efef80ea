"""Keys of an outside dict that are int/float subclass instances (#30).

``class K(int)`` with int's ``==`` and hash: ``K(1) == 1 == True == 1.0`` and they hash
alike, so one dict slot; yet code can tell them apart (``type(k)`` of a key read back,
``k is x``, an attribute of the instance).  Such a dict is captured whole
(``fullgraph=True``), its guard holding each such key's number and type (never the key:
no user object is kept alive) and the key object read from its place on every call.  An
IntEnum key and a subclass with its own ``==`` stay as they were.  The oracle is the
plain function over sequences of calls that swap one key for an equal one of another type.
"""

from __future__ import annotations

import enum
import gc
import weakref

import bcfront


class K(int):
    pass


class K2(int):
    pass


class F(float):
    pass


class Color(enum.IntEnum):
    RED = 1


class OwnEq(int):
    def __eq__(self, other):
        return False

    __hash__ = int.__hash__


def shape(d):
    return [(type(k).__name__, k, v) for k, v in d.items()]


def lookup(d, k):
    return d.get(k), k in d, [type(x).__name__ for x in d if x == k]


def identity(d, k):
    return [x is k for x in d], [getattr(x, "tag", None) for x in d]


def _same(fn, cf, *args):
    want = fn(*args)
    got = cf(*args)
    assert repr(got) == repr(want)  # repr: K(1) == 1, but "K" != "int" in the result


def test_keys_read_back_with_their_type_captured_whole():
    cf = bcfront.capture(shape, fullgraph=True)
    for d in ({K(1): "a"}, {K(1): "a", 2: "b"}, {F(1.5): "x", "s": 1}):
        _same(shape, cf, d)


def test_lookup_by_a_number_subclass_key_captured_whole():
    cf = bcfront.capture(lookup, fullgraph=True)
    _same(lookup, cf, {K(1): "a"}, K(1))
    _same(lookup, cf, {1: "a"}, K(1))
    _same(lookup, cf, {K(1): "a"}, 1)


def test_equal_keys_of_other_types_are_told_apart():
    cf = bcfront.capture(shape)
    for key in (K(1), 1, True, 1.0, K2(1), Color.RED, K(1), F(1.0), K(2)):
        _same(shape, cf, {key: "a"})
    cg = bcfront.capture(lookup)
    pairs = [(K(1), 1), (K(1), K(1)), (1, K(1)), (1, K2(1)), (K(2), K(1)), (True, K(1)), (K(1), True)]
    pairs += [(F(1.5), 1.5), (1.5, F(1.5)), (OwnEq(1), 1), (1, OwnEq(1))]
    for key, probe in pairs:
        _same(lookup, cg, {key: "a"}, probe)


def test_the_key_object_itself_is_read_each_call():
    a, b = K(1), K(1)
    a.tag, b.tag = "A", "B"
    cf = bcfront.capture(identity)
    for d, k in (({a: 1}, a), ({b: 1}, a), ({a: 1}, b), ({b: 1}, b)):
        _same(identity, cf, d, k)


def test_a_patched_class_is_seen():
    class P(int):
        pass

    cf = bcfront.capture(lookup)
    d = {P(3): "z"}
    _same(lookup, cf, d, 3)
    P.__eq__ = lambda self, other: False  # type: ignore[method-assign,assignment]
    P.__hash__ = int.__hash__  # type: ignore[method-assign,assignment]
    _same(lookup, cf, d, 3)


def test_the_guard_keeps_no_key_alive():
    cf = bcfront.capture(shape, fullgraph=True)
    key = F(2.5)
    ref = weakref.ref(key)
    d = {key: 1}
    cf(d)
    cf(d)
    del d, key
    gc.collect()
    assert ref() is None


def test_many_number_subclass_keys_stay_right():
    from bcfront.frontend.model.builder import NUMBER_KEYS_LIMIT

    d = {K(i): i for i in range(NUMBER_KEYS_LIMIT + 1)}
    cf = bcfront.capture(shape)
    _same(shape, cf, d)
    _same(shape, cf, {K(1): "a"})


def printed_keys(d):
    out = []
    for k, v in d.items():
        print(k, type(k).__name__)  # a break inside the loop
        out.append((type(k).__name__, k, v, d[k]))
    made = {k: v for k, v in d.items()}
    return out, [type(k).__name__ for k in made]


def test_keys_cross_a_break_with_their_type():
    from .outcomes import quiet_outcome

    d = {K(1): "a", 2: "b", K(3): "c"}
    cf = bcfront.capture(printed_keys)
    for _ in range(3):
        assert quiet_outcome(cf, d) == quiet_outcome(printed_keys, d)
