"""What a value's class says, read without running code: MRO lookups and special methods.

`value_class` is the Python class a symbolic value stands for; `lookup_dunder`
finds a special method written in Python on it (for the caller to inline);
`mro_lookup` reads a raw class attribute (`MISS` when absent).  Also the small
questions built on them (heap types, identity hashing, default truth) and
`source_of` / `index_of`.  Nothing here calls or records anything, so every
semantics module can ask without importing `objects` (the calls) above them.
"""

from __future__ import annotations

import enum
import types
from typing import TypeGuard

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import guard_class_lookup
from ..model.c_instances import CInstanceV, DefaultDictV
from ..model.sources import ConstSource, Ref
from ..model.values import (
    Const,
    DictV,
    ExceptionV,
    ListV,
    NewObjectV,
    ObjectV,
    TensorV,
    TupleV,
    Value,
    specialized,
)
from . import pure_c
from .registry import MODELS


def mro_lookup(cls, name):
    """The raw class attribute (from the first class in the MRO that has it), or a miss marker."""
    for c in cls.__mro__:
        d = c.__dict__
        if name in d:
            return d[name]
    return MISS


MISS = object()


def is_user_instance(obj) -> bool:
    """True for instances of classes defined in Python (not builtin C types)."""
    return is_heap_type(type(obj))


def is_heap_type(t) -> bool:
    # Py_TPFLAGS_HEAPTYPE: defined by a class statement -- unless Py_TPFLAGS_IMMUTABLETYPE
    # too: since 3.12 many C types are heap types (deque, defaultdict, partial, re.Pattern),
    # all immutable, which a class statement's never is
    f = t.__flags__
    return bool(f & (1 << 9)) and not f & (1 << 8)


def value_class(v: Value):
    if isinstance(v, NewObjectV):
        return v.cls
    if isinstance(v, ObjectV):
        return type(v.obj)
    if isinstance(v, ExceptionV):
        return v.cls
    if isinstance(v, TupleV) and v.cls is not tuple:
        return v.cls
    if builtin_subclass_instance(v):
        return v.cls
    if isinstance(v, CInstanceV):
        return v.cls
    return None


def builtin_subclass_instance(v: Value) -> TypeGuard[DictV | ListV]:
    """An instance of a Python subclass of dict or list made in the trace (or read as one):
    a `DictV`/`ListV` whose class's attributes are looked up over its MRO and whose
    ``__dict__`` is the value's `attrs`."""
    return isinstance(v, (DictV, ListV)) and v.cls is not dict and v.cls is not list and is_heap_type(v.cls)


# -- instances of Python subclasses of dict ---------------------------------------------------


def dict_base(cls):
    """The builtin mapping a Python subclass of dict or OrderedDict stores its items in (the
    storage the trace models), or None (dict and OrderedDict themselves, defaultdict,
    Counter's C parts, other C bases, a C ``__getattribute__`` that is not the generic one)."""
    import collections

    if not (isinstance(cls, type) and issubclass(cls, dict) and is_heap_type(cls)):
        return None
    base = next(c for c in cls.__mro__ if not is_heap_type(c))
    return base if base in (dict, collections.OrderedDict) else None


def new_dict_object(cls):
    """An empty instance of dict subclass `cls`, made without running its __init__ (the
    rebuild of one made in a trace; its items and attributes are filled after)."""
    return dict_base(cls).__new__(cls)


def fill_dict_object(obj, items, clear=False) -> None:
    """Store `items` in the dict storage of `obj`, bypassing the subclass's own
    ``__setitem__``/``update`` (what the trace recorded is the storage itself)."""
    base = dict_base(type(obj))
    if clear:
        base.clear(obj)
    for k, x in items:
        base.__setitem__(obj, k, x)


# -- instances of Python subclasses of list ---------------------------------------------------


def new_list_object(cls, items, attrs):
    """An instance of list subclass `cls` holding `items`, its ``__dict__`` updated with
    `attrs`, made without running its ``__init__`` (the rebuild of one made in a trace)."""
    obj = list.__new__(cls)
    list.extend(obj, items)
    if attrs:
        obj.__dict__.update(attrs)
    return obj


