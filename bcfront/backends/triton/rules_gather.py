"""Lowering rules for gathers through index tensors: embedding, index_select,
gather and advanced indexing (``aten.index.Tensor``).

A gathered value is the source's expression with each gathered dimension's
index variable bound to a value computed in the kernel: the index tensor's
element, range-checked (`checkidx`).  Every memory read whose offset is linear
in that variable becomes a ``gather`` node (an affine base plus index times
stride), so a gather from a view (a transposed or sliced table) reads the
original storage and pointwise work on the source fuses into the same kernel.
A source whose offset is not linear in the gathered variable (a reshape folded
it into a div/mod atom) is materialized first.

Out-of-range indices.  Eager raises (IndexError on CPU, a device-side assert on
CUDA).  An index the lowering cannot prove in range (an arange or other iota
arithmetic can be proven; loaded data cannot) is wrapped in ``checkidx``: the
kernel asserts ``0 <= index < size`` on every valid lane, and the launcher runs
such kernels with Triton's debug mode so the assert is live on the GPU and in
the interpreter (`runtime`); the index is also clamped into range, so the load
never leaves the buffer even if asserts were compiled out.  A bad index is an
error, never a wrong value or an out-of-bounds read.
"""

from __future__ import annotations

import torch

from . import index as ix
from .ir import INT_DTYPES, ranges_of
from .rule_table import TV, Unsupported, rule
from .rules_pointwise import out_meta

aten = torch.ops.aten

_INDEX_DTYPES = ("int64", "int32")
_EXACT = INT_DTYPES + ("bool",)  # casts between these keep an in-range value
_INT_LIMITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


# ------------------------------------------------------------------ index values


def _interval(lo_hi_a, lo_hi_b, op):
    (a0, a1), (b0, b1) = lo_hi_a, lo_hi_b
    if op == "add":
        return a0 + b0, a1 + b1
    if op == "sub":
        return a0 - b1, a1 - b0
    prods = (a0 * b0, a0 * b1, a1 * b0, a1 * b1)
    return min(prods), max(prods)


def _fits(r, dtype: str) -> bool:
    if dtype == "uint8":
        return 0 <= r[0] and r[1] < 256
    bits = _INT_LIMITS.get(dtype)
    return bits is not None and -(2 ** (bits - 1)) <= r[0] and r[1] < 2 ** (bits - 1)


def int_range(arena, root: int, ranges) -> tuple | None:
    """Inclusive (lo, hi) of an integer expression, or None when it depends on
    loaded data (interval arithmetic over consts, iotas and checked indices)."""
    vals: dict = {}
    for i in arena.postorder([root]):
        n = arena[i]
        args = [vals.get(a) for a in n.args]
        r = None
        if n.op == "const" and not isinstance(n.attr, float):
            r = (int(n.attr), int(n.attr))
        elif n.op == "index":
            r = ix.bounds(n.attr, ranges)
        elif n.op == "checkidx":
            r = (0, n.attr[0] - 1)
        elif n.op == "cast" and args[0] is not None and arena[n.args[0]].dtype in _EXACT:
            r = args[0] if _fits(args[0], n.dtype) else None
        elif n.op in ("add", "sub", "mul") and n.dtype in INT_DTYPES and None not in args:
            r = _interval(args[0], args[1], n.op)
            r = r if _fits(r, n.dtype) else None
        vals[i] = r
    return vals[root]


def checked(ctx, idx: int, size: int, wrap: bool, ranges) -> int:
    """`idx` as an int64 index into a dimension of `size`: negative values wrapped
    when `wrap` (advanced indexing), asserted in range unless provably so."""
    ar = ctx.arena
    e = ar.cast(idx, "int64")
    r = int_range(ar, e, ranges)
    if r is not None and 0 <= r[0] and r[1] < size:
        return e
    if wrap and r is not None and -size <= r[0] and r[1] < 0:
        return ar.op("add", e, ar.const(size, "int64"))
    return ar.add("checkidx", (e,), "int64", (size, bool(wrap)))


# ------------------------------------------------------------------ binding


def _bind(arena, root: int, dyn: dict) -> int | None:
    """Replace placeholder variables (name -> int64 expression) in every load,
    gather and index leaf under `root`; None when one sits inside a div/mod atom."""
    failed = []

    def leaf(_, n):
        if n.op not in ("load", "gather", "index"):
            return None
        off = n.attr if n.op == "index" else n.attr[1]
        if not ix.free_vars(off) & dyn.keys():
            return None
        base, parts = {}, []
        for atom, c in off.terms:
            if isinstance(atom, ix.Var) and atom.name in dyn:
                parts.append(arena.op("mul", dyn[atom.name], arena.const(c, "int64")))
            elif ix.free_vars(ix.lift(atom)) & dyn.keys():
                failed.append(atom)
                return arena.const(0, n.dtype)
            else:
                base[atom] = c
        base = ix.affine(off.const, base)
        d = parts[0]
        for p in parts[1:]:
            d = arena.op("add", d, p)
        if n.op == "index":
            return arena.cast(arena.op("add", arena.add("index", (), "int64", base), d), n.dtype)
        if n.op == "gather":
            d, mask = arena.op("add", n.args[0], d), (n.args[1] if len(n.args) > 1 else None)
        else:
            mask = n.args[0] if n.args else None
        return arena.gather(n.attr[0], base, d, n.dtype, mask)

    out = arena.rewrite([root], leaf)[0]
    return None if failed else out


