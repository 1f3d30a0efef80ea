"""A named corpus of small PyTorch models for differential tests of `bcfront.capture`.

`ZOO` maps a name to a factory (its docstring says what the model exercises).
``factory()`` returns ``(module, make_inputs)``; ``make_inputs(seed, variant)``
returns a fresh tuple of positional arguments, the same values for the same
``(seed, variant)``, so eager and captured runs get equal but distinct tensors.
Variant 0 and variant 1 differ in batch size and/or sequence length (a new
shape, hence a recompile under static-shape guards); inputs change with the seed.

Everything is plain PyTorch, CPU, float32, tiny, and seeded: parameters come
from `torch.manual_seed(0)` inside each factory, inputs from a private
`torch.Generator`, so the corpus never depends on the global RNG state.
`MAY_BREAK` names models built from torch.nn library code that we did not
write; they are checked for correct results but not for zero graph breaks.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

ZOO: dict = {}
MAY_BREAK = frozenset({"torch_multihead_attention"})

D = 32  # model width for the attention models
HEADS = 4
MAX_LEN = 16
VOCAB = 64
SHAPES = {0: (2, 8), 1: (3, 5)}  # variant -> (batch, seq)


def model(factory):
    """Register `factory` in the zoo under its name (it must have a docstring)."""
    assert factory.__doc__, f"zoo entry {factory.__name__} needs a docstring"
    ZOO[factory.__name__] = factory
    return factory


def seeded(build_inputs):
    """Turn ``build_inputs(gen, variant)`` into ``make_inputs(seed, variant)``."""

    def make_inputs(seed: int, variant: int) -> tuple:
        return build_inputs(torch.Generator().manual_seed(seed), variant)

    return make_inputs


def randn(gen, *shape):
    return torch.randn(*shape, generator=gen)


def padding_mask(gen, batch: int, seq: int) -> torch.Tensor:
    """Bool (batch, seq), True at padded key positions; every row keeps >= 1 real token."""
    lengths = torch.randint(1, seq + 1, (batch,), generator=gen)
    return torch.arange(seq)[None, :] >= lengths[:, None]


def _tokens_inputs(gen, variant):
    b, t = SHAPES[variant]
    return (randn(gen, b, t, D),)


def _padded_inputs(gen, variant):
    b, t = SHAPES[variant]
    return randn(gen, b, t, D), padding_mask(gen, b, t)


# -- building blocks ----------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, d_in=16, d_hidden=32, d_out=8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ResidualMLP(nn.Module):
    def __init__(self, d=16, hidden=32, depth=3, p=0.3):
        super().__init__()
        self.p = p
        self.inp = nn.Linear(d, hidden)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(p))
            for _ in range(depth)
        )
        self.out = nn.Linear(hidden, 4)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(F.dropout(h, self.p, self.training))


class ManualLayerNorm(nn.Module):
    def __init__(self, d=D, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))
        self.bias = nn.Parameter(0.1 * torch.randn(d))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).pow(2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class SelfAttention(nn.Module):
    """Multi-head self-attention: causal (tril buffer) or key-padding mask; softmax or SDPA."""

    def __init__(self, d=D, n_head=HEADS, causal=True, use_sdpa=False, dropout=0.0):
        super().__init__()
        self.n_head, self.causal, self.use_sdpa = n_head, causal, use_sdpa
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        tril = torch.tril(torch.ones(MAX_LEN, MAX_LEN, dtype=torch.bool))
        self.register_buffer("bias", tril.view(1, 1, MAX_LEN, MAX_LEN), persistent=False)

    def forward(self, x, pad_mask=None):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.use_sdpa:
            keep = None if pad_mask is None else ~pad_mask[:, None, None, :]
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, is_causal=self.causal)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            if self.causal:
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            if pad_mask is not None:
                att = att.masked_fill(pad_mask[:, None, None, :], float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class GPT2MLP(nn.Module):
    def __init__(self, d=D, dropout=0.0):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * d, d)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, d=D, n_head=HEADS, dropout=0.1):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, n_head, causal=True, dropout=dropout)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = GPT2MLP(d, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab=VOCAB, d=D, n_head=HEADS, n_layer=2, dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(MAX_LEN, d)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(GPT2Block(d, n_head, dropout) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying: one Parameter, two uses
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.1)

    def forward(self, idx, targets=None):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep: int):
    """(B, H_kv, T, D) -> (B, H_kv * n_rep, T, D), the Llama way (expand + reshape)."""
    if n_rep == 1:
        return x
    B, H, T, Dh = x.shape
    return x[:, :, None, :, :].expand(B, H, n_rep, T, Dh).reshape(B, H * n_rep, T, Dh)


class LlamaAttention(nn.Module):
    def __init__(self, d=D, n_heads=HEADS, n_kv_heads=2):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, d // n_heads
        self.wq = nn.Linear(d, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(d, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(d, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = self.n_heads // self.n_kv_heads
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(B, T, -1))


class SwiGLU(nn.Module):
    def __init__(self, d=D, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)
        self.w3 = nn.Linear(d, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, d=D, n_heads=HEADS, n_kv_heads=2, theta=10000.0):
        super().__init__()
        self.attention_norm = RMSNorm(d)
        self.attention = LlamaAttention(d, n_heads, n_kv_heads)
        self.ffn_norm = RMSNorm(d)
        self.feed_forward = SwiGLU(d)
        head_dim = d // n_heads
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(MAX_LEN).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("rope_cos", emb.cos(), persistent=False)
        self.register_buffer("rope_sin", emb.sin(), persistent=False)

    def forward(self, x):
        T = x.shape[1]
        cos, sin = self.rope_cos[:T], self.rope_sin[:T]
        h = x + self.attention(self.attention_norm(x), cos, sin)
        return h + self.feed_forward(self.ffn_norm(h))


class ConvBlock(nn.Module):
    def __init__(self, c_in=3, c=8, n_cls=5):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, n_cls)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(h + self.bn2(self.conv2(h)))
        return self.fc(torch.flatten(self.pool(h), 1))


class GradModeBlocks(nn.Module):
    """no_grad / set_grad_enabled(False) / enable_grad blocks inside forward."""

    def __init__(self, d=16):
        super().__init__()
        self.lin1 = nn.Linear(d, d)
        self.lin2 = nn.Linear(d, d)
        self.lin3 = nn.Linear(d, d)
        self.gate = nn.Parameter(torch.randn(d))

    def forward(self, x):
        with torch.no_grad():
            scale = self.lin1(x).abs().amax(-1, keepdim=True) + 1.0
        with torch.set_grad_enabled(False):
            shift = self.lin2(x).tanh()
        h = self.lin3(x) / scale + shift
        with torch.enable_grad():
            # records autograd history even when the caller is under no_grad
            g = h * torch.sigmoid(self.gate)
        return g, scale.requires_grad


class AutocastMLP(nn.Module):
    def __init__(self, d=16, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)
        self.skip = nn.Linear(d, d)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = F.relu(self.fc1(x))
            h = self.fc2(h)
        # back in float32: the bf16 part must be bf16 in both runs, the rest float32
        return h.float() + self.skip(x), h.dtype


def _scale_input_hook(module, args):
    return (args[0] * 0.5,)


def _shift_output_hook(module, args, output):
    return output + module.weight.sum(1)


class HookedMLP(MLP):
    """An MLP whose fc1 has a forward pre-hook and fc2 a forward hook (both rewrite values)."""

    def __init__(self):
        super().__init__()
        self.fc1.register_forward_pre_hook(_scale_input_hook)
        self.fc2.register_forward_hook(_shift_output_hook)


class EMANormalizer(nn.Module):
    """Reassigns a buffer (not in place) and bumps a plain Python counter in train mode."""

    def __init__(self, d=16):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.register_buffer("avg", torch.zeros(d))
        self.steps = 0

    def forward(self, x):
        y = self.lin(x)
        if self.training:
            self.avg = 0.9 * self.avg + 0.1 * y.detach().flatten(0, -2).mean(0)
            self.steps += 1
        return y - self.avg


class ClippedLinear(nn.Module):
    """Clamps its own weight in place under no_grad at the start of forward (WGAN-style clipping)."""

    def __init__(self, d=16):
        super().__init__()
        self.lin = nn.Linear(d, d)
        with torch.no_grad():
            self.lin.weight.mul_(4.0)

    def forward(self, x):
        with torch.no_grad():
            self.lin.weight.clamp_(-0.2, 0.2)
        return self.lin(x)


class CachedAttention(nn.Module):
    """Single-head attention over a key/value cache buffer written at a Python-int position."""

    def __init__(self, d=D, cache_len=24):
        super().__init__()
        self.q, self.kv = nn.Linear(d, d), nn.Linear(d, 2 * d)
        self.cache_len, self.pos = cache_len, 0
        self.register_buffer("cache", torch.zeros(2, cache_len, 2 * d))

    def forward(self, x):
        B, T, C = x.shape
        if self.cache.shape[0] != B or self.pos + T > self.cache_len:
            self.cache = x.new_zeros(B, self.cache_len, 2 * C)  # a new batch or a full cache
            self.pos = 0
        self.cache[:, self.pos : self.pos + T] = self.kv(x).detach()
        self.pos += T
        k, v = self.cache[:, : self.pos].split(C, dim=-1)
        att = (self.q(x) @ k.transpose(1, 2)) / math.sqrt(C)
        return att.softmax(-1) @ v


class TorchMHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(D, HEADS, batch_first=True)

    def forward(self, x, pad_mask):
        y, w = self.mha(x, x, x, key_padding_mask=pad_mask, need_weights=True)
        return y, w


# -- the zoo ------------------------------------------------------------------


def _built(cls, *args, train=True, **kwargs):
    torch.manual_seed(0)
    return cls(*args, **kwargs).train(train)


@model
def mlp():
    """Linear -> GELU -> Linear on (batch, 16) rows."""
    return _built(MLP), seeded(lambda g, v: (randn(g, SHAPES[v][0] * 2, 16),))


@model
def mlp_with_hooks():
    """MLP with a forward pre-hook and a forward hook on submodules (module __call__ semantics)."""
    return _built(HookedMLP), seeded(lambda g, v: (randn(g, SHAPES[v][0] * 2, 16),))


@model
def residual_mlp_dropout_eval():
    """Residual blocks (LayerNorm, Linear, ReLU, Dropout p=0.3) in eval mode over a ModuleList."""
    return _built(ResidualMLP, train=False), seeded(lambda g, v: (randn(g, *SHAPES[v], 16),))


@model
def layernorm():
    """nn.LayerNorm with non-trivial affine parameters."""
    m = _built(nn.LayerNorm, D)
    with torch.no_grad():
        m.weight.normal_(1.0, 0.1)
        m.bias.normal_(0.0, 0.1)
    return m, seeded(_tokens_inputs)


@model
def layernorm_manual():
    """LayerNorm written out: mean, centered variance, sqrt, affine."""
    return _built(ManualLayerNorm), seeded(_tokens_inputs)


def _attention_entry(name: str, causal: bool, use_sdpa: bool, doc: str) -> None:
    """Register one SelfAttention variant; padding variants take a mask argument."""

    def factory():
        inputs = _tokens_inputs if causal else _padded_inputs
        return _built(SelfAttention, causal=causal, use_sdpa=use_sdpa), seeded(inputs)

    factory.__name__, factory.__doc__ = name, doc
    model(factory)


_attention_entry(
    "mha_causal_softmax",
    True,
    False,
    "Multi-head attention, causal mask sliced from a tril buffer, explicit masked_fill + softmax.",
)
_attention_entry(
    "mha_causal_sdpa",
    True,
    True,
    "Multi-head attention through F.scaled_dot_product_attention(is_causal=True).",
)
_attention_entry(
    "mha_padding_softmax",
    False,
    False,
    "Multi-head attention with a key-padding mask argument, explicit masked_fill + softmax.",
)
_attention_entry(
    "mha_padding_sdpa",
    False,
    True,
    "Multi-head attention with a key-padding mask turned into a boolean SDPA attn_mask.",
)


@model
def gpt2_block():
    """Pre-LN GPT-2 block (causal attention + tanh-GELU MLP, dropout 0.1) in eval mode."""
    return _built(GPT2Block, train=False), seeded(_tokens_inputs)


@model
def gpt2_model():
    """2-layer GPT-2: token + position embeddings, tied lm_head; (logits, cross-entropy loss or None)."""

    def build(g, v):
        b, t = SHAPES[v]
        idx = torch.randint(0, VOCAB, (b, t), generator=g)
        # variant 1 leaves `targets` at its default: loss is None, a different arity
        return (idx,) if v else (idx, torch.randint(0, VOCAB, (b, t), generator=g))

    return _built(GPT2, train=False), seeded(build)


@model
def llama_block():
    """Llama block: RMSNorm, RoPE from sliced cos/sin buffers, grouped-query attention
    (4 q / 2 kv heads), SwiGLU."""
    return _built(LlamaBlock), seeded(_tokens_inputs)


def _images(g, v):
    b, hw = {0: (2, 8), 1: (3, 6)}[v]
    return (randn(g, b, 3, hw, hw),)


@model
def conv_bn_train():
    """Conv2d + BatchNorm2d (train mode: batch stats, running stats and num_batches_tracked
    update) + residual."""
    return _built(ConvBlock), seeded(_images)


@model
def conv_bn_eval():
    """Conv2d + BatchNorm2d in eval mode, with non-trivial running statistics."""
    m = _built(ConvBlock, train=False)
    with torch.no_grad():
        for bn in (m.bn1, m.bn2):
            bn.running_mean.normal_(0.0, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.normal_(1.0, 0.2)
            bn.bias.normal_(0.0, 0.2)
    return m, seeded(_images)


@model
def grad_mode_blocks():
    """with torch.no_grad / set_grad_enabled(False) / enable_grad blocks inside forward."""
    return _built(GradModeBlocks), seeded(lambda g, v: (randn(g, *SHAPES[v], 16),))


@model
def autocast_mlp():
    """A bf16 torch.autocast('cpu') block inside forward, float32 skip path outside it."""
    return _built(AutocastMLP), seeded(lambda g, v: (randn(g, *SHAPES[v], 16),))


@model
def ema_buffer_reassign():
    """Train-mode EMA: `self.avg = ...` replaces a registered buffer; `self.steps += 1` on a plain int."""
    return _built(EMANormalizer), seeded(lambda g, v: (randn(g, *SHAPES[v], 16),))


@model
def weight_clip_in_forward():
    """A parameter clamped in place under torch.no_grad() inside forward, then used."""
    return _built(ClippedLinear), seeded(lambda g, v: (randn(g, *SHAPES[v], 16),))


@model
def kv_cache_attention():
    """Decoding-style KV cache: buffer slice-assigned at self.pos, reset (buffer replaced) on a
    new batch or when full."""
    return _built(CachedAttention), seeded(_tokens_inputs)


@model
def torch_multihead_attention():
    """torch.nn.MultiheadAttention (library code) with a key-padding mask, returning averaged weights."""
    return _built(TorchMHA, train=False), seeded(_padded_inputs)
