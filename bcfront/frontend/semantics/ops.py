"""Python operators on symbolic values: arithmetic, truth, length, items (comparison in
`compare`, iteration in `iteration`).

Dispatch order for a binary operator, mirroring CPython's:
tensors go to `torch_calls` (they become graph nodes); constants fold
(exceptions become symbolic exceptions the traced code may catch);
lists/tuples/dicts/sets are modelled; user classes run their Python dunder
methods (inlined), trying the reflected one on NotImplemented; anything else
is a graph break.
"""

from __future__ import annotations

import operator
import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model import unread_dicts
from ..model.builder import guard_class_lookup
from ..model.c_instances import CInstanceV
from ..model.dict_sources import number_key
from ..model.tracer import SymbolicRaise
from ..model.values import (
    Const,
    DictV,
    DictViewV,
    ExceptionV,
    ListV,
    NewObjectV,
    ObjectV,
    ScalarV,
    SetV,
    SymFloatV,
    SymIntV,
    TensorV,
    TupleV,
    Value,
    const_value,
    specialized,
    tensor_bound,
)
from . import classes, dispatch, pure_c, runtime_values, set_order
from .folding import NotConst, as_symbolic, fold, fold_typing, raise_, value_needed
from .known_tensors import known_value
from .number_values import stored_number
from .registry import MODELS

BINARY_OPS = [
    operator.add,
    operator.and_,
    operator.floordiv,
    operator.lshift,
    operator.matmul,
    operator.mul,
    operator.mod,
    operator.or_,
    operator.pow,
    operator.rshift,
    operator.sub,
    operator.truediv,
    operator.xor,
    operator.iadd,
    operator.iand,
    operator.ifloordiv,
    operator.ilshift,
    operator.imatmul,
    operator.imul,
    operator.imod,
    operator.ior,
    operator.ipow,
    operator.irshift,
    operator.isub,
    operator.itruediv,
    operator.ixor,
]
INPLACE_TO_BINARY = dict(zip(BINARY_OPS[13:], BINARY_OPS[:13]))
DUNDERS = {
    operator.add: "add",
    operator.and_: "and",
    operator.floordiv: "floordiv",
    operator.lshift: "lshift",
    operator.matmul: "matmul",
    operator.mul: "mul",
    operator.mod: "mod",
    operator.or_: "or",
    operator.pow: "pow",
    operator.rshift: "rshift",
    operator.sub: "sub",
    operator.truediv: "truediv",
    operator.xor: "xor",
    divmod: "divmod",
}
COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
}
REFLECTED_CMP = {
    "__lt__": "__gt__",
    "__le__": "__ge__",
    "__gt__": "__lt__",
    "__ge__": "__le__",
    "__eq__": "__eq__",
    "__ne__": "__ne__",
}
CMP_DUNDER = {
    operator.lt: "__lt__",
    operator.le: "__le__",
    operator.eq: "__eq__",
    operator.ne: "__ne__",
    operator.gt: "__gt__",
    operator.ge: "__ge__",
}


# -- binary / unary / compare ---------------------------------------------------------


def _symbolic_int_and_object(a: Value, b: Value) -> bool:
    """One operand a symbolic int, the other neither a tensor nor a constant number: the
    operator is the object's (a sequence's repetition...), which needs the int's value."""
    for x, y in ((a, b), (b, a)):
        if isinstance(x, SymIntV) and not isinstance(y, TensorV):
            # (its type, not its value: a runtime float stays unread, `RuntimeV`)
            return not (isinstance(y, Const) and y.python_type() in (int, float, bool, complex))
    return False


