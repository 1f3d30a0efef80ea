"""Constants: folding pure calls on constant values, and raising in the trace.

`as_python` is the plain Python value of a fully constant symbolic value
(`NotConst` otherwise); `fold` and `fold_model` call a pure function on
constants, its exceptions becoming symbolic ones (`as_symbolic`) the traced
code may catch; `from_python` is the symbolic value of a folded result.
`raise_` (and `arity`, `attribute_error`) raise a Python exception inside the
trace.  `fold_typing` folds type expressions built at run time (``List[int]``,
``int | None``): classes and typing objects are constants there.  It knows only
the value model, so every other semantics module can fold and raise without
importing the operators above it.
"""

from __future__ import annotations

import operator
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import CONST_TYPES, is_torch_const
from ..model.c_instances import DefaultDictV
from ..model.tracer import SymbolicRaise
from ..model.values import (
    Const,
    DictV,
    ExceptionV,
    ListV,
    ObjectV,
    SetV,
    TensorV,
    TupleV,
    Value,
    specialized_deep,
)
from . import set_order


class NotConst(Exception):
    pass


def raise_(cls, *args):
    raise SymbolicRaise(ExceptionV(cls, [Const(a) for a in args]))


def own_recursion(e: RecursionError) -> UnsupportedError:
    """bcfront's own RecursionError (its recursion over a deeply nested value, or a fold
    made on a stack deeper than the native call's): a graph break, never the user's
    exception -- the native run raises RecursionError exactly where Python does."""
    return UnsupportedError(BreakReason.NESTING_DEPTH, f"bcfront's own recursion ran out of stack ({e})")


def as_symbolic(e: Exception) -> SymbolicRaise:
    """The symbolic twin of a real exception raised while folding on constants, with the
    attributes its class's ``__init__`` gave it (a ``JSONDecodeError``'s ``msg``, ``pos``...);
    one holding an object that is no plain value cannot be made again: the call breaks."""
    if isinstance(e, RecursionError):  # the capture's stack, deeper than the native call's
        raise own_recursion(e)
    exc = ExceptionV(type(e), [Const(a) for a in e.args])
    for name, x in getattr(e, "__dict__", {}).items():
        v = from_python(x)
        if isinstance(v, ObjectV):
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION, f"{type(e).__name__} raised with an object as its {name}"
            )
        exc.attrs[name] = v
    return SymbolicRaise(exc)


def fold(fn, /, *args, **kwargs) -> Value:
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
    if isinstance(v, DefaultDictV):  # its factory first: a builtin class or None only
        f = v.factory
        factory = f.obj if isinstance(f, ObjectV) and isinstance(f.obj, type) else as_python(f)
        return v.cls(factory, ((k, as_python(e[1], _open)) for k, e in v.entries.items()))
    if isinstance(v, DictV):
        return v.cls((k, as_python(e[1], _open)) for k, e in v.entries.items())
    if isinstance(v, SetV):
        table = set_order.replay(v.history) if v.history is not None else None
        if table is not None and table == v.entries.keys():
            return table  # a fresh real set with the native one's table (its order)
        return (frozenset if v.frozen else set)(v.entries)
    raise NotConst(v)


def value_needed(v: Value):
    """The plain Python value of `v` for a use that needs the value itself (a bound, a
    text): as `as_python`, a symbolic int taken as its value, guarded equal (`specialized`)."""
    return as_python(specialized_deep(v))


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


def python_args(args, kwargs, reason, message: str, convert=None) -> tuple[list, dict]:
    """The plain Python arguments of a call (`convert`, default `as_python`, on each), or a
    break with `reason` and `message` when one is not known now."""
    convert = convert or as_python
    try:
        return [convert(a) for a in args], {k: convert(v) for k, v in kwargs.items()}
    except NotConst:
        raise UnsupportedError(reason, message) from None


def fold_model(fn):
    def fold_call(tx, args, kwargs):
        args = [specialized_deep(a) for a in args]  # a symbolic size: its value, guarded
        kwargs = {k: specialized_deep(v) for k, v in kwargs.items()}
        if any(isinstance(a, TensorV) for a in args):
            raise UnsupportedError(
                BreakReason.DATA_DEPENDENT, f"{getattr(fn, '__qualname__', fn)} reads a tensor's value"
            )
        what = f"{getattr(fn, '__qualname__', fn)} on non-constant arguments"
        pa, pk = python_args(args, kwargs, BreakReason.CALL_TO_C_FUNCTION, what)
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


# -- typing: generics and unions built at run time are constants --------------------------------

_TYPING_MODULES = ("typing", "typing_extensions", "types", "collections.abc", "_collections_abc")


def _is_typing_object(x) -> bool:
    """A class, or an object of the typing machinery (alias, union, special form, TypeVar)."""
    if isinstance(x, type):
        return True
    return (type(x).__module__ or "") in _TYPING_MODULES


def typing_value(v: Value, _open: frozenset = frozenset()):
    """The plain value of a type expression's part (raises NotConst): constants, classes and
    typing objects (held by identity, already guarded by their source), tuples and lists."""
    if isinstance(v, Const):
        return v.value
    if isinstance(v, ObjectV) and _is_typing_object(v.obj):
        return v.obj
    if isinstance(v, (TupleV, ListV)) and id(v) not in _open and (isinstance(v, ListV) or v.cls is tuple):
        items = [typing_value(x, _open | {id(v)}) for x in v.items]
        return items if isinstance(v, ListV) else tuple(items)
    raise NotConst(v)


def _subscriptable_type(obj) -> bool:
    """A generic a subscript makes an alias of without running user code."""
    if isinstance(obj, type):
        if (getattr(obj, "__module__", "") or "") in _TYPING_MODULES or not (obj.__flags__ & (1 << 9)):
            return "__class_getitem__" in dir(obj)
        cgi = obj.__dict__.get("__class_getitem__")
        return isinstance(cgi, classmethod) and cgi.__func__ is types.GenericAlias
    return (type(obj).__module__ or "") in _TYPING_MODULES and hasattr(type(obj), "__getitem__")


def _plain_union_operand(x) -> bool:
    """An operand of ``|`` whose union runs no user code: None, a class whose metaclass keeps
    type's ``__or__``, a typing object."""
    if x is None:
        return True
    if isinstance(x, type):
        meta = type(x)
        return meta.__or__ is type.__or__ and meta.__ror__ is type.__ror__
    return (type(x).__module__ or "") in _TYPING_MODULES


def fold_typing(fn, *vals: Value) -> Value | None:
    """``List[int]``, ``tuple[int, ...]``, ``int | None`` on typing constants: folded (a
    symbolic exception if Python raises), else None.  `fn` is operator.getitem/or_."""
    if not all(isinstance(v, (Const, ObjectV, TupleV, ListV)) for v in vals):
        return None
    try:
        py = [typing_value(v) for v in vals]
    except NotConst:
        return None
    if fn is operator.getitem:
        if not (isinstance(vals[0], ObjectV) and _subscriptable_type(py[0])):
            return None
    elif not any(isinstance(v, ObjectV) for v in vals) or not all(_plain_union_operand(x) for x in py):
        return None
    try:
        return from_python(fn(*py))
    except Exception as e:  # noqa: BLE001 - what Python raises (Optional[1, 2]), symbolically
        raise as_symbolic(e) from None
