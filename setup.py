"""The C part of bcfront: one optional extension (`bcfront/_cfast.c`, the cached call's
fast path).  Where it cannot be built (no compiler), bcfront runs its pure-Python path;
everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("bcfront._cfast", ["bcfront/_cfast.c"], optional=True)])