def lookup_dunder(v: Value, name: str, tx=None):
    """The Python function implementing special method `name` on v's class, as a value.
    With `tx`, what the lookup found (or that it found nothing) is guarded: the class may
    be patched before the next call."""
    cls = value_class(v)
    if isinstance(v, CInstanceV):  # a C class's instance (3.11's _json types are heap types)
        return _modelled_slot(v, name)
    if cls is None or not is_heap_type(cls):
        if builtin_subclass_instance(v):
            cls = v.cls
        elif isinstance(v, DefaultDictV):
            return _modelled_slot(v, name)
        else:
            # a C type's slot declared pure (date + timedelta): its wrapper, whose call folds
            # (`pure_c`); a static C type cannot be patched, so nothing to guard
            raw = mro_lookup(cls, name) if isinstance(v, ObjectV) and cls is not None else MISS
            return ObjectV(raw) if raw is not MISS and pure_c.lookup(raw) is not None else None
    if tx is not None:
        guard_class_lookup(tx, cls, name)
    raw = mro_lookup(cls, name)
    if isinstance(raw, types.FunctionType) or (raw is not MISS and pure_c.lookup(raw) is not None):
        return ObjectV(raw)  # a Python function, or a C slot declared pure (match[0])
    if isinstance(raw, types.WrapperDescriptorType) and raw in pure_c.SCALAR_SLOTS and isinstance(v, ObjectV):
        return ObjectV(raw)  # a builtin number's or str's operator on a subclass's instance
    return None


def operand_order(a: Value, b: Value, name: str, reflected: str, if_overloaded: bool) -> tuple:
    """The (operand, other, special method) steps of ``a op b`` in CPython's order: `b`'s
    reflected method first when b's type is a proper subclass of a's -- for an arithmetic
    operator (`if_overloaded`) only when that subclass overrides it (``method_is_overloaded``),
    for a comparison always (``do_richcompare``)."""
    order = ((a, b, name), (b, a, reflected))
    ta, tb = a.python_type(), b.python_type()
    if ta is tb or not (isinstance(ta, type) and isinstance(tb, type)) or not issubclass(tb, ta):
        return order
    if if_overloaded and mro_lookup(tb, reflected) is mro_lookup(ta, reflected):
        return order
    return order[::-1]


def _modelled_slot(v, name):
    """Special method `name` of a modelled C instance (`c_instances`), as the method object
    its model is registered under, or None (no such method, or none modelled: the caller
    breaks or falls back).  A defaultdict's are its own only: the rest are dict's, which
    the trace models on the DictV itself."""
    raw = v.cls.__dict__.get(name, MISS) if isinstance(v, DictV) else mro_lookup(v.cls, name)
    return ObjectV(raw) if raw is not MISS and raw in MODELS else None


def default_truth(obj) -> bool:
    """Objects whose truth value is True without running any code."""
    t = type(obj)
    return mro_lookup(t, "__bool__") is MISS and mro_lookup(t, "__len__") is MISS


def hashes_by_identity(obj, tx=None) -> bool:
    """Whether the real `obj` can stand for itself as a hash key: its hash and equality run
    no user code (identity, or an Enum member's, which is identity-guarded when wrapped).
    With `tx`, the lookups of its class's ``__hash__`` and ``__eq__`` are guarded."""
    t = type(obj)
    if isinstance(obj, (type, types.FunctionType, types.ModuleType, types.BuiltinFunctionType)):
        return True
    if tx is not None and is_heap_type(t):
        for name in ("__hash__", "__eq__"):
            guard_class_lookup(tx, t, name)
    if is_plain_enum_member(obj, tx):
        return True
    return mro_lookup(t, "__hash__") is object.__hash__ and mro_lookup(t, "__eq__") is object.__eq__


def is_plain_enum_member(obj, tx=None) -> bool:
    """An Enum member whose ``==`` and hash are the enum module's or a builtin base's (a
    ``str``/``int`` mixin), not code of the user's: comparing it runs nothing we must see.
    With `tx`, those lookups are guarded."""
    if not isinstance(obj, enum.Enum):
        return False
    t = type(obj)
    for name in ("__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__"):
        if tx is not None:
            guard_class_lookup(tx, t, name)
        raw = mro_lookup(t, name)
        if isinstance(raw, types.FunctionType) and raw.__module__ != "enum":
            return False
    return True


def source_of(v: Value):
    """How to fetch `v` at run time: its source, or the object itself held by identity."""
    if v.source is not None:
        return v.source
    if isinstance(v, ObjectV):
        return ConstSource(Ref(v.obj, repr(v.obj)[:60]))
    return None


def index_of(tx, v: Value):
    """operator.index(v) for constant ints (a symbolic one: its value, guarded), else None."""
    v = specialized(v)
    if isinstance(v, Const) and isinstance(v.value, int):
        return int(v.value)
    if isinstance(v, TensorV):
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, "using a tensor as a Python index reads its value")
    return None
