"""A bounded ``lru_cache`` returning the lookup of a memo that fills itself (``quote``'s quoter).

``urllib.parse._byte_quoter_factory(safe)`` returns ``_Quoter(safe).__getitem__``: a
dict subclass whose ``__missing__`` computes a key's value, stores it under that key
and returns it.  `lru_calls` traces a bounded cache's function (the entry may have been
dropped), which makes a fresh memo where the native call may hand out the cached one,
already holding some keys.  The two answer every lookup alike exactly when a stored
value is what ``__missing__`` returns for its key and ``__missing__``'s answer does not
depend on what the memo holds.  The trace keeps to what it can check:

* the memo's ``__missing__`` (`_memo_code`), read as bytecode, uses ``self`` only to read
  an attribute of the instance whose value cannot change (`_fixed`: a constant, a frozen
  set or tuple of them) and as the container of ``self[key] = ...``: it reads none of the
  memo's items, hands ``self`` to nobody (no call, no closure, no ``super()``);
* the lookup (`MemoLookupV`) is reachable only by calling it: its identity, hash,
  ``__self__`` and any attribute break, and it cannot leave the trace (no rebuild: a break);
* every call is checked to do nothing but memoize (`call_lookup`): the trace's writes
  during it are to the memo's items alone, which hold afterwards what they held before
  plus, on a miss, the key bound to the very value returned.

Anything else breaks, and the call runs natively.  As for a bounded cache's other results,
a cached memo written by something else than its own ``__missing__`` (only through the
cache's private object) or filled before something ``__missing__`` reads from outside
changed is not seen: the trace answers as a cache that dropped the entry would.
"""

from __future__ import annotations

import dis
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.tracer import SymbolicRaise
from ..model.values import Const, DictV, MethodV, ObjectV, SetV, TupleV, Value
from . import ops
from .classes import MISS, mro_lookup

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
    missing = mro_lookup(d.cls, "__missing__")
    if isinstance(mro_lookup(d.cls, "__getattribute__"), types.FunctionType):
        return None
    attrs = {} if d.attrs is None else {k: e[1] for k, e in d.attrs.entries.items()}
    fixed = {k for k, x in attrs.items() if _fixed(x) and mro_lookup(d.cls, k) is MISS}
    if not (isinstance(missing, types.FunctionType) and _memo_code(missing.__code__, fixed)):
        return None
    return MemoLookupV(d)


def _fixed(v: Value) -> bool:
    """`v` is a value that cannot change: a constant, a frozen set or tuple of such."""
    if isinstance(v, Const):
        return True
    if isinstance(v, TupleV) and v.cls is tuple:
        return all(_fixed(x) for x in v.items)
    return isinstance(v, SetV) and v.frozen and all(_fixed(x) for x in v.entries.values())


_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW")
_ATTR_READS = ("LOAD_ATTR", "LOAD_METHOD")
_HIDDEN_SELF = frozenset({"super", "locals", "vars", "eval", "exec", "__class__"})


def _memo_code(code: types.CodeType, fixed: set) -> bool:
    """``__missing__(self, key)``'s code uses ``self`` only as ``self.<fixed attribute>`` and
    as the container of ``self[key] = value``, and passes it nowhere (see the module)."""
    if code.co_argcount != 2 or code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200):
        return False  # *args/**kwargs, a generator or coroutine: not a plain memo
    me, key = code.co_varnames[:2]
    if me in code.co_cellvars or _HIDDEN_SELF & (set(code.co_names) | set(code.co_freevars)):
        return False  # self in a closure, or read by super()/locals()
    ops_: list = []  # (opname, argval), superinstructions split into their loads
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            ops_.extend(("LOAD_FAST", name) for name in ins.argval)
        elif ins.opname in ("STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"):
            return False  # rare shapes: not read here
        else:
            ops_.append((ins.opname, ins.argval))
    for i, (op, arg) in enumerate(ops_):
        if arg != me:
            continue
        if op not in _LOADS:
            return False  # self stored, deleted or otherwise used
        after = ops_[i + 1 : i + 3]
        if after[:1] and after[0][0] in _ATTR_READS and after[0][1] in fixed:
            continue  # self.<fixed attribute>
        if len(after) == 2 and after[0] == ("LOAD_FAST", key) and after[1][0] == "STORE_SUBSCR":
            continue  # self[key] = value
        return False
    return True


def call_lookup(tx, v: MemoLookupV, args, kwargs) -> Value:
    """``lookup(key)``: the memo's item, or its ``__missing__``'s -- checked to memoize."""
    if kwargs or len(args) != 1:
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{v.describe()} called otherwise")
    d, key = v.memo, args[0]
    entries, mark = d.entries, tx.journal.mark()
    try:
        out = ops.getitem(tx, d, key)
    except SymbolicRaise as e:
        # a miss that raises stores nothing (natively a miss too): only its exception is
        # written (its traceback), nothing else -- the memo's items least of all
        if not all(obj is e.exc for obj, _, _ in tx.journal.log[mark:]):
            why = f"{v.describe()} wrote, then raised"
            raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, why) from None
        raise
    written = all(obj is d and attr in ("entries", "mutated") for obj, attr, _ in tx.journal.log[mark:])
    if not (written and _memoized(tx, entries, d.entries, key, out)):
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{v.describe()} does more than memoize")
    return out


def _memoized(tx, before: dict, after: dict, key: Value, out: Value) -> bool:
    """`after` is `before` (a hit), or `before` with `key` bound to `out` added at its end."""
    if after is before:
        return True
    hk = ops.hkey(tx, key)
    if hk in before or len(after) != len(before) + 1 or after.get(hk, (None, None))[1] is not out:
        return False
    return all(after.get(k) is e for k, e in before.items())
