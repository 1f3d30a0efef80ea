"""Convolution and pooling through the Triton backend (reductions over the window), against eager.

Shapes are tiny and odd on purpose: non-square inputs and kernels, stride 2,
padding, dilation, groups up to depthwise, 1x1, batch 1 and 3, 1-d and 3-d.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn.functional as F  # noqa: E402

from bcfront.backends.triton import TritonConfig  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402
from .triton_util import compare  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")

TOL = (1e-4, 1e-5)  # eager sums in another order


def _t(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# name -> (x shape, weight shape, bias?, conv kwargs)
CONV = {
    "plain_3x3": ((1, 3, 6, 7), (4, 3, 3, 3), True, {}),
    "stride2_pad1": ((3, 4, 7, 10), (5, 4, 3, 3), True, {"stride": 2, "padding": 1}),
    "depthwise": ((3, 6, 5, 7), (6, 1, 3, 3), True, {"padding": 1, "groups": 6}),
    "depthwise_s2": ((1, 4, 7, 6), (4, 1, 5, 5), False, {"stride": 2, "padding": 2, "groups": 4}),
    "groups2": ((2, 4, 5, 6), (6, 2, 3, 3), True, {"padding": 1, "groups": 2}),
    "pointwise_1x1": ((3, 5, 4, 6), (7, 5, 1, 1), False, {}),
    "pointwise_1x1_s2": ((1, 5, 5, 6), (3, 5, 1, 1), True, {"stride": 2}),
    "dilation2": ((1, 3, 9, 8), (2, 3, 3, 3), True, {"padding": 2, "dilation": 2}),
    "rect_kernel": ((3, 2, 7, 5), (3, 2, 3, 1), True, {"stride": (2, 1), "padding": (1, 0)}),
    "uneven_pad": ((1, 2, 6, 9), (3, 2, 2, 4), False, {"stride": (1, 3), "padding": (1, 2)}),
    "one_in_channel_1x1": ((2, 1, 3, 4), (3, 1, 1, 1), True, {}),
}


@pytest.mark.parametrize("name", sorted(CONV))
def test_conv2d(name):
    xs, ws, with_bias, kw = CONV[name]
    x, w = _t(*xs, seed=1), _t(*ws, seed=2)
    if with_bias:
        b = _t(ws[0], seed=3)
        compare(lambda x, w, b: F.conv2d(x, w, b, **kw), [x, w, b], fallback=[], tol=TOL)
    else:
        compare(lambda x, w: F.conv2d(x, w, None, **kw), [x, w], fallback=[], tol=TOL)


def test_conv2d_looped_reduction():
    # rows of 4*3*3 = 36 products in chunks of 8: a ragged last chunk
    x, w = _t(2, 4, 5, 6, seed=1), _t(3, 4, 3, 3, seed=2)
    cfg = TritonConfig(looped_rblock=8)
    compare(lambda x, w: F.conv2d(x, w, padding=1), [x, w], config=cfg, fallback=[], tol=TOL)


def test_conv1d_and_conv3d():
    x1, w1 = _t(3, 2, 9, seed=1), _t(4, 2, 3, seed=2)
    compare(lambda x, w: F.conv1d(x, w, stride=2, padding=1), [x1, w1], fallback=[], tol=TOL)
    x3, w3 = _t(1, 2, 4, 5, 3, seed=1), _t(3, 2, 2, 3, 1, seed=2)
    compare(lambda x, w: F.conv3d(x, w, padding=(1, 1, 0)), [x3, w3], fallback=[], tol=TOL)


def test_conv_channels_last_input():
    x = _t(2, 3, 5, 6, seed=1).to(memory_format=torch.channels_last)
    w = _t(4, 3, 3, 3, seed=2)
    compare(lambda x, w: F.conv2d(x, w, padding=1), [x, w], fallback=[], tol=TOL)


def test_conv_bn_relu_add_is_one_kernel():
    # eval batch-norm, relu and a residual add run as the convolution's epilogue
    x, w = _t(3, 4, 5, 7, seed=1), _t(4, 4, 3, 3, seed=2)
    mean, var = _t(4, seed=3), _t(4, seed=4).abs() + 0.5
    gamma, beta = _t(4, seed=5), _t(4, seed=6)

    def fn(x, w, mean, var, gamma, beta):
        y = F.batch_norm(F.conv2d(x, w, padding=1), mean, var, gamma, beta, training=False)
        return torch.relu(y + x)

    compare(fn, [x, w, mean, var, gamma, beta], kernels=1, fallback=[], tol=TOL)


def test_conv_of_computed_input():
    # the input is a relu of something: materialized once, not per window position
    x, w = _t(1, 3, 6, 5, seed=1), _t(2, 3, 3, 3, seed=2)
    compare(lambda x, w: F.conv2d(torch.relu(x * 2), w, stride=2, padding=1), [x, w], fallback=[], tol=TOL)


# ------------------------------------------------------------------ pooling

MAX_POOL = {
    "resnet_stem": ((1, 3, 8, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    "k2_batch3": ((3, 2, 6, 9), {"kernel_size": 2}),
    "rect_ceil": ((3, 2, 7, 5), {"kernel_size": (3, 2), "stride": (2, 1), "ceil_mode": True}),
    "dilation": ((1, 2, 9, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2}),
    "unbatched": ((2, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
}


@pytest.mark.parametrize("name", sorted(MAX_POOL))
def test_max_pool2d(name):
    xs, kw = MAX_POOL[name]
    x = _t(*xs, seed=4)
    compare(lambda x: F.max_pool2d(x, **kw), [x], fallback=[])
    compare(lambda x: F.max_pool2d(x, return_indices=True, **kw), [x], fallback=[])


def test_max_pool_indices_with_ties_and_specials():
    # ties pick the first element, nan wins, an all -inf window points at its first real element
    x = torch.tensor([0.0, 1.0, 1.0, -1.0, float("nan"), 2.0, 2.0, 0.5, 0.0] * 3).reshape(1, 1, 3, 9)
    x[0, 0, :2, :3] = float("-inf")
    fn = lambda x: F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)  # noqa: E731
    compare(fn, [x], fallback=[])


def test_max_pool3d():
    x = _t(1, 2, 5, 4, 6, seed=4)
    compare(lambda x: F.max_pool3d(x, 2, stride=(1, 2, 2), return_indices=True), [x], fallback=[])


AVG_POOL = {
    "k2": ((3, 2, 6, 8), {"kernel_size": 2}),
    "pad_include": ((1, 2, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    "pad_exclude": ((1, 2, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    "ceil_include": ((3, 1, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    "ceil_exclude": (
        (3, 1, 6, 7),
        {"kernel_size": (2, 3), "stride": 2, "ceil_mode": True, "count_include_pad": False},
    ),
    "divisor": ((1, 2, 5, 5), {"kernel_size": 3, "padding": 1, "divisor_override": 4}),
}


@pytest.mark.parametrize("name", sorted(AVG_POOL))
def test_avg_pool2d(name):
    xs, kw = AVG_POOL[name]
    compare(lambda x: F.avg_pool2d(x, **kw), [_t(*xs, seed=5)], fallback=[])


@pytest.mark.parametrize("out", [(1, 1), (2, 3), (3, 4), (5, 2)])
def test_adaptive_avg_pool2d(out):
    # (3, 4) and (5, 2) of 7x6: overlapping windows of two sizes
    x = _t(3, 2, 7, 6, seed=6)
    compare(lambda x: F.adaptive_avg_pool2d(x, out), [x], fallback=[])
