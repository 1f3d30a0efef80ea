"""The C part of bcfront: two optional extensions, `bcfront/_cfast.c` (the cached call's
fast path) and `bcfront/_canalysis.c` (the analyzer's kernels).  Where they cannot be
built (no compiler), bcfront runs its pure-Python paths; everything else is in
pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("bcfront._cfast", ["bcfront/_cfast.c"], optional=True),
        Extension("bcfront._canalysis", ["bcfront/_canalysis.c"], optional=True),
    ]
)
