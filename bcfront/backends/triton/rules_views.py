"""Lowering rules for views and data movement folded into index arithmetic.

A true view keeps its `TensorRef` (base buffer plus the view ops to replay), so
an extern or a graph output gets the same aliasing view eager would; its
expression is the base's expression re-indexed, so kernels read the original
storage through strides and never copy.  cat / pad / flip / roll / scatters are
not views: they become `where` selections over masked loads.
"""

from __future__ import annotations

import torch

from . import index as ix
from .ir import contiguous_strides, ivars, ranges_of
from .rule_table import TV, Unsupported, dense_strides_ok, rule, sizes_of
from .rules_pointwise import out_meta

aten = torch.ops.aten


def _norm_dim(d: int, ndim: int) -> int:
    return d + ndim if d < 0 else d


def _step(node, *args):
    return (node.target, tuple(args), str(node.target))


def _mapping(old_exprs) -> dict:
    return {f"i{k}": e for k, e in enumerate(old_exprs)}


@rule(aten.view, aten._unsafe_view, aten.reshape)
def _view(ctx, node, x, size):
    shape, _ = out_meta(node)
    if 0 in shape or 0 in x.shape:
        old = [ix.ZERO] * x.ndim  # nothing is ever indexed
    else:
        flat = ix.strided(ivars(len(shape)), contiguous_strides(shape))
        old = ix.unravel(flat, x.shape, ranges_of(shape))
    return ctx.view(x, shape, _mapping(old), _step(node, size))


@rule(aten.expand)
def _expand(ctx, node, x, size, implicit=False):
    shape, _ = out_meta(node)
    lead = len(shape) - x.ndim
    old = [
        ix.ZERO if x.shape[j] == 1 and shape[lead + j] != 1 else ix.var(f"i{lead + j}") for j in range(x.ndim)
    ]
    return ctx.view(x, shape, _mapping(old), _step(node, size))


@rule(aten.permute)
def _permute(ctx, node, x, dims):
    shape, _ = out_meta(node)
    dims = [_norm_dim(d, x.ndim) for d in dims]
    old = [None] * x.ndim
    for k, d in enumerate(dims):
        old[d] = ix.var(f"i{k}")
    return ctx.view(x, shape, _mapping(old), _step(node, dims))


