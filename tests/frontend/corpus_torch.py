"""Torch corpus: functions and small models for differential tests against eager PyTorch.

`CASES` maps a name to a `TorchCase`: a function (or a module factory), an
input factory ``make(seed, variant) -> args`` and whether it must capture as
one graph with no breaks.  Variant 1 changes shapes (a recompile under static
shape guards).  Each docstring says what the case exercises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TorchCase:
    fn: object  # a function, or a zero-argument module factory when `module`
    make: object  # (seed, variant) -> tuple of arguments
    module: bool = False
    whole: bool = True  # one graph, no graph break
    grad: bool = False  # inputs require grad; compare gradients too


CASES: dict[str, TorchCase] = {}


def case(make, **kw):
    def register(fn):
        CASES[fn.__name__] = TorchCase(fn, make, **kw)
        return fn

    return register


def _g(seed):
    return torch.Generator().manual_seed(seed)


def two(seed, v):
    g = _g(seed)
    n = 4 + 2 * v
    return torch.randn(n, 8, generator=g), torch.randn(8, 8, generator=g)


def one(seed, v):
    return (torch.randn(3 + v, 5, generator=_g(seed)),)


def seq(seed, v):
    return (torch.randn(2, 5 + v, 16, generator=_g(seed)),)


# -- functions ---------------------------------------------------------------------------------


@case(two, grad=True)
def arithmetic_and_methods(x, w):
    """Operators, torch functions, Tensor methods, F functions, reductions, shape arithmetic."""
    y = torch.relu(x @ w) * 2 - x.mean(dim=-1, keepdim=True)
    z = F.softmax(y / math.sqrt(y.shape[-1]), dim=-1)
    n, d = z.shape
    return z.sum(dim=0), z.view(n * d)[:5], y.transpose(0, 1).contiguous(), -z, z**2, n


@case(one)
def grad_modes(x):
    """torch.no_grad / enable_grad / set_grad_enabled blocks; requires_grad of outputs."""
    x = x.requires_grad_(False).clone().requires_grad_(True)
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 3
    with torch.set_grad_enabled(False):
        c = x + 1
    d = x.sum()
    return a, b, c, d, a.requires_grad, b.requires_grad, torch.is_grad_enabled()


@case(two)
def autocast_block(x, w):
    """torch.autocast inside the function: bf16 matmul inside, float32 outside."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w
        z = torch.relu(y)
    return z.float(), y.dtype, (x @ w).dtype


@case(one)
def inplace_on_input(x):
    """In-place ops on an input and on intermediates; the input's mutation is visible outside."""
    x.mul_(2)
    y = x.clone()
    y[0] = 0.5
    y += 1
    y.clamp_(max=1.5)
    return y


@case(two)
def containers_of_tensors(x, w):
    """Lists/dicts/tuples of tensors built, iterated, unpacked and returned."""
    parts = list(torch.chunk(x, 2, dim=0))
    out = {"first": parts[0] @ w, "rest": [p.sum() for p in parts[1:]]}
    a, b = parts
    stacked = torch.stack([a, b]).sum(0)
    return out, (stacked, torch.cat(parts, dim=0)), len(parts)


@case(one)
def indexing(x):
    """Basic, advanced and masked-assignment indexing; None/Ellipsis; negative steps via flip."""
    idx = torch.tensor([0, 2])
    y = x[idx]
    y2 = x[..., 1:3]
    y3 = x[None, :, -1]
    z = x.clone()
    z[z > 0] = 0.0
    return y, y2, y3, z, x[1, 2]


@case(seq)
def factories_and_dtypes(x):
    """Factories, arange masks, dtype casts, device queries, finfo."""
    t = x.shape[1]
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    scores = x @ x.transpose(-1, -2)
    scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    pos = torch.arange(t, device=x.device).float()
    return scores.softmax(-1).to(torch.float64), pos, x.dtype == torch.float32, x.device.type


class Scaler:
    def __init__(self, s):
        self.s = s

    def __call__(self, t):
        return t * self.s


SCALE = Scaler(3.0)


@case(one)
def python_objects_with_tensors(x):
    """A global callable object, closures and comprehensions over tensors."""
    offsets = [0.5 * i for i in range(3)]

    def shift(t, k=1.0):
        return t + k

    return [SCALE(shift(x, o)) for o in offsets], sum(x[i] for i in range(x.shape[0]))


@case(one)
def exceptions_with_tensors(x):
    """try/except/finally around tensor code, raising on a shape fact (static)."""
    log = []
    try:
        if x.shape[0] > 3:
            raise ValueError("long")
        y = x * 2
    except ValueError:
        y = x * 3
    finally:
        log.append(x.shape[0])
    return y, log


# -- models --------------------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, h), nn.Linear(h, d)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        return self.fc2(self.drop(F.gelu(self.fc1(x))))


class Attention(nn.Module):
    """Causal self-attention with a padding mask, explicit softmax."""

    def __init__(self, d=16, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.mlp = Attention(d), MLP(d, 4 * d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=50, d=16, layers=2, ctx=16):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.h = nn.ModuleList(Block(d) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.head(self.ln_f(x))


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, theta=10000.0):
    """Rotary embedding on (batch, heads, time, dim) with complex multiplication."""
    t, d = x.shape[-2], x.shape[-1]
    freqs = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    angles = torch.outer(torch.arange(t, dtype=torch.float32), freqs)
    rot = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * rot).flatten(-2).type_as(x)


class LlamaBlock(nn.Module):
    """RMSNorm, rotary embeddings, grouped-query attention (4 query heads, 2 kv heads), SwiGLU."""

    def __init__(self, d=32, heads=4, kv_heads=2, hidden=64):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.wq = nn.Linear(d, heads * self.hd, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.w1, self.w3 = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.norm1(x)
        q = self.wq(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = rope(q), rope(k)
        rep = self.heads // self.kv_heads
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(att.transpose(1, 2).reshape(b, t, -1))
        h = self.norm2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def tokens(seed, v):
    return (torch.randint(0, 50, (2, 6 + v), generator=_g(seed)),)


def images(seed, v):
    return (torch.randn(2, 3, 6 + v, 6, generator=_g(seed)),)


CASES["mlp"] = TorchCase(
    lambda: MLP(), lambda s, v: (torch.randn(3 + v, 16, generator=_g(s)),), module=True, grad=True
)


def seq16(seed, v):
    return (torch.randn(2, 5 + v, 16, generator=_g(seed)),)


CASES["attention"] = TorchCase(lambda: Attention(), seq16, module=True, grad=True)
CASES["gpt_block"] = TorchCase(lambda: Block(), seq16, module=True, grad=True)
CASES["gpt"] = TorchCase(lambda: GPT(), tokens, module=True)
CASES["llama_block"] = TorchCase(
    lambda: LlamaBlock(), lambda s, v: (torch.randn(2, 5 + v, 32, generator=_g(s)),), module=True, grad=True
)
CASES["conv_bn_train"] = TorchCase(lambda: ConvBN().train(), images, module=True)
CASES["conv_bn_eval"] = TorchCase(lambda: ConvBN().eval(), images, module=True)
