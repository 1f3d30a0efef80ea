"""bcfront's optional C fast paths (`bcfront/_cfast.c`): `C` is that module, or None where
it is not built (no C compiler at install) or ``BCFRONT_PURE_PYTHON`` is set.

Every user of one keeps the pure-Python version beside it, which serves where `C` is None
and which a test compares it with: the cached call (`bcfront.fast_call`), a dict's
version tag (`frontend.model.guard_memo`), the batch of inlined functions' ``__code__``
checks of a guard (`frontend.model.guards`).  `load` serves the analyzer's
kernels too (`analysis.ckernels`).
"""

from __future__ import annotations

import importlib
import os
import warnings
from types import ModuleType

# each extension's interface version, as its source declares it (``INTERFACE``): raised
# with every change of what Python calls in it, so that a build left from an older source
# (an editable install not rebuilt) is not used
INTERFACES = {"_cfast": 18, "_canalysis": 1}


def load(name: str) -> ModuleType | None:
    """bcfront's extension module `name` (``_cfast``, ``_canalysis``), or None where it is
    not built, ``BCFRONT_PURE_PYTHON`` asks for the pure-Python paths only, or the build is
    stale (a warning says so: the pure-Python paths serve)."""
    if os.environ.get("BCFRONT_PURE_PYTHON"):
        return None
    try:
        module = importlib.import_module(f"bcfront.{name}")
    except ImportError:
        return None
    built = getattr(module, "INTERFACE", None)
    if built != INTERFACES[name]:
        warnings.warn(
            f"bcfront: {getattr(module, '__file__', name)} was built from another version of its "
            f"source (interface {built}, this bcfront needs {INTERFACES[name]}): it is not used; "
            "rebuild it with `pip install -e .` (the pure-Python paths serve meanwhile)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return module


C: ModuleType | None = load("_cfast")