def binary(tx, fn, a: Value, b: Value) -> Value:
    if _symbolic_int_and_object(a, b):  # ``[1, 2] * n``, ``"%d" % n``: Python's, on its value
        a, b = specialized(a), specialized(b)
    if isinstance(a, TensorV) or isinstance(b, TensorV):
        if not (is_user_class(a) or is_user_class(b)):
            from . import torch_calls

            if isinstance(a, Const) and fn in INPLACE_TO_BINARY:
                # ``n += t``: a Python constant has no in-place operator, so this is
                # ``n = n + t`` (``t.__radd__(n)``), which writes nothing
                fn = INPLACE_TO_BINARY[fn]
            return torch_calls.call_operator(tx, fn, [a, b])
    inplace = fn in INPLACE_TO_BINARY
    base = INPLACE_TO_BINARY.get(fn, fn)
    if isinstance(a, Const) and isinstance(b, Const):
        made = runtime_values.call(tx, fn, [a, b])  # text known at run time: computed there
        return made if made is not None else fold(fn, a.value, b.value)
    if _scalar_object(a) and _scalar_object(b) and not _python_operator(tx, a, b, base, inplace):
        # an IntEnum member, a str subclass's instance: the builtin's own operator on the
        # real values (its NotImplemented, reflected order and TypeError are CPython's)
        return fold(fn, _scalar_value(tx, a), _scalar_value(tx, b))
    r = container_binary(tx, fn, base, inplace, a, b)
    if r is not None:
        return r
    if base is operator.mod and isinstance(a, Const) and isinstance(a.value, (str, bytes)):
        # printf-style formatting of a container operand ('%s' % [x], '%(k)s' % d): on its
        # plain value when it is all constants, natively otherwise (O25)
        try:
            return fold(fn, a.value, value_needed(b))
        except NotConst:
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_OPERATOR, f"% formatting of {b.describe()}"
            ) from None
    if base is operator.or_ and not inplace:
        typed = fold_typing(fn, a, b)
        if typed is not None:  # int | None
            return typed
    name = DUNDERS.get(base)
    if name is not None:
        if inplace:
            m = classes.lookup_dunder(a, f"__i{name}__", tx)
            if m is not None:
                r = dispatch.call(tx, m, [a, b], {})
                if not is_notimpl(r):
                    return r
        # a right operand of a subclass overriding the reflected method goes first
        for x, y, dunder in classes.operand_order(a, b, f"__{name}__", f"__r{name}__", True):
            m = classes.lookup_dunder(x, dunder, tx)
            if m is not None:
                r = dispatch.call(tx, m, [x, y], {})
                if not is_notimpl(r):
                    return r
        if all_known(a, b):
            raise_(TypeError, binary_error(fn, a.python_type(), b.python_type()))
    raise UnsupportedError(
        BreakReason.UNSUPPORTED_OPERATOR,
        f"{getattr(fn, '__name__', fn)} on {a.describe()} and {b.describe()}",
    )


_STAND_IN_TYPES = frozenset(
    {int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset, type(None)}
)


def _stand_in(cls):
    """A value whose type CPython names like `cls` in a binary-op error, or None."""
    if cls in _STAND_IN_TYPES:
        return cls()
    if cls.__mro__ == (cls, object) and not cls.__dict__.get("__slots__"):
        return type(cls.__name__, (), {})()  # no operator dunders, the same name
    return None


def binary_error(fn, ta, tb) -> str:
    """CPython's TypeError text for ``fn`` on a `ta` and a `tb` that do not support it
    ("can only concatenate list (not "tuple") to list", "unsupported operand type(s) for
    +=: ..."), asked of stand-in values of the same types (O51)."""
    a, b = _stand_in(ta), _stand_in(tb)
    if a is not None and b is not None:
        try:
            fn(a, b)
        except TypeError as e:
            return str(e)
        except Exception:  # noqa: BLE001 - a stand-in that fails otherwise: use the generic text
            pass
    name = DUNDERS.get(INPLACE_TO_BINARY.get(fn, fn), "?")
    return f"unsupported operand type(s) for {name}: '{ta.__name__}' and '{tb.__name__}'"


def is_notimpl(v) -> bool:
    """Whether `v` is the constant NotImplemented (a binary dunder declined)."""
    return isinstance(v, Const) and v.value is NotImplemented


def is_user_class(v) -> bool:
    """Whether `v` is an instance of a user-defined class (its dunders may run user code)."""
    return isinstance(v, NewObjectV) or (isinstance(v, ObjectV) and classes.is_user_instance(v.obj))


