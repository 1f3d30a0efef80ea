"""cumsum (a scan) in the Triton backend, against eager PyTorch.

A scan is a kernel of its own: pointwise work feeding it is inlined into its
body, work after it is a separate kernel.  Rows that fit one block use one
`tl.cumsum`; longer rows loop over chunks carrying the running total.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from bcfront.backends.triton import TritonConfig  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402
from .triton_util import compare  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")


def _x(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _top_p_mask(logits):
    """Nucleus-sampling mask: the sorted probabilities' running sum (sort stays in torch)."""
    probs = torch.softmax(logits, -1).sort(-1, descending=True).values
    return probs.cumsum(-1) - probs > 0.9


# (fn, inputs, kernels, torch ops)
CASES = {
    "last_dim": (lambda x: x.cumsum(-1), lambda: [_x(4, 33)], 1, []),
    "first_dim": (lambda x: torch.cumsum(x, 0), lambda: [_x(33, 5)], 1, []),
    "middle_dim": (lambda x: x.cumsum(1), lambda: [_x(3, 9, 4)], 1, []),
    "prologue_fuses": (lambda x, y: (x * y + 1).exp().cumsum(-1), lambda: [_x(3, 20), _x(20, seed=1)], 1, []),
    "epilogue_separate": (lambda x: x.cumsum(-1) / x.sum(-1, keepdim=True), lambda: [_x(3, 20)], 2, []),
    "transposed_input": (lambda x: x.t().cumsum(-1), lambda: [_x(12, 5)], 1, []),
    "int_to_int64": (lambda x: x.cumsum(-1), lambda: [torch.arange(-20, 20).view(4, 10).int()], 1, []),
    "bool_counts": (lambda x: (x > 0).cumsum(0), lambda: [_x(17, 3)], 1, []),
    "dtype_arg": (lambda x: x.cumsum(-1, dtype=torch.float64), lambda: [_x(3, 9)], 1, []),
    "reverse_via_flip": (lambda x: x.flip(-1).cumsum(-1).flip(-1), lambda: [_x(2, 11)], 2, []),
    "size_one_dim": (lambda x: x.cumsum(1) * 2, lambda: [_x(5, 1)], 1, []),
    "zero_dim": (lambda x: x.cumsum(0) + 1, lambda: [torch.tensor(2.5)], 1, []),
    "top_p": (_top_p_mask, lambda: [_x(2, 50, seed=3) * 3], 3, ["aten.sort"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cumsum_matches_eager(name):
    fn, inputs, kernels, ops = CASES[name]
    compare(fn, inputs(), kernels=kernels, fallback=ops)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half(dtype):
    compare(lambda x: x.cumsum(-1), [_x(3, 40, dtype=dtype)], kernels=1, fallback=[])


@pytest.mark.parametrize("n", [0, 1, 17, 4097])
def test_sizes(n):
    # long float32 prefix sums differ from eager's sequential order by rounding
    tol = (1e-4, 1e-4) if n > 1000 else None
    compare(lambda x: x.cumsum(-1), [_x(3, n)], kernels=1 if n else 0, fallback=[], tol=tol)
    compare(lambda x: x.cumsum(0), [_x(n, 3)], kernels=1 if n else 0, fallback=[], tol=tol)


@pytest.mark.parametrize("rblock", [4, 16])
def test_looped_scan_carries_the_running_total(rblock):
    c = compare(
        lambda x: x.cumsum(-1), [_x(5, 37)], config=TritonConfig(looped_rblock=rblock), kernels=1, fallback=[]
    )
    assert c.kernels[0].kind == "looped"
    c = compare(
        lambda x: x.cumsum(-1),
        [torch.arange(74).view(2, 37)],
        config=TritonConfig(looped_rblock=rblock),
        kernels=1,
        fallback=[],
    )
