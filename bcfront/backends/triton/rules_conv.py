"""Lowering rules for sliding-window ops: convolution and pooling as reductions.

Each output element reduces over a window of its input, so each op is a
`Compute` reduction (`rules_reduce.reduce`) whose iteration space is the output
shape followed by the window's positions.  A window position reads the input
at ``out * stride + k * dilation - padding`` along each spatial dimension;
positions outside the input are masked loads that contribute the reduction's
identity.  Being ordinary reductions, these kernels take the pointwise work
after them (bias, eval batch-norm, relu, a residual add) as their epilogue.

* ``convolution`` (N-d, not transposed): sum over (input channel of the
  group, kernel positions) of input times weight; groups (depthwise included)
  pick the input channel from the output channel's group.
* ``max_pool*_with_indices``: a max, then (only when the indices are used) a
  min over the window that finds the flat input index of the element eager
  picks: the first one equal to the max, or the last nan.
* ``avg_pool*``: a sum divided by the window size, or by a count of the
  window's positions (a second sum) where windows differ in size.
* ``_adaptive_avg_pool*``: windows ``[floor(o*X/O), ceil((o+1)*X/O))``,
  iterated over the largest window with the rest masked off.
"""

from __future__ import annotations

import math
import operator

import torch

from . import index as ix
from .ir import compute_dtype, is_float, numel, ranges_of
from .rule_table import TV, Unsupported, rule, sizes_of
from .rules_pointwise import out_meta
from .rules_reduce import Reduced, reduce

aten = torch.ops.aten

INT64_MAX = 2**63 - 1


def operand(ctx, tv: TV) -> TV:
    """`tv` as one plain load (re-indexed by the caller), materialized when it is
    computed (a reduction must not recompute a prologue per window position) or
    addressed through division (masked lanes index out of range)."""
    n = ctx.arena.nodes[tv.expr]
    if n.op == "load" and not n.args:
        _, off = n.attr
        if all(isinstance(a, ix.Var) for a in off.atoms()):
            return tv
    return ctx.realize(tv, None)


def _tuple(v, n: int, default=None) -> tuple:
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        v = default
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


class Window:
    """The iteration of a window op: output dims ``i0..``, then window dims.

    `lead` dims of the input map one to one (batch, channels); the last
    `len(kernel)` dims of the output slide over the input's spatial dims."""

    def __init__(self, ctx, out_shape, x_shape, kernel, stride, padding, dilation, extra=()):
        self.ctx = ctx
        self.nsp = len(kernel)
        self.out_shape = tuple(out_shape)
        self.x_sp = tuple(x_shape[-self.nsp :])
        self.kernel, self.stride, self.padding, self.dilation = kernel, stride, padding, dilation
        self.extra = tuple(extra)  # reduced dims before the kernel's (conv input channels)
        self.sizes = self.out_shape + self.extra + tuple(kernel)
        self.rng = ranges_of(self.sizes)
        nout = len(self.out_shape)
        self.dims = tuple(range(nout, len(self.sizes)))
        self.o = [ix.var(f"i{nout - self.nsp + d}") for d in range(self.nsp)]
        self.k = [ix.var(f"i{nout + len(self.extra) + d}") for d in range(self.nsp)]

    def pos(self, d: int) -> ix.Affine:
        """Input position along spatial dim `d` read by this window position."""
        return self.o[d] * self.stride[d] + self.k[d] * self.dilation[d] - self.padding[d]

    def inside(self):
        """bool: every spatial position lies in the input (None: always)."""
        ar = self.ctx.arena
        mask = None
        for d in range(self.nsp):
            p = self.pos(d)
            top = (self.out_shape[-self.nsp + d] - 1) * self.stride[d]
            top += (self.kernel[d] - 1) * self.dilation[d] - self.padding[d]
            conds = []
            if self.padding[d] > 0:
                conds.append(ar.op("ge", _value(ar, p), ar.const(0, "int64"), dtype="bool"))
            if top >= self.x_sp[d]:
                conds.append(ar.op("lt", _value(ar, p), ar.const(self.x_sp[d], "int64"), dtype="bool"))
            for c in conds:
                mask = c if mask is None else ar.op("and", mask, c, dtype="bool")
        return mask

    def read(self, x: TV, lead_map: dict, mask) -> int:
        """`x` (a plain load) at this window position, masked loads where `mask` fails."""
        mapping = dict(lead_map)
        for d in range(self.nsp):
            mapping[f"i{x.ndim - self.nsp + d}"] = self.pos(d)
        return self.ctx.arena.substitute([x.expr], mapping, self.rng, mask)[0]

    def lead_identity(self, x: TV) -> dict:
        return {f"i{j}": ix.var(f"i{j}") for j in range(x.ndim - self.nsp)}

    def flat_index(self) -> ix.Affine:
        """Row-major index of the position read within one spatial plane of the input."""
        strides = [numel(self.x_sp[d + 1 :]) for d in range(self.nsp)]
        return sum((self.pos(d) * strides[d] for d in range(self.nsp)), ix.ZERO)