def _scalar_object(v) -> bool:
    """A constant, or an object of a subclass of a builtin scalar type (an IntEnum member)."""
    return isinstance(v, Const) or (isinstance(v, ObjectV) and isinstance(v.obj, (int, float, complex, str)))


def _scalar_value(tx, v):
    return v.value if isinstance(v, Const) else pure_c.scalar_value(tx, v)


def _python_operator(tx, a, b, base, inplace: bool) -> bool:
    """Whether ``a op b`` reaches an operator defined in Python (`a`'s, or `b`'s reflected
    one), which then runs as Python; the lookups are guarded (a class patched later
    recompiles)."""
    name = DUNDERS.get(base)
    if name is None:
        return True
    wanted = [(a, f"__{name}__"), (b, f"__r{name}__")] + ([(a, f"__i{name}__")] if inplace else [])
    for v, dunder in wanted:
        if isinstance(v, ObjectV):
            m = classes.lookup_dunder(v, dunder, tx)
            if m is not None and type(m.obj) is types.FunctionType:
                return True
    return False


def all_known(*vals) -> bool:
    """Whether every value is fully known at trace time (constants and containers of them)."""
    return all(isinstance(v, (Const, ListV, TupleV, DictV, SetV, NewObjectV)) for v in vals)


def container_binary(tx, fn, base, inplace, a, b):
    if base is operator.add:
        if isinstance(a, ListV) and isinstance(b, ListV):
            if inplace:
                list_extend(tx, a, b.items)
                return a
            return ListV(a.items + b.items)
        if isinstance(a, ListV) and inplace:
            list_extend(tx, a, dispatch.to_list(tx, b))
            return a
        if isinstance(a, TupleV) and isinstance(b, TupleV) and not hasattr(a.cls, "_fields"):
            cls = a.cls if a.cls is b.cls else tuple
            return TupleV(a.items + b.items, tuple if cls is not a.cls else cls)
        if isinstance(a, TupleV) and isinstance(b, Const) and type(b.value) is tuple:
            return TupleV(a.items + tuple(Const(x) for x in b.value))
        if isinstance(b, TupleV) and isinstance(a, Const) and type(a.value) is tuple:
            return TupleV(tuple(Const(x) for x in a.value) + b.items)
    if base is operator.mul:
        seq, n = (a, b) if isinstance(b, Const) else (b, a)
        if isinstance(n, Const) and isinstance(n.value, int):  # bools count too (O32)
            if isinstance(seq, ListV):
                if inplace and seq is a:
                    tx.set(seq, "items", seq.items * n.value)
                    touch(tx, seq)
                    return seq
                return ListV(seq.items * n.value)
            if isinstance(seq, TupleV):
                return TupleV(seq.items * n.value)
    if (
        isinstance(a, SetV)
        and isinstance(b, SetV)
        and base in (operator.and_, operator.or_, operator.sub, operator.xor)
    ):
        keys = base(set(a.entries), set(b.entries))
        merged = {**b.entries, **a.entries}
        entries = {k: merged[k] for k in keys}
        if inplace and not a.frozen:
            tx.set(a, "entries", entries)
            tx.set(a, "history", set_order.binary_history(base, a, b, True))
            touch(tx, a)
            return a
        return SetV(entries, a.frozen, history=set_order.binary_history(base, a, b, False))
    if isinstance(a, DictV) and isinstance(b, DictV) and base is operator.or_:
        return MODELS["dict |"](tx, [a, b, Const(inplace)], {})  # containers.dict_or
    if isinstance(a, DictV) and inplace and base is operator.or_ and a.cls is dict:
        # d |= iterable of pairs: dict.__ior__ is dict.update (O51)
        MODELS[dict.update](tx, [a, b], {})  # its model (`containers`)
        return a
    if base is operator.mod and isinstance(a, Const) and isinstance(a.value, str):
        ok, args = const_value(b)
        if ok:
            return fold(operator.mod, a.value, args)
    return None


