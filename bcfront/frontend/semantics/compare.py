"""Comparison, identity and membership of symbolic values: `==`/`<`/..., `is`, `in`.

Comparisons follow CPython's order: tensors become graph nodes, constants fold,
lists/tuples compare item by item (lexicographically for orderings), dicts and sets
by keys and values, sets also as subsets; a user class's rich comparison is inlined
(the reflected one on NotImplemented); `==` without one falls back to identity.
Identity between two objects from outside is a fact about one call, so `is_same`
guards it (SAME_OBJECT / DISTINCT_OBJECTS).  Re-exported by `ops`.
"""

from __future__ import annotations

import collections
import operator
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import CInstanceV
from ..model.guard_kinds import GuardKind
from ..model.mapping_proxies import ProxyDictV
from ..model.values import (
    Const,
    DictV,
    DictViewV,
    ListV,
    ObjectV,
    ScalarV,
    SetV,
    SymFloatV,
    SymIntV,
    TensorV,
    TupleV,
    Value,
    specialized,
)
from . import classes, dispatch, runtime_values, whole_lists
from .folding import fold, raise_
from .identity import IdV, compare_ids
from .iteration import Exhausted, get_iter, iter_items, next_value
from .ops import (
    CMP_DUNDER,
    COMPARE,
    REFLECTED_CMP,
    all_known,
    dict_entry,
    hkey,
    is_notimpl,
    is_user_class,
    truth,
)


def compare(tx, opname: str, a: Value, b: Value) -> Value:
    fn = COMPARE[opname]
    if isinstance(a, IdV) or isinstance(b, IdV):
        return compare_ids(opname, fn, a, b)
    if isinstance(a, TensorV) or isinstance(b, TensorV):
        if not (is_user_class(a) or is_user_class(b)):
            from . import torch_calls

            return torch_calls.call_operator(tx, fn, [a, b])
    if isinstance(a, Const) and isinstance(b, Const):
        made = runtime_values.call(tx, fn, [a, b])  # text known at run time: computed there
        return made if made is not None else fold(fn, a.value, b.value)
    if isinstance(a, (ListV, TupleV)) or isinstance(b, (ListV, TupleV)):
        a, b = _as_sequence(a), _as_sequence(b)  # (x, 2) == (1, 2), t.shape == (2, 2) (O20)
    if fn in (operator.eq, operator.ne):
        if isinstance(a, (ListV, TupleV)) and isinstance(b, (ListV, TupleV)):
            same = _seq_equal(tx, a, b)
            return Const(same if fn is operator.eq else not same)
        a, b = _unproxied(a), _unproxied(b)  # a mappingproxy compares its mapping
        if isinstance(a, (DictV, SetV)) and isinstance(b, (DictV, SetV)) and not _own_eq(a, b):
            same = _mapping_equal(tx, a, b)
            return Const(same if fn is operator.eq else not same)
    if (
        fn not in (operator.eq, operator.ne)
        and isinstance(a, (ListV, TupleV))
        and isinstance(b, (ListV, TupleV))
    ):
        return _seq_order(tx, fn, a, b)
    if fn not in (operator.eq, operator.ne):
        ka, kb = _set_keys(tx, a), _set_keys(tx, b)
        if ka is not None and kb is not None:  # subset / superset (O18)
            if fn in (operator.gt, operator.ge):
                ka, kb = kb, ka
            return Const(ka <= kb and (fn in (operator.le, operator.ge) or len(ka) < len(kb)))
    name = CMP_DUNDER[fn]
    # a right operand of a subclass's type goes first
    for x, y, n in classes.operand_order(a, b, name, REFLECTED_CMP[name], False):
        m = classes.lookup_dunder(x, n, tx)
        if m is not None:
            r = dispatch.call(tx, m, [x, y], {})
            if not is_notimpl(r):
                return r
        elif n == "__ne__" and _default_ne(x):  # object.__ne__: the class's __eq__, inverted
            r = dispatch.call(tx, classes.lookup_dunder(x, "__eq__", tx), [x, y], {})
            if not is_notimpl(r):
                return Const(not truth(tx, r))
    ra, rb = _enum_or_const(a), _enum_or_const(b)
    if ra is not _UNKNOWN and rb is not _UNKNOWN:
        # an Enum member (identity-guarded) against a constant or another member: its `==` is
        # the enum module's or a builtin mixin's (`class Action(str, Enum)`), so it folds
        return fold(fn, ra, rb)
    if _c_level_dunder(a, name) or _c_level_dunder(b, REFLECTED_CMP[name]):
        # a user subclass of a builtin (int, str, IntEnum) compares in C: run it natively (O24)
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_OPERATOR, f"{opname} of {a.describe()} and {b.describe()}"
        )
    if fn in (operator.eq, operator.ne):
        same = is_same(a, b, tx)
        if same is not None:
            return Const(same if fn is operator.eq else not same)
    if fn not in (operator.eq, operator.ne) and all_known(a, b):
        raise_(
            TypeError,
            f"'{opname}' not supported between instances of "
            f"'{a.python_type().__name__}' and '{b.python_type().__name__}'",
        )
    raise UnsupportedError(BreakReason.UNSUPPORTED_OPERATOR, f"{opname} on {a.describe()} and {b.describe()}")


