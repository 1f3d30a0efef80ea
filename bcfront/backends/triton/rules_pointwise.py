"""Lowering rules for pointwise aten ops, casts and constant factories.

Every rule follows torch semantics: operands broadcast to the output shape of
the fx node and are cast to torch's promoted dtype before the scalar op, so the
kernel computes what eager computes (halves are held in float32 in registers
and rounded only on explicit casts and stores).
"""

from __future__ import annotations

import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND as _K
from torch._prims_common import elementwise_dtypes

from . import index as ix
from .ir import INT_DTYPES, is_float
from .rule_table import TV, Unsupported, dtype_name, rule, sizes_of, torch_dtype

aten = torch.ops.aten
prims = torch.ops.prims


def out_meta(node):
    val = node.meta["val"]
    return sizes_of(val.shape), dtype_name(val.dtype)


def _meta_arg(a):
    if isinstance(a, TV):
        return torch.empty((1,) * a.ndim, dtype=torch_dtype(a.dtype), device="meta")
    return a


def promoted(*args, kind=_K.DEFAULT) -> str:
    """torch's result dtype for an elementwise op over these operands."""
    return dtype_name(elementwise_dtypes(*[_meta_arg(a) for a in args], type_promotion_kind=kind)[1])


def _apply(ctx, node, opname, operands, compute: str, out: str | None = None):
    shape, meta_dtype = out_meta(node)
    out = out or meta_dtype
    exprs = [ctx.value(a, shape, compute) for a in operands]
    e = ctx.arena.op(opname, *exprs, dtype=out if opname not in _CMP else "bool")
    return ctx.make(shape, out, ctx.arena.cast(e, out), *operands)


_CMP = {"eq", "ne", "lt", "le", "gt", "ge"}


# ------------------------------------------------------------------ binary


def _binary(opname):
    def lower(ctx, node, a, b, **kw):
        _, out = out_meta(node)
        return _apply(ctx, node, opname, (a, b), out)

    return lower


for _name, _op in [
    ("mul", "mul"),
    ("maximum", "maximum"),
    ("minimum", "minimum"),
    ("fmod", "fmod"),
    ("remainder", "remainder"),
    ("floor_divide", "floordiv"),
    ("bitwise_left_shift", "lshift"),
    ("bitwise_right_shift", "rshift"),
]:
    rule(getattr(aten, _name))(_binary(_op))


def _bitwise(opname, logical):
    def lower(ctx, node, a, b):
        _, out = out_meta(node)
        op = logical if out == "bool" else opname
        return _apply(ctx, node, op, (a, b), out)

    return lower


for _name, _op, _lop in [
    ("bitwise_and", "bitand", "and"),
    ("bitwise_or", "bitor", "or"),
    ("bitwise_xor", "bitxor", "xor"),
]:
    rule(getattr(aten, _name))(_bitwise(_op, _lop))


def _logical(opname):
    def lower(ctx, node, a, b):
        return _apply(ctx, node, opname, (a, b), "bool")

    return lower


for _name, _op in [("logical_and", "and"), ("logical_or", "or"), ("logical_xor", "xor")]:
    rule(getattr(aten, _name))(_logical(_op))


def _compare(opname):
    def lower(ctx, node, a, b):
        return _apply(ctx, node, opname, (a, b), promoted(a, b), "bool")

    return lower


for _name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    rule(getattr(aten, _name))(_compare(_name))


def _scaled(ctx, b, alpha, dtype):
    if alpha is None or alpha == 1:
        return b
    if isinstance(b, TV):
        return ctx.make(
            b.shape,
            dtype,
            ctx.arena.op("mul", ctx.value(b, b.shape, dtype), ctx.arena.const(alpha, dtype)),
            b,
        )
    return b * alpha


@rule(aten.add)
def _add(ctx, node, a, b, alpha=None):
    _, out = out_meta(node)
    return _apply(ctx, node, "or" if out == "bool" else "add", (a, _scaled(ctx, b, alpha, out)), out)


@rule(aten.sub)
def _sub(ctx, node, a, b, alpha=None):
    _, out = out_meta(node)
    return _apply(ctx, node, "sub", (a, _scaled(ctx, b, alpha, out)), out)


@rule(aten.rsub)
def _rsub(ctx, node, a, b, alpha=None):
    _, out = out_meta(node)
    return _apply(ctx, node, "sub", (b, _scaled(ctx, a, alpha, out)), out)


@rule(aten.div)
def _div(ctx, node, a, b, rounding_mode=None):
    _, out = out_meta(node)
    op = {None: "truediv", "trunc": "truncdiv", "floor": "floordiv"}[rounding_mode]
    if op != "truediv" and not is_float(out) and out not in INT_DTYPES:
        raise Unsupported("integer division of bools")
    return _apply(ctx, node, op, (a, b), out)


@rule(aten.copysign)
def _copysign(ctx, node, a, b):
    shape, out = out_meta(node)
    if not is_float(out):
        raise Unsupported("copysign of integers")
    ar = ctx.arena
    mag = ar.op("abs", ctx.value(a, shape, out))
    neg = ar.op("signbit", ctx.value(b, shape, out), dtype="bool")
    return ctx.make(shape, out, ar.op("where", neg, ar.op("neg", mag), mag, dtype=out), a, b)