def unary(tx, fn, a: Value) -> Value:
    if fn is operator.not_ and isinstance(a, TensorV):  # a truth test, as ``if t:`` is
        return Const(not truth(tx, a))
    if isinstance(a, TensorV):
        from . import torch_calls

        return torch_calls.call_operator(tx, fn, [a])
    if runtime_values.is_runtime(a):  # known at run time: ``not s`` guards the answer
        if fn is operator.not_:
            return Const(not truth(tx, a))
        made = runtime_values.call(tx, fn, [a])
        if made is not None:
            return made
    if isinstance(a, Const):
        return fold(fn, a.value)
    if fn is operator.not_:
        return Const(not truth(tx, a))
    name = {operator.neg: "__neg__", operator.pos: "__pos__", operator.invert: "__invert__"}[fn]
    m = classes.lookup_dunder(a, name, tx)
    if m is not None:
        return dispatch.call(tx, m, [a], {})
    raise UnsupportedError(BreakReason.UNSUPPORTED_OPERATOR, f"{name} on {a.describe()}")


# -- truth and length ----------------------------------------------------------------


def truth(tx, v: Value) -> bool:
    if runtime_values.is_runtime(v):
        return runtime_values.truth(tx, v)
    if isinstance(v, Const):
        return bool(v.value)
    if isinstance(v, (SymIntV, SymFloatV)):
        return bool(v.example)  # the ShapeEnv guards the outcome (``Ne(s0, 0)``)
    if isinstance(v, TensorV):
        known = known_value(tx, v)  # made from constants only: the same on every call
        if known is not None and known.numel() == 1:
            return bool(known)
        raise UnsupportedError(
            BreakReason.DATA_DEPENDENT_BRANCH, "the truth value of a tensor depends on its data"
        )
    if isinstance(v, (ListV, TupleV)):
        return bool(v.items)
    if isinstance(v, DictV) and v.unread is not None and v.cls is dict:  # read key by key
        return dict_size(tx, v) > 0
    if isinstance(v, SetV) or (
        isinstance(v, DictV) and not any(classes.lookup_dunder(v, n) for n in ("__bool__", "__len__"))
    ):
        return bool(v.entries)
    if isinstance(v, DictViewV):
        return bool(v.dict.entries)
    if isinstance(v, (NewObjectV, ObjectV, DictV, CInstanceV)):
        for name in ("__bool__", "__len__"):
            m = classes.lookup_dunder(v, name, tx)
            if m is not None:
                r = dispatch.call(tx, m, [v], {})
                if name == "__len__":
                    return length_of(r) > 0
                if r.python_type() is not bool:  # CPython's slot_nb_bool takes a bool only
                    raise_(TypeError, f"__bool__ should return bool, returned {r.python_type().__name__}")
                return truth(tx, r)
        if isinstance(v, ObjectV) and not classes.default_truth(v.obj):
            raise UnsupportedError(BreakReason.UNSUPPORTED_TRUTH, f"truth value of {v.describe()}")
        return True
    return True


def length_of(v: Value) -> int:
    """What ``len()`` makes of a ``__len__`` result, with CPython's errors (O44)."""
    v = specialized(v)  # a symbolic int: its value, guarded
    if isinstance(v, Const) and type(v.value) in (int, bool):
        n = int(v.value)
        if n < 0:
            raise_(ValueError, "__len__() should return >= 0")
        if n > sys.maxsize:
            raise_(OverflowError, "cannot fit 'int' into an index-sized integer")
        return n
    if isinstance(v, Const) and not isinstance(v.value, int):
        raise_(TypeError, f"'{type(v.value).__name__}' object cannot be interpreted as an integer")
    raise UnsupportedError(BreakReason.UNSUPPORTED_LEN, f"__len__ returned {v.describe()}")


