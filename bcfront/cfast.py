"""bcfront's optional C fast paths (`bcfront/_cfast.c`): `C` is that module, or None where
it is not built (no C compiler at install) or ``BCFRONT_PURE_PYTHON`` is set.

Every user of one keeps the pure-Python version beside it, which serves where `C` is None
and which a test compares it with: the cached call (`bcfront.fast_call`), a dict's
version tag (`frontend.model.guard_memo`), the batch of inlined functions' ``__code__``
checks of a guard (`frontend.model.guards`).
"""

from __future__ import annotations

import os
from types import ModuleType

C: ModuleType | None
try:
    if os.environ.get("BCFRONT_PURE_PYTHON"):  # asked for: the pure-Python paths only
        raise ImportError("BCFRONT_PURE_PYTHON is set")
    import bcfront._cfast as C
except ImportError:
    C = None
