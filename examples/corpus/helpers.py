"""Breaks inside inlined helpers, methods and nn.Modules."""
import torch
from torch import nn

import bcfront


def normalize(t):
    s = t.sum()
    if s == 0:                                  # expect-break: data-dependent-branch
        return t
    return t / s


@bcfront.capture
def uses_helper(x):
    y = x.exp()
    return normalize(y) * 3


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        h = self.a(x)
        if h.mean() > 0:                        # expect-break: data-dependent-branch
            return self.b(h)
        return h


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        if self.training:                       # a Python attribute: guarded, no break
            x = x * 1.0
        return torch.tanh(self.lin(x))


def main():
    torch.manual_seed(0)
    router = bcfront.capture(Router())
    plain = bcfront.capture(Plain().eval())
    for _ in range(3):
        x = torch.randn(2, 4)
        print(uses_helper(x).shape, router(x).shape, plain(x).shape)


if __name__ == "__main__":
    main()
