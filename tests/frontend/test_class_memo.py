"""Checks on class attributes (``Color._member_map_``, ``K.table``) are memoized through the
version tags of the class dicts they are read from (`guard_memo`, `class_reads`): every
change to what ``cls.attr`` gives is still seen.  Each test caches a call, changes one
thing Python's attribute lookup on a class depends on, and compares the cached function
with plain Python: a rebound attribute, one added ahead in the MRO or on the metaclass,
``__bases__`` / ``__class__`` assignment, a descriptor, a dict mutated in place.
"""

from __future__ import annotations

import enum

import pytest

import bcfront
from bcfront.frontend.model import guard_memo
from bcfront.frontend.model.class_reads import plain_class_read

needs_reader = pytest.mark.skipif(
    guard_memo.dict_version_reader() is None, reason="no dict version reader here: every check runs"
)
# the C memo test is used from two memoized checks on (the Python one from 8: `memo_body`)
needs_c_memo = pytest.mark.skipif(
    guard_memo.C is None or guard_memo.dict_version_reader() is not guard_memo.C.dict_version,
    reason="no C memo test here: a guard of few checks runs them all",
)


def _same(cf, fn, *args):
    """The cached function gives what plain Python gives, twice (the second call is the
    one a memo would skip its checks on)."""
    for _ in range(2):
        assert cf(*args) == fn(*args)


def _chain(meta=type):
    class Base(metaclass=meta):
        x = 1
        table = {"a": 1, "b": 2}

    class Mid(Base):
        pass

    class K(Mid):
        pass

    def f(k):
        return K.x * 10 + K.table[k]

    return Base, Mid, K, f


@needs_c_memo
def test_class_attribute_checks_run_in_the_memo_and_the_mro_on_every_call():
    _, _, K, f = _chain()
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    memo_part, _, every_call = cf.entries[-1].guard_source.partition("[0] = ")
    assert "table" in memo_part and "table" not in every_call, memo_part
    assert ".__mro__ is" in every_call


def test_a_rebound_class_attribute_is_seen():
    _, _, K, f = _chain()
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    K.x = 3  # on the class itself: shadows Base.x
    _same(cf, f, "a")
    del K.x
    _same(cf, f, "a")
    K.table = {"a": 5}
    _same(cf, f, "a")


def test_an_attribute_added_ahead_in_the_mro_is_seen():
    Base, Mid, K, f = _chain()
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    Mid.x = 7  # between the class and the dict that held it
    _same(cf, f, "a")
    Mid.table = {"a": 9}
    _same(cf, f, "a")
    Base.x = 4  # hidden by Mid's now
    _same(cf, f, "a")


def test_a_class_dict_value_mutated_in_place_is_seen():
    Base, _, _, f = _chain()
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    Base.table["a"] = 6
    _same(cf, f, "a")
    Base.table.clear()
    with pytest.raises(KeyError):
        f("a")
    with pytest.raises(KeyError):
        cf("a")


def test_set_bases_changes_no_dict_and_is_seen():
    Base, _, K, f = _chain()

    class Other:
        x = 5
        table = {"a": 8}

    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    K.__bases__ = (Other,)  # K's MRO changes: no class dict does
    _same(cf, f, "a")


def _metaclassed():
    class Meta(type):
        pass

    class K(metaclass=Meta):
        x = 1
        table = {"a": 1}

    def f(k):
        return K.x * 10 + K.table[k]

    return Meta, K, f


def test_a_data_descriptor_added_to_the_metaclass_is_seen():
    Meta, K, f = _metaclassed()
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    Meta.x = property(lambda cls: 4)  # a metaclass data descriptor comes before the class dict
    _same(cf, f, "a")


def test_a_metaclass_getattribute_is_seen():
    Meta, K, f = _metaclassed()
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")

    def getattribute(cls, name):
        return 2 if name == "x" else type.__getattribute__(cls, name)

    Meta.__getattribute__ = getattribute
    _same(cf, f, "a")


def test_a_new_metaclass_or_metaclass_base_is_seen():
    Meta, K, f = _metaclassed()

    class Meta2(type):
        x = property(lambda cls: 6)

    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    K.__class__ = Meta2  # changes no dict
    _same(cf, f, "a")
    K.__class__ = Meta
    _same(cf, f, "a")
    Meta.__bases__ = (Meta2,)  # the metaclass's MRO: no dict either
    _same(cf, f, "a")


def test_a_metaclass_attribute_the_class_hides_stays_hidden_unless_it_becomes_data():
    class Meta(type):
        x = 100  # a plain metaclass attribute: K's own x comes first

    class K(metaclass=Meta):
        x = 1

    def f():
        return K.x

    assert plain_class_read(K, "x") is not None
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f)
    Meta.x = property(lambda cls: 7)
    _same(cf, f)


