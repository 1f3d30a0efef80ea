"""`sys.modules`, read key by key: ``name in sys.modules``, ``sys.modules[name]``, ``.get``.

`sys.modules` holds thousands of entries and every import adds one, so it is
not wrapped as a dict (a guard on all its keys would fail after the next
import, even one bcfront itself makes while capturing).  The builder keeps it
as an object held by identity; the reads below guard only the key they look
at: present (the module there, by identity) or absent (``name not in``), as
TorchDynamo's ``PythonSysModulesVariable`` does.  Anything else on it (iteration,
``len``, writes) stays a graph break.
"""

from __future__ import annotations

import sys

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import item_source
from ..model.values import Const, ObjectV, Value
from .folding import raise_

_MISSING = object()


def is_sys_modules(v: Value) -> bool:
    return isinstance(v, ObjectV) and v.obj is sys.modules


def _lookup(tx, v: Value, key: Value):
    """The value at `key` (guarded), or `_MISSING` (guarded absent)."""
    if not (isinstance(key, Const) and type(key.value) is str) or v.source is None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL, f"sys.modules read with {key.describe()} (a str constant is needed)"
        )
    name = key.value
    if name not in sys.modules:
        tx.guard(GuardKind.NOT_PRESENT, v.source, None, name)
        return _MISSING
    return wrap(tx, sys.modules[name], item_source(v.source, name))


def contains(tx, v: Value, key: Value) -> bool:
    return _lookup(tx, v, key) is not _MISSING


def getitem(tx, v: Value, key: Value) -> Value:
    r = _lookup(tx, v, key)
    if r is _MISSING:
        raise_(KeyError, key.value)  # type: ignore[attr-defined]  # (a str Const: `_lookup`)
    return r


def get(tx, v: Value, key: Value, default: Value | None = None) -> Value:
    r = _lookup(tx, v, key)
    if r is _MISSING:
        return default if default is not None else Const(None)
    return r