@rule(aten.signbit)
def _signbit(ctx, node, x):
    shape, _ = out_meta(node)
    if not is_float(x.dtype):
        return ctx.make(
            shape,
            "bool",
            ctx.arena.op("lt", ctx.value(x, shape, x.dtype), ctx.arena.const(0, x.dtype), dtype="bool"),
            x,
        )
    return ctx.make(shape, "bool", ctx.arena.op("signbit", ctx.value(x, shape, x.dtype), dtype="bool"), x)


@rule(aten.where)
def _where(ctx, node, cond, a, b):
    shape, out = out_meta(node)
    c = ctx.value(cond, shape, "bool")
    e = ctx.arena.op("where", c, ctx.value(a, shape, out), ctx.value(b, shape, out), dtype=out)
    return ctx.make(shape, out, e, cond, a, b)


def _clamp_expr(ctx, x, lo, hi, shape, out):
    e = ctx.value(x, shape, out)
    if lo is not None:
        e = ctx.arena.op("maximum", e, ctx.value(lo, shape, out), dtype=out)
    if hi is not None:
        e = ctx.arena.op("minimum", e, ctx.value(hi, shape, out), dtype=out)
    return e


@rule(aten.clamp)
def _clamp(ctx, node, x, min=None, max=None):
    shape, out = out_meta(node)
    return ctx.make(shape, out, _clamp_expr(ctx, x, min, max, shape, out), x, min, max)


@rule(aten.clamp_min)
def _clamp_min(ctx, node, x, lo):
    return _clamp(ctx, node, x, lo, None)


@rule(aten.clamp_max)
def _clamp_max(ctx, node, x, hi):
    return _clamp(ctx, node, x, None, hi)


# ------------------------------------------------------------------ pow

_INT_POWERS = range(-4, 9)


@rule(aten.pow)
def _pow(ctx, node, a, b):
    shape, out = out_meta(node)
    if isinstance(b, (int, float)) and not isinstance(b, bool) and isinstance(a, TV):
        x = ctx.value(a, shape, out)
        if float(b).is_integer() and int(b) in _INT_POWERS and (b >= 0 or is_float(out)):
            return ctx.make(shape, out, _int_power(ctx, x, int(b), out), a)
        if b == 0.5 and is_float(out):
            return ctx.make(shape, out, ctx.arena.op("sqrt", x), a)
        if b == -0.5 and is_float(out):
            return ctx.make(shape, out, ctx.arena.op("rsqrt", x), a)
    if not is_float(out):
        raise Unsupported("integer pow with a non-constant exponent")
    return _apply(ctx, node, "pow", (a, b), out)


def _int_power(ctx, x, n, dtype):
    """x**n by square-and-multiply (exact for small integer exponents)."""
    ar = ctx.arena
    if n == 0:
        return ar.const(1, dtype)  # torch: x ** 0 == 1 even for nan
    result, base, k = None, x, abs(n)
    while k:
        if k & 1:
            result = base if result is None else ar.op("mul", result, base)
        k >>= 1
        if k:
            base = ar.op("mul", base, base)
    if n < 0:
        result = ar.op("truediv", ar.const(1, dtype), result)
    return result


# ------------------------------------------------------------------ unary


def _unary(opname, kind="same"):
    """kind: 'same' keeps the dtype, 'float' promotes ints to float like torch,
    'bool' yields a bool, 'int_identity' is the identity on integers."""

    def lower(ctx, node, x):
        shape, out = out_meta(node)
        if kind == "int_identity" and not is_float(out):
            return ctx.make(shape, out, ctx.value(x, shape, out), x)
        if kind == "bool":
            src = x.dtype if isinstance(x, TV) else out
            if not is_float(src) and opname in ("isnan", "isinf"):
                return ctx.make(shape, out, ctx.arena.const(False, "bool"), x)
            e = ctx.arena.op(opname, ctx.value(x, shape, src), dtype="bool")
            return ctx.make(shape, out, e, x)
        if kind == "float" and not is_float(out):
            raise Unsupported(f"{opname} of {out}")
        return ctx.make(shape, out, ctx.arena.op(opname, ctx.value(x, shape, out)), x)

    return lower


for _name, _op, _kind in [
    ("neg", "neg", "same"),
    ("abs", "abs", "same"),
    ("exp", "exp", "float"),
    ("exp2", "exp2", "float"),
    ("expm1", "expm1", "float"),
    ("log", "log", "float"),
    ("log2", "log2", "float"),
    ("log10", "log10", "float"),
    ("log1p", "log1p", "float"),
    ("sqrt", "sqrt", "float"),
    ("rsqrt", "rsqrt", "float"),
    ("reciprocal", "reciprocal", "float"),
    ("sin", "sin", "float"),
    ("cos", "cos", "float"),
    ("tanh", "tanh", "float"),
    ("sigmoid", "sigmoid", "float"),
    ("erf", "erf", "float"),
    ("floor", "floor", "int_identity"),
    ("ceil", "ceil", "int_identity"),
    ("trunc", "trunc", "int_identity"),
    ("sign", "sign", "same"),
    ("sgn", "sign", "same"),
    ("isnan", "isnan", "bool"),
    ("isinf", "isinf", "bool"),
    ("relu", "relu", "same"),
]:
    rule(getattr(aten, _name))(_unary(_op, _kind))