def length(tx, v: Value) -> int:
    if isinstance(v, (ListV, TupleV)):
        return len(v.items)
    if isinstance(v, DictV) and v.unread is not None and v.cls is dict:  # read key by key
        return dict_size(tx, v)
    if isinstance(v, SetV) or (isinstance(v, DictV) and classes.lookup_dunder(v, "__len__") is None):
        return len(v.entries)
    if isinstance(v, DictViewV):
        return len(v.dict.entries)
    if isinstance(v, Const):
        return fold(len, v.value).value
    if isinstance(v, ScalarV):  # a number (a symbolic int): no tensor
        raise_(TypeError, f"object of type '{v.ptype.__name__}' has no len()")
    if isinstance(v, TensorV):
        if v.fake.dim() == 0:
            raise_(TypeError, "len() of a 0-d tensor")
        return int(v.fake.shape[0])
    m = classes.lookup_dunder(v, "__len__", tx)
    if m is not None:
        return length_of(dispatch.call(tx, m, [v], {}))
    cls = classes.value_class(v)
    if cls is not None and hasattr(cls, "__len__"):
        # A C-level length slot (deque, dict views, array, ...): the size can change with
        # no trace of it here, so run len() natively rather than guess.
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"len() of a {cls.__name__} (implemented in C)")
    raise_(TypeError, f"object of type '{v.python_type().__name__}' has no len()")


# -- items ------------------------------------------------------------------------------


def touch(tx, container) -> None:
    """Mark `container` written (an outside one is replayed after the region)."""
    if not container.mutated:
        tx.set(container, "mutated", True)
    if container.source is not None:
        tx.mark_mutated(container)


def list_extend(tx, lst: ListV, items) -> None:
    items = list(items)  # (made first: ``xs.extend(xs)`` reads xs, then appends to it)
    if not lst.append_unread(tx, *items):  # an outside list's items unread: not read now
        tx.set(lst, "items", lst.items + items)
    touch(tx, lst)


def _no_tensor_bound(key: Value) -> None:
    if tensor_bound(key):  # ``seqs[:, :n]``, n a tensor: its value decides the result
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, "a slice bound that is a tensor")


def getitem(tx, obj: Value, key: Value) -> Value:
    _no_tensor_bound(key)
    if isinstance(obj, TensorV):
        from . import torch_calls

        return torch_calls.getitem(tx, obj, key)
    key = specialized(key)  # a size as the index of a Python object: its value, guarded
    if isinstance(obj, (ListV, TupleV)):
        if isinstance(key, Const) and type(key.value) in (int, bool):
            try:
                return obj.items[key.value]
            except IndexError:
                raise_(IndexError, f"{obj.python_type().__name__} index out of range")
        if isinstance(key, Const) and type(key.value) is slice:
            items = obj.items[key.value]
            return ListV(items) if isinstance(obj, ListV) else TupleV(items)
        idx = classes.index_of(tx, key)
        if idx is not None:
            return getitem(tx, obj, Const(idx))
    if isinstance(obj, Const):
        made = runtime_values.call(tx, operator.getitem, [obj, key])  # text known at run time
        if made is not None:
            return made
        if isinstance(key, Const):
            return fold(operator.getitem, obj.value, key.value)
    if isinstance(obj, DictV) and obj.cls is not dict:  # a dict subclass's own __getitem__ first
        m = classes.lookup_dunder(obj, "__getitem__", tx)
        if m is not None:
            return dispatch.call(tx, m, [obj, key], {})
    if isinstance(obj, DictV):
        e = dict_entry(tx, obj, key)
        if e is not None:
            return e[1]
        missing = classes.lookup_dunder(obj, "__missing__", tx) if obj.cls is not dict else None
        if missing is not None:
            return dispatch.call(tx, missing, [obj, key], {})
        if obj.cls is not dict and hasattr(obj.cls, "__missing__"):
            # a C __missing__ (defaultdict's default_factory) the trace does not model
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_SUBSCRIPT, f"missing key of a {obj.cls.__name__} (its C __missing__)"
            )
        raise SymbolicRaise(ExceptionV(KeyError, [key]))
    typed = fold_typing(operator.getitem, obj, key) if isinstance(obj, ObjectV) else None
    if typed is not None:  # List[int], tuple[int, ...], Optional[T]
        return typed
    m = classes.lookup_dunder(obj, "__getitem__", tx)
    if m is not None:
        return dispatch.call(tx, m, [obj, key], {})
    if isinstance(obj, ObjectV) and isinstance(obj.obj, type):
        ok, k = const_value(key)
        if ok and hasattr(obj.obj, "__class_getitem__"):
            return fold(operator.getitem, obj.obj, k)
    raise UnsupportedError(BreakReason.UNSUPPORTED_SUBSCRIPT, f"{obj.describe()}[{key.describe()}]")


