"""The GPU flavour of generated kernels compiles for sm_90 (no GPU needed).

The interpreter runs different helpers (no libdevice) and skips Triton's
layout and code-generation passes, so the GPU source of every pattern is also
compiled with Triton's real compiler down to a cubin (ptxas runs on the CPU),
for every launch configuration the autotuner may try, and checked for register
spills and for vectorized global loads where rows are contiguous.  The
compiler cannot run in a process where the interpreter is on, so each check
runs `tools/triton_ptx_check.py` in a subprocess.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
pytest.importorskip("triton.backends.nvidia.compiler")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "triton_ptx_check.py")

DEFAULT = [
    "argmax_rows",
    "col_sum",
    "residual_layernorm",
    "rmsnorm",
    "rope",
    "row_stats",
    "softmax_first",
    "softmax_last",
    "transposed_add",
]


@functools.lru_cache(maxsize=None)
def ptx_rows(names: tuple, n: int, dtype: str) -> list:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [
            sys.executable,
            TOOL,
            "--corpus",
            "--json",
            "--n",
            str(n),
            "--dtype",
            dtype,
            "--only",
            ",".join(names),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=1500,
    )
    assert out.stdout.strip(), out.stderr[-3000:]
    return json.loads(out.stdout)


def _check(rows, name, vectorized=False):
    mine = [r for r in rows if r["pattern"] == name]
    assert mine, name
    for r in mine:
        assert r["ok"], r.get("error")
        assert r["spill_bytes"] == 0, r
        if vectorized:
            assert r["vector"]["load"] >= 2, r


@pytest.mark.parametrize("name", DEFAULT)
def test_gpu_flavour_compiles(name):
    rows = ptx_rows(tuple(DEFAULT), 4096, "bfloat16")
    _check(rows, name, vectorized=name in ("softmax_last", "rmsnorm", "rope"))


@pytest.mark.slow
@pytest.mark.parametrize("n", [17, 4097])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_gpu_flavour_compiles_full(n, dtype):
    from .triton_cases import CASES

    rows = ptx_rows(tuple(sorted(CASES)), n, dtype)
    for name in CASES:
        _check(rows, name)


def test_gpu_flavour_of_every_op_family_compiles():
    """libdevice helpers, bitcasts, int64 constants, bool buffers, arg-reductions, gathers, scans."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, TOOL, "--ops", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=1500,
    )
    rows = json.loads(out.stdout)
    assert rows and all(r["ok"] for r in rows), [r.get("error") for r in rows if not r["ok"]]
    # gathers keep their index asserts in the GPU build (compiled with debug on);
    # nothing else pays for them
    gathers = [r for r in rows if r["pattern"] == "gathers"]
    assert gathers and all(r["asserts"] > 0 for r in gathers), gathers
    assert all(r["asserts"] == 0 for r in rows if r["pattern"] != "gathers")
