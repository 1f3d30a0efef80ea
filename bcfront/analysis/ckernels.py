"""The analyzer's optional C kernels (`bcfront/_canalysis.c`): `KERNELS` is that module,
or None where it is not built (no C compiler at install) or ``BCFRONT_PURE_PYTHON`` is
set (as for `bcfront.cfast`).

Each kernel has a pure-Python reference, which serves where `KERNELS` is None and which
tests/analysis/test_ckernels.py compares it with over the stdlib sample:

* ``rename_inline`` -- `bcfront.analysis.ssa_inline.rename_inline` (the SSA walk's
  inline renaming of the common instructions);
* ``block_depths`` -- `bcfront.analysis.stack.block_depths` (the stack depths of one
  block's instructions, from its entry depth).

On import the module is told the `Effect` class and the effects the renaming tells apart
(`set_effects`): it reads an effect's fields from the slots of that class.
"""

from __future__ import annotations

import os
from types import ModuleType

from .stack_effects import LOAD_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL, STORE_LOCAL_PAIR, Effect

KERNELS: ModuleType | None
try:
    if os.environ.get("BCFRONT_PURE_PYTHON"):  # asked for: the pure-Python paths only
        raise ImportError("BCFRONT_PURE_PYTHON is set")
    import bcfront._canalysis as _built
except ImportError:
    KERNELS = None
else:
    _built.set_effects(Effect, LOAD_LOCAL, STORE_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL_PAIR)
    KERNELS = _built