def setitem(tx, obj: Value, key: Value, value: Value) -> None:
    _no_tensor_bound(key)
    if isinstance(obj, TensorV):
        from . import torch_calls

        torch_calls.setitem(tx, obj, key, value)
        return
    key = specialized(key)
    if isinstance(obj, ListV):
        items = list(obj.items)
        if isinstance(key, Const) and type(key.value) in (int, bool, slice):
            try:
                if type(key.value) is slice:
                    items[key.value] = dispatch.to_list(tx, value)
                else:
                    items[key.value] = value
            except (IndexError, ValueError) as e:
                raise as_symbolic(e) from None
            tx.set(obj, "items", items)
            touch(tx, obj)
            return
    if isinstance(obj, DictV) and obj.cls is not dict:
        m = classes.lookup_dunder(obj, "__setitem__", tx)
        if m is not None:
            dispatch.call(tx, m, [obj, key, value], {})
            return
    if isinstance(obj, DictV) and not hasattr(obj.cls, "__setitem__"):  # a read-only mapping
        raise_(TypeError, f"'{obj.cls.__name__}' object does not support item assignment")
    if isinstance(obj, DictV):
        dict_store(tx, obj, key, value)
        touch(tx, obj)
        return
    m = classes.lookup_dunder(obj, "__setitem__", tx)
    if m is not None:
        dispatch.call(tx, m, [obj, key, value], {})
        return
    raise UnsupportedError(BreakReason.UNSUPPORTED_SUBSCRIPT, f"{obj.describe()}[...] = ...")


def delitem(tx, obj: Value, key: Value) -> None:
    _no_tensor_bound(key)
    if isinstance(obj, ListV) and isinstance(key, Const):
        items = list(obj.items)
        try:
            del items[key.value]
        except (IndexError, TypeError) as e:
            raise as_symbolic(e) from None
        tx.set(obj, "items", items)
        touch(tx, obj)
        return
    if isinstance(obj, DictV) and obj.cls is not dict:
        m = classes.lookup_dunder(obj, "__delitem__", tx)
        if m is not None:
            dispatch.call(tx, m, [obj, key], {})
            return
    if isinstance(obj, DictV) and not hasattr(obj.cls, "__delitem__"):  # a read-only mapping
        raise_(TypeError, f"'{obj.cls.__name__}' object does not support item deletion")
    if isinstance(obj, DictV):
        if dict_remove(tx, obj, key) is None:
            raise SymbolicRaise(ExceptionV(KeyError, [key]))
        touch(tx, obj)
        return
    m = classes.lookup_dunder(obj, "__delitem__", tx)
    if m is not None:
        dispatch.call(tx, m, [obj, key], {})
        return
    raise UnsupportedError(BreakReason.UNSUPPORTED_SUBSCRIPT, f"del {obj.describe()}[...]")


# -- a dict's entries by key: key by key where it is read so (`unread_dicts`), else whole ----------
# Every read or write of a DictV's entries by one key goes through these, so that no dict
# operation reads an outside dict whole where one key would do.


def dict_entry(tx, d: DictV, key: Value) -> tuple | None:
    """`d`'s entry (key value, value) at `key`, or None where it has none."""
    h = unread_dicts.keyed_key(d, key)
    if h is not unread_dicts.NOT_KEYED:  # an outside dict: this key alone, guarded
        return unread_dicts.lookup(tx, d, key, h)
    return d.entries.get(hkey(tx, key))


def dict_store(tx, d: DictV, key: Value, value: Value) -> None:
    """``d[key] = value`` on `d`'s entries: an equal key there keeps its first object (the
    caller marks `d` written)."""
    h = unread_dicts.keyed_key(d, key)
    if h is not unread_dicts.NOT_KEYED:
        unread_dicts.store(tx, d, key, h, value)
        return
    _put_entries(tx, d, ((key, value),))