def gather_tv(ctx, x: TV, shape, src, *sources) -> TV:
    """Element ``x[src[0], src[1], ...]`` over the variables of `shape`: each
    ``src[d]`` is an `ix.Affine` (a plain dimension) or an int64 expression id
    (a checked index value)."""
    mapping, dyn, rng = {}, {}, ranges_of(shape)
    for d, s in enumerate(src):
        if not isinstance(s, ix.Affine) and ctx.arena[s].op == "index":
            s = ctx.arena[s].attr  # an unchecked iota: plain index arithmetic
        if isinstance(s, ix.Affine):
            mapping[f"i{d}"] = s
        else:
            mapping[f"i{d}"] = ix.var(f"g{d}")
            dyn[f"g{d}"] = s
            rng[f"g{d}"] = x.shape[d]
    for attempt in (x, None):
        if attempt is None:
            x = ctx.realize(x)  # a plain buffer: its offset is linear in every variable
        expr = ctx.arena.substitute([x.expr], mapping, rng)[0]
        bound = _bind(ctx.arena, expr, dyn)
        if bound is not None:
            return ctx.make(shape, x.dtype, bound, x, *sources)
    raise Unsupported("gather source not linear in the gathered dimension")


def _index_tv(idx) -> TV:
    if not isinstance(idx, TV) or idx.dtype not in _INDEX_DTYPES:
        raise Unsupported("index tensor of a non-integer dtype (a mask)")
    return idx


def _norm(d: int, ndim: int) -> int:
    return d + ndim if d < 0 else d


# ------------------------------------------------------------------ rules


@rule(aten.embedding.default)
def _embedding(ctx, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # padding_idx and the rest only change the backward pass
    shape, _ = out_meta(node)
    idx = _index_tv(indices)
    if weight.ndim != 2:
        raise Unsupported("embedding table is not 2-d")
    dyn = checked(ctx, idx.expr, weight.shape[0], False, ranges_of(shape))
    return gather_tv(ctx, weight, shape, [dyn, ix.var(f"i{idx.ndim}")], idx)


@rule(aten.index_select.default)
def _index_select(ctx, node, x, dim, index):
    shape, _ = out_meta(node)
    idx = _index_tv(index)
    if x.ndim == 0 or idx.ndim > 1:
        raise Unsupported("index_select of a 0-d tensor")
    dim = _norm(dim, x.ndim)
    rng = ranges_of(shape)
    e = idx.expr
    if idx.ndim == 1:
        e = ctx.arena.substitute([e], {"i0": ix.var(f"i{dim}")}, rng)[0]
    src = [ix.var(f"i{d}") for d in range(x.ndim)]
    src[dim] = checked(ctx, e, x.shape[dim], False, rng)
    return gather_tv(ctx, x, shape, src, idx)


@rule(aten.gather.default)
def _gather(ctx, node, x, dim, index, sparse_grad=False):
    shape, _ = out_meta(node)
    idx = _index_tv(index)
    if x.ndim == 0 or idx.ndim != x.ndim:
        raise Unsupported("gather of a 0-d tensor")
    dim = _norm(dim, x.ndim)
    src = [ix.var(f"i{d}") for d in range(x.ndim)]
    src[dim] = checked(ctx, idx.expr, x.shape[dim], False, ranges_of(shape))
    return gather_tv(ctx, x, shape, src, idx)


@rule(aten.index.Tensor)
def _index(ctx, node, x, indices):
    """Advanced indexing: the index tensors broadcast to a shape B whose
    dimensions replace the indexed ones in place when those are adjacent, and
    lead the result otherwise (numpy rules)."""
    shape, _ = out_meta(node)
    indices = list(indices) + [None] * (x.ndim - len(indices))
    pos = [d for d, t in enumerate(indices) if t is not None]
    if not pos:
        raise Unsupported("index without index tensors")
    tvs = [_index_tv(indices[d]) for d in pos]
    b_shape = tuple(torch.broadcast_shapes(*[t.shape for t in tvs]))
    adjacent = pos == list(range(pos[0], pos[-1] + 1))
    first = pos[0] if adjacent else 0
    rest = [d for d in range(x.ndim) if d not in pos]
    rest_vars = {}
    k = 0
    for d in rest:
        if k == first:
            k += len(b_shape)
        rest_vars[d] = k
        k += 1
    expect = [None] * (x.ndim - len(pos) + len(b_shape))
    for d, j in rest_vars.items():
        expect[j] = x.shape[d]
    for j, s in enumerate(b_shape):
        expect[first + j] = s
    if tuple(expect) != tuple(shape):
        raise Unsupported(f"index result shape {shape} != {tuple(expect)}")
    rng = ranges_of(shape)
    to_out = {f"i{j}": ix.var(f"i{first + j}") for j in range(len(b_shape))}
    src = [ix.var(f"i{rest_vars[d]}") if d in rest_vars else None for d in range(x.ndim)]
    for d, t in zip(pos, tvs):
        e = ctx.arena.substitute([ctx.broadcast(t, b_shape)], to_out, rng)[0]
        src[d] = checked(ctx, e, x.shape[d], True, rng)
    return gather_tv(ctx, x, shape, src, *tvs)
