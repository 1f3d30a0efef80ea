"""Fixtures for backend tests.

Triton kernels are tested on CPU tensors through Triton's interpreter, which
must be switched on before triton is first imported; set BCFRONT_GPU_TESTS=1
to run the GPU tests instead (interpreter tests then skip).  Kernels go to a
private per-session cache directory so tests never touch the user's cache.
"""

from __future__ import annotations

import os
import tempfile

from .triton_env import GPU_RUN

if not GPU_RUN:
    os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("BCFRONT_CACHE_DIR", tempfile.mkdtemp(prefix="bcfront-test-cache-"))


def pytest_configure(config):
    # numpy warns about inf/nan arithmetic inside the interpreter; those values are the point
    config.addinivalue_line("filterwarnings", "ignore::RuntimeWarning:triton.runtime.interpreter")
