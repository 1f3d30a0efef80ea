"""Harder cases: tensors reached through buffers, dicts, formatting and indirect calls.

Several of these are beyond what a static predictor can see (a registered
buffer's value, a function picked from a dict at run time, formatting a
tensor into a string); they are here so the measured recall is honest.
"""
import torch
from torch import nn

import bcfront


class RunningNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("peak", torch.zeros(n))

    def forward(self, x):
        if self.peak.max() > 10:                # expect-break: data-dependent-branch
            x = x / self.peak.max()
        return x * 2


def double(t):
    if t.min() < -5:                            # expect-break: data-dependent-branch
        return t
    return t * 2


OPS = {"double": double}


@bcfront.capture
def dispatch(x, name: str):
    return OPS[name](x)


@bcfront.capture
def describe(x):
    label = f"mean={x.mean()}"                  # expect-break: data-dependent
    return x + 1, label


@bcfront.capture
def weights_in_dict(x, params):
    if params["w"].sum() > 0:                   # expect-break: data-dependent-branch
        x = x @ params["w"]
    return x


@bcfront.capture
def unbound_item(x):
    v = torch.Tensor.item(x.sum())              # expect-break: data-dependent
    return x * v


@bcfront.capture
def rows(x):
    out = []
    for row in x:                               # iterating over a tensor: shapes only
        out.append(row * 2)
    return torch.stack(out)


@bcfront.capture
def is_tensor_check(x, y):
    if isinstance(y, torch.Tensor) and x.requires_grad is False:
        return x + y
    return x


def main():
    torch.manual_seed(0)
    norm = bcfront.capture(RunningNorm(3))
    params = {"w": torch.randn(3, 3)}
    for _ in range(3):
        x = torch.randn(4, 3)
        print(norm(x).shape, dispatch(x, "double").shape, describe(x)[0].shape)
        print(weights_in_dict(x, params).shape, unbound_item(x).shape, rows(x).shape)
        print(is_tensor_check(x, x).shape)


if __name__ == "__main__":
    main()
