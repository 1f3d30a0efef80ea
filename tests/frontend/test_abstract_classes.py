"""An abstract class (``abc``: abstract methods left) cannot be instantiated in the trace.

``A()`` and ``object.__new__(A)`` used to make a symbolic instance where CPython raises
"Can't instantiate abstract class A ..." (its words differ across versions), so code that
catches that TypeError went the wrong way; an argument to a class without ``__init__``
is refused first, as in CPython.  Oracle: CPython on the same function, on the first and
the cached call, and after ``abc.update_abstractmethods`` makes the class concrete.
"""

from __future__ import annotations

import abc

import pytest

import bcfront


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self): ...

    @abc.abstractmethod
    def name(self): ...


class Square(Shape):
    def area(self):
        return 4

    def name(self):
        return "square"


class HalfDone(Shape):
    def area(self):
        return 1


def make(cls, *args):
    try:
        made = cls(*args)
    except TypeError as e:
        return "TypeError", str(e)
    return made.area()


def made_by_object_new(cls):
    try:
        return type(object.__new__(cls)).__name__
    except TypeError as e:
        return "TypeError", str(e)


def defined_and_made_inside(x):
    class Base(abc.ABC):
        @abc.abstractmethod
        def m(self): ...

    class Leaf(Base):
        def m(self):
            return x

    try:
        Base()
    except TypeError as e:
        return Leaf().m(), str(e)
    return None


@pytest.mark.parametrize(
    "fn, args",
    [
        (make, (Shape,)),
        (make, (HalfDone,)),
        (make, (Square,)),
        (make, (Shape, 1)),  # "takes no arguments" comes first
        (made_by_object_new, (HalfDone,)),
        (made_by_object_new, (Square,)),
        (defined_and_made_inside, (3,)),
    ],
)
def test_same_as_plain_python(fn, args):
    cf = bcfront.capture(fn)
    want = fn(*args)
    assert cf(*args) == want
    assert cf(*args) == want


def test_a_class_made_concrete_later_is_instantiated():
    class Late(abc.ABC):
        @abc.abstractmethod
        def area(self): ...

    cf = bcfront.capture(make)
    assert cf(Late) == make(Late)
    Late.area = lambda self: 7
    abc.update_abstractmethods(Late)
    assert cf(Late) == make(Late) == 7