def _value(ar, e: ix.Affine) -> int:
    return ar.add("index", (), "int64", e)


def _select(ar, mask, val: int, other, dtype: str) -> int:
    if mask is None:
        return val
    return ar.op("where", mask, val, ar.const(other, dtype), dtype=dtype)


def _as_tv(ctx, r, shape, acc: str) -> TV:
    """A `reduce` result as a value of the output shape."""
    if isinstance(r, Reduced):
        return r.tv(False)
    return TV(tuple(shape), ctx.arena.nodes[r].dtype, r)


def _full(ctx, r, win: Window) -> int:
    """A `reduce` result read over the window's full iteration space."""
    if isinstance(r, Reduced):
        return r.load_full()
    return r  # a plain expression over the output variables, which come first


# ------------------------------------------------------------------ convolution


@rule(aten.convolution.default)
def _convolution(ctx, node, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    shape, out = out_meta(node)
    if transposed or not is_float(out):
        raise Unsupported("transposed or integer convolution")
    nsp = x.ndim - 2
    if nsp < 1 or w.ndim != x.ndim:
        raise Unsupported("unbatched convolution")
    ar, acc = ctx.arena, compute_dtype(out)
    x, w = operand(ctx, x), operand(ctx, w)
    oc_total, cg = w.shape[0], w.shape[1]
    win = Window(
        ctx,
        shape,
        x.shape,
        tuple(w.shape[2:]),
        _tuple(stride, nsp),
        _tuple(padding, nsp),
        _tuple(dilation, nsp),
        extra=(cg,),
    )
    ic = ix.var(f"i{len(shape)}")
    oc = ix.var("i1")
    channel = ic if groups == 1 else ix.floordiv(oc, oc_total // groups, win.rng) * cg + ic
    mask = win.inside()
    xe = ar.cast(win.read(x, {"i0": ix.var("i0"), "i1": channel}, mask), acc)
    xe = _select(ar, mask, xe, 0, acc)
    wmap = {"i0": oc, "i1": ic}
    wmap.update({f"i{2 + d}": win.k[d] for d in range(nsp)})
    we = ar.cast(ar.substitute([w.expr], wmap, win.rng)[0], acc)
    body = TV(win.sizes, acc, ar.op("mul", xe, we))
    r = reduce(ctx, body, win.dims, "sum", acc, x.origins | w.origins | {node.name})
    res = _as_tv(ctx, r, shape, acc)
    e = ar.cast(res.expr, acc)
    if isinstance(bias, TV):
        b = ar.substitute([bias.expr], {"i0": ix.var("i1")}, ranges_of(shape))[0]
        e = ar.op("add", e, ar.cast(b, acc))
        return ctx.make(shape, out, ar.cast(e, out), res, bias)
    return ctx.make(shape, out, ar.cast(e, out), res)


# ------------------------------------------------------------------ pooling


def _pool_window(ctx, node, x, kernel_size, stride, padding, dilation, shape):
    nsp = 3 if "3d" in str(node.target.overloadpacket) else 2
    kernel = _tuple(kernel_size, nsp)
    return Window(
        ctx,
        shape,
        x.shape,
        kernel,
        _tuple(stride, nsp, kernel),
        _tuple(padding, nsp),
        _tuple(dilation, nsp),
    )


def _uses_output(node, k: int) -> bool:
    return any(u.target is operator.getitem and u.args[1] == k for u in node.users) or any(
        u.op == "output" for u in node.users
    )


@rule(aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default)
def _max_pool(ctx, node, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    shape = sizes_of(node.meta["val"][0].shape)
    dtype = str(node.meta["val"][0].dtype).removeprefix("torch.")
    if not is_float(dtype):
        raise Unsupported("integer max pooling")
    ar, cd = ctx.arena, compute_dtype(dtype)
    x = operand(ctx, x)
    win = _pool_window(ctx, node, x, kernel_size, stride, padding, dilation, shape)
    mask = win.inside()
    xv = ar.cast(win.read(x, win.lead_identity(x), mask), cd)
    body = _select(ar, mask, xv, float("-inf"), cd)
    origins = x.origins | {node.name}
    r = reduce(ctx, TV(win.sizes, cd, body), win.dims, "max", cd, origins)
    vals = _as_tv(ctx, r, shape, cd)
    vals = ctx.make(shape, dtype, ar.cast(vals.expr, dtype), vals)
    if not _uses_output(node, 1):
        return (vals, None)
    # eager keeps the first maximum but the last nan: nan lanes are keyed -flat - 1
    # so that one min finds either, and a negative result is decoded afterwards
    m = _full(ctx, r, win)
    flat = _value(ar, win.flat_index())
    nan = ar.op("ne", xv, xv, dtype="bool")
    key = ar.op("where", nan, ar.op("sub", ar.op("neg", flat), ar.const(1, "int64")), flat, dtype="int64")
    hit = ar.op("or", ar.op("eq", xv, m, dtype="bool"), nan, dtype="bool")
    if mask is not None:
        hit = ar.op("and", mask, hit, dtype="bool")
    where = ar.op("where", hit, key, ar.const(INT64_MAX, "int64"), dtype="int64")
    ri = _as_tv(
        ctx, reduce(ctx, TV(win.sizes, "int64", where), win.dims, "min", "int64", origins), shape, "int64"
    )
    neg = ar.op("lt", ri.expr, ar.const(0, "int64"), dtype="bool")
    decoded = ar.op(
        "where", neg, ar.op("sub", ar.op("neg", ri.expr), ar.const(1, "int64")), ri.expr, dtype="int64"
    )
    return (vals, ctx.make(shape, "int64", decoded, ri))


@rule(aten.avg_pool2d.default, aten.avg_pool3d.default)
def _avg_pool(
    ctx,
    node,
    x,
    kernel_size,
    stride=(),
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    shape, out = out_meta(node)
    if not is_float(out):
        raise Unsupported("integer average pooling")
    ar, acc = ctx.arena, compute_dtype(out)
    x = operand(ctx, x)
    win = _pool_window(ctx, node, x, kernel_size, stride, padding, 1, shape)
    mask = win.inside()
    xv = _select(ar, mask, ar.cast(win.read(x, win.lead_identity(x), mask), acc), 0, acc)
    origins = x.origins | {node.name}
    r = reduce(ctx, TV(win.sizes, acc, xv), win.dims, "sum", acc, origins)
    total = ar.cast(_as_tv(ctx, r, shape, acc).expr, acc)
    if divisor_override:
        div = ar.const(divisor_override, acc)
    else:
        # count_include_pad counts padding but not what ceil_mode hangs past it
        count = _inside_padded(win) if count_include_pad else mask
        if count is None:
            div = ar.const(math.prod(win.kernel), acc)
        else:
            ones = ar.cast(count, acc)
            rc = reduce(ctx, TV(win.sizes, acc, ones), win.dims, "sum", acc, origins)
            div = ar.cast(_as_tv(ctx, rc, shape, acc).expr, acc)
    e = ar.op("truediv", total, div)
    return ctx.make(shape, out, ar.cast(e, out), TV(shape, acc, total))


def _inside_padded(win: Window):
    """bool: the position lies within the padded input, ``[-p, X + p)`` per dim."""
    ar = win.ctx.arena
    mask = None
    for d in range(win.nsp):
        top = (win.out_shape[-win.nsp + d] - 1) * win.stride[d] + win.kernel[d] - 1 - win.padding[d]
        end = win.x_sp[d] + win.padding[d]
        if top >= end:
            c = ar.op("lt", _value(ar, win.pos(d)), ar.const(end, "int64"), dtype="bool")
            mask = c if mask is None else ar.op("and", mask, c, dtype="bool")
    return mask


@rule(aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default)
def _adaptive_avg_pool(ctx, node, x, output_size):
    shape, out = out_meta(node)
    if not is_float(out):
        raise Unsupported("integer average pooling")
    ar, acc = ctx.arena, compute_dtype(out)
    x = operand(ctx, x)
    nsp = len(output_size)
    xs, os_ = x.shape[-nsp:], shape[-nsp:]
    if any(o == 0 for o in os_):
        raise Unsupported("empty adaptive pool")
    kmax = tuple(max(-(-((o + 1) * n) // m) - (o * n) // m for o in range(m)) for n, m in zip(xs, os_))
    sizes = tuple(shape) + kmax
    rng = ranges_of(sizes)
    nout = len(shape)
    mapping = {f"i{j}": ix.var(f"i{j}") for j in range(x.ndim - nsp)}
    mask, count = None, None
    for d in range(nsp):
        o, k = ix.var(f"i{nout - nsp + d}"), ix.var(f"i{nout + d}")
        n, m = xs[d], os_[d]
        start = ix.floordiv(o * n, m, rng)
        end = ix.floordiv(o * n + n + m - 1, m, rng)
        mapping[f"i{x.ndim - nsp + d}"] = start + k
        if n % m:
            c = ar.op("lt", _value(ar, k), ar.op("sub", _value(ar, end), _value(ar, start)), dtype="bool")
            mask = c if mask is None else ar.op("and", mask, c, dtype="bool")
            span = ar.cast(_value(ar, end - start), acc)
        else:
            span = ar.const(n // m, acc)
        count = span if count is None else ar.op("mul", count, span)
    xv = ar.cast(ar.substitute([x.expr], mapping, rng, mask)[0], acc)
    xv = _select(ar, mask, xv, 0, acc)
    r = reduce(ctx, TV(sizes, acc, xv), tuple(range(nout, len(sizes))), "sum", acc, x.origins | {node.name})
    total = ar.cast(_as_tv(ctx, r, shape, acc).expr, acc)
    e = ar.op("truediv", total, count)
    return ctx.make(shape, out, ar.cast(e, out), TV(shape, acc, total))
