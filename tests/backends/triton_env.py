"""Which Triton mode this test session runs in (read by conftest and the tests)."""

import os

# BCFRONT_GPU_TESTS=1: compile kernels for a real GPU; otherwise use the interpreter.
GPU_RUN = os.environ.get("BCFRONT_GPU_TESTS", "") not in ("", "0")
