"""Replayed writes read every object and value before the first write lands.

A region applies the function's outside writes at its end, reaching objects
through source paths (``o.t[1]``).  A path that an earlier write changes
(``o.t = ...``) must not redirect a later write or the value it stores.  Oracle:
the plain function on an identical copy of the arguments.  Pure Python.
"""

from __future__ import annotations

import pytest

import bcfront


class Box:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __eq__(self, other):
        return type(other) is Box and vars(self) == vars(other)

    __hash__ = None


def store_old_value_after_overwriting_its_path(o):
    x = o.a
    o.a = 1
    o.b = x  # must store the old o.a, not 1
    return o.b


def append_through_a_tuple_whose_attribute_was_replaced(o):
    x = o.t
    o.t = (3,)
    x[1].append(9)  # the list inside the old tuple, not o.t[1]
    return x


def dict_item_replaced_then_old_value_mutated(d):
    v = d["k"]
    d["k"] = []
    v.append(1)
    d["old"] = v
    return d


def swap_two_attributes(o):
    o.a, o.b = o.b, o.a
    o.a.append("x")
    return o


CASES = {
    store_old_value_after_overwriting_its_path: lambda: (Box(a=[1], b=None),),
    append_through_a_tuple_whose_attribute_was_replaced: lambda: (Box(t=(1, [2])),),
    dict_item_replaced_then_old_value_mutated: lambda: ({"k": [0]},),
    swap_two_attributes: lambda: (Box(a=[1], b=[2]),),
}


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_replayed_writes_see_the_state_at_entry(fn):
    cf = bcfront.capture(fn)
    for _ in range(3):  # the first call traces, later ones run the cached entry
        ref_args, cap_args = CASES[fn](), CASES[fn]()
        expected = fn(*ref_args)
        actual = cf(*cap_args)
        assert actual == expected
        assert cap_args == ref_args, "the writes left the arguments in a different state"
    assert not [b for e in cf.entries for b in e.breaks], "these functions need no graph break"


def test_a_tuple_argument_keeps_its_identity_when_an_item_is_mutated():
    def f(v):
        v[0].append(1)
        return v

    cf = bcfront.capture(f)
    for _ in range(2):
        t = ([],)
        assert cf(t) is t and t == ([1],)


def test_a_module_attribute_written_is_seen_by_the_modules_own_functions():
    import sys
    import types

    mod = types.ModuleType("bcfront_test_replay_mod")
    exec("x = 1\ndef reader():\n    return x\n", mod.__dict__)
    sys.modules[mod.__name__] = mod
    try:

        def f(a):
            mod.x = a
            return mod.reader(), mod.x

        cf = bcfront.capture(f)
        for a in (5, 6, 6):
            assert cf(a) == (a, a) and mod.x == a
            mod.x = 1

        def g():
            del mod.x
            return hasattr(mod, "x")

        assert bcfront.capture(g)() is False and not hasattr(mod, "x")
    finally:
        del sys.modules[mod.__name__]
