"""Reductions through the Triton backend: every kind, any dimension, both kernel shapes.

Each case runs persistent (the row in registers) and looped (forced RBLOCK of
8, so rows of 13 and 20 take several iterations and a ragged last one).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from bcfront.backends.triton import TritonConfig  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402
from .triton_util import compare  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")

MODES = {"persistent": None, "looped": TritonConfig(looped_rblock=8)}


def _x(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


REDUCE = {
    "sum": lambda x, d: x.sum(d),
    "sum_keep": lambda x, d: x.sum(d, keepdim=True) * x,
    "mean": lambda x, d: x.mean(d),
    "amax": lambda x, d: x.amax(d),
    "amin": lambda x, d: x.amin(d),
    "prod": lambda x, d: (x * 0.3 + 1).prod(d[0] if isinstance(d, tuple) else d),
    "var": lambda x, d: x.var(d),
    "var0": lambda x, d: x.var(d, correction=0),
    "std2": lambda x, d: x.std(d, correction=2),
    "var_mean": lambda x, d: torch.var_mean(x, d),
    "argmax": lambda x, d: x.argmax(d[0] if isinstance(d, tuple) else d),
    "argmin": lambda x, d: x.argmin(d[0] if isinstance(d, tuple) else d, keepdim=True),
    "max_dim": lambda x, d: x.max(d[0] if isinstance(d, tuple) else d),
    "any": lambda x, d: (x > 1.5).any(d[0] if isinstance(d, tuple) else d),
    "all": lambda x, d: (x > -1.5).all(d[0] if isinstance(d, tuple) else d),
    "logsumexp": lambda x, d: torch.logsumexp(x, d),
    "norm": lambda x, d: x.norm(dim=d),
}
DIMS = {"last": -1, "first": 0, "middle": 1, "outer_pair": (0, 2)}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("dim", sorted(DIMS))
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduction(name, dim, mode):
    x = _x(3, 13, 20)
    fn = REDUCE[name]
    d = DIMS[dim]
    if isinstance(d, tuple) and name in ("argmax", "argmin", "max_dim", "any", "all", "prod"):
        pytest.skip("single-dimension op")
    compiled = compare(lambda t: fn(t, d), [x], config=MODES[mode])
    assert 1 <= len(compiled.kernels) <= 2
    assert compiled.fallback_ops == []


@pytest.mark.parametrize("mode", sorted(MODES))
def test_full_reductions(mode):
    x = _x(5, 7)
    compiled = compare(lambda t: (t.sum(), t.amax(), t.mean(), t.var(), t.argmax()), [x], config=MODES[mode])
    assert len(compiled.kernels) == 1


@pytest.mark.parametrize("mode", sorted(MODES))
def test_nan_propagation_and_ties(mode):
    x = _x(4, 17)
    x[0, 3] = float("nan")
    x[1, :] = 2.0  # all tied: first index wins
    x[2, 5] = x[2, 9] = 50.0
    x[3, 4] = float("-inf")
    compare(
        lambda t: (t.amax(-1), t.amin(-1), t.argmax(-1), t.argmin(-1), t.sum(-1)),
        [x],
        config=MODES[mode],
        kernels=1,
    )


@pytest.mark.parametrize("mode", sorted(MODES))
def test_all_neg_inf_row_argmax(mode):
    x = torch.full((2, 19), float("-inf"))
    x[1, 7] = float("nan")
    compare(lambda t: (t.argmax(-1), t.amax(-1)), [x], config=MODES[mode], kernels=1)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool])
def test_integer_and_bool_reductions(dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-5, 6, (4, 11), generator=g).to(dtype)
    if dtype is torch.bool:
        fn = lambda t: (t.sum(-1), t.any(0), t.all(-1), t.int().argmax(-1))  # noqa: E731
    else:
        fn = lambda t: (t.sum(-1), t.amax(0), t.amin(-1), t.argmax(-1), t.sum(-1, dtype=torch.float32))  # noqa: E731
    compare(fn, [x])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_prologue_epilogue_and_several_outputs(mode):
    """A pointwise prologue, two reductions, x-only epilogues and a row epilogue: one kernel."""

    def fn(x, w):
        h = x * 2 + w
        s = h.sum(-1, keepdim=True)
        m = h.amax(-1, keepdim=True)
        return (h - m).exp() / s, s.sqrt(), m * 3

    compiled = compare(fn, [_x(6, 20), _x(20, seed=1)], config=MODES[mode], kernels=1)
    assert set(compiled.kernels[0].ops) >= {
        "aten.mul",
        "aten.add",
        "aten.sum",
        "aten.amax",
        "aten.exp",
        "aten.div",
        "aten.sqrt",
    }


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_half_reductions_accumulate_in_float32(dtype, mode):
    x = _x(3, 20, dtype=dtype) + 100  # sums of large halves would lose bits in half
    compare(lambda t: (t.sum(-1), t.mean(0), t.var(-1), torch.softmax(t, -1)), [x], config=MODES[mode])


def test_reduction_of_size_one_and_empty_dims():
    compare(lambda t: (t.sum(1), t.amax(1), t.argmax(1), t.var(1, correction=0)), [_x(4, 1, 5)])
    compare(lambda t: (t.sum(1), t.prod(1), t.mean(1)), [_x(4, 0, 5)], kernels=1)


def test_column_softmax_and_layernorm_over_noncontiguous_input():
    x = _x(24, 16).t()  # rows of the view are strided
    w, b = _x(24, seed=1), _x(24, seed=2)
    compare(
        lambda t, w, b: (torch.softmax(t, 0), torch.nn.functional.layer_norm(t, (24,), w, b)),
        [x, w, b],
        kernels=2,
    )


def test_reduction_feeding_reduction_of_other_shape():
    """Row sums, their max and the full mean: three iteration spaces, three kernels."""
    compare(lambda t: (t.sum(-1).amax(), t.mean()), [_x(9, 14)], kernels=3)


@pytest.mark.parametrize(
    "fn", [lambda t: torch.softmax(t, -1), lambda t: torch.log_softmax(t, -1), lambda t: torch.softmax(t, 0)]
)
def test_online_softmax_reads_rows_twice_and_keeps_edge_semantics(fn):
    x = _x(5, 37) * 4
    x[1, 3] = float("inf")
    x[2, :] = float("-inf")
    x[3, 5] = float("nan")
    x[4, :20] = float("-inf")
    compiled = compare(fn, [x], config=TritonConfig(looped_rblock=8), kernels=1)
    assert compiled.kernels[0].source.count("for roffset") == 2


def test_same_reduction_shared_but_outputs_distinct():
    compiled = compare(lambda t: (t.sum(-1), t.sum(-1), t.amax(-1)), [_x(3, 9)], kernels=1)
    a, b, _ = compiled(_x(3, 9))
    assert a.data_ptr() != b.data_ptr()
    assert compiled.kernels[0].source.count("tl.sum(") == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_long_reductions_with_few_outputs_are_split(dtype):
    """x.sum() over 70001 x 3 elements: partial sums over row chunks, then their sum."""
    x = (_x(70001, 3) * 10).to(dtype)
    fns = lambda t: (t.sum(), t.amax(), t.sum(0), t.amin(0), (t > 2).any())  # noqa: E731
    if dtype.is_floating_point:
        fns = lambda t: (t.sum(), t.amax(), t.mean(0), t.var(), (t > 2).any())  # noqa: E731
    compiled = compare(fns, [x], tol=(1e-4, 1e-4))
    assert any(k.numels[0] > 8 for k in compiled.kernels if k.kind != "pointwise")
