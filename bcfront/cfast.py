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
from types import ModuleType


def load(name: str) -> ModuleType | None:
    """bcfront's extension module `name` (``_cfast``, ``_canalysis``), or None where it is
    not built or ``BCFRONT_PURE_PYTHON`` asks for the pure-Python paths only."""
    if os.environ.get("BCFRONT_PURE_PYTHON"):
        return None
    try:
        return importlib.import_module(f"bcfront.{name}")
    except ImportError:
        return None


C: ModuleType | None = load("_cfast")
