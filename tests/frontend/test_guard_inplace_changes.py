"""Objects the guards identify can still change in place; those changes recompile.

A builtin patched in the builtins module, and an inlined callee whose ``__code__`` or
defaults are replaced (what IPython's autoreload does), must not leave a stale entry.
Oracle: the plain function after the same change.  Pure Python.
"""

from __future__ import annotations

import builtins

import bcfront


def _callee(x, k=1):
    return x + k


def _caller(a):
    return _callee(a)


def test_replacing_a_callees_code_recompiles():
    original = _callee.__code__
    cf = bcfront.capture(_caller)
    try:
        assert cf(1) == _caller(1) == 2
        _callee.__code__ = (lambda x, k=1: x - k).__code__
        assert cf(1) == _caller(1) == 0
    finally:
        _callee.__code__ = original


def test_replacing_a_callees_defaults_recompiles():
    cf = bcfront.capture(_caller)
    try:
        assert cf(1) == 2
        _callee.__defaults__ = (5,)
        assert cf(1) == _caller(1) == 6
    finally:
        _callee.__defaults__ = (1,)


def _uses_abs(a):
    return abs(-a)


def test_patching_a_builtin_recompiles():
    cf = bcfront.capture(_uses_abs)
    original = builtins.abs
    try:
        assert cf(2) == 2
        builtins.abs = lambda x: 99
        assert cf(2) == _uses_abs(2) == 99
    finally:
        builtins.abs = original
    assert cf(2) == 2
