"""Standard fusion patterns through the Triton backend (interpreter, CPU).

Every case is checked against eager PyTorch run in float64 on the same values
(rounded to the case's dtype), and the number of generated kernels is
asserted.  The default run covers every pattern, every dtype and every size on
a representative subset; the full matrix is marked slow.
"""

from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from bcfront.backends.triton import TritonConfig, compile_fx  # noqa: E402

from .triton_cases import CASES  # noqa: E402
from .triton_env import GPU_RUN  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
SIZES = (0, 1, 17, 4097)
# (rtol, atol) against the float64 oracle rounded to the dtype
TOL = {torch.float32: (2e-5, 2e-5), torch.float16: (4e-3, 4e-3), torch.bfloat16: (3e-2, 3e-2)}


def _upcast(t):
    return t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t


def oracle(fn, inputs, dtype):
    """float64 eager result, rounded to `dtype` where the output is floating."""
    out = fn(*[_upcast(t) for t in inputs])
    flat = out if isinstance(out, tuple) else (out,)
    return tuple(o.to(dtype) if o.is_floating_point() else o for o in flat)


def run_case(name, n, dtype, config=None):
    case = CASES[name]
    inputs = case.inputs(n, dtype)
    try:
        eager = case.fn(*[t.clone() for t in inputs])
    except (RuntimeError, IndexError) as e:  # eager itself refuses (e.g. amax of empty)
        with pytest.raises((RuntimeError, IndexError)):  # as eager, not always the same one
            compiled = compile_fx(torch.fx.symbolic_trace(case.fn), inputs, config)
            compiled(*inputs)
        return str(e)
    compiled = compile_fx(torch.fx.symbolic_trace(case.fn), inputs, config)
    got = compiled(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    eager = eager if isinstance(eager, tuple) else (eager,)
    ref = oracle(case.fn, inputs, dtype)
    rtol, atol = TOL[dtype]
    for g, r, e in zip(got, ref, eager):
        assert g.shape == e.shape and g.dtype == e.dtype
        if g.is_floating_point():
            torch.testing.assert_close(g.double(), r.double(), rtol=rtol, atol=atol, equal_nan=True)
        else:
            torch.testing.assert_close(g, e)  # indices: exact, against eager itself
    expected = case.kernels if n > 0 else case.kernels_empty
    assert len(compiled.kernels) == expected, [k.name for k in compiled.kernels]
    assert sorted(compiled.fallback_ops) == sorted(case.fallback)
    return compiled


# Default run: every pattern at n=17 in fp32, every dtype and size on a subset.
DEFAULT = sorted(
    set(
        [(name, 17, "fp32") for name in CASES]
        + [(name, n, "fp32") for name in ("softmax_last", "rmsnorm", "row_sum", "col_sum") for n in SIZES]
        + [
            (name, 17, dt)
            for name in (
                "pointwise_chain",
                "softmax_last",
                "rmsnorm",
                "residual_layernorm",
                "swiglu",
                "rope",
                "row_stats",
            )
            for dt in ("fp16", "bf16")
        ]
        + [(name, n, "fp16") for name in ("softmax_first", "transposed_add") for n in (0, 1)]
        + [("bias_act_broadcast", 4097, "bf16"), ("strided_inputs", 1, "bf16")]
    )
)
FULL = [c for c in itertools.product(sorted(CASES), SIZES, DTYPES) if c not in DEFAULT]


@pytest.mark.parametrize("name,n,dtype", DEFAULT)
def test_pattern(name, n, dtype):
    run_case(name, n, DTYPES[dtype])


@pytest.mark.slow
@pytest.mark.parametrize("name,n,dtype", FULL)
def test_pattern_full_matrix(name, n, dtype):
    run_case(name, n, DTYPES[dtype])


LOOPED = TritonConfig(looped_rblock=8)  # n=17 rows take three loop iterations


@pytest.mark.parametrize(
    "name",
    [
        "softmax_last",
        "softmax_first",
        "rmsnorm",
        "residual_layernorm",
        "row_stats",
        "log_softmax_last",
        "argmax_rows",
        "col_sum",
    ],
)
def test_pattern_looped(name):
    compiled = run_case(name, 17, torch.float32, LOOPED)
    if CASES[name].kernels:
        assert all(k.kind in ("looped", "pointwise", "tiled") for k in compiled.kernels)
        assert any(k.kind == "looped" for k in compiled.kernels)


@pytest.mark.slow
@pytest.mark.parametrize("name,dtype", list(itertools.product(sorted(CASES), ["fp16", "bf16"])))
def test_pattern_looped_full(name, dtype):
    run_case(name, 17, DTYPES[dtype], LOOPED)


def test_persistent_and_looped_kinds():
    """rows up to 4096 stay in registers; wider rows loop."""
    assert run_case("softmax_last", 17, torch.float32).kernels[0].kind == "persistent"
    assert run_case("softmax_last", 4097, torch.float32).kernels[0].kind == "looped"


def test_transposed_add_is_tiled():
    compiled = run_case("transposed_add", 17, torch.float32)
    assert compiled.kernels[0].kind == "tiled"
