"""The C part of bcfront: two optional extensions, `bcfront._cfast` (the cached call's fast
path: `_cfast.c`, `_cchecks.c`, `_crecipes.c`) and `bcfront._canalysis` (the analyzer's
kernels).  Where they cannot be built (no compiler), bcfront runs its pure-Python paths;
everything else is in pyproject.toml."""

import os
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Flags for `_cfast` where the compiler takes them (each tried alone; one it refuses is
# left out, never the extension):
# - the files' shared functions called directly, not through the PLT as exported symbols
#   are (only PyInit__cfast is the module's: PyMODINIT_FUNC exports it);
# - each check op's dispatch its own indirect jump (`_cchecks.c`'s computed goto), which
#   GCC otherwise merges into a few that the CPU predicts worse (GCC's manual advises
#   -fno-gcse for computed gotos): a cached heappush call about 5% faster;
# - the few locals a check program or a recipe clears cleared by its own loop, not turned
#   into a call of memset (whose call cost more than the loop, each cached call).
CFAST_FLAGS = ["-fvisibility=hidden", "-fno-gcse", "-fno-crossjumping", "-fno-tree-loop-distribute-patterns"]


class BuildExt(build_ext):
    def build_extension(self, ext):
        if ext.name == "bcfront._cfast":
            ext.extra_compile_args = [f for f in CFAST_FLAGS if self._takes(f)]
        super().build_extension(ext)

    def _takes(self, flag: str) -> bool:
        """The compiler compiles a C file with `flag`, warning nothing about it."""
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "flag.c")
            with open(src, "w") as f:
                f.write("int flag_probe(void) { return 0; }\n")
            try:
                self.compiler.compile([src], output_dir=tmp, extra_postargs=[flag, "-Werror"])
            except Exception:  # noqa: BLE001 - any failure: the flag is left out
                return False
        return True


setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension(
            "bcfront._cfast",
            ["bcfront/_cfast.c", "bcfront/_cchecks.c", "bcfront/_crecipes.c"],
            depends=["bcfront/_cdict.h"],  # dict_tag, both files'
            optional=True,
        ),
        Extension("bcfront._canalysis", ["bcfront/_canalysis.c"], optional=True),
    ],
)
