"""Named corpus of standard fusion patterns for the Triton backend tests.

Each `Case` is a plain function (its docstring says what it models), an input
builder ``inputs(n, dtype)`` where `n` is the size that varies (row length,
sequence length, ...), the number of Triton kernels the backend must generate
for ``n > 0`` (`kernels`) and for ``n == 0`` (`kernels_empty`), and the aten
ops that must be left to torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Case:
    fn: Callable
    inputs: Callable
    kernels: int
    kernels_empty: int = 0
    fallback: tuple = ()


def _rand(*shape, dtype, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(dtype)


# ------------------------------------------------------------------ patterns


def pointwise_chain(x, y):
    """A chain of activations and arithmetic over two same-shape tensors."""
    return torch.sigmoid(x * 2.0 + 1.0) * y - torch.tanh(x) + torch.exp(-x.abs())


def bias_act_broadcast(x, b, s):
    """Bias add broadcast over rows, relu, per-row scale, then silu and gelu."""
    h = torch.relu(x + b) * s
    return F.silu(h) + F.gelu(h)


def bias_gelu_after_matmul(x, w, b):
    """A linear layer (mm + bias) followed by exact gelu."""
    return F.gelu(x @ w + b)


def linear_gelu_tanh(x, w, b):
    """F.linear (addmm) followed by tanh-approximated gelu."""
    return F.gelu(F.linear(x, w, b), approximate="tanh")


def rmsnorm(x, w):
    """LLaMA-style RMSNorm: statistics in float32, result cast back, then scaled."""
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    return y.type_as(x) * w


def softmax_last(x):
    """Softmax over the last (contiguous) dimension."""
    return torch.softmax(x, dim=-1)


def softmax_first(x):
    """Softmax over the first dimension (a column reduction)."""
    return torch.softmax(x, dim=0)


def log_softmax_last(x):
    """log_softmax over the last dimension."""
    return torch.log_softmax(x, dim=-1)


def residual_layernorm(x, r, w, b):
    """Residual add feeding LayerNorm; the sum is also returned (next residual)."""
    h = x + r
    return F.layer_norm(h, (h.shape[-1],), w, b, 1e-5), h


def swiglu(a, b):
    """The SwiGLU gate on precomputed projections."""
    return F.silu(a) * b


def swiglu_mm(x, w1, w3):
    """SwiGLU with its two projections."""
    return F.silu(x @ w1) * (x @ w3)


def _rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope(x, cos, sin):
    """Rotary position embedding on [B, T, H, D] with [T, D] tables."""
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return x * c + _rotate_half(x) * s


def row_sum(x):
    """Sum of each row."""
    return x.sum(-1)


def col_sum(x):
    """Sum of each column (reduction over the strided dimension)."""
    return x.sum(0)


def row_stats(x):
    """Mean, max, min and unbiased std of each row, from one kernel."""
    return x.mean(-1), x.amax(-1), x.amin(-1), x.std(-1)


def transposed_add(x, y):
    """Add of a contiguous and a transposed tensor (tiled pointwise kernel)."""
    return x + y.t()


def strided_inputs(x, y):
    """Non-contiguous inputs: a column slice and a transposed view, no copies."""
    return torch.exp(x) * 0.5 + y


def argmax_rows(x):
    """Index of the maximum of each row."""
    return x.argmax(-1)


CASES = {
    "pointwise_chain": Case(
        pointwise_chain, lambda n, dt: [_rand(3, n, dtype=dt, seed=1), _rand(3, n, dtype=dt, seed=2)], 1
    ),
    "bias_act_broadcast": Case(
        bias_act_broadcast,
        lambda n, dt: [
            _rand(4, n, dtype=dt, seed=1),
            _rand(n, dtype=dt, seed=2),
            _rand(4, 1, dtype=dt, seed=3),
        ],
        1,
    ),
    "bias_gelu_after_matmul": Case(
        bias_gelu_after_matmul,
        lambda n, dt: [
            _rand(5, 16, dtype=dt, seed=1),
            _rand(16, n, dtype=dt, seed=2, scale=0.25),
            _rand(n, dtype=dt, seed=3),
        ],
        1,
    ),
    "linear_gelu_tanh": Case(
        linear_gelu_tanh,
        lambda n, dt: [
            _rand(5, 16, dtype=dt, seed=1),
            _rand(n, 16, dtype=dt, seed=2, scale=0.25),
            _rand(n, dtype=dt, seed=3),
        ],
        1,
    ),
    "rmsnorm": Case(rmsnorm, lambda n, dt: [_rand(4, n, dtype=dt, seed=1), _rand(n, dtype=dt, seed=2)], 1),
    "softmax_last": Case(softmax_last, lambda n, dt: [_rand(4, n, dtype=dt, seed=1, scale=3)], 1),
    "softmax_first": Case(softmax_first, lambda n, dt: [_rand(n, 6, dtype=dt, seed=1, scale=3)], 1),
    "log_softmax_last": Case(log_softmax_last, lambda n, dt: [_rand(3, n, dtype=dt, seed=1)], 1),
    "residual_layernorm": Case(
        residual_layernorm,
        lambda n, dt: [
            _rand(4, n, dtype=dt, seed=1),
            _rand(4, n, dtype=dt, seed=2),
            _rand(n, dtype=dt, seed=3),
            _rand(n, dtype=dt, seed=4),
        ],
        1,
    ),
    "swiglu": Case(swiglu, lambda n, dt: [_rand(3, n, dtype=dt, seed=1), _rand(3, n, dtype=dt, seed=2)], 1),
    "swiglu_mm": Case(
        swiglu_mm,
        lambda n, dt: [
            _rand(5, 16, dtype=dt, seed=1),
            _rand(16, n, dtype=dt, seed=2, scale=0.25),
            _rand(16, n, dtype=dt, seed=3, scale=0.25),
        ],
        1,
    ),
    "rope": Case(
        rope,
        lambda n, dt: [
            _rand(2, n, 3, 8, dtype=dt, seed=1),
            _rand(n, 8, dtype=dt, seed=2),
            _rand(n, 8, dtype=dt, seed=3),
        ],
        1,
    ),
    "row_sum": Case(row_sum, lambda n, dt: [_rand(5, n, dtype=dt, seed=1)], 1, kernels_empty=1),
    "col_sum": Case(col_sum, lambda n, dt: [_rand(n, 7, dtype=dt, seed=1)], 1, kernels_empty=1),
    "row_stats": Case(row_stats, lambda n, dt: [_rand(3, n, dtype=dt, seed=1)], 1),
    "transposed_add": Case(
        transposed_add, lambda n, dt: [_rand(n, 19, dtype=dt, seed=1), _rand(19, n, dtype=dt, seed=2)], 1
    ),
    "strided_inputs": Case(
        strided_inputs,
        lambda n, dt: [_rand(3, 2 * n, dtype=dt, seed=1)[:, ::2], _rand(n, 3, dtype=dt, seed=2).t()],
        1,
    ),
    "argmax_rows": Case(argmax_rows, lambda n, dt: [_rand(4, n, dtype=dt, seed=1)], 1),
}
