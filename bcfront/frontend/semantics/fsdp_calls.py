"""Calling an FSDP2 module (``fully_shard``) in traced code: a break to its own capture.

FSDP's forward pre-hook all-gathers the module's parameters into unsharded ``nn.Parameter``
objects (their storage re-allocated in place) and swaps them onto the module; its post-hook
frees that storage again and registers the backward hooks.  A graph that inlined the call
could read neither the parameters (sharded DTensors before the hook, empty storage after)
nor guard them, so the call ends the region: the break's native instruction calls the
module through its own capture (`regions.breaks.CallSite`), which runs ``Module.__call__``
natively -- FSDP's hooks as eager runs them -- with the module body captured in its own
region, entered after the pre-hook (`regions.fsdp_entry`).  The break is reported
(``module-hooks``); it runs no tensor op of the model natively.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from ...errors import UnsupportedError
from ...reasons import BreakReason


def is_fsdp_module(obj) -> bool:
    """Whether `obj` is a module ``fully_shard`` was applied to."""
    if "torch.distributed.fsdp" not in sys.modules:
        return False  # (no FSDP module can exist yet; keeps the import out of plain runs)
    from torch.distributed.fsdp import FSDPModule

    return isinstance(obj, FSDPModule)


def call_fsdp_module(cls: type) -> NoReturn:
    """The break at ``module(*args)`` of an FSDP module: its call runs through its own
    capture (``own_capture``, read by `regions.breaks`)."""
    err = UnsupportedError(
        BreakReason.MODULE_HOOKS,
        f"{cls.__qualname__} is fully_shard'ed: FSDP's hooks run natively around its forward, "
        "captured on its own",
    )
    err.own_capture = True  # type: ignore[attr-defined]
    raise err
