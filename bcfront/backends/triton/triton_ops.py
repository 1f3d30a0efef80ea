"""Triton spellings of the scalar ops, and the small @triton.jit helpers they use.

`render(op, args, arg_dtypes, dtype)` returns a Triton expression; `HELPERS`
holds helper sources, a few of which differ between a real GPU (libdevice)
and Triton's CPU interpreter (which cannot call libdevice).  Only helpers a
kernel uses are emitted into its source.
"""

from __future__ import annotations

import math
import re

from .ir import compute_dtype, is_float

TL_DTYPE = {
    "float16": "tl.float16",
    "bfloat16": "tl.bfloat16",
    "float32": "tl.float32",
    "float64": "tl.float64",
    "int8": "tl.int8",
    "int16": "tl.int16",
    "int32": "tl.int32",
    "int64": "tl.int64",
    "uint8": "tl.uint8",
    "bool": "tl.int1",
}

_NAN_ALL = "propagate_nan=tl.PropagateNan.ALL"


def literal(value, dtype: str) -> str:
    """A Triton constant of `dtype` (compute dtype) for a Python number."""
    cd = compute_dtype(dtype)
    if cd == "bool":
        return "True" if value else "False"
    if is_float(cd):
        v = float(value)
        if math.isnan(v):
            text = 'float("nan")'
        elif math.isinf(v):
            text = 'float("inf")' if v > 0 else 'float("-inf")'
        else:
            text = repr(v)
        return text if cd == "float32" else f"tl.full([], {text}, {TL_DTYPE[cd]})"
    v = int(value)
    if cd in ("int32", "int64") and -(2**31) <= v < 2**31:
        return str(v)
    return f"tl.full([], {v}, {TL_DTYPE[cd]})"


def _f(template):
    return lambda a, ad, d: template.format(*a)


def _float_int(ftemplate, itemplate):
    return lambda a, ad, d: (ftemplate if is_float(ad[0]) else itemplate).format(*a)


OPS = {
    "add": _f("{0} + {1}"),
    "sub": _f("{0} - {1}"),
    "mul": _f("{0} * {1}"),
    "truediv": _f("{0} / {1}"),
    "floordiv": _float_int("_floordiv_f({0}, {1})", "_floordiv_i({0}, {1})"),
    "truncdiv": _float_int("_trunc({0} / {1})", "{0} // {1}"),
    "remainder": _f("_remainder({0}, {1})"),
    "fmod": _f("{0} % {1}"),
    "pow": _f("_pow({0}, {1})"),
    "maximum": _float_int("tl.maximum({0}, {1}, " + _NAN_ALL + ")", "tl.maximum({0}, {1})"),
    "minimum": _float_int("tl.minimum({0}, {1}, " + _NAN_ALL + ")", "tl.minimum({0}, {1})"),
    "eq": _f("{0} == {1}"),
    "ne": _f("{0} != {1}"),
    "lt": _f("{0} < {1}"),
    "le": _f("{0} <= {1}"),
    "gt": _f("{0} > {1}"),
    "ge": _f("{0} >= {1}"),
    "and": _f("{0} & {1}"),
    "or": _f("{0} | {1}"),
    "xor": _f("{0} ^ {1}"),
    "bitand": _f("{0} & {1}"),
    "bitor": _f("{0} | {1}"),
    "bitxor": _f("{0} ^ {1}"),
    "lshift": _f("{0} << {1}"),
    "rshift": _f("{0} >> {1}"),
    "where": _f("tl.where({0}, {1}, {2})"),
    "neg": _f("-{0}"),
    "abs": _f("tl.abs({0})"),
    "exp": _f("tl.exp({0})"),
    "exp2": _f("tl.exp2({0})"),
    "expm1": _f("_expm1({0})"),
    "log": _f("tl.log({0})"),
    "log2": _f("tl.log2({0})"),
    "log10": _f("tl.log({0}) * 0.4342944819032518"),
    "log1p": _f("_log1p({0})"),
    "sqrt": lambda a, ad, d: ("tl.sqrt_rn({0})" if ad[0] == "float32" else "tl.sqrt({0})").format(*a),
    "rsqrt": _f("tl.rsqrt({0})"),
    "reciprocal": _f("1.0 / {0}"),
    "sin": _f("tl.sin({0})"),
    "cos": _f("tl.cos({0})"),
    "tanh": _f("_tanh({0})"),
    "sigmoid": _f("tl.sigmoid({0})"),
    "erf": _f("_erf({0})"),
    "signbit": lambda a, ad, d: "({}.to({}, bitcast=True) < 0)".format(
        a[0], "tl.int64" if ad[0] == "float64" else "tl.int32"
    ),
    "floor": _f("tl.floor({0})"),
    "ceil": _f("tl.ceil({0})"),
    "round": _f("_round({0})"),
    "trunc": _f("_trunc({0})"),
    "sign": _float_int("_sign_f({0})", "_sign_i({0})"),
    "isnan": _f("{0} != {0}"),
    "isinf": _f('tl.abs({0}) == float("inf")'),
    "not": _f("{0} == 0"),
    "bitnot": _f("~{0}"),
    "relu": _float_int("tl.maximum({0}, 0.0, " + _NAN_ALL + ")", "tl.maximum({0}, 0)"),
}