@rule(aten.round.default)
def _round(ctx, node, x):
    return _unary("round", "int_identity")(ctx, node, x)


@rule(aten.logical_not)
def _logical_not(ctx, node, x):
    shape, out = out_meta(node)
    return ctx.make(shape, out, ctx.arena.op("not", ctx.value(x, shape, "bool")), x)


@rule(aten.bitwise_not)
def _bitwise_not(ctx, node, x):
    shape, out = out_meta(node)
    op = "not" if out == "bool" else "bitnot"
    return ctx.make(shape, out, ctx.arena.op(op, ctx.value(x, shape, out)), x)


@rule(aten.positive, aten.lift_fresh_copy)
def _positive(ctx, node, x):
    shape, out = out_meta(node)
    return ctx.make(shape, out, ctx.value(x, shape, out), x)


# ------------------------------------------------------------------ casts and copies


def _cast(ctx, node, x):
    shape, out = out_meta(node)
    return ctx.make(shape, out, ctx.value(x, shape, out), x)


@rule(aten._to_copy)
def _to_copy(
    ctx,
    node,
    x,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    non_blocking=False,
    memory_format=None,
):
    if device is not None and torch.device(device) != node.meta["val"].device:
        raise Unsupported("device transfer")
    if isinstance(x, TV) and node.args and isinstance(node.args[0], torch.fx.Node):
        src = node.args[0].meta["val"].device
        if src != node.meta["val"].device:
            raise Unsupported("device transfer")
    return _cast(ctx, node, x)


@rule(prims.convert_element_type)
def _convert(ctx, node, x, dtype):
    return _cast(ctx, node, x)


@rule(aten.clone)
def _clone(ctx, node, x, memory_format=None):
    return _cast(ctx, node, x)


@rule(aten.copy)
def _copy(ctx, node, dst, src, non_blocking=False):
    shape, out = out_meta(node)
    return ctx.make(shape, out, ctx.value(src, shape, out), src)


# ------------------------------------------------------------------ factories


def _const_tv(ctx, node, value):
    shape, out = out_meta(node)
    return ctx.make(shape, out, ctx.arena.const(value, out))


@rule(aten.full)
def _full(ctx, node, size, value, **kw):
    return _const_tv(ctx, node, value)


@rule(aten.full_like)
def _full_like(ctx, node, x, value, **kw):
    return _const_tv(ctx, node, value)


@rule(aten.scalar_tensor)
def _scalar_tensor(ctx, node, value, **kw):
    return _const_tv(ctx, node, value)


@rule(aten.fill)
def _fill(ctx, node, x, value):
    if isinstance(value, TV):
        shape, out = out_meta(node)
        return ctx.make(shape, out, ctx.value(value, shape, out), value)
    return _const_tv(ctx, node, value)


@rule(aten.empty, aten.empty_like, aten.empty_strided, aten.new_empty, aten.new_empty_strided)
def _empty(ctx, node, *args, **kw):
    # Contents are unspecified; zeros are as good as anything and cost no load.
    return _const_tv(ctx, node, 0)


@rule(aten.zeros, aten.zeros_like, aten.new_zeros)
def _zeros(ctx, node, *args, **kw):
    return _const_tv(ctx, node, 0)


@rule(aten.ones, aten.ones_like, aten.new_ones)
def _ones(ctx, node, *args, **kw):
    return _const_tv(ctx, node, 1)


@rule(aten.arange)
def _arange(ctx, node, *args, **kw):
    nums = [a for a in args if isinstance(a, (int, float)) and not isinstance(a, bool)]
    if len(nums) == 1:
        start, step = 0, 1
    elif len(nums) == 2:
        start, step = nums[0], 1
    elif len(nums) == 3:
        start, step = nums[0], nums[2]
    else:
        raise Unsupported("arange arguments")
    shape, out = out_meta(node)
    ar = ctx.arena
    i = ar.add("index", (), "int64", ix.var("i0"))
    calc = "float64" if is_float(out) else "int64"
    e = ar.op("add", ar.op("mul", ar.cast(i, calc), ar.const(step, calc)), ar.const(start, calc))
    return ctx.make(shape, out, ar.cast(e, out))


@rule(prims.iota)
def _iota(ctx, node, length, *, start, step, dtype, device, requires_grad):
    shape, out = out_meta(node)
    ar = ctx.arena
    i = ar.add("index", (), "int64", ix.var("i0"))
    e = ar.op("add", ar.op("mul", i, ar.const(step, "int64")), ar.const(start, "int64"))
    return ctx.make(shape, out, ar.cast(e, out))
