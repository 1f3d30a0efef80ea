"""An attribute store that CPython refuses raises where it happens, inside the user's try.

Stores are replayed when a region ends; a store that cannot succeed (a missing
``__slots__`` entry, a property without a setter) must raise at the store, with CPython's
own message, so the user's ``except`` sees it.  Oracle: the plain function.  Pure Python.
"""

from __future__ import annotations

import pytest

import bcfront


class Slotted:
    __slots__ = ("a",)


class ReadOnly:
    @property
    def p(self):
        return 1


class Plain:
    pass


def store_c(obj):
    try:
        obj.c = 1
    except AttributeError as e:
        return "caught", str(e)
    return "stored", obj.c


def store_on_an_object_made_here(a):
    s = Slotted()
    try:
        s.c = a
    except AttributeError as e:
        s.a = a
        return "caught", str(e), s.a
    return "stored"


def store_a_read_only_property(obj):
    try:
        obj.p = 2
    except AttributeError as e:
        return str(e)
    return "stored"


@pytest.mark.parametrize(
    "fn, make",
    [
        (store_c, Slotted),
        (store_c, Plain),
        (store_on_an_object_made_here, lambda: 3),
        (store_a_read_only_property, ReadOnly),
    ],
    ids=["slotted", "plain", "made-here", "property"],
)
def test_store_outcome_matches_cpython(fn, make):
    cf = bcfront.capture(fn)
    for _ in range(2):
        assert cf(make()) == fn(make())


READS: list = []


class SlottedWithGetattr:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a, self.b = a, a + 1

    def __getattr__(self, name):  # called for what the slots and the class do not have
        READS.append(name)
        raise AttributeError(name)


def make_slotted(a):
    return SlottedWithGetattr(a)


def make_plain(a):
    p = Plain()
    p.x = a
    return p


def test_an_object_made_in_a_region_is_made_as_cpython_makes_it():
    # the region makes it with object.__new__ and sets what __init__ set: nothing else is
    # read (a __dict__ read called __getattr__ on each cached call)
    cf = bcfront.capture(make_slotted, fullgraph=True)
    for _ in range(3):
        READS.clear()
        r = cf(2)
        assert (type(r), r.a, r.b, READS) == (SlottedWithGetattr, 2, 3, [])
    assert cf._entries[0].region_source.count("___object_new(") == 1
    cf = bcfront.capture(make_plain, fullgraph=True)
    for _ in range(2):
        r, want = cf(4), make_plain(4)
        assert (type(r), vars(r)) == (type(want), vars(want))