_UNKNOWN = object()


def _default_ne(v: Value) -> bool:
    """`v`'s class inherits object's ``__ne__`` and has an ``__eq__`` written in Python."""
    cls = classes.value_class(v)
    return (
        cls is not None
        and classes.mro_lookup(cls, "__ne__") is object.__ne__
        and isinstance(classes.mro_lookup(cls, "__eq__"), types.FunctionType)
    )


def _enum_or_const(v: Value):
    """The real object behind a constant or an Enum member, else `_UNKNOWN`."""
    if isinstance(v, Const):
        return v.value
    if isinstance(v, ObjectV) and classes.is_plain_enum_member(v.obj):
        return v.obj
    return _UNKNOWN


def is_same(a: Value, b: Value, tx=None):
    """Python `is`; None when it cannot be known.  With `tx`, an answer about two objects
    from outside is guarded: it holds for this call's arguments only."""
    same = _identical(a, b)
    if tx is not None and same is not None:
        _guard_identity(tx, a, b, same)
    return same


def _guard_identity(tx, a: Value, b: Value, same: bool) -> None:
    sa, sb = a.source, b.source
    if sa is None or sb is None or sa == sb or isinstance(a, Const) or isinstance(b, Const):
        return  # a value made in the trace is never an outside object; constants by value
    tx.guard(GuardKind.SAME_OBJECT if same else GuardKind.DISTINCT_OBJECTS, sb, extra=sa)


_SYMBOLIC = (SymIntV, SymFloatV)


def _identical(a: Value, b: Value):
    if a is b:
        return True
    if not (getattr(a, "identity_known", True) and getattr(b, "identity_known", True)):
        return None  # which object it stands for is not known (`memo_lookups`)
    if isinstance(a, _SYMBOLIC) or isinstance(b, _SYMBOLIC):  # a symbolic number: as of its value
        return _identical(specialized(a), specialized(b))
    if isinstance(a, ScalarV) or isinstance(b, ScalarV):
        # a number read from a tensor: `is` another number depends on its value (small
        # ints and bools are shared objects); anything else is never that object
        o = b if isinstance(a, ScalarV) else a
        if isinstance(o, ScalarV) or (isinstance(o, Const) and type(o.value) in (bool, int, float, complex)):
            return None
        return False
    if runtime_values.is_other_type(a, b):  # ``s is None`` of a text known at run time
        return False
    if isinstance(a, Const) and isinstance(b, Const):
        return a.value is b.value
    if isinstance(a, ObjectV) and isinstance(b, ObjectV):
        return a.obj is b.obj
    if isinstance(a, TensorV) and isinstance(b, TensorV):
        return a.fake is b.fake
    if isinstance(a, Const) or isinstance(b, Const):
        c, o = (a, b) if isinstance(a, Const) else (b, a)
        if isinstance(o, ObjectV):
            return c.value is o.obj
        return False
    if isinstance(a, ObjectV) or isinstance(b, ObjectV):
        return False  # an outside object is never one created during the trace
    return False


def equal(tx, a: Value, b: Value) -> bool:
    """`a == b` as a Python bool, with the identity shortcut containers use."""
    if is_same(a, b, tx):
        return True
    return truth(tx, compare(tx, "==", a, b))


# builtin types whose C comparison of two outside objects is their identity, as far as the
# trace can meet them: a module-level builtin function is one object (bound ones are MethodV)
_IDENTITY_EQ = (types.BuiltinFunctionType,)


