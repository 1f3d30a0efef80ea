"""Held out: written and labelled before the predictor or capture ever saw it.

The numbers for this file in tools/results/static_precision.json were
measured once, without changing the predictor afterwards.
"""
import torch
import torch.nn.functional as F
from torch import nn

import bcfront


@bcfront.capture
def top_p_filter(logits, p: float = 0.9):
    probs = F.softmax(logits, dim=-1)
    sorted_probs, idx = probs.sort(descending=True)
    cum = sorted_probs.cumsum(-1)
    keep = cum <= p
    if not keep.any():                          # expect-break: data-dependent-branch
        keep[..., 0] = True
    return idx, keep


@bcfront.capture
def early_stop(losses):
    best = losses[0]
    for i in range(1, losses.shape[0]):
        if losses[i] < best:                    # expect-break: data-dependent-branch
            best = losses[i]
    return best


@bcfront.capture
def count_nonzero(x):
    n = (x != 0).sum().item()                   # expect-break: data-dependent
    return x * 2, n


@bcfront.capture
def normalize_rows(x, eps: float = 1e-6):
    norms = x.norm(dim=-1, keepdim=True)
    return x / norms.clamp(min=eps)


class Gate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, 1)
        self.threshold = 0.0

    def forward(self, x):
        score = self.proj(x).mean()
        if score > self.threshold:              # expect-break: data-dependent-branch
            return x
        return torch.zeros_like(x)


def clip_grad_like(ts, max_norm: float):
    total = torch.stack([t.norm() for t in ts]).norm()
    scale = max_norm / (float(total) + 1e-6)    # expect-break: data-dependent
    return [t * min(scale, 1.0) for t in ts]


@bcfront.capture
def uses_clip(a, b):
    return clip_grad_like([a, b], 1.0)


@bcfront.capture
def report_shape(x):
    y = x.relu()
    print(f"relu of {tuple(y.shape)}")          # expect-break: io
    return y


@bcfront.capture
def masked_fill_static(x, lengths: list):
    mask = torch.zeros_like(x, dtype=torch.bool)
    for i, n in enumerate(lengths):
        mask[i, n:] = True
    return x.masked_fill(mask, 0.0)


def main():
    torch.manual_seed(0)
    gate = bcfront.capture(Gate(4))
    for _ in range(3):
        x = torch.randn(3, 4)
        print(top_p_filter(x)[1].shape, early_stop(torch.rand(5)).shape)
        print(count_nonzero(x)[1] >= 0, normalize_rows(x).shape, gate(x).shape)
        print(len(uses_clip(x, x * 2)), report_shape(x).shape)
        print(masked_fill_static(x, [1, 2, 3]).shape)


if __name__ == "__main__":
    main()
