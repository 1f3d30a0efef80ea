"""A named corpus of plain functions written with everyday tensor idioms.

`IDIOMS` maps a name to an `Idiom`: the function (its docstring says which
idioms it uses), ``make_inputs(seed, variant)`` returning a fresh tuple of
arguments (equal values for equal ``(seed, variant)``; variant 1 is a new
shape), and ``grad``: whether its floating inputs may be made
``requires_grad`` leaves (False for functions that mutate their inputs).
Every function's results depend on its inputs' values, so a capture that
froze the first call's answer would be caught.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from .zoo import SHAPES, randn, seeded

C = 12


@dataclass(frozen=True, slots=True)
class Idiom:
    fn: Callable
    make_inputs: Callable
    grad: bool = True


IDIOMS: dict[str, Idiom] = {}


def idiom(build_inputs, grad=True):
    """Register the decorated function with inputs from ``build_inputs(gen, variant)``."""

    def register(fn):
        assert fn.__doc__, f"idiom {fn.__name__} needs a docstring"
        IDIOMS[fn.__name__] = Idiom(fn, seeded(build_inputs), grad)
        return fn

    return register


def _btc(g, v, n=1):
    return tuple(randn(g, *SHAPES[v], C) for _ in range(n))


def _one(g, v):
    return _btc(g, v)


def _two(g, v):
    return _btc(g, v, 2)


def _square(g, v):
    b, t = SHAPES[v]
    return (randn(g, b, t, t),)


def _heads(g, v, n=3):
    b, t = SHAPES[v]
    return tuple(randn(g, b, 2, t, 4) for _ in range(n))


@idiom(_one)
def chunk_split_unbind(x):
    """x.chunk, torch.split with sizes from the shape, unbind into a tuple summed by a loop."""
    a, b, c = x.chunk(3, dim=-1)
    head, tail = torch.split(x, [2, x.shape[-1] - 2], dim=-1)
    rows = x.unbind(0)
    total = rows[0]
    for r in rows[1:]:
        total = total + r
    parts = x.split(5, dim=-1)  # uneven: 5, 5, 2
    return a * b - c, head.sum(-1) + tail.mean(-1), total, parts[-1] * len(parts)


@idiom(_one)
def view_reshape_permute(x):
    """view into heads, permute, contiguous, reshape, transpose, flatten, unsqueeze/squeeze, .mT."""
    B, T, Cx = x.shape
    h = x.view(B, T, 3, Cx // 3).permute(0, 2, 1, 3)
    flat = h.contiguous().reshape(B * 3, T, Cx // 3)
    t = flat.transpose(1, 2)
    back = h.transpose(1, 2).reshape(B, T, Cx)
    return t * 2, back.flatten(1), x.unsqueeze(1).squeeze(1).mT + 1, h - 1


@idiom(
    lambda g, v: (
        randn(g, SHAPES[v][0], SHAPES[v][1], SHAPES[v][1]),
        torch.randint(1, SHAPES[v][1] + 1, (SHAPES[v][0],), generator=g),
    )
)
def masked_fill_where(scores, lengths):
    """Padding mask from arange >= lengths, masked_fill(-inf), softmax, torch.where with tensor and scalar."""
    T = scores.size(-1)
    pad = torch.arange(T)[None, :] >= lengths[:, None]
    p = torch.softmax(scores.masked_fill(pad[:, None, :], float("-inf")), dim=-1)
    leaky = torch.where(scores > 0, scores, 0.1 * scores)
    cleared = torch.where(pad[:, :, None], torch.zeros_like(scores), scores)
    capped = torch.where(scores > 1.0, 1.0, scores)
    return p, leaky, cleared, capped, pad


@idiom(_square)
def tril_triu(x):
    """Causal mask from torch.tril(ones), triu(diagonal=1).bool(), Tensor.tril/triu with offsets."""
    T = x.shape[-1]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    upper = torch.triu(torch.ones(T, T), diagonal=1).bool()
    a = x.masked_fill(~causal, 0.0)
    b = x.masked_fill(upper, -1e4).softmax(-1)
    return a, b, x.tril(-1) + x.triu(2), causal.sum() * x.mean()


@idiom(_heads)
def einsum_attention(q, k, v):
    """einsum for scores, weighted values, a contraction to a matrix and a diagonal; x.shape[-1] ** -0.5."""
    s = torch.einsum("bhtd,bhsd->bhts", q, k) * q.shape[-1] ** -0.5
    o = torch.einsum("bhts,bhsd->bhtd", s.softmax(-1), v)
    gram = torch.einsum("bhtd,bhte->de", q, v)
    return o, gram, torch.einsum("bhii->bhi", s)


@idiom(_two)
def cat_stack(x, y):
    """torch.cat on lists and tuples (tuple repetition too), torch.stack, a list comprehension of sums."""
    c = torch.cat([x, y], dim=-1)
    s = torch.stack((x, y, x * y), dim=1)
    d = torch.cat((x,) * 2 + (y[:, :1],), dim=1)
    sums = torch.stack([t.sum() for t in (x, y, c)])
    return c, s, d, sums


@idiom(lambda g, v: (randn(g, *SHAPES[v], C), torch.randint(0, 100, (4,), generator=g)))
def indexing(x, idx):
    """Slices with negative ends and steps, None, Ellipsis, integer, and long-tensor (advanced) indices."""
    a = x[:, 1:-1]
    b = x[..., None, ::2]
    c = x[None, -1, :, 0]
    d = x[:, idx % x.size(1)]
    e = x[idx % x.size(0), 0]
    f = x[..., -1]
    g = x[torch.arange(x.size(0)), idx[: x.size(0)] % x.size(1)]
    return a * 1, b * 1, c * 1, d, e, f * 1, g


@idiom(_two)
def inplace_intermediates(x, y):
    """add_/mul_/clamp_/relu_/copy_, index assignment on intermediates; a view that must see later writes."""
    h = x * 2
    h.add_(1)
    h.mul_(y)
    h[:, 0] = 0.0
    h[..., :2] += y[..., :2]
    v = h[0]  # view of h taken before the next in-place op
    h.clamp_(min=-1.0, max=1.0)
    z = torch.zeros_like(x)
    z.copy_(y).relu_()
    return h, v * 1, z


@idiom(lambda g, v: (randn(g, *SHAPES[v], C), torch.randint(-5, 5, (*SHAPES[v], C), generator=g)))
def dtype_casts(x, n):
    """.to(float64/bfloat16), .half().float(), bool->long sums, type_as, .int(), int16 round trip."""
    a = x.to(torch.float64) * 3
    b = x.half().float()
    c = (x > 0).long().sum(-1)
    d = x.to(dtype=torch.bfloat16)
    e = n.type_as(x) * x
    f = (x * 10).int()
    q = (x * 100).to(torch.int16).to(x.dtype)
    return a, b, c, d, e, f, q, x.double().dtype == torch.float64


@idiom(_one)
def factories(x):
    """torch.arange/zeros/ones/full/linspace/eye and *_like/new_full built inside the function."""
    B, T, Cx = x.shape
    pos = torch.arange(T, device=x.device)
    z = torch.zeros(B, T, dtype=x.dtype) + x[..., 0]
    o = torch.ones(T, Cx)
    f = torch.full((B, 1, Cx), 2.5)
    r = torch.arange(0, Cx, 2, dtype=torch.float32) / Cx
    lin = torch.linspace(0, 1, steps=T)
    eye = torch.eye(T)
    return (
        x + pos[None, :, None] * o + f,
        z,
        r * x[0, 0, ::2],
        lin[:, None] * x[0],
        eye @ x[0],
        torch.ones_like(x) * x.new_full((Cx,), 0.5) + x,
        torch.zeros(()) + x.sum(),
    )


@idiom(_one)
def activations(x):
    """F.relu/gelu(+tanh)/silu/softmax/log_softmax/leaky_relu/elu/softplus/mish/hardtanh/normalize/glu."""
    return (
        F.relu(x),
        F.gelu(x),
        F.gelu(x, approximate="tanh"),
        F.silu(x),
        torch.sigmoid(x),
        torch.tanh(x),
        F.softmax(x, dim=-1),
        F.log_softmax(x, -1),
        F.leaky_relu(x, 0.2),
        F.elu(x),
        F.softplus(x),
        F.mish(x),
        F.hardtanh(x, -0.5, 0.5),
        F.normalize(x, dim=-1),
        F.dropout(x, p=0.5, training=False),
        x.relu(),
        F.glu(x),
    )


@idiom(_heads)
def math_sqrt_sizes(q, k, v):
    """1 / math.sqrt(q.size(-1)) scaling, math.log of a size, math.prod of a shape slice."""
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    att = att.softmax(-1) * math.log(k.shape[2] + 1)
    return att @ v, v / math.prod(v.shape[:-1]), math.sqrt(q.numel())


@idiom(_one)
def shape_arithmetic(x):
    """B, T, C = x.shape; x.shape[-1] ** -0.5; x.size(1) // 2 slicing; numel, dim, ndim, len."""
    B, T, Cx = x.shape
    y = x * x.shape[-1] ** -0.5
    half = x.size(1) // 2
    y = y[:, :half] + y[:, half : 2 * half]
    y = y.reshape(B, -1) / x.numel()
    n = x.dim() + x.ndim + len(x)
    return y * n + T / Cx, (B * T, Cx)


