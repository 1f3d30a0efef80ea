"""Lowering rules for matrix products: mm, bmm, addmm, baddbmm as reductions.

``out[b, m, n] = sum_k a[b, m, k] * b[b, k, n]`` is a `Compute` sum over the
last position of the space ``(B, M, N, K)``, accumulated in float32 for half
inputs; the bias of addmm/baddbmm (scaled by beta, with alpha on the product)
and whatever pointwise work follows are the kernel's epilogue.  Operands that
are computed values are materialized first, so a prologue is not recomputed
for every output column.  Integer products stay with torch.
"""

from __future__ import annotations

import torch

from . import index as ix
from .ir import compute_dtype, is_float, ranges_of
from .rule_table import TV, Unsupported, rule
from .rules_conv import operand
from .rules_pointwise import out_meta
from .rules_reduce import Reduced, reduce

aten = torch.ops.aten


def _product(ctx, node, a: TV, b: TV, shape, out: str):
    """(a @ b) in the accumulator dtype, as a value of `shape` (batch dims lead)."""
    if not is_float(out) or a.ndim != b.ndim or a.ndim not in (2, 3):
        raise Unsupported("integer or unusual matrix product")
    ar, acc = ctx.arena, compute_dtype(out)
    a, b = operand(ctx, a), operand(ctx, b)
    kdim = a.shape[-1]
    sizes = tuple(shape) + (kdim,)
    rng = ranges_of(sizes)
    nb = len(shape) - 2
    lead = {f"i{j}": ix.var(f"i{j}") for j in range(nb)}
    m, n, k = ix.var(f"i{nb}"), ix.var(f"i{nb + 1}"), ix.var(f"i{nb + 2}")
    ae = ar.substitute([a.expr], {**lead, f"i{nb}": m, f"i{nb + 1}": k}, rng)[0]
    be = ar.substitute([b.expr], {**lead, f"i{nb}": k, f"i{nb + 1}": n}, rng)[0]
    body = ar.op("mul", ar.cast(ae, acc), ar.cast(be, acc))
    r = reduce(ctx, TV(sizes, acc, body), (len(shape),), "sum", acc, a.origins | b.origins | {node.name})
    if isinstance(r, Reduced):
        return r.tv(False)
    return TV(tuple(shape), acc, r)


@rule(aten.mm.default, aten.bmm.default)
def _mm(ctx, node, a, b):
    shape, out = out_meta(node)
    p = _product(ctx, node, a, b, shape, out)
    return ctx.make(shape, out, ctx.arena.cast(p.expr, out), p)


@rule(aten.addmm.default, aten.baddbmm.default)
def _addmm(ctx, node, bias, a, b, *, beta=1, alpha=1):
    shape, out = out_meta(node)
    ar, acc = ctx.arena, compute_dtype(out)
    p = _product(ctx, node, a, b, shape, out)
    e = ar.cast(p.expr, acc)
    if alpha != 1:
        e = ar.op("mul", e, ar.const(alpha, acc))
    if beta != 0 and isinstance(bias, TV):  # beta == 0 ignores bias, nan and inf included
        be = ctx.value(bias, shape, acc)
        if beta != 1:
            be = ar.op("mul", be, ar.const(beta, acc))
        e = ar.op("add", be, e)
        return ctx.make(shape, out, ar.cast(e, out), p, bias)
    return ctx.make(shape, out, ar.cast(e, out), p)
