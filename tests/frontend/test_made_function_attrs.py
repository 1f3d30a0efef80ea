"""Attributes of a function made in the trace: ``functools.wraps`` and ``f.x = v``.

A decorator using ``functools.wraps`` inside a captured function broke ("setting
__wrapped__ on MadeFunctionV"), as did any attribute set on or read from such a function
beyond its name and defaults.  Now the trace keeps ``__doc__``, ``__module__``,
``__type_params__`` (3.12+) and the function's ``__dict__`` on the value, raises
CPython's AttributeError for a name it lacks, and a returned function gets them all.
Oracle: CPython on the same function, with ``fullgraph=True`` where it captures whole.
"""

from __future__ import annotations

import functools

import pytest

import bcfront


def _plus_one(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) + 1

    return wrapper


def decorated_and_called(x):
    @_plus_one
    def double(y):
        "Doubles."
        return y * 2

    return double(x), double.__name__, double.__doc__, double.__wrapped__(x), sorted(vars(double))


def attributes_set_and_read(x):
    def f():
        pass

    f.count = x
    f.__doc__ = "documented"
    f.__module__ = "elsewhere"
    try:
        f.missing
    except AttributeError as e:
        missing = str(e)
    return f.count, f.__dict__, f.__doc__, f.__module__, missing, (lambda: "not a doc").__doc__


def decorated_and_returned(x):
    @_plus_one
    def double(y):
        "Doubles."
        return y * 2

    double.extra = x
    return double


def _described(f):
    return (
        f(2),
        f.__name__,
        f.__qualname__,
        f.__doc__,
        f.__module__,
        f.__wrapped__(2),
        f.extra,
        sorted(vars(f)),
    )


@pytest.mark.parametrize("fn", [decorated_and_called, attributes_set_and_read])
def test_captured_whole_same_as_plain_python(fn):
    cf = bcfront.capture(fn, fullgraph=True)
    want = fn(3)
    assert cf(3) == want
    assert cf(3) == want


def test_returned_function_has_its_attributes():
    cf = bcfront.capture(decorated_and_returned)
    want = _described(decorated_and_returned(3))
    assert _described(cf(3)) == want
    assert _described(cf(3)) == want
