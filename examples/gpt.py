"""A small GPT, captured with bcfront: the example `bcfront-explain` is made for.

    bcfront-explain examples/gpt.py                  # the report after the output
    bcfront-explain examples/gpt.py --static         # no dynamic shapes: recompile storms
    bcfront-explain examples/gpt.py --static --fixed-window   # the storms, fixed by padding

A GPT-2-style decoder — token and position embeddings, a few blocks of causal
self-attention and MLP with pre-LayerNorm and residuals, a final LayerNorm
and a head tied to the token embedding — built on CPU with a fixed seed and
small enough to run in seconds.  The script captures the model and a
next-token picker, checks the captured forward against eager, then generates
a few tokens.  Two things in it are there to be explained:

* `pick_next` has a deliberate graph break: whether the greedy token repeats
  the previous one is a property of tensor *values*, so Python has to look at
  them; the graph ends at the `if` and each branch runs as its own region.
* Generating token by token feeds the model a sequence one longer on every
  call, and the slices handed to `pick_next` change their strides.  The
  second length recaptures the model with that dimension symbolic (dynamic
  shapes), and that entry serves every later length: one recompile per
  function.  With ``--static`` (``capture(..., dynamic=False)``) each new
  length recaptures instead -- recompile storms, which the report names
  along with their fixes (``bcfront.mark_dynamic(idx, 1)``).  ``--fixed-window``
  pads instead: the tokens live in one buffer of the full block size (causal
  attention makes the padding invisible to the real positions), so every call
  sees the same shapes and strides and reuses one graph.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

import bcfront


@dataclass(frozen=True)
class Config:
    vocab_size: int = 96
    block_size: int = 32    # longest context
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        mask = torch.tril(torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, cfg.block_size, cfg.block_size))

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.wte.weight      # tied input and output embeddings

    def forward(self, idx):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def pick_next(logits, prev):
    """The next token of each sequence: greedy, but never the previous token again.

    The `if` is the deliberate graph break: it depends on the values in
    `best`, which exist only when the graph runs, so the graph ends there
    and each branch continues in a region of its own.
    """
    best = logits.topk(2, dim=-1).indices          # (B, 2): best and runner-up
    if (best[:, :1] == prev).any():  # expect-break: data-dependent-branch
        return torch.where(best[:, :1] == prev, best[:, 1:], best[:, :1])
    return best[:, :1]


def generate(model, pick, prompt, steps: int, block_size: int, fixed_window: bool):
    """Append `steps` tokens to `prompt`, one model call per token."""
    if fixed_window:
        return generate_fixed(model, pick, prompt, steps, block_size)
    idx = prompt
    for _ in range(steps):
        T = idx.shape[1]
        logits = model(idx)                          # a new length on every call
        nxt = pick(logits[:, T - 1, :], idx[:, -1:])
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def generate_fixed(model, pick, prompt, steps: int, block_size: int):
    """The same tokens, with every call seeing the same shapes: the fix for the storm.

    The tokens live in a buffer of the full block size.  Padding sits after
    the real tokens, where causal attention keeps it from changing the logits
    at position T - 1; slices of the buffer have the same strides every time.
    """
    T0 = prompt.shape[1]
    buf = F.pad(prompt, (0, block_size - T0))
    for T in range(T0, T0 + steps):
        logits = model(buf)
        buf[:, T] = pick(logits[:, T - 1, :], buf[:, T - 1:T])[:, 0]
    return buf[:, :T0 + steps]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="Run a small GPT under bcfront.capture.")
    ap.add_argument("--steps", type=int, default=6, help="tokens to generate (default 6)")
    ap.add_argument("--fixed-window", action="store_true",
                    help="pad every context to the block size: one shape, no recompiles")
    ap.add_argument("--static", action="store_true",
                    help="no dynamic shapes: every new length recompiles (a storm)")
    args = ap.parse_args(argv)

    torch.manual_seed(1)
    cfg = Config()
    model = GPT(cfg).eval()
    dynamic = False if args.static else None      # None: sizes that change become symbolic
    cmodel = bcfront.capture(model, dynamic=dynamic)
    cpick = bcfront.capture(pick_next, dynamic=dynamic)
    prompt = torch.randint(0, cfg.vocab_size, (2, 8))
    if args.steps + prompt.shape[1] > cfg.block_size:
        ap.error(f"--steps at most {cfg.block_size - prompt.shape[1]}")

    with torch.no_grad():
        for _ in range(2):                          # same shape twice: one graph, cached
            logits = cmodel(prompt)
        same = torch.allclose(logits, model(prompt), atol=1e-5)
        print(f"forward: logits {tuple(logits.shape)}, matches eager: {same}")
        out = generate(cmodel, cpick, prompt, args.steps, cfg.block_size, args.fixed_window)
        ref = generate(model, pick_next, prompt, args.steps, cfg.block_size, args.fixed_window)
    print(f"generated: {out[:, prompt.shape[1]:].tolist()}, matches eager: {torch.equal(out, ref)}")


if __name__ == "__main__":
    main()
