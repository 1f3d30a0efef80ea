"""``o.__dict__`` of an object made in the trace: read without a break, never stale."""

from __future__ import annotations

import copy

import pytest

import bcfront


class Box:
    def __init__(self, a):
        self.a = a
        self.b = a + 1


class Mapped:
    """Like transformers' configs: every read goes through the instance __dict__."""

    attribute_map = {"width": "a"}

    def __init__(self, a):
        self.a = a

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        extra = super().__getattribute__("__dict__").get("_extra")
        if extra is not None and key in extra:
            return extra[key]
        return super().__getattribute__(key)


def read_dict(x):
    o = Box(x)
    d = o.__dict__
    return sorted(d.items()), d.get("a"), "b" in d, len(d), d is o.__dict__


def read_through_getattribute(x):
    c = copy.copy(Mapped(x))
    return c.width + c.a


def returned_together(x):
    o = Box(x)
    return o, vars(o) if False else o.__dict__


@pytest.mark.parametrize("fn", [read_dict, read_through_getattribute])
def test_dict_of_a_new_object_reads_without_a_break(fn):
    cf = bcfront.capture(fn, fullgraph=True)
    assert cf(3) == fn(3)
    assert cf(5) == fn(5)


def test_the_returned_dict_is_the_returned_objects_dict():
    o, d = bcfront.capture(returned_together)(3)
    assert d is o.__dict__
    assert d == {"a": 3, "b": 4}


def write_through_object_after_read(x):
    o = Box(x)
    d = o.__dict__
    o.a = 10
    return d["a"], o.a


def write_through_dict_after_read(x):
    o = Box(x)
    d = o.__dict__
    d["a"] = 10
    return d["a"], o.a


def write_then_rollback(x):
    o = Box(x)
    d = o.__dict__
    try:
        d["a"] = 7
        o.b = 8
        raise KeyError("k")
    except KeyError:
        pass
    return sorted(d.items()), o.a, o.b


@pytest.mark.parametrize(
    "fn", [write_through_object_after_read, write_through_dict_after_read, write_then_rollback]
)
def test_writes_through_either_side_reach_the_other(fn):
    cf = bcfront.capture(fn, fullgraph=True)
    assert cf(3) == fn(3)
    assert cf(4) == fn(4)
