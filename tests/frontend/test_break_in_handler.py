"""A graph break inside an except or finally block keeps the handled exception (pure Python).

The continuation re-enters each block it resumes in (PUSH_EXC_INFO in its prologue), so a
bare ``raise``, implicit chaining and ``sys.exc_info()``/``sys.exception()`` behave as in
the original frame.  Oracle: the plain function.
"""

from __future__ import annotations

import sys

import pytest

import bcfront


def bare_raise_after_break(a):
    try:
        raise KeyError(a)
    except KeyError:
        print(end="")  # graph break inside the handler
        raise


def new_exception_after_break_is_chained(a):
    try:
        raise KeyError(a)
    except KeyError:
        print(end="")
        raise ValueError(a)  # noqa: B904 - subject: the implicit __context__ chain is tested


def nested_handlers_after_break(a):
    try:
        raise KeyError(a)
    except KeyError:
        try:
            raise IndexError(a)
        except IndexError:
            print(end="")
            inner = repr(sys.exc_info()[1])
        outer = repr(sys.exc_info()[1])
    return inner, outer, sys.exc_info()


def finally_after_break(a):
    try:
        raise KeyError(a)
    finally:
        print(end="")


def handled_exception_read_after_break(a):
    try:
        return [][a]
    except IndexError as e:
        print(end="")
        return repr(sys.exception()), repr(e)


def _outcome(fn, a):
    try:
        return "ok", fn(a)
    except Exception as e:  # noqa: BLE001 - both must raise alike, chain included
        return "raise", type(e), str(e), repr(e.__context__)


@pytest.mark.parametrize(
    "fn",
    [
        bare_raise_after_break,
        new_exception_after_break_is_chained,
        nested_handlers_after_break,
        finally_after_break,
        handled_exception_read_after_break,
    ],
    ids=lambda f: f.__name__,
)
def test_matches_cpython(fn):
    cf = bcfront.capture(fn)
    for a in (1, 2, 1):
        assert _outcome(cf, a) == _outcome(fn, a)


def test_sys_exception_outside_handlers_is_the_callers():
    """Outside the function's handlers the handled exception is the caller's: None in a
    call from plain code, the caller's own where it calls from an except block."""

    def f(a):
        return sys.exc_info()[:2], sys.exception(), a

    cf = bcfront.capture(f)
    for _ in range(2):
        assert cf(1) == f(1) == ((None, None), None, 1)
        try:
            raise KeyError("outer")
        except KeyError as outer:
            assert cf(2) == f(2) == ((KeyError, outer), outer, 2)


class _MyOSError(OSError):
    def __init__(self, n):
        super().__init__(n, "msg")
        self.extra = n


def exception_fields_after_break(a):
    try:
        raise StopIteration(a)
    except StopIteration as e:
        print(end="")  # e crosses the break: rebuilt for the continuation
        first = (e.value, e.args)
    try:
        raise _MyOSError(a)
    except _MyOSError as e:
        print(end="")
        return first, e.errno, e.strerror, e.extra, e.args


def test_exception_fields_survive_a_break():
    cf = bcfront.capture(exception_fields_after_break)
    for a in (7, 8):
        assert cf(a) == exception_fields_after_break(a)
