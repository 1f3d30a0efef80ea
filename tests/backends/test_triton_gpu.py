"""Triton backend on a real NVIDIA GPU (compiled kernels, autotuning).

Run with:  BCFRONT_GPU_TESTS=1 python -m pytest -m gpu tests/backends/test_triton_gpu.py
(the variable keeps conftest from switching on Triton's interpreter).
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from bcfront.backends.triton import TritonConfig, compile_fx, runtime  # noqa: E402

from .triton_cases import CASES  # noqa: E402
from .triton_env import GPU_RUN  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not (GPU_RUN and torch.cuda.is_available()), reason="needs a CUDA GPU and BCFRONT_GPU_TESTS=1"
    ),
]

TOL = {torch.float32: (1e-4, 1e-4), torch.float16: (4e-3, 4e-3), torch.bfloat16: (3e-2, 3e-2)}


def _check(name, n, dtype, config=None):
    case = CASES[name]
    inputs = [t.cuda() for t in case.inputs(n, dtype)]
    compiled = compile_fx(torch.fx.symbolic_trace(case.fn), inputs, config)
    got = compiled(*inputs)
    ref = case.fn(*[t.double() if t.is_floating_point() else t for t in inputs])
    eager = case.fn(*inputs)
    got, ref, eager = ((v if isinstance(v, tuple) else (v,)) for v in (got, ref, eager))
    for g, r, e in zip(got, ref, eager):
        if g.is_floating_point():
            rtol, atol = TOL[dtype]
            torch.testing.assert_close(
                g.double(), r.to(g.dtype).double(), rtol=rtol, atol=atol, equal_nan=True
            )
        else:
            torch.testing.assert_close(g, e)
    assert len(compiled.kernels) == (case.kernels if n else case.kernels_empty)
    return compiled


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_patterns_on_gpu(name, dtype):
    _check(name, 4097 if name not in ("softmax_first", "col_sum", "transposed_add") else 1000, dtype)


@pytest.mark.parametrize(
    "name",
    ["softmax_last", "rmsnorm", "residual_layernorm", "row_stats", "argmax_rows", "col_sum", "softmax_first"],
)
def test_looped_reductions_on_gpu(name):
    _check(name, 3000, torch.float32, TritonConfig(looped_rblock=256))


def test_autotune_winner_is_remembered(tmp_path):
    root = tmp_path / "cache"
    cfg = TritonConfig(cache_dir=str(root))
    x = torch.randn(4096, 4096, device="cuda")
    fn = lambda t: torch.softmax(t * 2, -1)  # noqa: E731
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x], cfg)
    torch.testing.assert_close(compiled(x), fn(x))
    records = list((root / "autotune").glob("*.json"))
    assert len(records) == 1
    rec = json.loads(records[0].read_text())
    assert torch.cuda.get_device_name(0) in rec
    # a new launcher for the same kernel source recalls the winner without benchmarking
    k = compiled.kernels[0]
    ks = runtime.KernelSource(
        k.name, k.source, ("arg0", "buf0"), k.kind, k.numels, k.ops, 4096 if k.kind == "persistent" else 0
    )
    launcher = runtime.Launcher(ks, root)
    assert launcher._recall(torch.cuda.get_device_name(0)) is not None


def _gathers(idx, w, x, i2):
    import torch.nn.functional as F

    e = F.embedding(idx, w) + w[: idx.shape[1]]
    return (
        F.layer_norm(e, (w.shape[1],)),
        torch.gather(x, 1, i2),
        x[:, i2[0]],
        x.cumsum(-1),
        x[:, :1000].cumsum(0),
    )


def test_gathers_and_scans_on_gpu():
    g = torch.Generator().manual_seed(0)
    inputs = [
        torch.randint(0, 4096, (4, 512), generator=g),
        torch.randn(4096, 768, generator=g),
        torch.randn(64, 5000, generator=g),
        torch.randint(0, 5000, (64, 300), generator=g),
    ]
    inputs = [t.cuda() for t in inputs]
    compiled = compile_fx(torch.fx.symbolic_trace(_gathers), inputs)
    assert compiled.fallback_ops == []
    for got, ref in zip(compiled(*inputs), _gathers(*inputs)):
        torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-3)


_BAD_INDEX = """
import torch, torch.nn.functional as F
from bcfront.backends.triton import compile_fx
fn = lambda w, i: F.embedding(i, w) * 2
w, i = torch.randn(5, 8, device="cuda"), torch.tensor([0, 1, 2], device="cuda")
c = compile_fx(torch.fx.symbolic_trace(fn), [w, i])
torch.testing.assert_close(c(w, i), fn(w, i))
c(w, torch.tensor([0, 5, 1], device="cuda"))
torch.cuda.synchronize()
print("NO ASSERT")
"""


def test_out_of_range_index_trips_the_device_assert(tmp_path):
    """The index assert is live in the GPU build (a device-side assert poisons the
    CUDA context, so it runs in a child process)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _BAD_INDEX], capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and "NO ASSERT" not in out.stdout, out.stdout + out.stderr[-2000:]
    assert "index out of bounds" in out.stderr or "device-side assert" in out.stderr, out.stderr[-2000:]
