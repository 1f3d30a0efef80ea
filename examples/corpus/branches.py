"""Branches: on tensor values (breaks) and on shapes, dtypes and Python values (no break)."""
import torch

import bcfront


@bcfront.capture
def clip_if_large(x):
    y = x * 2
    if y.abs().max() > 3:                       # expect-break: data-dependent-branch
        y = y.clamp(-3, 3)
    return y + 1


@bcfront.capture
def shape_branch(x):
    if x.shape[0] > 2:                          # shapes are guarded, not data
        return x.sum(0)
    return x.mean(0)


@bcfront.capture
def halve_until_small(x):
    while x.norm() > 1.0:                       # expect-break: data-dependent-branch
        x = x / 2
    return x


@bcfront.capture
def checked(x, mask=None):
    assert (x >= 0).all(), "negative input"     # expect-break: data-dependent-branch
    if mask is not None:
        x = x * mask
    if x.dtype == torch.float32:
        x = x.double()
    return x


@bcfront.capture
def python_flag(x, scale: float, use_bias: bool):
    if use_bias:
        x = x + 1
    return x * scale


def main():
    torch.manual_seed(0)
    for _ in range(3):
        a = torch.randn(4, 3)
        print(clip_if_large(a).shape, shape_branch(a).shape)
        print(halve_until_small(a * 4).norm() <= 1.0)
        print(checked(a.abs()).dtype, checked(a.abs(), torch.ones(4, 3)).dtype)
        print(python_flag(a, 0.5, True).shape)


if __name__ == "__main__":
    main()
