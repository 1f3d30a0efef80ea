"""Pointwise ops through the Triton backend: semantics, promotion, casts, constants."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn.functional as F  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402
from .triton_util import compare, special_floats  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")

# name -> unary function; each is checked on values including nan, inf, 0, -0.
UNARY = {
    "neg": lambda x: -x,
    "abs": torch.abs,
    "exp": torch.exp,
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    "sin": torch.sin,
    "cos": torch.cos,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "erf": torch.erf,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "trunc": torch.trunc,
    "sign": torch.sign,
    "relu": torch.relu,
    "isnan": torch.isnan,
    "isinf": torch.isinf,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "softplus": F.softplus,
    "elu": F.elu,
    "leaky_relu": F.leaky_relu,
    "hardtanh": F.hardtanh,
    "hardswish": F.hardswish,
    "mish": F.mish,
    "square": torch.square,
    "frac": torch.frac,
    "logical_not": torch.logical_not,
    "clamp": lambda x: x.clamp(-1.5, 2.0),
    "clamp_min": lambda x: x.clamp(min=0.25),
    "nan_to_num": torch.nan_to_num,
}


# eager's CPU kernels return nan for gelu(+-inf); the math (and our kernels) say +inf / 0
FINITE_ONLY = {"gelu", "gelu_tanh"}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_fp32_special_values(name):
    x = special_floats(67)
    if name in FINITE_ONLY:
        x = torch.nan_to_num(x, posinf=30.0, neginf=-30.0)
    compare(UNARY[name], [x], kernels=1, fallback=[])


@pytest.mark.parametrize("name", ["exp", "tanh", "gelu", "silu", "rsqrt", "round", "sigmoid"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_unary_half(name, dtype):
    x = special_floats(33, dtype, seed=3)
    if name in FINITE_ONLY:
        x = torch.nan_to_num(x, posinf=30.0, neginf=-30.0)
    compare(UNARY[name], [x], kernels=1)


BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "floor_div": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "trunc_div": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "remainder": torch.remainder,
    "fmod": torch.fmod,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "pow": torch.pow,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=3),
    "sub_alpha": lambda a, b: torch.sub(a, b, alpha=0.5),
    "rsub": lambda a, b: torch.rsub(a, b),
    "where": lambda a, b: torch.where(a > b, a, b * 2),
    "atan_like": lambda a, b: a * torch.tanh(b),
    "hypot_like": lambda a, b: torch.sqrt(a * a + b * b),
    "lerp": lambda a, b: torch.lerp(a, b, 0.3),
    "xlogy": torch.xlogy,
    "copysign": torch.copysign,
    "signbit": lambda a, b: torch.signbit(a * b),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_fp32_broadcast(name):
    a = special_floats(48, seed=1).reshape(4, 12)
    b = special_floats(12, seed=2)
    b[3] = 0.0
    compare(BINARY[name], [a, b], kernels=1)


INT_BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "floor_div",
    "trunc_div",
    "remainder",
    "fmod",
    "maximum",
    "minimum",
    "eq",
    "lt",
    "ge",
    "where",
]


@pytest.mark.parametrize("name", INT_BINARY)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int8])
def test_binary_integers(name, dtype):
    g = torch.Generator().manual_seed(5)
    a = torch.randint(-50, 50, (5, 9), generator=g).to(dtype)
    b = torch.randint(1, 9, (9,), generator=g).to(dtype) * torch.tensor([1, -1] * 4 + [1]).to(dtype)
    compare(BINARY[name], [a, b], kernels=1)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: x + y,  # float16 + float32 -> float32
        lambda x, y: x * 2 + y.to(torch.int32),
        lambda x, y: (x > 0) & (y < 0.5),
        lambda x, y: x.to(torch.int64) + 3,  # float -> int truncates
        lambda x, y: (x * 7).clamp(-127, 127).to(torch.int8),  # in range: no UB
        lambda x, y: x.to(torch.bool).to(torch.float32) + y,
        lambda x, y: x.half().float() - x.float(),  # rounding to half is kept
        lambda x, y: x.bfloat16() * y.bfloat16(),
        lambda x, y: torch.where(x > 0, 1, 0) + y.double(),
        lambda x, y: x + 2.5 + True,
    ],
)
def test_type_promotion_and_casts(fn):
    g = torch.Generator().manual_seed(7)
    x = (torch.randn(6, 10, generator=g) * 4).half()
    y = torch.randn(10, generator=g)
    compare(fn, [x, y], kernels=1)


def test_bool_and_bitwise_ops():
    def fn(a, b, m):
        return (a & b) | (a ^ 7), ~a, m.logical_xor(a > 0), m & (b > 2), a << 2, a >> 1

    g = torch.Generator().manual_seed(1)
    a = torch.randint(-20, 20, (3, 8), generator=g, dtype=torch.int32)
    b = torch.randint(0, 5, (3, 8), generator=g, dtype=torch.int32)
    m = torch.rand(3, 8, generator=g) > 0.5
    compare(fn, [a, b, m], kernels=1)


@pytest.mark.parametrize("exp", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, 1.0 / 3.0])
def test_pow_scalar_exponents(exp):
    x = special_floats(40, seed=4)
    compare(lambda t: t**exp, [x], kernels=1)


def test_pow_tensor_exponent_and_scalar_base():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(20, generator=g)
    y = torch.randint(-3, 4, (20,), generator=g).float()
    compare(lambda a, b: torch.pow(a, b) + torch.pow(2.0, a) + torch.pow(a.abs(), 0.7), [x, y], kernels=1)


def test_constants_and_factories():
    def fn(x):
        n = x.shape[-1]
        r = torch.arange(n, dtype=torch.float32) * 0.5
        z = torch.zeros_like(x) + torch.ones(n) + torch.full((n,), 3.0)
        return x * r + z, torch.arange(2, 2 + 3 * n, 3), torch.full_like(x, float("-inf"))

    # the [4, 9] outputs share a kernel; the 1-d arange is its own iteration space
    compare(fn, [torch.randn(4, 9)], kernels=2)


def test_scalar_tensor_inputs_and_outputs():
    def fn(x, s):
        return x * s + 1, (s * 2).exp()

    compare(fn, [torch.randn(5, 3), torch.tensor(1.5)])


def test_float64_stays_float64():
    x = torch.randn(7, 5, dtype=torch.float64)
    compare(lambda t: torch.sigmoid(t) * 0.1 + t.sin(), [x], kernels=1)


def test_long_chain_does_not_recurse(shallow_stack):
    """A 600-op pointwise chain lowers and generates under a low recursion limit."""

    def fn(x):
        for k in range(300):
            x = x * 1.0001 + 0.001 * k
        return x

    x = torch.randn(16)
    from bcfront.backends.triton import compile_fx

    gm = torch.fx.symbolic_trace(fn)
    from bcfront.backends.triton.frontend import trace_aten

    aten_gm, _, _ = trace_aten(gm, [x])
    from bcfront.backends.triton import codegen, fuse, lower

    with shallow_stack():
        prog, _ = lower.lower_program(aten_gm)
        steps = fuse.schedule(prog)
        src = codegen.generate(steps[0], prog.arena, prog.layouts, interpret=True)
    assert len(steps) == 1 and src.source.count("\n") > 600
    compiled = compile_fx(gm, [x])
    torch.testing.assert_close(compiled(x), fn(x))