@idiom(_one)
def shape_control_flow(x):
    """Python if on x.shape[0] and a loop over range(x.size(1) - 1), both decided by shapes."""
    if x.shape[0] > 2:
        y = x.cumsum(0)
    else:
        y = x.flip(0)
    acc = torch.zeros_like(x[:, 0])
    for i in range(x.size(1) - 1):
        acc = acc + x[:, i] * x[:, i + 1]
    return y, acc


@idiom(_one)
def reductions(x):
    """mean(keepdim), var(unbiased=False), std, amax over dims, logsumexp, norm, argmax, max(dim), prod."""
    mx = x.max(dim=1)
    return (
        x.mean(-1, keepdim=True),
        x.var(-1, unbiased=False),
        x.std(1),
        x.amax(dim=(1, 2)),
        torch.logsumexp(x, -1),
        x.norm(dim=-1),
        x.argmax(-1),
        mx.values,
        mx.indices,
        x.sum(),
        x.prod(-1),
    )


@idiom(lambda g, v: (randn(g, *SHAPES[v], C), randn(g, C)))
def broadcast_expand_repeat(x, b):
    """Broadcast add, expand(-1), repeat, repeat_interleave, broadcast_to, expand_as."""
    e = b.expand(x.shape[0], -1)
    return (
        x + b,
        e * 1,
        x.repeat(1, 2, 1),
        x.repeat_interleave(2, dim=1),
        torch.broadcast_to(b, x.shape) * x,
        b[None, None].expand_as(x) - x,
    )


