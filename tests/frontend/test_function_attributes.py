"""Attributes of function and module objects read in captured code: the function type's
own attributes (``__class__``, ``__call__``, ``__type_params__``...) as plain Python gives
them, not only the usual dunders (torchvision's ``_log_api_usage_once`` reads
``obj.__class__.__name__`` of a function)."""

from __future__ import annotations

import math
import sys

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def helper(a, b=2):
    return a + b


def reads(x, f, mod):
    names = (f.__class__.__name__, type(f).__name__, mod.__class__.__name__, f.__name__)
    called = f.__call__(1)  # the function type's slot, bound
    has = (hasattr(f, "__call__"), hasattr(f, "nope"), hasattr(f, "__builtins__"))  # noqa: B004
    return x + len("".join(names)) + called, names, has


@pytest.mark.parametrize("fullgraph", [False, True])
def test_function_type_attributes_read_as_natively(fullgraph):
    x = torch.ones(2)
    want = reads(x, helper, math)
    got = bcfront.capture(reads, fullgraph=fullgraph)(x, helper, math)
    assert torch.equal(got[0], want[0]) and got[1:] == want[1:]


def test_a_function_attribute_that_does_not_exist_raises_as_natively():
    def missing(x, f):
        try:
            return x + f.__nope__
        except AttributeError as e:
            return x, str(e)

    x = torch.ones(1)
    assert bcfront.capture(missing)(x, helper)[1] == missing(x, helper)[1]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__type_params__ is new in 3.12")
def test_type_params_of_a_function():
    def tp(x, f):
        return x + len(f.__type_params__)

    assert torch.equal(bcfront.capture(tp, fullgraph=True)(torch.ones(1), helper), torch.ones(1))
