"""Operators of an instance of a Python subclass of int, float, complex or str.

An IntEnum member's ``%`` (``calendar.Day`` on 3.12+), a str subclass's ``+``: the class
inherits the builtin's C slot, which reads only the instance's builtin value.  They broke
("mod on Object(Lvl) and Const(3)"); now the slot runs on the real object at capture,
its class lookups guarded, and the function captures whole.  A Python override still
runs as Python; str's ``%`` (which formats its argument with user code) is left out.
Oracle: CPython on the same function, with ``fullgraph=True``.
"""

from __future__ import annotations

import enum

import pytest

import bcfront


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 5


class Flags(enum.IntFlag):
    A = 1
    B = 2


class Meters(float):
    pass


class Tag(str):
    def __add__(self, other):
        return str.__add__(self, other) + "!"


class Name(str):
    pass


HIGH, METRE, TAG, NAME = Level.HIGH, Meters(2.5), Tag("t"), Name("n")


def arithmetic(x):
    return (
        HIGH % x,
        Level.LOW + x,
        x * HIGH,
        HIGH // 2,
        -HIGH,
        HIGH < x,
        Flags.A | Flags.B,
        METRE * x,
        x - METRE,
        NAME + "x",
        "x" + NAME,
        NAME * 2,
        NAME == "n",
    )


def overridden(x):
    return TAG + x, x + TAG, type(TAG + x).__name__


def mixed_errors(x):
    try:
        return HIGH + "s"
    except TypeError as e:
        return str(e), x


@pytest.mark.parametrize("fn, x", [(arithmetic, 3), (arithmetic, 7), (overridden, "y"), (mixed_errors, 0)])
def test_same_as_plain_python_with_no_break(fn, x):
    cf = bcfront.capture(fn, fullgraph=True)
    want = fn(x)
    assert cf(x) == want
    assert cf(x) == want


def with_passed(m, x):
    return m % x, -m, m + x, x * m, m < x


def test_a_passed_instance_is_guarded_by_its_value():
    """The operator ran on the value at capture: another instance of the same class must
    not reuse that entry's result."""
    cf = bcfront.capture(with_passed, fullgraph=True)
    for m in (Level.HIGH, Level.LOW, Level.HIGH, Meters(1.5), Meters(4.0)):
        assert cf(m, 3) == with_passed(m, 3)
