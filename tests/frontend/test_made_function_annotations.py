"""A function made in the trace keeps its annotations.

``def f(a: int) -> list`` inside a captured function: its ``__annotations__`` read in the
trace broke, and the function made again at the break (or returned) lost them --
``f.__annotations__`` came back ``{}`` and ``typing.get_type_hints(f)`` with it.  Now the
trace reads them as CPython does (the dict made once from MAKE_FUNCTION's names and
values, then the same dict) and a rebuilt function gets them.  Oracle: CPython on the
same function, on the first and the cached call.  (No ``from __future__ import
annotations`` here: the annotations are the classes themselves, not their names.)
"""

import typing

import pytest

import bcfront


def returns_annotated(x):
    def f(a: int, b: "str" = "") -> list: ...

    return f


def reads_annotations(x):
    def f(a: int, b: "str" = "") -> list: ...

    return f.__annotations__, f.__annotations__ is f.__annotations__


def writes_annotations(x):
    def f(a: int): ...

    f.__annotations__["z"] = x
    return f


def no_annotations(x):
    def f(a): ...

    return f.__annotations__, f


def type_hints(x):
    def f(a: int, b: "str" = "") -> list: ...

    return typing.get_type_hints(f)


def _annotations(r):
    return tuple(_annotations(x) for x in r) if type(r) is tuple else getattr(r, "__annotations__", r)


CASES = [returns_annotated, reads_annotations, writes_annotations, no_annotations, type_hints]


@pytest.mark.parametrize("fn", CASES)
def test_annotations_same_as_plain_python(fn):
    cf = bcfront.capture(fn)
    want = _annotations(fn(1))
    assert _annotations(cf(1)) == want
    assert _annotations(cf(1)) == want
