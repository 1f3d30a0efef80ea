"""A right operand whose type is a subclass of the left one's is asked first, as in CPython.

``A() + B()`` with ``B(A)`` overriding ``__radd__`` calls ``B.__radd__`` first; ``A() <
B()`` calls ``B.__gt__`` first (for comparisons any proper subclass goes first).  The
trace always asked the left operand first: ``A() + B()`` gave ``A.__add__``'s result.
Oracle: CPython on the same function, for objects made in the trace and passed in, with
``fullgraph=True``.
"""

from __future__ import annotations

import pytest

import bcfront


class Base:
    def __add__(self, other):
        return "Base.__add__"

    def __radd__(self, other):
        return "Base.__radd__"

    def __lt__(self, other):
        return "Base.__lt__"

    def __gt__(self, other):
        return "Base.__gt__"


class Overrides(Base):
    def __radd__(self, other):
        return "Overrides.__radd__"

    def __gt__(self, other):
        return "Overrides.__gt__"


class Inherits(Base):
    pass


class Declines(Base):
    def __radd__(self, other):
        return NotImplemented

    def __gt__(self, other):
        return NotImplemented


def made_in_the_trace(x):
    out = []
    for right in (Overrides(), Inherits(), Declines(), Base()):
        out += [Base() + right, right + Base(), Base() < right, right < Base(), Base() > right]
    return out, x


def passed_in(left, right):
    return left + right, right + left, left < right, left > right, right < left


@pytest.mark.parametrize(
    "right", [Overrides(), Inherits(), Declines(), Base()], ids=lambda r: type(r).__name__
)
def test_passed_operands_same_as_plain_python(right):
    cf = bcfront.capture(passed_in, fullgraph=True)
    left = Base()
    assert cf(left, right) == passed_in(left, right)
    assert cf(left, right) == passed_in(left, right)


def test_made_operands_same_as_plain_python():
    cf = bcfront.capture(made_in_the_trace, fullgraph=True)
    assert cf(1) == made_in_the_trace(1)
    assert cf(1) == made_in_the_trace(1)
