"""Matrix products through the Triton backend (sum reductions over K), against eager."""

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


def _t(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


CASES = {
    "mm": (lambda a, b: a @ b, [(5, 7), (7, 3)]),
    "mm_k1": (lambda a, b: a @ b, [(4, 1), (1, 6)]),
    "mm_row": (lambda a, b: torch.mm(a, b), [(1, 9), (9, 4)]),
    "mm_transposed": (lambda a, b: a.t() @ b.t(), [(7, 5), (3, 7)]),
    "bmm": (lambda a, b: torch.bmm(a, b), [(3, 4, 6), (3, 6, 5)]),
    "bmm_batch1": (lambda a, b: torch.bmm(a, b.transpose(1, 2)), [(1, 4, 6), (1, 5, 6)]),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b), [(3,), (5, 7), (7, 3)]),
    "addmm_scaled": (lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=-2.0), [(5, 3), (5, 7), (7, 3)]),
    "baddbmm": (lambda c, a, b: torch.baddbmm(c, a, b, alpha=0.25), [(2, 4, 5), (2, 4, 3), (2, 3, 5)]),
    "linear_3d": (lambda x, w, b: F.linear(x, w, b), [(3, 4, 6), (5, 6), (5,)]),
    "prologue_epilogue": (lambda a, b, c: torch.relu(F.gelu(a) @ b + c), [(4, 6), (6, 5), (4, 5)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matmul(name):
    fn, shapes = CASES[name]
    inputs = [_t(*s, seed=k) for k, s in enumerate(shapes)]
    compare(fn, inputs, fallback=[], tol=TOL)


def test_addmm_beta_zero_ignores_nan_bias():
    c = torch.full((3,), float("nan"))
    fn = lambda c, a, b: torch.addmm(c, a, b, beta=0)  # noqa: E731
    compare(fn, [c, _t(5, 7, seed=1), _t(7, 3, seed=2)], fallback=[], tol=TOL)


def test_mm_looped_reduction():
    # K = 20 in chunks of 8: a ragged last chunk
    cfg = TritonConfig(looped_rblock=8)
    compare(lambda a, b: a @ b, [_t(3, 20, seed=1), _t(20, 4, seed=2)], config=cfg, fallback=[], tol=TOL)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_mm_half_accumulates_in_float32(dtype):
    a, b = _t(4, 16, seed=1, dtype=dtype), _t(16, 3, seed=2, dtype=dtype)
    compare(lambda a, b: a @ b, [a, b], fallback=[])


def test_integer_mm_stays_with_torch():
    a = torch.randint(-5, 5, (3, 4), generator=torch.Generator().manual_seed(0))
    b = torch.randint(-5, 5, (4, 2), generator=torch.Generator().manual_seed(1))
    compare(lambda a, b: a @ b, [a, b], fallback=["aten.mm"])
