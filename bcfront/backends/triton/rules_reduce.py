"""Lowering rules for reductions.

A reduction becomes a `Compute` whose body is the (inlined) input expression
over the full iteration sizes; its buffer holds the accumulator dtype (float32
for half inputs), and casts to the output dtype are ordinary pointwise work
that fuses after it.  mean and var/std are sums plus pointwise epilogues; var
is two-pass (sum, then sum of squared deviations from the mean), which the
scheduler puts in one kernel.  cumsum is a scan: a `Compute` with ``scan``
set, whose buffer holds the output dtype (it runs in a kernel of its own, so
there is no later kernel for the cast to fuse into).
"""

from __future__ import annotations

import torch

from . import index as ix
from .ir import Layout, compute_dtype, contiguous_strides, identity, is_float, numel
from .rule_table import TV, Unsupported, dense_strides_ok, dtype_name, rule, sizes_of
from .rules_pointwise import out_meta

aten = torch.ops.aten

_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}


def _dims(x: TV, dim) -> tuple:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(x.ndim))
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return tuple(sorted({d + x.ndim if d < 0 else d for d in dims}))


class Reduced:
    """A reduction's result: `load(full_vars)` reads it broadcast over the
    input's iteration space; `tv` is the result in the output shape."""

    def __init__(self, ctx, name, layout, sizes, dims, out_shape, origins):
        self.ctx, self.name, self.layout = ctx, name, layout
        self.sizes, self.dims, self.out_shape = sizes, dims, out_shape
        self.origins = origins

    def load_full(self) -> int:
        kept = [ix.var(f"i{p}") for p in range(len(self.sizes)) if p not in self.dims]
        return self.ctx.arena.load(self.name, self.layout.offset(kept), self.layout.dtype)

    def tv(self, keepdim: bool) -> TV:
        ctx = self.ctx
        base = ctx.load_buffer(self.name, self.layout)
        if not keepdim:
            return TV(base.shape, base.dtype, base.expr, base.ref, None, self.origins)
        shape = tuple(1 if p in self.dims else s for p, s in enumerate(self.sizes))
        kept = [ix.var(f"i{p}") for p in range(len(self.sizes)) if p not in self.dims]
        mapping = {f"i{k}": v for k, v in enumerate(kept)}
        step = (aten.view.default, (list(shape),), "aten.view.default")
        v = ctx.view(base, shape, mapping, step)
        return TV(v.shape, v.dtype, v.expr, v.ref, None, self.origins)


def reduce(ctx, x: TV, dims, kind: str, acc: str, origins) -> Reduced | int:
    """Reduce `x` over `dims` with `kind`; returns a `Reduced` or, for an empty
    or trivial reduction, a plain expression over the kept positions."""
    sizes = x.shape
    rnumel = numel([sizes[d] for d in dims])
    kept_sizes = tuple(s for p, s in enumerate(sizes) if p not in dims)
    ar = ctx.arena
    if rnumel == 0:
        if kind not in _IDENTITY:
            raise Unsupported(f"{kind} of an empty tensor")  # eager raises
        return ar.const(_IDENTITY[kind], acc)
    body = ar.cast(x.expr, acc if kind not in ("argmax", "argmin") else x.dtype)
    if rnumel == 1:
        if kind in ("argmax", "argmin"):
            return ar.const(0, "int64")
        mapping = {f"i{d}": ix.ZERO for d in dims}
        kept = [p for p in range(len(sizes)) if p not in dims]
        mapping.update({f"i{p}": ix.var(f"i{k}") for k, p in enumerate(kept)})
        return ar.substitute([body], mapping)[0]
    splits = split_factor(numel(kept_sizes), rnumel) if kind in _IDENTITY or kind in ("max", "min") else 1
    if splits > 1:
        return _split_reduce(ctx, x, body, dims, kind, acc, origins, splits)
    out_dtype = "int64" if kind in ("argmax", "argmin") else acc
    layout = Layout(kept_sizes, contiguous_strides(kept_sizes), out_dtype)
    name = ctx.compute(sizes, body, layout, dims, kind, origins)
    return Reduced(ctx, name, layout, sizes, dims, None, frozenset())


