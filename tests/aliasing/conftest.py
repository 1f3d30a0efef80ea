"""Triton runs through its CPU interpreter here (switched on before triton is imported),
with kernels in a private cache directory; set BCFRONT_GPU_TESTS=1 for a real GPU."""

from __future__ import annotations

import os
import tempfile

if os.environ.get("BCFRONT_GPU_TESTS", "") in ("", "0"):
    os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("BCFRONT_CACHE_DIR", tempfile.mkdtemp(prefix="bcfront-test-cache-"))


def pytest_configure(config):
    # numpy warns about arithmetic on the masked-off lanes inside Triton's interpreter
    config.addinivalue_line("filterwarnings", "ignore::RuntimeWarning:triton.runtime.interpreter")
