"""The diagnosis of a recompile (`regions/diagnose.py`, on a cache miss) never fails the call."""

from __future__ import annotations

import types

import pytest

import bcfront


def _outer(xs):
    return [x * 2 for x in xs]


def test_a_function_with_a_compiler_made_parameter_recompiles_without_an_error():
    # a list comprehension's code made a function: its parameter is `.0`, which no generated
    # function can name -- the miss's diagnosis skips it instead of raising KeyError
    code = next((c for c in _outer.__code__.co_consts if isinstance(c, types.CodeType)), None)
    if code is None:
        pytest.skip("comprehensions are inlined from 3.12 on (PEP 709): no `.0` function")
    fn = types.FunctionType(code, globals())
    cf = bcfront.capture(fn)
    for xs in ([1, 2], [3, 4, 5], [3, 4, 5]):
        assert cf(iter(xs)) == fn(iter(xs)) == [x * 2 for x in xs]
    assert cf.calls == 3
