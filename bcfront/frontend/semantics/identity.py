"""``id()`` of an object made in the function: a run-time number, known only as an identity.

The object a value made in the trace stands for (a list, a dict, an instance, a
closure) exists only when the region runs, so its address is not known while
tracing.  `IdV` stands for that number: two of them are equal exactly when they
are ids of the same value (two live objects never share an id), it is a dict key
that hashes by that identity (``seen[id(x)]``, ``id(x) in memo``), and where it
leaves the trace (returned, stored, kept across a break) it is rebuilt as
``id(<the rebuilt object>)``, the real number.  Anything else done with the
number (arithmetic, formatting, comparing it with an int known at capture time,
which may be a dead object's id) is a graph break.  CPython may reuse a dead
object's address for a new one (``id(object()) == id(object())``); ids taken
here stay distinct.
"""

from __future__ import annotations

import operator

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import (
    Const,
    DictV,
    ExceptionV,
    GeneratorV,
    ListV,
    MadeFunctionV,
    NewObjectV,
    PartialV,
    SetV,
    TupleV,
    Value,
)

# values made in the trace that are one mutable object each (never folded or shared)
_MADE = (NewObjectV, ListV, DictV, ExceptionV, MadeFunctionV, PartialV, GeneratorV)


def identity_of(v: Value) -> IdV:
    """The `IdV` of ``id(v)``; a graph break when v is not one object made in the trace."""
    if isinstance(v, _MADE) or (isinstance(v, SetV) and not v.frozen):
        return IdV(v)
    if isinstance(v, TupleV) and v.source is not None:  # one value per tuple from outside
        return IdV(v)
    raise UnsupportedError(BreakReason.UNSUPPORTED_ID, f"id() of {v.describe()}")


class IdV(Value):
    """``id(target)`` for a value made in the trace: an int known only by its identity."""

    __slots__ = ("target",)

    def __init__(self, target: Value):
        super().__init__(None)
        self.target = target

    def python_type(self):
        return int

    def describe(self):
        return f"id({self.target.describe()})"

    def hash_key(self):
        """What stands for the number as a dict key (`ops.hkey`)."""
        return _IdKey(self.target)

    def rebuild(self, rb) -> str:
        return f"{rb.ns.const(id, 'id')}({rb.expr(self.target)})"


class _IdKey:
    __slots__ = ("target",)

    def __init__(self, target):
        self.target = target

    def __eq__(self, other):
        return isinstance(other, _IdKey) and other.target is self.target

    def __hash__(self):
        return id(self.target)


def compare_ids(opname: str, fn, a: Value, b: Value) -> Value:
    """``==`` / ``!=`` with an id of a value made in the trace on either side."""
    if fn in (operator.eq, operator.ne):
        if isinstance(a, IdV) and isinstance(b, IdV):
            same = a.target is b.target
            return Const(same if fn is operator.eq else not same)
        other = b if isinstance(a, IdV) else a
        if isinstance(other, Const) and not isinstance(other.value, (int, float, complex)):
            return Const(fn is operator.ne)  # an int is never equal to a str, None, ...
    raise UnsupportedError(BreakReason.UNSUPPORTED_ID, f"{opname} on {a.describe()} and {b.describe()}")
