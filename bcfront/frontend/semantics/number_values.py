"""The builtin value inside an ``int`` or ``float`` subclass instance (an ``IntEnum``
member, a user's ``float`` subclass) from outside the trace.

Such an instance is an opaque `ObjectV`: its class's own methods may do anything.  The C
methods of the builtin type called on it directly -- ``int.__repr__(x)``,
``float.__repr__(x)``, ``int.__int__(x)``, ``float.__float__(x)``, what json's C encoder
does -- read only the number it stores, never the subclass's code.  Those calls are
modelled here: the number is read once at capture (``int.__int__(x)`` /
``float.__float__(x)``: an exact int or float) and guarded by a CONSTANT_MATCH on that
read (`StoredNumberSource`), then the C method folds on it.  A C method that may call
back into the subclass (``int.__format__`` with an empty spec calls ``str(x)``) is not
in `VALUE_ONLY`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.guard_kinds import GuardKind
from ..model.sources import DerivedSource, Ref, cache_hash
from ..model.values import Const, ObjectV, Value
from .folding import fold_model
from .registry import MODELS

_READ = {int: int.__int__, float: float.__float__}  # the stored number, as an exact one


@cache_hash
@dataclass(frozen=True, slots=True)
class StoredNumberSource(DerivedSource):
    """``int.__int__(base)`` / ``float.__float__(base)``: the number an int or float
    subclass instance stores (C's copy of it, no method of the subclass runs)."""

    read: Ref

    def readable(self):
        return f"{self.read.label}({self.base.readable()})"

    def expr(self, ns):
        return (
            f"{ns.const(self.read.obj, self.read.obj.__qualname__.replace('.', '_'))}({ns.spell(self.base)})"
        )


def stored_number(tx, v: Value) -> Value:
    """`v` itself, or, for an instance of a subclass of int (not bool) or float held as
    an `ObjectV`, the exact number it stores (guarded when it came from outside)."""
    if not isinstance(v, ObjectV):
        return v
    obj = v.obj
    base = next((b for b in (int, float) if isinstance(obj, b)), None)
    if base is None or type(obj) in (int, float, bool):
        return v
    read = _READ[base]
    number = read(obj)
    if v.source is not None:
        tx.guard(GuardKind.CONSTANT_MATCH, StoredNumberSource(v.source, Ref(read, read.__qualname__)), number)
    return Const(number)


def _value_only(fn):
    folded = fold_model(fn)

    def model(tx, args, kwargs):
        return folded(tx, [stored_number(tx, a) for a in args], kwargs)

    return model


# C methods of int and float that read only the stored number of their argument
VALUE_ONLY = (
    int.__repr__,
    int.__int__,
    int.__index__,
    int.__float__,
    float.__repr__,
    float.__float__,
    float.__int__,
)
for _fn in VALUE_ONLY:
    MODELS[_fn] = _value_only(_fn)