def dict_store_many(tx, d: DictV, pairs) -> None:
    """``d[k] = v`` for each ``(k, v)`` of the iterable `pairs`, in order (``dict.update``,
    a merge); where taking the next pair raises, the ones before it stay stored, as in
    CPython.  A dict read whole takes them in one copy of its entries (the caller marks
    `d` written)."""
    if d.unread is not None:  # key by key (a key that is not reads it whole, then on)
        for k, v in pairs:
            dict_store(tx, d, k, v)
        return
    _put_entries(tx, d, pairs)


def _put_entries(tx, d: DictV, pairs) -> None:
    """The pairs stored in one copy of `d`'s entries (read whole): an equal key there keeps
    its first object; those before a pair whose taking raises stay stored."""
    entries = dict(d.entries)
    try:
        for k, v in pairs:
            h = hkey(tx, k)
            old = entries.get(h)
            entries[h] = (old[0] if old else k, v)
    except SymbolicRaise:
        tx.set(d, "entries", entries)
        raise
    tx.set(d, "entries", entries)


def dict_remove(tx, d: DictV, key: Value) -> tuple | None:
    """Takes `key`'s entry out of `d`: the entry, or None where it had none (`d` unchanged;
    the caller marks it written otherwise)."""
    h = unread_dicts.keyed_key(d, key)
    if h is not unread_dicts.NOT_KEYED:
        e = unread_dicts.lookup(tx, d, key, h)
        if e is not None:
            unread_dicts.remove(tx, d, key, h)
        return e
    k = hkey(tx, key)
    e = d.entries.get(k)
    if e is not None:
        entries = dict(d.entries)
        del entries[k]
        tx.set(d, "entries", entries)
    return e


def dict_size(tx, d: DictV) -> int:
    """``len(d)`` of `d`'s entries, read key by key where it is (its length guarded)."""
    return unread_dicts.size(tx, d) if d.unread is not None else len(d.entries)


def hkey(tx, v: Value):
    """A real Python object that hashes and compares like `v` as a dict key."""
    if isinstance(v, Const):
        try:
            hash(v.value)
        except TypeError as e:
            raise SymbolicRaise(ExceptionV(TypeError, [Const(str(e))])) from None
        return v.value
    if isinstance(v, TupleV):
        return tuple(hkey(tx, x) for x in v.items)
    if isinstance(v, ObjectV) and classes.hashes_by_identity(v.obj, tx):
        return v.obj
    if isinstance(v, ObjectV) and number_key(v.obj) is not None:
        # an int/float subclass instance hashed and compared as its number, by the
        # builtin's C code (guarded: its class's lookups, its number; TYPE_MATCH pins it)
        for name in ("__eq__", "__hash__"):
            guard_class_lookup(tx, type(v.obj), name)
        stored_number(tx, v)
        return v.obj
    if isinstance(v, (SymIntV, SymFloatV)):
        return v.ptype(v.example)  # a symbolic number as a key: its value (guarded)
    if isinstance(v, ScalarV):
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, "a number read from a tensor as a key")
    if isinstance(v, TensorV):
        return _Identity(v.fake)
    if (
        isinstance(v, NewObjectV)
        and classes.lookup_dunder(v, "__hash__", tx) is None
        and classes.lookup_dunder(v, "__eq__", tx) is None
    ):
        return _Identity(v)
    if isinstance(v, (ListV, DictV)) or (isinstance(v, SetV) and not v.frozen):
        raise_(TypeError, f"unhashable type: '{v.python_type().__name__}'")
    if hasattr(v, "hash_key"):  # a value that says how it hashes (`identity.IdV`)
        return v.hash_key()
    raise UnsupportedError(BreakReason.UNSUPPORTED_HASH, f"hash of {v.describe()}")


class _Identity:
    """Hashes and compares by the identity of the wrapped object (tensor keys, plain instances)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)
