"""Basic tensor indexing by a symbolic int, kept symbolic: ``t[:, n]`` as ``select``.

torch's Python indexing turns an int index that is a SymInt into a plain int: the fake
``t[:, :, n]`` guards ``n == 4`` (a slice bound stays symbolic: ``t[:, :n]`` guards only
``n <= size``).  A decoding loop writing ``seqs[:, cur_len] = token`` with the length
symbolic would then recompile at every step.  ``t.select(dim, n)`` takes the SymInt as
it is.  So a key of basic parts only -- ints, slices, None, Ellipsis -- holding a symbolic
int as an index is traced as the same key with that index replaced by a full slice, then
``select`` on each such dimension (the last first, so the others keep their place); a
write, ``t[key] = v``, as ``copy_`` of ``v`` (a tensor, broadcast as ``__setitem__``
broadcasts it) or ``fill_`` of a Python number into that view -- what ``__setitem__`` does
for a basic key.  Any other key (a tensor, a list, a bool) goes as before.
"""

from __future__ import annotations

import operator

from ...ir.fake import int_hint
from ..model.values import Const, SliceV, SymIntV, TensorV, TupleV, Value

_BASIC_CONSTS = (int, slice, type(None), type(Ellipsis))


def _parts(key: Value) -> list[Value] | None:
    parts = list(key.items) if isinstance(key, TupleV) and key.python_type() is tuple else [key]
    for p in parts:
        if isinstance(p, SymIntV):
            continue
        if isinstance(p, Const) and type(p.value) in _BASIC_CONSTS:
            continue
        if isinstance(p, SliceV):  # bounds with symbolic ints: torch keeps them symbolic
            continue
        return None
    return parts


def split_key(t: TensorV, key: Value) -> tuple[Value, list[tuple[int, SymIntV]]] | None:
    """``(key', selects)``: `key` with each symbolic int index replaced by a full slice, and
    the (dimension of ``t[key']``, index) pairs to ``select`` after it, last dimension
    first; None where `key` is not basic or holds no symbolic int index."""
    parts = _parts(key)
    if parts is None or not any(isinstance(p, SymIntV) for p in parts):
        return None
    if sum(1 for p in parts if isinstance(p, Const) and p.value is Ellipsis) > 1:
        return None  # torch's own error
    consuming = sum(
        1 for p in parts if not (isinstance(p, Const) and (p.value is None or p.value is Ellipsis))
    )
    ndim = t.fake.dim()
    if consuming > ndim:
        return None  # too many indices: torch's own error
    out_dim = in_dim = 0
    new_parts: list[Value] = []
    selects: list[tuple[int, SymIntV]] = []
    for p in parts:
        if isinstance(p, SymIntV):
            size, index = int_hint(t.fake.shape[in_dim]), int_hint(p.example)
            if size is None or index is None or not -size <= index < size:
                return None  # out of range here: Python indexing's own IndexError, its message
            selects.append((out_dim, p))
            new_parts.append(Const(slice(None)))
            out_dim += 1
            in_dim += 1
        elif isinstance(p, Const) and p.value is Ellipsis:
            new_parts.append(p)
            out_dim += ndim - consuming
            in_dim += ndim - consuming
        elif isinstance(p, Const) and type(p.value) is int:
            new_parts.append(p)  # the dimension goes
            in_dim += 1
        elif isinstance(p, Const) and p.value is None:
            new_parts.append(p)
            out_dim += 1
        else:  # a slice: one dimension of the result
            new_parts.append(p)
            out_dim += 1
            in_dim += 1
    selects.sort(key=lambda s: -s[0])
    return TupleV(new_parts), selects


def view_of(tx, t: TensorV, key: Value, record) -> Value | None:
    """``t[key]`` through ``select`` (see the module docstring); None: not such a key."""
    split = split_key(t, key)
    if split is None:
        return None
    new_key, selects = split
    out = record(tx, "call", operator.getitem, [t, new_key], {})
    for dim, index in selects:
        out = record(tx, "method", "select", [out, Const(dim), index], {})
    return out


def write(tx, t: TensorV, key: Value, value: Value, record) -> bool:
    """``t[key] = value`` through the view and ``copy_``/``fill_``; False: not such a key
    or value (the caller records ``__setitem__`` itself)."""
    if isinstance(value, TensorV):
        method = "copy_"
    elif isinstance(value, Const) and type(value.value) in (int, float, bool):
        method = "fill_"
    else:
        return False
    view = view_of(tx, t, key, record)
    if not isinstance(view, TensorV):
        return False
    if isinstance(value, TensorV) and not _broadcasts_to(value.fake.shape, view.fake.shape):
        return False  # __setitem__'s own error (its message is not copy_'s); the view is unused
    record(tx, "method", method, [view, value], {}, mutates=True)
    return True


def _broadcasts_to(shape, target) -> bool:
    """`shape` broadcasts to `target` as ``copy_`` takes it (no extra leading dimension)."""
    import torch

    try:
        return len(shape) <= len(target) and tuple(torch.broadcast_shapes(shape, target)) == tuple(target)
    except RuntimeError:
        return False
