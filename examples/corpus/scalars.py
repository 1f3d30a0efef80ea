"""Tensors turned into Python values: .item(), .tolist(), int(), float(), bool()."""
import torch

import bcfront


@bcfront.capture
def threshold(x):
    m = x.mean().item()                         # expect-break: data-dependent
    if m > 0:
        return x - m
    return x + m


@bcfront.capture
def repeat_by_count(x, counts):
    n = int(counts.sum())                       # expect-break: data-dependent
    for _ in range(n):
        x = x * 0.5
    return x


@bcfront.capture
def first_positive(x):
    values = x.tolist()                         # expect-break: data-dependent
    for i, v in enumerate(values):
        if v > 0:
            return i
    return -1


@bcfront.capture
def gate(x, g):
    if bool(g > 0.5):                           # expect-break: data-dependent
        return x * 2
    return x


@bcfront.capture
def no_conversion(x):
    n = x.numel()                               # metadata, not data: no break
    k = x.size(0)
    return x.reshape(n) * k


def main():
    torch.manual_seed(0)
    for _ in range(3):
        x = torch.randn(5)
        print(threshold(x).shape, repeat_by_count(x, torch.tensor([1, 1])).shape)
        print(first_positive(x), gate(x, torch.tensor(0.7)).shape, no_conversion(x).shape)


if __name__ == "__main__":
    main()