@rule(aten.transpose.int)
def _transpose(ctx, node, x, d0, d1):
    d0, d1 = _norm_dim(d0, x.ndim), _norm_dim(d1, x.ndim)
    perm = list(range(x.ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    tv = _permute(ctx, node, x, perm)
    if tv.ref is not None:  # replay the node's own op, not a permute
        tv = ctx.view(x, tv.shape, _mapping(_perm_old(perm)), _step(node, d0, d1))
    return tv


def _perm_old(perm):
    old = [None] * len(perm)
    for k, d in enumerate(perm):
        old[d] = ix.var(f"i{k}")
    return old


@rule(aten.t)
def _t(ctx, node, x):
    shape, _ = out_meta(node)
    old = _perm_old(list(range(x.ndim))[::-1])
    return ctx.view(x, shape, _mapping(old), _step(node))


@rule(aten.unsqueeze)
def _unsqueeze(ctx, node, x, dim):
    shape, _ = out_meta(node)
    dim = _norm_dim(dim, x.ndim + 1)
    old = [ix.var(f"i{j if j < dim else j + 1}") for j in range(x.ndim)]
    return ctx.view(x, shape, _mapping(old), _step(node, dim))


@rule(aten.squeeze)
def _squeeze(ctx, node, x, dim=None):
    shape, _ = out_meta(node)
    if dim is None:
        dims = [d for d, s in enumerate(x.shape) if s == 1]
    else:
        dims = dim if isinstance(dim, (list, tuple)) else [dim]
        dims = [_norm_dim(d, x.ndim) for d in dims if x.shape[_norm_dim(d, x.ndim)] == 1]
    old, k = [], 0
    for j in range(x.ndim):
        if j in dims:
            old.append(ix.ZERO)
        else:
            old.append(ix.var(f"i{k}"))
            k += 1
    args = () if dim is None else (dim,)
    return ctx.view(x, shape, _mapping(old), _step(node, *args))


@rule(aten.select.int)
def _select(ctx, node, x, dim, index):
    shape, _ = out_meta(node)
    dim = _norm_dim(dim, x.ndim)
    index = index + x.shape[dim] if index < 0 else index
    old = [ix.var(f"i{j if j < dim else j - 1}") for j in range(x.ndim)]
    old[dim] = ix.lift(index)
    return ctx.view(x, shape, _mapping(old), _step(node, dim, index))


def _slice_bounds(size, start, end, step):
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    return start, end


@rule(aten.slice.Tensor)
def _slice(ctx, node, x, dim=0, start=None, end=None, step=1):
    shape, _ = out_meta(node)
    dim = _norm_dim(dim, x.ndim)
    start, _ = _slice_bounds(x.shape[dim], start, end, step)
    old = [ix.var(f"i{j}") for j in range(x.ndim)]
    old[dim] = ix.var(f"i{dim}") * step + start
    return ctx.view(x, shape, _mapping(old), _step(node, dim, start, start + shape[dim] * step, step))


@rule(aten.alias, aten.detach)
def _alias(ctx, node, x):
    return x


def _pieces(ctx, node, x, dim, sizes):
    """Slices of `x` along `dim` (shared by split / unbind style ops)."""
    dim = _norm_dim(dim, x.ndim)
    out, start = [], 0
    for size in sizes:
        shape = list(x.shape)
        shape[dim] = size
        old = [ix.var(f"i{j}") for j in range(x.ndim)]
        old[dim] = ix.var(f"i{dim}") + start
        step = (aten.slice.Tensor, (dim, start, start + size, 1), "aten.slice.Tensor")
        out.append(ctx.view(x, shape, _mapping(old), step))
        start += size
    return out


@rule(aten.split.Tensor)
def _split(ctx, node, x, split_size, dim=0):
    d = _norm_dim(dim, x.ndim)
    sizes = [sizes_of(v.shape)[d] for v in node.meta["val"]]
    return _pieces(ctx, node, x, d, sizes)


@rule(aten.split_with_sizes)
def _split_with_sizes(ctx, node, x, split_sizes, dim=0):
    return _pieces(ctx, node, x, dim, split_sizes)


@rule(aten.unbind.int)
def _unbind(ctx, node, x, dim=0):
    dim = _norm_dim(dim, x.ndim)
    out = []
    for k in range(x.shape[dim]):
        old = [ix.var(f"i{j if j < dim else j - 1}") for j in range(x.ndim)]
        old[dim] = ix.lift(k)
        shape = x.shape[:dim] + x.shape[dim + 1 :]
        step = (aten.select.int, (dim, k), "aten.select.int")
        out.append(ctx.view(x, shape, _mapping(old), step))
    return out


# ------------------------------------------------------------------ selections


def _index_value(ctx, var: str):
    return ctx.arena.add("index", (), "int64", ix.var(var))


def _in_range(ctx, var: str, lo: int, hi: int, size: int):
    """bool expression lo <= var < hi (terms that always hold are omitted)."""
    ar = ctx.arena
    i = _index_value(ctx, var)
    conds = []
    if lo > 0:
        conds.append(ar.op("ge", i, ar.const(lo, "int64"), dtype="bool"))
    if hi < size:
        conds.append(ar.op("lt", i, ar.const(hi, "int64"), dtype="bool"))
    if not conds:
        return None
    return conds[0] if len(conds) == 1 else ar.op("and", conds[0], conds[1], dtype="bool")


def _shifted(ctx, tv: TV, dim, offset, mask, out):
    """tv re-indexed so that element i along `dim` reads tv[i - offset], loads masked."""
    old = [ix.var(f"i{j}") for j in range(tv.ndim)]
    old[dim] = ix.var(f"i{dim}") - offset
    e = ctx.arena.substitute([tv.expr], _mapping(old), None, mask)[0]
    return ctx.arena.cast(e, out)


@rule(aten.cat)
def _cat(ctx, node, tensors, dim=0):
    shape, out = out_meta(node)
    parts = [t for t in tensors if isinstance(t, TV) and not (t.ndim == 1 and t.shape[0] == 0)]
    if not parts:
        raise Unsupported("cat of nothing")
    dim = _norm_dim(dim, len(shape))
    ar = ctx.arena
    parts = [p for p in parts if p.shape[dim] > 0]
    if not parts:
        return ctx.make(shape, out, ar.const(0, out))
    offs, start = [], 0
    for p in parts:
        offs.append(start)
        start += p.shape[dim]
    expr = None
    for p, off in reversed(list(zip(parts, offs))):
        cond = _in_range(ctx, f"i{dim}", off, off + p.shape[dim], shape[dim])
        val = _shifted(ctx, p, dim, off, cond, out)
        expr = val if expr is None else ar.op("where", cond, val, expr, dtype=out)
    return ctx.make(shape, out, expr, *parts)


@rule(aten.constant_pad_nd)
def _pad(ctx, node, x, pad, value=0):
    shape, out = out_meta(node)
    ar = ctx.arena
    nd = len(shape)
    old = [ix.var(f"i{j}") for j in range(nd)]
    conds = []
    for k in range(len(pad) // 2):
        d = nd - 1 - k
        lo = pad[2 * k]
        old[d] = ix.var(f"i{d}") - lo
        c = _in_range(ctx, f"i{d}", max(lo, 0), lo + x.shape[d], shape[d])
        if c is not None:
            conds.append(c)
    mask = None
    for c in conds:
        mask = c if mask is None else ar.op("and", mask, c, dtype="bool")
    val = ar.cast(ar.substitute([x.expr], _mapping(old), None, mask)[0], out)
    if mask is not None:
        val = ar.op("where", mask, val, ar.const(value, out), dtype=out)
    return ctx.make(shape, out, val, x)


@rule(aten.flip)
def _flip(ctx, node, x, dims):
    shape, out = out_meta(node)
    dims = [_norm_dim(d, x.ndim) for d in dims]
    old = [ix.var(f"i{j}") for j in range(x.ndim)]
    for d in dims:
        # (size - 1 - i) stays non-negative, as index expressions require
        old[d] = ix.var(f"i{d}") * -1 + (shape[d] - 1)
    return ctx.make(shape, out, ctx.arena.substitute([x.expr], _mapping(old), ranges_of(shape))[0], x)


@rule(aten.roll)
def _roll(ctx, node, x, shifts, dims=()):
    shape, out = out_meta(node)
    shifts = shifts if isinstance(shifts, (list, tuple)) else [shifts]
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    if not dims:
        raise Unsupported("roll of the flattened tensor")
    rng = ranges_of(shape)
    old = [ix.var(f"i{j}") for j in range(x.ndim)]
    for s, d in zip(shifts, dims):
        d = _norm_dim(d, x.ndim)
        size = shape[d]
        if size == 0:
            continue
        old[d] = ix.mod(ix.var(f"i{d}") + (size - s % size), size, rng)
    return ctx.make(shape, out, ctx.arena.substitute([x.expr], _mapping(old), rng)[0], x)


@rule(aten.repeat)
def _repeat(ctx, node, x, repeats):
    shape, out = out_meta(node)
    rng = ranges_of(shape)
    lead = len(shape) - x.ndim
    old = []
    for j, size in enumerate(x.shape):
        v = ix.var(f"i{lead + j}")
        old.append(ix.ZERO if size <= 1 else ix.mod(v, size, rng))
    return ctx.make(shape, out, ctx.arena.substitute([x.expr], _mapping(old), rng)[0], x)


@rule(aten.slice_scatter)
def _slice_scatter(ctx, node, base, src, dim=0, start=None, end=None, step=1):
    shape, out = out_meta(node)
    dim = _norm_dim(dim, len(shape))
    start, end = _slice_bounds(shape[dim], start, end, step)
    ar = ctx.arena
    cond = _in_range(ctx, f"i{dim}", start, end, shape[dim])
    if step != 1:
        i = _index_value(ctx, f"i{dim}")
        rem = ar.op("remainder", ar.op("sub", i, ar.const(start, "int64")), ar.const(step, "int64"))
        on = ar.op("eq", rem, ar.const(0, "int64"), dtype="bool")
        cond = on if cond is None else ar.op("and", cond, on, dtype="bool")
    old = [ix.var(f"i{j}") for j in range(len(shape))]
    if step == 1:
        old[dim] = ix.var(f"i{dim}") - start
    else:
        old[dim] = ix.floordiv(ix.var(f"i{dim}") - start, step)
    val = ar.cast(ar.substitute([src.expr], _mapping(old), None, cond)[0], out)
    base_e = ctx.value(base, shape, out)
    expr = val if cond is None else ar.op("where", cond, val, base_e, dtype=out)
    return ctx.make(shape, out, expr, base, src)


@rule(aten.select_scatter)
def _select_scatter(ctx, node, base, src, dim, index):
    shape, out = out_meta(node)
    dim = _norm_dim(dim, len(shape))
    index = index + shape[dim] if index < 0 else index
    ar = ctx.arena
    cond = ar.op("eq", _index_value(ctx, f"i{dim}"), ar.const(index, "int64"), dtype="bool")
    old = [ix.var(f"i{j if j < dim else j + 1}") for j in range(len(shape) - 1)]
    val = ar.cast(ar.substitute([src.expr], _mapping(old), None, cond)[0], out)
    expr = ar.op("where", cond, val, ctx.value(base, shape, out), dtype=out)
    return ctx.make(shape, out, expr, base, src)


@rule(aten.as_strided)
def _as_strided(ctx, node, x, size, stride, storage_offset=None):
    """as_strided over a value not yet in memory: eager would have laid it out
    densely with the strides the trace recorded, so storage position p is the
    element whose dense offset is p."""
    if x.ref is not None or x.hint is None or not dense_strides_ok(x.shape, x.hint):
        raise Unsupported("as_strided of a real buffer stays a torch view")
    shape, _ = out_meta(node)
    rng = ranges_of(shape)
    pos = ix.strided(ivars(len(shape)), stride, storage_offset or 0)
    order = sorted((d for d in range(x.ndim) if x.shape[d] != 1), key=lambda d: -x.hint[d])
    parts = ix.unravel(pos, [x.shape[d] for d in order], rng) if order else []
    old = [ix.ZERO] * x.ndim
    for d, e in zip(order, parts):
        old[d] = e
    expr = ctx.arena.substitute([x.expr], _mapping(old), rng)[0]
    return ctx.make(shape, x.dtype, expr, x)