def test_a_value_whose_type_gains_get_is_seen():
    class V:
        pass

    class K:
        v = V()
        table = {"a": 1, "b": 2}

    state = {"v": K.v}

    def f():
        return K.v, K.table["a"]

    cf = bcfront.capture(f, fullgraph=True)
    assert cf() == f() and cf() == f()
    V.__get__ = lambda self, obj, cls: state["v"]  # K.v now calls it: K's dict is the same
    assert cf() == f() and cf() == f()
    state["v"] = V()
    assert cf() == f() and f()[0] is state["v"]


def test_descriptors_in_the_class_dict_are_called_as_python_does():
    class Seven:
        def __get__(self, obj, cls):
            return 7

    class K:
        x = 1

    def f():
        return K.x

    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f)
    K.x = Seven()
    _same(cf, f)
    K.x = classmethod(lambda cls: cls.__name__)
    assert cf()() == f()() == "K"


def test_an_instance_attribute_shadows_the_class_attribute():
    class K:
        x = 1

    k = K()

    def f():
        return k.x + K.x

    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f)
    k.x = 5  # the instance's dict, ahead of the class's
    _same(cf, f)
    K.x = 2
    _same(cf, f)
    del k.x
    _same(cf, f)


class _Stateful:
    """A descriptor whose answer lives outside every class dict (`state`)."""

    def __init__(self, state):
        self.state = state

    def __get__(self, obj, cls):
        return self.state["x"]

    def __set__(self, obj, value):  # a data descriptor, as a metaclass's must be to win
        raise AttributeError


def _put_in_owner(Meta, Base, Mid, state):
    Base.x = _Stateful(state)


def _put_ahead(Meta, Base, Mid, state):
    Mid.x = _Stateful(state)


def _put_on_metaclass(Meta, Base, Mid, state):
    Meta.x = _Stateful(state)


def _metaclass_getattribute(Meta, Base, Mid, state):
    def getattribute(cls, name):
        return state[name] if name in state else type.__getattribute__(cls, name)

    Meta.__getattribute__ = getattribute


@pytest.mark.parametrize("put", [_put_in_owner, _put_ahead, _put_on_metaclass, _metaclass_getattribute])
def test_a_lookup_made_to_depend_on_other_state_is_not_memoized(put):
    """The new lookup gives the same value at first (the memo's checks pass again), then
    follows state no watched dict holds: the memo must not have kept the old answer."""

    class Meta(type):
        pass

    Base, Mid, _, f = _chain(Meta)
    cf = bcfront.capture(f, fullgraph=True)
    _same(cf, f, "a")
    if guard_memo.C is not None and guard_memo.dict_version_reader() is guard_memo.C.dict_version:
        assert "memo" in cf.entries[-1].guard_source  # the memo holds K.x's checks
    state = {"x": 1}
    put(Meta, Base, Mid, state)
    _same(cf, f, "a")
    state["x"] = 2
    assert f("a") == 21
    _same(cf, f, "a")


class Color(enum.Enum):
    RED = 1
    GREEN = 2


def by_name(n):
    return Color[n].value


@needs_reader
def test_enum_member_map_checks_are_memoized():
    cf = bcfront.capture(by_name, fullgraph=True)
    _same(cf, by_name, "GREEN")
    memo_part, _, every_call = cf.entries[-1].guard_source.partition("[0] = ")
    assert "_member_map_" in memo_part and "_member_map_" not in every_call


def test_enum_member_map_mutated_in_place_and_member_dict_replaced_are_seen():
    cf = bcfront.capture(by_name, fullgraph=True)
    _same(cf, by_name, "GREEN")
    saved = dict(Color._member_map_)
    green = Color.GREEN
    saved_dict = green.__dict__
    try:
        Color._member_map_["GREEN"] = Color.RED
        _same(cf, by_name, "GREEN")
        Color._member_map_.update(saved)
        _same(cf, by_name, "GREEN")
        green.__dict__ = dict(saved_dict, _value_=5)  # a new instance dict
        _same(cf, by_name, "GREEN")
    finally:
        green.__dict__ = saved_dict
        Color._member_map_.update(saved)
    _same(cf, by_name, "GREEN")


def test_plain_class_read_refuses_what_python_would_not_read_plainly():
    class Meta(type):
        y = property(lambda cls: 1)

    class K(metaclass=Meta):
        y = 2
        f = staticmethod(len)
        d = {}

    assert plain_class_read(K, "y") is None  # a metaclass data descriptor wins
    assert plain_class_read(K, "f") is None  # a descriptor: called
    assert plain_class_read(K, "__doc__") is None  # type's own data descriptor
    assert plain_class_read(K, "missing") is None
    read = plain_class_read(K, "d")
    assert read is not None and read.owner is K and read.metas == ((Meta, None),)
    assert plain_class_read(int, "real") is None  # not a heap type
