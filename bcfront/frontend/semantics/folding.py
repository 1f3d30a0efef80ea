"""Constants: folding pure calls on constant values, and raising in the trace.

`as_python` is the plain Python value of a fully constant symbolic value
(`NotConst` otherwise); `fold` and `fold_model` call a pure function on
constants, its exceptions becoming symbolic ones (`as_symbolic`) the traced
code may catch; `from_python` is the symbolic value of a folded result.
`raise_` (and `arity`, `attribute_error`) raise a Python exception inside the
trace.  It knows only the value model, so every other semantics module can
fold and raise without importing the operators above it.
"""

from __future__ import annotations

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import CONST_TYPES, is_torch_const
from ..model.tracer import SymbolicRaise
from ..model.values import Const, DictV, ExceptionV, ListV, ObjectV, SetV, TensorV, TupleV, Value


class NotConst(Exception):
    pass


def raise_(cls, *args):
    raise SymbolicRaise(ExceptionV(cls, [Const(a) for a in args]))


def as_symbolic(e: Exception) -> SymbolicRaise:
    """The symbolic twin of a real exception raised while folding on constants."""
    return SymbolicRaise(ExceptionV(type(e), [Const(a) for a in e.args]))


def fold(fn, *args, **kwargs) -> Value:
    """Call a pure function on constants; its exceptions become symbolic exceptions."""
    try:
        return Const(fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the traced code sees exactly the exception Python would raise
        raise as_symbolic(e) from None


def as_python(v: Value, _open: frozenset = frozenset()):
    """The plain Python value of a fully constant value (raises NotConst).

    A container that holds itself (``x.append(x)``) is not a constant: NotConst, so
    the operation runs natively, where CPython's recursion guards (``[[...]]``) live.
    """
    if isinstance(v, Const):
        return v.value
    if isinstance(v, (TupleV, ListV, DictV)):
        if id(v) in _open:
            raise NotConst(v)
        _open = _open | {id(v)}
    if isinstance(v, TupleV):
        items = [as_python(x, _open) for x in v.items]
        if v.cls is tuple:
            return tuple(items)
        if hasattr(v.cls, "_fields"):
            return v.cls(*items)
        return v.cls(items)
    if isinstance(v, ListV):
        return [as_python(x, _open) for x in v.items]
    if isinstance(v, DictV):
        return v.cls((k, as_python(e[1], _open)) for k, e in v.entries.items())
    if isinstance(v, SetV):
        return (frozenset if v.frozen else set)(v.entries)
    raise NotConst(v)


def is_python_const(v: Value) -> bool:
    try:
        as_python(v)
        return True
    except NotConst:
        return False


def from_python(x) -> Value:
    """A value for a Python object produced by folding (no source, no guards)."""
    t = type(x)
    if t in CONST_TYPES or is_torch_const(x):
        return Const(x)
    if t is list:
        return ListV([from_python(i) for i in x])
    if t is tuple:
        return TupleV([from_python(i) for i in x])
    if t is dict:
        return DictV({k: (from_python(k), from_python(v)) for k, v in x.items()})
    if t in (set, frozenset):
        return SetV({k: from_python(k) for k in x}, t is frozenset)
    return ObjectV(x)


def fold_model(fn):
    def fold_call(tx, args, kwargs):
        if any(isinstance(a, TensorV) for a in args):
            raise UnsupportedError(
                BreakReason.DATA_DEPENDENT, f"{getattr(fn, '__qualname__', fn)} reads a tensor's value"
            )
        try:
            pa = [as_python(a) for a in args]
            pk = {k: as_python(v) for k, v in kwargs.items()}
        except NotConst:
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION, f"{getattr(fn, '__qualname__', fn)} on non-constant arguments"
            ) from None
        try:
            return from_python(fn(*pa, **pk))
        except Exception as e:  # noqa: BLE001 - the fold raises what Python would, symbolically
            raise as_symbolic(e) from None

    return fold_call


def arity(name, args, lo, hi=None):
    hi = lo if hi is None else hi
    if not lo <= len(args) <= hi:
        raise_(TypeError, f"{name}() takes {lo}..{hi} arguments ({len(args)} given)")


def attribute_error(owner: str, name: str):
    raise SymbolicRaise(ExceptionV(AttributeError, [Const(f"'{owner}' object has no attribute '{name}'")]))