def _c_level_dunder(v: Value, name: str) -> bool:
    """Whether `v` is an instance of a user class that inherits C-level special method
    `name` from a builtin base (not object's default), or an outside object of a builtin
    type with its own C comparison that no model answered (``bytearray``, ``slice``,
    ``memoryview``, a mappingproxy, dict views: never identity)."""
    cls = classes.value_class(v)
    if cls is None or isinstance(v, CInstanceV):
        return False  # (a modelled C instance's comparisons are models: they said NotImplemented)
    if cls.__module__ == "builtins" and not (isinstance(v, ObjectV) and not issubclass(cls, _IDENTITY_EQ)):
        return False
    raw = getattr(cls, name, None)
    return (
        raw is not None and not isinstance(raw, types.FunctionType) and raw is not getattr(object, name, None)
    )


def _as_sequence(v: Value) -> Value:
    """A constant list or tuple as a symbolic one (item by item), to compare with one."""
    if isinstance(v, Const):
        t = type(v.value)
        if t is list:
            return ListV([Const(x) for x in v.value])
        if issubclass(t, tuple) and t.__eq__ is tuple.__eq__ and t.__lt__ is tuple.__lt__:
            return TupleV([Const(x) for x in v.value], t)
    return v


def _seq_equal(tx, a, b) -> bool:
    if type(a) is not type(b) and not (isinstance(a, TupleV) and isinstance(b, TupleV)):
        return False
    if len(a.items) != len(b.items):
        return False
    return all(equal(tx, x, y) for x, y in zip(a.items, b.items))


def _set_keys(tx, v: Value):
    """The hash keys of a set or frozenset value (symbolic or constant); None for others."""
    if isinstance(v, SetV):
        return set(v.entries)
    if isinstance(v, Const) and isinstance(v.value, (set, frozenset)):
        return {hkey(tx, Const(x)) for x in v.value}
    return None


def _seq_order(tx, fn, a, b) -> Value:
    for x, y in zip(a.items, b.items):
        if not equal(tx, x, y):
            return compare(
                tx, {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}[fn], x, y
            )
    return Const(fn(len(a.items), len(b.items)))


def _unproxied(v: Value) -> Value:
    return v.mapping if isinstance(v, ProxyDictV) else v


def _own_eq(a, b) -> bool:
    """Whether either is an instance of a Python dict subclass defining ``==`` itself."""
    return any(
        isinstance(x, DictV) and x.cls is not dict and classes.lookup_dunder(x, n) is not None
        for x in (a, b)
        for n in ("__eq__", "__ne__")
    )


def _mapping_equal(tx, a, b) -> bool:
    # a dict and a set never: a dict and a defaultdict (a DictV too) by their items
    if isinstance(a, SetV) is not isinstance(b, SetV) or set(a.entries) != set(b.entries):
        return False
    if isinstance(a, SetV):
        return True
    if issubclass(a.cls, collections.OrderedDict) and issubclass(b.cls, collections.OrderedDict):
        if list(a.entries) != list(b.entries):  # two OrderedDicts compare their order too
            return False
    return all(equal(tx, a.entries[k][1], b.entries[k][1]) for k in a.entries)


def contains(tx, item: Value, container: Value) -> bool:
    # the declared call on values known at run time: an unread list, text (`pure_c.TABLE`)
    made = whole_lists.call_declared(tx, operator.contains, [container, item], None)
    if made is not None:
        return truth(tx, made)
    if isinstance(container, Const):
        if isinstance(item, Const):
            r = fold(operator.contains, container.value, item.value)
            return r.value
        if isinstance(container.value, (tuple, list, frozenset, set)):
            return any(equal(tx, item, Const(x)) for x in container.value)
    if isinstance(container, (ListV, TupleV)):
        return any(equal(tx, item, x) for x in container.items)
    if isinstance(container, DictV) and container.cls is not dict:  # a subclass's own first
        m = classes.lookup_dunder(container, "__contains__", tx)
        if m is not None:
            return truth(tx, dispatch.call(tx, m, [container, item], {}))
    if isinstance(container, DictV):
        return dict_entry(tx, container, item) is not None
    if isinstance(container, SetV):
        return hkey(tx, item) in container.entries
    if isinstance(container, DictViewV):
        if container.kind == "keys":
            return hkey(tx, item) in container.dict.entries
        return contains(tx, item, TupleV(iter_items(tx, container)))
    if isinstance(container, TensorV):
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, "`in` on a tensor depends on its values")
    m = classes.lookup_dunder(container, "__contains__", tx)
    if m is not None:
        return truth(tx, dispatch.call(tx, m, [container, item], {}))
    it = get_iter(tx, container)
    while True:
        try:
            x = next_value(tx, it)
        except Exhausted:
            return False
        if equal(tx, item, x):
            return True
