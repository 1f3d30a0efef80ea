"""Attribute reads on tensor values: metadata, view attributes, ``.grad``, Python attributes.

Metadata (``shape``, ``dtype``, ``requires_grad``...) is read off the fake
tensor and becomes a constant (the guards pin it); view attributes (``.T``,
``.real``, ``.data``...) are recorded as graph nodes; ``.grad`` of an input is
wrapped from the real tensor under its own source (after a ``backward()`` in the
graph wrote it: the value `autograd_calls` models); a Python attribute stored
on an input tensor (``t.tag = 5`` before the call, O27) is read from its
``__dict__``, its absence guarded; other names resolve to Tensor methods.  A number
read from a tensor (`ScalarV`, `scalars`) has the attributes of its Python type.
"""

from __future__ import annotations

import torch

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.values import Const, MethodV, ObjectV, ScalarV, TensorV, Value
from . import symbolic
from .autograd_calls import grad_value
from .folding import attribute_error
from .torch_calls import record

META_ATTRS = {
    "shape",
    "dtype",
    "device",
    "ndim",
    "requires_grad",
    "is_leaf",
    "is_cuda",
    "is_sparse",
    "is_quantized",
    "is_meta",
    "layout",
    "is_nested",
    "itemsize",
    "nbytes",
    "is_mps",
    "is_cpu",
    "is_complex",
    "is_floating_point",
}
VIEW_ATTRS = {"T", "mT", "H", "mH", "real", "imag", "data"}


def tensor_attr(tx, t: TensorV, name: str) -> Value:
    if isinstance(t, ScalarV):
        return _scalar_attr(t, name)
    if name in META_ATTRS:
        val = getattr(t.fake, name)
        if callable(val) and name in ("is_complex", "is_floating_point"):
            return MethodV(ObjectV(getattr(torch.Tensor, name)), t)
        if isinstance(val, torch.Size):
            return symbolic.sizes(tx, t)
        if symbolic.is_symbolic(val):  # nbytes of a tensor with symbolic sizes
            return Const(symbolic.concrete(val))
        if name == "is_leaf" and t.source is not None and id(t) in tx.real_tensors:
            # an input's leafness (a grad_fn or not) is not in its tensor guard
            from ..model.sources import AttrSource

            val = tx.real_tensors[id(t)].is_leaf
            tx.guard(GuardKind.CONSTANT_MATCH, AttrSource(t.source, "is_leaf"), val)
        return Const(val)
    if name in VIEW_ATTRS:
        return record(tx, "getattr", name, [t], {})
    if name == "grad":
        written = grad_value(tx, t)  # by a backward() earlier in this graph
        if written is not None:
            return written
        real = tx.real_tensors.get(id(t))
        if real is not None and t.source is not None:
            from ..model.builder import wrap
            from ..model.sources import AttrSource

            return wrap(tx, real.grad, AttrSource(t.source, "grad"))
        return Const(None)
    if name == "__class__":
        return ObjectV(t.ptype)
    raw = getattr(torch.Tensor, name, None)
    if raw is None or not _is_data_descriptor(raw):
        found = _instance_attr(tx, t, name, raw is None)
        if found is not None:
            return found
    if raw is None:
        attribute_error("Tensor", name)
    if callable(raw):
        return MethodV(ObjectV(raw), t)
    raise UnsupportedError(BreakReason.UNSUPPORTED_TENSOR_ATTRIBUTE, f"Tensor.{name}")


def _scalar_attr(s: ScalarV, name: str) -> Value:
    """An attribute of a number read from a tensor (`scalars`): its class, or what the
    number's type does not have (AttributeError); the rest reads its value: a break."""
    if name == "__class__":
        return ObjectV(s.ptype)
    if not hasattr(s.ptype, name):
        attribute_error(s.ptype.__name__, name)
    raise UnsupportedError(BreakReason.DATA_DEPENDENT, f"{s.ptype.__name__}.{name} of a number from a tensor")


def _is_data_descriptor(raw) -> bool:
    return hasattr(type(raw), "__set__") or hasattr(type(raw), "__delete__")


def _instance_attr(tx, t: TensorV, name: str, missing: bool) -> Value | None:
    """A Python attribute stored on an input tensor (``t.tag = 5`` before the call, or before
    the break whose continuation this is, O27): read from its ``__dict__``.  When the class
    has no such attribute either, its absence is guarded (a later store makes it appear)."""
    real = tx.real_tensors.get(id(t))
    if real is None or t.source is None:
        return None
    from ..model.sources import AttrSource

    d = real.__dict__
    if name in d:
        from ..model.builder import wrap

        return wrap(tx, d[name], AttrSource(t.source, name))
    if missing:
        tx.guard(GuardKind.NOT_PRESENT, AttrSource(t.source, "__dict__"), None, name)
    return None
