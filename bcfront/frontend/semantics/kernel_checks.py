"""Checks only the real kernels make: break before such a call, so it raises where eager does.

Meta kernels (what fake tensors run) check shapes, not everything: ``mm`` on
float64 and float32 operands, ``long_tensor.mul_(1.5)`` (a result type the
in-place write cannot cast back) or ``x.add_(x.t())`` (a write partially
overlapping its operand) pass on fakes and raise only in the real kernel.  Recorded in a
graph, such a call would raise inside the compiled
region (or, functionalized, compute a silent cast); instead the trace breaks
before it and the call runs natively.  `label` names a torch call in messages.
"""

from __future__ import annotations

import torch

from ...errors import UnsupportedError
from ...reasons import BreakReason

_SAME_DTYPE_OPS = {
    "matmul",
    "mm",
    "bmm",
    "addmm",
    "baddbmm",
    "addbmm",
    "addmv",
    "mv",
    "dot",
    "linear",
    "einsum",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "imatmul",
}


def check_dtypes(tx, op, target, fargs, fkw) -> None:
    """Kernels that require equal dtypes, where meta kernels do not check (fake runs pass,
    real runs raise): break so the real call raises where eager does."""
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if name not in _SAME_DTYPE_OPS or tx.state.autocast:
        return
    dtypes = {
        t.dtype
        for t in _tensors(fargs) + _tensors(list(fkw.values()))
        if t.is_floating_point() or t.is_complex()
    }
    if len(dtypes) > 1:
        raise UnsupportedError(
            BreakReason.TORCH_ERROR,
            f"{label(op, target)} on mixed dtypes {sorted(str(d) for d in dtypes)} raises at run time",
        )


def check_inplace_cast(tx, what: str, plain, fargs, fkw) -> None:
    """An in-place op (`what`) whose result type cannot be cast to its tensor's dtype
    (``long.mul_(1.5)``) raises in the real kernel, while meta kernels accept it: break so
    the real call raises where eager does (a functional copy of the graph would compute it
    silently).  `plain`: the op's out-of-place variant, run on the same fakes (None: unknown)."""
    if plain is None or not fargs or not isinstance(fargs[0], torch.Tensor) or fkw:
        return
    dtype = fargs[0].dtype
    if dtype.is_complex or (
        dtype.is_floating_point
        and not any(
            isinstance(a, complex) or (isinstance(a, torch.Tensor) and a.is_complex()) for a in fargs[1:]
        )
    ):
        return  # (only an int/bool tensor, or a complex operand, can fail)
    try:
        out = tx.torch_env().run(plain, fargs, {}, tx.state)
    except Exception:  # noqa: BLE001 - the out-of-place variant does not apply; the op ran
        return
    if isinstance(out, torch.Tensor) and not torch.can_cast(out.dtype, dtype):
        raise UnsupportedError(
            BreakReason.TORCH_ERROR,
            f"{what}: result type {out.dtype} can't be cast to {dtype} (raises at run time)",
        )


def check_partial_overlap(tx, what: str, target, operands) -> None:
    """An in-place write whose `target` partially overlaps one of its `operands`
    (``x.add_(x.t())``, ``x[1:] = x[:-1]``) raises in the real kernel (TensorIterator's
    check; meta kernels skip it), while a functional copy of the graph would compute a
    value: break so the real call raises -- or not -- where eager does."""
    if not isinstance(target, torch.Tensor):
        return
    for t in _tensors(operands):
        if t is not target and _partial_overlap(target, t):
            raise UnsupportedError(
                BreakReason.TORCH_ERROR,
                f"{what} writes a tensor that partially overlaps an operand (raises at run time)",
            )


def _partial_overlap(a, b) -> bool:
    """ATen's ``get_overlap_status(a, b) == Partial``: same storage, both non-overlapping
    and dense, byte ranges that intersect without being the same range in the same layout."""
    from torch._prims_common import is_non_overlapping_and_dense_or_false as dense

    from ...ir.alias_facts import storage_key

    if a.numel() == 0 or b.numel() == 0 or not (dense(a) and dense(b)):
        return False
    key = storage_key(a)
    if key is None or key != storage_key(b):
        return False
    a0, b0 = a.storage_offset() * a.element_size(), b.storage_offset() * b.element_size()
    a1, b1 = a0 + a.numel() * a.element_size(), b0 + b.numel() * b.element_size()
    if (a0, a1) == (b0, b1):
        return a.stride() != b.stride()
    return a0 < b1 and b0 < a1


def _tensors(xs) -> list:
    out = []
    for x in xs:
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            out.extend(_tensors(x))
    return out


def label(op, target) -> str:
    """How messages name a recorded call: ``Tensor.add_``, ``torch.matmul``'s qualname..."""
    if op in ("method", "getattr"):
        return f"Tensor.{target}"
    return getattr(target, "__qualname__", None) or getattr(target, "__name__", str(target))
