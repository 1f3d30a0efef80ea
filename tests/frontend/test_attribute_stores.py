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