@idiom(lambda g, v: (randn(g, SHAPES[v][0], SHAPES[v][1], 2, 8),))
def rope_complex(x, theta=10000.0):
    """Meta-Llama RoPE: polar freqs, view_as_complex, complex multiply, view_as_real, default argument."""
    B, T, H, Dh = x.shape
    freqs = 1.0 / (theta ** (torch.arange(0, Dh, 2)[: Dh // 2].float() / Dh))
    angles = torch.outer(torch.arange(T, dtype=torch.float32), freqs)
    cis = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.float().reshape(B, T, H, -1, 2))
    return torch.view_as_real(xc * cis[None, :, None, :]).flatten(3).type_as(x)


@idiom(
    lambda g, v: (
        randn(g, *SHAPES[v], C),
        torch.randn(SHAPES[v][0], generator=g).mul(0.3).add(1.0).tolist()[0],
    )
)
def float_argument(x, temperature):
    """A Python float argument that changes between calls (must not be frozen at its first value)."""
    return F.softmax(x / temperature, dim=-1), x * temperature


@idiom(
    lambda g, v: (
        randn(g, SHAPES[v][0], 2 * SHAPES[v][1], C),
        randn(g, *SHAPES[v], C),
        int(torch.randint(0, SHAPES[v][1] + 1, (1,), generator=g)),
    ),
    grad=False,
)
def kv_cache_update(cache, k, pos):
    """Slice assignment into an input at a Python-int position (an input mutation), then read the prefix."""
    T = k.shape[1]
    cache[:, pos : pos + T] = k
    return cache[:, : pos + T].sum(1)


def _maybe_aliased(g, v):
    x, y = _two(g, v)
    return (x, x) if torch.randint(0, 2, (1,), generator=g).item() else (x, y)


@idiom(_maybe_aliased, grad=False)
def inplace_on_aliased_inputs(a, b):
    """a.mul_ on an input that may be the same tensor as b: the result differs when they alias."""
    a.mul_(2)
    return a + b


@idiom(lambda g, v: (randn(g, *SHAPES[v], C), torch.randint(0, 5, SHAPES[v], generator=g), randn(g, 5, C)))
def functional_layers(x, idx, w):
    """F.linear, F.layer_norm, F.pad, F.one_hot(num_classes), F.embedding, F.cross_entropy."""
    B, T, Cx = x.shape
    h = F.linear(x, w)  # (B, T, 5) logits
    ln = F.layer_norm(x, (Cx,), weight=w[0], bias=w[1])
    padded = F.pad(x, (1, 2))
    onehot = F.one_hot(idx, num_classes=5).float()
    emb = F.embedding(idx, w)
    loss = F.cross_entropy(h.reshape(B * T, -1), idx.reshape(-1))
    return h * onehot, ln, padded, emb, loss


@idiom(lambda g, v: (randn(g, *SHAPES[v], C).to(torch.float64 if v else torch.float32),))
def dtype_dispatch(x):
    """Python branches on x.dtype, is_floating_point() and dtype.itemsize; variant 1 is float64."""
    if x.dtype == torch.float64:
        y = x * 2
    elif x.is_floating_point():
        y = x + 1
    else:
        y = x - 1
    return y * x.dtype.itemsize, torch.zeros(3, dtype=x.dtype) + x.sum()


@idiom(_one)
def views_of_inputs(x):
    """Returns views of x (index, transpose, view, unsqueeze, chunk, detach): they alias x in eager."""
    B, T, Cx = x.shape
    return x[0], x.transpose(0, 1), x.view(B * T, Cx), x.unsqueeze(1), x.chunk(2, dim=-1)[1], x.detach()
