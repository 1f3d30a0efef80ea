"""A bounded ``lru_cache`` returning the lookup of a memo that fills itself (``quote``'s quoter).

``urllib.parse._byte_quoter_factory(safe)`` returns ``_Quoter(safe).__getitem__``: a
dict subclass whose ``__missing__`` computes a key's value, stores it under that key
and returns it.  `lru_calls` traces a bounded cache's function (the entry may have been
dropped), which makes a fresh memo where the native call may hand out the cached one,
already holding some keys.  The two answer every lookup alike exactly when each
stored value is what ``__missing__`` returned for its key -- a memo -- so the trace
keeps to what it can check (`MemoLookupV`): the fresh memo is reachable only by
calling its lookup (no ``__self__``, no identity, no hash: those break), never leaves
the trace (it cannot be rebuilt: a break), and every call is checked to do nothing
but memoize: the dict holds afterwards what it held before plus, on a miss, the key
bound to the very value returned; no attribute of it and nothing outside is written
(else a break, and the call runs natively).  As for the other bounded results, a
cached memo written by someone else than its own ``__missing__``, or filled before
something ``__missing__`` reads changed, is not seen: the trace answers as a cache
that dropped the entry would.
"""

from __future__ import annotations

import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.tracer import SymbolicRaise
from ..model.values import DictV, MethodV, ObjectV, Value
from . import ops
from .classes import mro_lookup

_LOOKUP = dict.__getitem__
_BOUND_LOOKUP: type = type({}.__getitem__)  # what ``memo.__getitem__`` is: a bound C method


class MemoLookupV(Value):
    """``memo.__getitem__`` of a memo made in the trace (a `DictV` of a dict subclass with
    a Python ``__missing__``), usable only by calling it."""

    __slots__ = ("memo",)
    identity_known = False  # `is` against it breaks: natively it is the one the cache keeps

    def __init__(self, memo: DictV):
        super().__init__(None)
        self.memo = memo

    def python_type(self):
        return _BOUND_LOOKUP

    def describe(self):
        return f"{self.memo.cls.__name__}(...).__getitem__ (a cached memo's lookup)"


def memo_lookup(v: Value) -> MemoLookupV | None:
    """`v` as a `MemoLookupV` when it is the bound ``dict.__getitem__`` of a memo made in the
    trace, else None."""
    if not (isinstance(v, MethodV) and isinstance(v.func, ObjectV) and v.func.obj is _LOOKUP):
        return None
    d = v.obj
    if not (isinstance(d, DictV) and d.source is None and d.cls is not dict):
        return None
    if mro_lookup(d.cls, "__getitem__") is not _LOOKUP:
        return None
    if not isinstance(mro_lookup(d.cls, "__missing__"), types.FunctionType):
        return None
    return MemoLookupV(d)


def call_lookup(tx, v: MemoLookupV, args, kwargs) -> Value:
    """``lookup(key)``: the memo's item, or its ``__missing__``'s -- checked to memoize."""
    if kwargs or len(args) != 1:
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{v.describe()} called otherwise")
    d, key = v.memo, args[0]
    entries, attrs, writes = d.entries, _attrs(d), len(tx.mutated)
    try:
        out = ops.getitem(tx, d, key)
    except SymbolicRaise:
        if d.entries is not entries or _attrs(d) is not attrs or len(tx.mutated) != writes:
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION, f"{v.describe()} wrote, then raised"
            ) from None
        raise
    if _attrs(d) is not attrs or len(tx.mutated) != writes or not _memoized(tx, entries, d.entries, key, out):
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{v.describe()} does more than memoize")
    return out


def _attrs(d: DictV):
    """What stands for the memo's attributes now (replaced, never changed in place, by a write)."""
    return None if d.attrs is None else d.attrs.entries


def _memoized(tx, before: dict, after: dict, key: Value, out: Value) -> bool:
    """`after` is `before` (a hit), or `before` with `key` bound to `out` added at its end."""
    if after is before:
        return True
    hk = ops.hkey(tx, key)
    if hk in before or len(after) != len(before) + 1 or after.get(hk, (None, None))[1] is not out:
        return False
    return all(after.get(k) is e for k, e in before.items())