# A reduction with few outputs and long rows would run on a handful of programs
# (x.sum() on one); it is split in two: partial results over chunks of each
# row, then a short reduction of the partials.
SPLIT_MIN_RNUMEL = 1 << 16
SPLIT_MAX_XNUMEL = 256


def split_factor(xnumel: int, rnumel: int) -> int:
    if rnumel < SPLIT_MIN_RNUMEL or xnumel > SPLIT_MAX_XNUMEL:
        return 1
    return max(2, min(-(-rnumel // 4096), 1024 // max(xnumel, 1)))


def _split_reduce(ctx, x: TV, body: int, dims, kind, acc, origins, splits) -> Reduced:
    ar = ctx.arena
    sizes = x.shape
    rnumel = numel([sizes[d] for d in dims])
    chunk = -(-rnumel // splits)
    splits = -(-rnumel // chunk)
    kept = [p for p in range(len(sizes)) if p not in dims]
    k = len(kept)
    part_sizes = tuple(sizes[p] for p in kept) + (splits, chunk)
    rng = {f"i{j}": s for j, s in enumerate(part_sizes)}
    r = ix.var(f"i{k}") * chunk + ix.var(f"i{k + 1}")
    mapping = {f"i{p}": ix.var(f"i{j}") for j, p in enumerate(kept)}
    mapping.update({f"i{d}": e for d, e in zip(dims, ix.unravel(r, [sizes[d] for d in dims], rng))})
    valid = None
    if splits * chunk != rnumel:  # the last chunk is ragged
        valid = ar.op("lt", ar.add("index", (), "int64", r), ar.const(rnumel, "int64"), dtype="bool")
    part_body = ar.substitute([body], mapping, rng, valid)[0]
    if valid is not None:
        part_body = ar.op("where", valid, part_body, ar.const(identity(kind, acc), acc), dtype=acc)
    part_layout = Layout(part_sizes[:-1], contiguous_strides(part_sizes[:-1]), acc)
    part = ctx.compute(part_sizes, part_body, part_layout, (k + 1,), kind, origins)
    partial = ctx.load_buffer(part, part_layout)
    final = reduce(ctx, TV(partial.shape, acc, partial.expr), (k,), kind, acc, origins)
    # the caller sees an ordinary reduction of `x` over `dims`
    return Reduced(ctx, final.name, final.layout, sizes, dims, None, frozenset())


def _result(ctx, node, x, dims, keepdim, r, out: str, post=None) -> TV:
    """Wrap a `reduce` result as the node's output (shape, keepdim, cast)."""
    if isinstance(r, Reduced):
        tv = r.tv(keepdim)
    else:
        kept = tuple(s for p, s in enumerate(x.shape) if p not in dims)
        tv = TV(kept, ctx.arena.nodes[r].dtype, r)
        if keepdim:
            full = tuple(1 if p in dims else s for p, s in enumerate(x.shape))
            k = [ix.var(f"i{p}") for p in range(len(full)) if p not in dims]
            tv = ctx.view(tv, full, {f"i{j}": v for j, v in enumerate(k)})
    e = tv.expr if post is None else post(tv.expr)
    if e != tv.expr or tv.dtype != out:
        tv = ctx.make(tv.shape, out, ctx.arena.cast(e, out), tv)
    return tv


def _origins(x: TV, node):
    return x.origins | {node.name}


def _acc_dtype(kind: str, x: TV, out: str) -> str:
    if kind in ("sum", "prod"):
        return compute_dtype(out)
    if kind in ("max", "min"):
        return compute_dtype(x.dtype)
    return "bool"


def _simple(kind):
    def lower(ctx, node, x, dim=None, keepdim=False, dtype=None):
        _, out = out_meta(node)
        dims = _dims(x, dim)
        r = reduce(ctx, x, dims, kind, _acc_dtype(kind, x, out), _origins(x, node))
        return _result(ctx, node, x, dims, keepdim, r, out)

    return lower


rule(aten.sum.dim_IntList)(_simple("sum"))
rule(aten.prod.dim_int)(
    lambda ctx, node, x, dim, keepdim=False, dtype=None: _simple("prod")(ctx, node, x, [dim], keepdim)
)
rule(aten.amax)(_simple("max"))
rule(aten.amin)(_simple("min"))
rule(aten.any.dim, aten.any.dims)(_simple("any"))
rule(aten.all.dim, aten.all.dims)(_simple("all"))


@rule(
    aten.sum.default,
    aten.prod.default,
    aten.any.default,
    aten.all.default,
    aten.max.default,
    aten.min.default,
)
def _full_reduce(ctx, node, x, dtype=None):
    kind = {"sum": "sum", "prod": "prod", "any": "any", "all": "all", "max": "max", "min": "min"}[
        str(node.target.overloadpacket).split(".")[-1]
    ]
    return _simple(kind)(ctx, node, x, None, False)


def _mean_post(ctx, n):
    return lambda e: ctx.arena.op("truediv", e, ctx.arena.const(n, ctx.arena.nodes[e].dtype))


@rule(aten.mean.dim, aten.mean.default)
def _mean(ctx, node, x, dim=None, keepdim=False, dtype=None):
    _, out = out_meta(node)
    if not is_float(out):
        raise Unsupported("integer mean")
    dims = _dims(x, dim)
    n = numel([x.shape[d] for d in dims])
    r = reduce(ctx, x, dims, "sum", compute_dtype(out), _origins(x, node))
    return _result(ctx, node, x, dims, keepdim, r, out, _mean_post(ctx, n))


def _arg(kind):
    def lower(ctx, node, x, dim=None, keepdim=False):
        if dim is None:
            dims = tuple(range(x.ndim))
            if keepdim:
                raise Unsupported("arg-reduction of all dims with keepdim")
        else:
            dims = _dims(x, dim)
        r = reduce(ctx, x, dims, kind, "int64", _origins(x, node))
        return _result(ctx, node, x, dims, keepdim and dim is not None, r, "int64")

    return lower


rule(aten.argmax)(_arg("argmax"))
rule(aten.argmin)(_arg("argmin"))


@rule(aten.max.dim, aten.min.dim)
def _max_dim(ctx, node, x, dim, keepdim=False):
    kind = "max" if node.target is aten.max.dim else "min"
    dims = _dims(x, dim)
    vals = reduce(ctx, x, dims, kind, compute_dtype(x.dtype), _origins(x, node))
    idx = reduce(ctx, x, dims, "arg" + kind, "int64", _origins(x, node))
    out = dtype_name(node.meta["val"][0].dtype)
    return (
        _result(ctx, node, x, dims, keepdim, vals, out),
        _result(ctx, node, x, dims, keepdim, idx, "int64"),
    )


# ------------------------------------------------------------------ variance


def _variance(ctx, node, x, dim, correction, acc):
    """Two-pass variance; returns (dims, var_sum Reduced-or-expr, mean_sum, n, divisor)."""
    dims = _dims(x, dim)
    n = numel([x.shape[d] for d in dims])
    corr = 1 if correction is None else correction
    divisor = max(n - corr, 0)
    xf = TV(x.shape, acc, ctx.arena.cast(x.expr, acc), None, None, x.origins)
    origins = _origins(x, node)
    s1 = reduce(ctx, xf, dims, "sum", acc, origins)
    ar = ctx.arena
    mean_full = ar.op("truediv", _full(ctx, s1, x, dims), ar.const(n, acc))
    dev = ar.op("sub", xf.expr, mean_full)
    sq = TV(x.shape, acc, ar.op("mul", dev, dev), None, None, x.origins)
    s2 = reduce(ctx, sq, dims, "sum", acc, origins)
    return dims, s1, s2, n, divisor


def _full(ctx, r, x: TV, dims) -> int:
    """A reduction result as an expression over the input's full index space."""
    if isinstance(r, Reduced):
        return r.load_full()
    kept = [p for p in range(x.ndim) if p not in dims]
    return ctx.arena.substitute([r], {f"i{k}": ix.var(f"i{p}") for k, p in enumerate(kept)})[0]


def _var_post(ctx, divisor):
    def post(e):
        ar = ctx.arena
        d = ar.nodes[e].dtype
        return ar.op("truediv", e, ar.const(divisor, d))

    return post


@rule(aten.var.correction)
def _var(ctx, node, x, dim=None, *, correction=None, keepdim=False):
    _, out = out_meta(node)
    if not is_float(out):
        raise Unsupported("variance of integers")
    dims, _, s2, _, divisor = _variance(ctx, node, x, dim, correction, compute_dtype(out))
    return _result(ctx, node, x, dims, keepdim, s2, out, _var_post(ctx, divisor))


@rule(aten.var_mean.correction)
def _var_mean(ctx, node, x, dim=None, *, correction=None, keepdim=False):
    out = dtype_name(node.meta["val"][0].dtype)
    if not is_float(out):
        raise Unsupported("variance of integers")
    dims, s1, s2, n, divisor = _variance(ctx, node, x, dim, correction, compute_dtype(out))
    var = _result(ctx, node, x, dims, keepdim, s2, out, _var_post(ctx, divisor))
    mean = _result(ctx, node, x, dims, keepdim, s1, out, _mean_post(ctx, n))
    return (var, mean)


@rule(aten.linalg_vector_norm)
def _vector_norm(ctx, node, x, ord=2, dim=None, keepdim=False, *, dtype=None):
    _, out = out_meta(node)
    if not is_float(out):
        raise Unsupported("norm of integers")
    acc = compute_dtype(out)
    ar = ctx.arena
    dims = _dims(x, dim)
    mag = ar.op("abs", ar.cast(x.expr, acc))
    ord = float(ord)
    if ord == float("inf") or ord == float("-inf"):
        kind, body, post = ("max" if ord > 0 else "min"), mag, None
    elif ord == 0:
        kind, body, post = "sum", ar.cast(ar.op("ne", mag, ar.const(0, acc), dtype="bool"), acc), None
    elif ord == 1:
        kind, body, post = "sum", mag, None
    elif ord == 2:
        kind, body = "sum", ar.op("mul", mag, mag)
        post = lambda e: ar.op("sqrt", e)  # noqa: E731
    else:
        kind, body = "sum", ar.op("pow", mag, ar.const(ord, acc))
        post = lambda e: ar.op("pow", e, ar.const(1.0 / ord, acc))  # noqa: E731
    src = TV(x.shape, acc, body, None, None, x.origins)
    r = reduce(ctx, src, dims, kind, acc, _origins(x, node))
    return _result(ctx, node, x, dims, keepdim, r, out, post)


@rule(aten.cumsum.default)
def _cumsum(ctx, node, x, dim, dtype=None):
    shape, out = out_meta(node)
    (d,) = _dims(x, dim) if x.ndim else (None,)
    body = ctx.value(x, shape, compute_dtype(out))
    if d is None or shape[d] == 1:
        # nothing to accumulate: a cast
        return ctx.make(shape, out, ctx.arena.cast(body, out), x)
    hint = sizes_of(node.meta["val"].stride())
    stride = hint if dense_strides_ok(shape, hint) else contiguous_strides(shape)
    layout = Layout(shape, stride, out)
    name = ctx.compute(shape, body, layout, (d,), "sum", _origins(x, node), scan=True)
    return ctx.load_buffer(name, layout)