def render(op: str, args, arg_dtypes, dtype: str, const_args=()) -> str:
    """Triton expression for `op`; args are already in the op's compute dtypes.

    Constant arguments of helper calls become typed 0-d tensors: inside a
    helper a bare Python float would follow Python, not tensor, semantics."""
    fn = OPS.get(op)
    if fn is None:
        raise NotImplementedError(f"no Triton spelling for scalar op {op!r}")
    cds = [compute_dtype(d) for d in arg_dtypes]
    text = fn(list(args), cds, compute_dtype(dtype))
    if const_args and (text.startswith("_") or len(const_args) == len(args)):
        args = [
            f"tl.full([], {a}, {TL_DTYPE[cd]})" if k in const_args else a
            for k, (a, cd) in enumerate(zip(args, cds))
        ]
        text = fn(args, cds, compute_dtype(dtype))
    return text


def render_cast(arg: str, src: str, dst: str) -> str:
    """Cast between logical dtypes, keeping halves in float32 but rounding them."""
    cs, cd = compute_dtype(src), compute_dtype(dst)
    if dst == "bool":
        return arg if src == "bool" else f"({arg} != 0)"
    if dst in ("float16", "bfloat16"):
        return f"{arg}.to({TL_DTYPE[dst]}).to(tl.float32)"
    if cs == cd:
        return arg
    return f"{arg}.to({TL_DTYPE[cd]})"


def helpers_used(source: str) -> list[str]:
    """Helper names `source` calls, dependencies included, in definition order."""
    used = {name for name in HELPERS if re.search(rf"\b{name}\b", source)}
    for name in list(used):
        used.update(_DEPS.get(name, ()))
    return [name for name in HELPERS if name in used]


def helper_source(name: str, interpret: bool) -> str:
    src = HELPERS[name]
    if isinstance(src, tuple):
        src = src[1] if interpret else src[0]
    return src.strip() + "\n"


_DEPS = {"_tanh": ("_expm1",)}

