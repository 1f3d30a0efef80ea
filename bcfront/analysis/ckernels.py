"""The analyzer's optional C kernels (`bcfront/_canalysis.c`): `KERNELS` is this copy of
the analyzer's `Kernels` object (their methods), or None where the extension is not built
(no C compiler at install) or ``BCFRONT_PURE_PYTHON`` is set (as for `bcfront.cfast`).

Each kernel has a pure-Python reference, which serves where `KERNELS` is None and which
tests/analysis/test_ckernels.py compares it with over the stdlib sample:

* ``rename_inline`` -- `bcfront.analysis.ssa_inline.rename_inline` (the SSA walk's
  inline renaming of the common instructions);
* ``block_depths`` -- `bcfront.analysis.stack.block_depths` (the stack depths of one
  block's instructions, from its entry depth).

The object is made with the `Effect` class and the effects the renaming tells apart (it
reads an effect's fields from the slots of that class); `cfg` gives it the `Block` class
(``set_cfg``).  One per copy of the analyzer, so that two copies in one process (A/B
timing) each keep their own classes.
"""

from __future__ import annotations

from ..cfast import load
from .stack_effects import LOAD_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL, STORE_LOCAL_PAIR, Effect

_EXTENSION = load("_canalysis")
# (this copy of the analyzer's own: a process may load two, as tools/ab_analysis.py does)
KERNELS = (
    None
    if _EXTENSION is None
    else _EXTENSION.Kernels(Effect, LOAD_LOCAL, STORE_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL_PAIR)
)
