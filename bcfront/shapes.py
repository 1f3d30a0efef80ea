"""`mark_dynamic`, `mark_static`, `maybe_mark_dynamic`: the user's say over symbolic sizes.

They record the dimensions on the tensor itself (as torch's ``torch._dynamo.mark_dynamic``
family does, whose marks bcfront reads as well); the next capture that meets the tensor
as an input follows them (`frontend/model/shape_policy.py`).  No torch import here.
"""

from __future__ import annotations

from .errors import DynamicDimSpecializedError, DynamicDimSpecializedWarning
from .frontend.model.shape_policy import DYNAMIC_ATTR, MAYBE_DYNAMIC_ATTR, STATIC_ATTR

__all__ = [
    "DynamicDimSpecializedError",
    "DynamicDimSpecializedWarning",
    "mark_dynamic",
    "mark_static",
    "maybe_mark_dynamic",
]


def _dims(t, dim) -> set[int]:
    if not hasattr(t, "dim") or not hasattr(t, "shape"):
        raise TypeError(f"expected a torch.Tensor, got {type(t).__name__}")
    dims = [dim] if isinstance(dim, int) else list(dim)
    n = t.dim()
    out = set()
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"a dimension must be an int, got {type(d).__name__}")
        if not -n <= d < n:
            raise IndexError(f"dimension {d} out of range for a tensor of {n} dimensions")
        out.add(d % n)
    return out


def _mark(t, dim, attr: str, others: tuple[str, ...]) -> None:
    dims = _dims(t, dim)
    setattr(t, attr, getattr(t, attr, set()) | dims)
    for other in others:  # the latest mark of a dimension wins
        left: set[int] = getattr(t, other, set()) - dims
        if hasattr(t, other):
            setattr(t, other, left)


def mark_dynamic(t, dim) -> None:
    """Make dimension(s) `dim` of `t` symbolic from the first capture that sees `t`.  Code
    that needs the size's value specializes it: a `DynamicDimSpecializedWarning` (and a note
    in explain), or `DynamicDimSpecializedError` under ``capture(..., fullgraph=True)``."""
    _mark(t, dim, DYNAMIC_ATTR, (STATIC_ATTR, MAYBE_DYNAMIC_ATTR))


def maybe_mark_dynamic(t, dim) -> None:
    """Like `mark_dynamic`; a capture that must specialize the size does so without a note."""
    _mark(t, dim, MAYBE_DYNAMIC_ATTR, (STATIC_ATTR, DYNAMIC_ATTR))


def mark_static(t, dim) -> None:
    """Keep dimension(s) `dim` of `t` static: a new size recompiles, never a symbol."""
    _mark(t, dim, STATIC_ATTR, (DYNAMIC_ATTR, MAYBE_DYNAMIC_ATTR))
