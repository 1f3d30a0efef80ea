"""Guards must not keep a call's inputs alive (issue 25, memory): after the caller drops an
input and collects, a weak reference to it is dead, while the capture lives on."""

from __future__ import annotations

import gc
import weakref

import pytest

import bcfront

from .helpers import HAS_TORCH


class _Obj:
    k = 2


def _scale(x, o):
    return x * o.k


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_input_tensor_and_object_are_not_kept_alive():
    import torch

    cf = bcfront.capture(_scale)
    x, o = torch.ones(3), _Obj()
    o.k = 3
    cf(x, o)
    cf(x, o)
    refs = [weakref.ref(x), weakref.ref(o)]
    del x, o
    gc.collect()
    assert [r() is None for r in refs] == [True, True]
    assert cf.entries  # the capture itself is still there


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_module_argument_is_not_kept_alive():
    import torch

    cf = bcfront.capture(lambda mod, t: mod(t))
    m = torch.nn.Linear(2, 2)
    cf(m, torch.ones(2))
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None
