"""The C part of bcfront: two optional extensions, `bcfront._cfast` (the cached call's fast
path: `_cfast.c`, `_cchecks.c`, `_crecipes.c`) and `bcfront._canalysis` (the analyzer's
kernels).  Where they cannot be built (no compiler), bcfront runs its pure-Python paths;
everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "bcfront._cfast",
            ["bcfront/_cfast.c", "bcfront/_cchecks.c", "bcfront/_crecipes.c"],
            depends=["bcfront/_cdict.h"],  # dict_tag, both files'
            # the files' shared functions called directly, not through the PLT (as exported
            # symbols are): only PyInit__cfast is the module's (PyMODINIT_FUNC exports it)
            extra_compile_args=["-fvisibility=hidden"],
            optional=True,
        ),
        Extension("bcfront._canalysis", ["bcfront/_canalysis.c"], optional=True),
    ]
)