HELPERS = {
    "_max_nan": """
@triton.jit
def _max_nan(a, b):
    # torch.amax propagates nan; tl.max would drop it
    return tl.where((a > b) | (a != a), a, b)
""",
    "_min_nan": """
@triton.jit
def _min_nan(a, b):
    return tl.where((a < b) | (a != a), a, b)
""",
    "_prod": """
@triton.jit
def _prod(a, b):
    return a * b
""",
    "_argmax": """
@triton.jit
def _argmax(v0, i0, v1, i1):
    # larger wins, nan beats all (as in torch), ties keep the lower index
    gt = (v0 > v1) | ((v0 != v0) & (v1 == v1))
    eq = (v0 == v1) | ((v0 != v0) & (v1 != v1))
    pick = gt | (eq & (i0 < i1))
    return tl.where(pick, v0, v1), tl.where(pick, i0, i1)
""",
    "_argmin": """
@triton.jit
def _argmin(v0, i0, v1, i1):
    lt = (v0 < v1) | ((v0 != v0) & (v1 == v1))
    eq = (v0 == v1) | ((v0 != v0) & (v1 != v1))
    pick = lt | (eq & (i0 < i1))
    return tl.where(pick, v0, v1), tl.where(pick, i0, i1)
""",
    "_floordiv_i": """
@triton.jit
def _floordiv_i(a, b):
    q = a // b  # truncates toward zero
    return q - ((a % b != 0) & ((a < 0) != (b < 0))).to(q.dtype)
""",
    "_floordiv_f": """
@triton.jit
def _floordiv_f(a, b):
    # torch's div_floor for floats: exact quotient of a - fmod(a, b), corrected
    m = a % b
    d = (a - m) / b
    d = tl.where((m != 0) & ((b < 0) != (m < 0)), d - 1.0, d)
    f = tl.floor(d)
    f = tl.where(d - f > 0.5, f + 1.0, f)
    f = tl.where(d == 0, 0.0 * (a / b), f)
    return tl.where(b == 0, a / b, f)
""",
    "_remainder": """
@triton.jit
def _remainder(a, b):
    # Python-style modulo: the result takes the divisor's sign
    r = a % b
    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
""",
    "_trunc": """
@triton.jit
def _trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))
""",
    "_round": """
@triton.jit
def _round(x):
    # round half to even, like torch.round
    f = tl.floor(x)
    d = x - f
    odd = (f % 2.0) != 0
    return tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, tl.where(odd, f + 1.0, f)))
""",
    "_sign_f": """
@triton.jit
def _sign_f(x):
    # like torch.sign: nan and -0.0 give 0
    return tl.where(x > 0, 1.0, tl.where(x < 0, -1.0, 0.0))
""",
    "_erf": """
@triton.jit
def _erf(x):
    # erf is +-1 to float precision beyond |x| = 10; clamping keeps +-inf exact
    c = tl.minimum(tl.maximum(x, -10.0, propagate_nan=tl.PropagateNan.ALL), 10.0,
                   propagate_nan=tl.PropagateNan.ALL)
    return tl.erf(c)
""",
    "_sign_i": """
@triton.jit
def _sign_i(x):
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)
""",
    "_expm1": (
        """
@triton.jit
def _expm1(x):
    return libdevice.expm1(x)
""",
        """
@triton.jit
def _expm1(x):
    # Kahan: (u - 1) * x / log(u) is accurate where u - 1 cancels
    u = tl.exp(x)
    um1 = u - 1.0
    r = tl.where(um1 == 0.0, x, um1 * x / tl.log(u))
    r = tl.where(u == float("inf"), u, r)
    return tl.where(um1 == -1.0, -1.0, r)
""",
    ),
    "_log1p": (
        """
@triton.jit
def _log1p(x):
    return libdevice.log1p(x)
""",
        """
@triton.jit
def _log1p(x):
    u = 1.0 + x
    d = u - 1.0
    r = tl.where(d == 0.0, x, tl.log(u) * (x / d))
    return tl.where(u == float("inf"), u, r)
""",
    ),
    "_tanh": (
        """
@triton.jit
def _tanh(x):
    return libdevice.tanh(x)
""",
        """
@triton.jit
def _tanh(x):
    e = _expm1(-2.0 * tl.abs(x))
    t = -e / (e + 2.0)
    return tl.where(x < 0, -t, t)
""",
    ),
    "_pow": (
        """
@triton.jit
def _pow(a, b):
    return libdevice.pow(a, b)
""",
        """
@triton.jit
def _pow(a, b):
    # exp2(b * log2|a|) with pow's sign rules; selects only (no bool arithmetic)
    r = tl.exp2(b * tl.log2(tl.abs(a)))
    integral = tl.floor(b) == b
    half = b * 0.5
    odd = tl.where(integral, tl.floor(half) != half, False)
    nan = tl.where(a < 0, tl.where(integral, False, a != float("-inf")), False)
    r = tl.where(nan, float("nan"), tl.where(a < 0, tl.where(odd, -r, r), r))
    r = tl.where(b == 0, 1.0, r)
    return tl.where(a == 1, 1.0, r)
""",
    ),
}
