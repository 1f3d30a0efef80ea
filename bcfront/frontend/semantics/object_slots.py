"""Models of the slot methods of object, dict, tuple and BaseException that class code calls
directly: ``object.__new__(cls)``, ``dict.__new__``/``__init__`` and dict's item slots on a
dict subclass's storage (``super().__getitem__(k)``), ``list.__new__``/``__init__`` (a list
subclass instance made in the trace: a `ListV` with a class), ``tuple.__new__``,
``BaseException.__init__``, ``object.__getattribute__`` (``super().__getattribute__``) and
``function.__get__``; and ``vars(o)``, which is ``o.__dict__``.  Registered in
`registry.MODELS` when imported.
"""

from __future__ import annotations

import collections
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import guard_class_lookup, guard_list_class
from ..model.list_objects import list_base, list_subclass_shadowing
from ..model.tracer import SymbolicRaise
from ..model.values import Const, DictV, ExceptionV, ListV, MethodV, NewObjectV, ObjectV, TupleV, Value
from . import containers, dispatch, ops
from .attrs import generic_getattr, getattr_
from .classes import dict_base, lookup_dunder
from .descriptors import GENERIC_GETATTRIBUTE
from .folding import raise_
from .iteration import to_list
from .registry import MODELS, model


def object_vars(tx, v: Value) -> Value:
    """``vars(o)``: ``o.__dict__`` read as an attribute (a class's own ``__dict__`` too), its
    AttributeError a TypeError, as CPython's builtin does."""
    try:
        return getattr_(tx, v, "__dict__")
    except SymbolicRaise as e:
        if isinstance(e.exc, ExceptionV) and issubclass(e.exc.cls, AttributeError):
            raise_(TypeError, "vars() argument must have __dict__ attribute")
        raise


def as_class(v: Value):
    if isinstance(v, ObjectV) and isinstance(v.obj, type):
        return v.obj
    raise UnsupportedError(BreakReason.UNSUPPORTED_SUPER, f"super() with {v.describe()}")


_ABSTRACT = 1 << 20  # Py_TPFLAGS_IS_ABSTRACT: a class with abstract methods left (`abc`)


def new_instance(tx, cls) -> NewObjectV:
    """``object.__new__(cls)``: a new instance -- or, for an abstract class, CPython's own
    TypeError (its words differ across versions: made by CPython), guarded on the class's
    ``__abstractmethods__`` (``abc.update_abstractmethods`` may make it concrete)."""
    if cls.__flags__ & _ABSTRACT:
        guard_class_lookup(tx, cls, "__abstractmethods__")
        try:
            object.__new__(cls)
        except TypeError as e:
            raise_(TypeError, str(e))
    return NewObjectV(cls)


@model(object.__new__)
def _object_new(tx, args, kwargs):
    return new_instance(tx, as_class(args[0]))


# -- instances of dict subclasses: dict's own slots on the storage the trace models --------


@model(dict.__new__)
def _dict_new(tx, args, kwargs):
    """``dict.__new__(cls)`` (also OrderedDict's): an empty mapping of class `cls`; an
    instance of a Python subclass also gets its empty ``__dict__``."""
    cls = as_class(args[0])
    if cls is dict or cls is collections.OrderedDict:
        return DictV({}, cls)
    if dict_base(cls) is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"dict.__new__ of {cls.__qualname__}")
    return DictV({}, cls, attrs=DictV({}) if cls.__dictoffset__ else None)


def _storage(v: Value) -> DictV:
    if not isinstance(v, DictV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"dict slot on {v.describe()}")
    return v


def _raw_getitem(tx, args, kwargs):
    """``dict.__getitem__(d, k)``: the stored item (then ``__missing__``), not a
    subclass's ``__getitem__`` (which is usually the caller: ``super().__getitem__(k)``)."""
    d, key = _storage(args[0]), args[1]
    e = d.entries.get(ops.hkey(tx, key))
    if e is not None:
        return e[1]
    missing = lookup_dunder(d, "__missing__", tx) if d.cls is not dict else None
    if missing is not None:
        return dispatch.call(tx, missing, [d, key], {})
    raise SymbolicRaise(ExceptionV(KeyError, [key]))


def _raw_setitem(tx, args, kwargs):
    d, key = _storage(args[0]), args[1]
    k = ops.hkey(tx, key)
    old = d.entries.get(k)
    tx.set(d, "entries", {**d.entries, k: (old[0] if old else key, args[2])})
    ops.touch(tx, d)
    return Const(None)


def _raw_delitem(tx, args, kwargs):
    d, key = _storage(args[0]), args[1]
    k = ops.hkey(tx, key)
    if k not in d.entries:
        raise SymbolicRaise(ExceptionV(KeyError, [key]))
    entries = dict(d.entries)
    del entries[k]
    tx.set(d, "entries", entries)
    ops.touch(tx, d)
    return Const(None)


def _raw_contains(tx, args, kwargs):
    return Const(ops.hkey(tx, args[1]) in _storage(args[0]).entries)


for _base in (dict, collections.OrderedDict):
    for _name, _fn in (
        ("__getitem__", _raw_getitem),
        ("__setitem__", _raw_setitem),
        ("__delitem__", _raw_delitem),
        ("__contains__", _raw_contains),
    ):
        MODELS[getattr(_base, _name)] = _fn


@model(dict.__init__)
def _dict_init(tx, args, kwargs):
    """``dict.__init__(d, ...)``: dict's update of the storage (no subclass ``__setitem__``)."""
    containers.dict_update(tx, [_storage(args[0]), *args[1:2]], kwargs)
    return Const(None)


@model(collections.OrderedDict.__init__)
def _odict_init(tx, args, kwargs):
    """``OrderedDict.__init__(d, ...)`` stores each pair through ``d[k] = v``: a subclass's
    ``__setitem__`` runs (CPython's mutablemapping_update)."""
    d = _storage(args[0])
    pairs = DictV({})
    containers.dict_update(tx, [pairs, *args[1:2]], kwargs)
    for k, x in pairs.entries.values():
        ops.setitem(tx, d, k, x)
    return Const(None)


# -- instances of list subclasses: list's own slots on the storage the trace models ---------


@model(list.__new__)
def _list_new(tx, args, kwargs):
    """``list.__new__(cls)``: an empty list of class `cls`, with its empty ``__dict__``.  A
    subclass that defines what list's implicit reads use (``__iter__``, ``__len__``...)
    stays a break: the ListV paths implement list's meaning.  The class's lookups of
    those names are guarded (a class patched later gets a new capture)."""
    cls = as_class(args[0])
    if cls is list:
        return ListV([])
    if list_base(cls) is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"list.__new__ of {cls.__qualname__}")
    shadow = list_subclass_shadowing(cls)
    if shadow is not None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"list subclass defining {shadow}")
    guard_list_class(tx, cls)
    return ListV([], cls=cls, attrs=DictV({}) if cls.__dictoffset__ else None)


@model(list.__init__)
def _list_init(tx, args, kwargs):
    """``list.__init__(lst, iterable=())``: the storage cleared, then filled from the
    iterable (no subclass ``extend``)."""
    lst = args[0]
    if not isinstance(lst, ListV) or lst.source is not None or kwargs or len(args) > 2:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"list.__init__ of {lst.describe()}")
    items = to_list(tx, args[1]) if len(args) > 1 else []
    tx.set(lst, "items", list(items))
    return Const(None)


@model(object.__init__)
def _object_init(tx, args, kwargs):
    return Const(None)


@model(tuple.__new__)
def _tuple_new(tx, args, kwargs):
    cls = as_class(args[0])
    return TupleV(to_list(tx, args[1]) if len(args) > 1 else [], cls)


@model(BaseException.__init__)
def exc_init(tx, args, kwargs):
    exc = args[0]
    if isinstance(exc, ExceptionV):
        tx.set(exc, "args", tuple(args[1:]))
        return Const(None)
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "BaseException.__init__ on a non-exception")


def _object_getattribute(tx, args, kwargs):
    """``object.__getattribute__(o, name)`` / ``super().__getattribute__(name)`` (and the
    same generic slot inherited from dict, list, str...): the normal lookup, skipping a
    Python ``__getattribute__`` of o's class (which is usually the caller) and
    ``__getattr__``."""
    if len(args) != 2 or kwargs:
        raise_(TypeError, f"expected 2 arguments, got {len(args)}")
    name = args[1]
    if not (isinstance(name, Const) and isinstance(name.value, str)):
        raise_(TypeError, f"attribute name must be string, not '{name.python_type().__name__}'")
    return generic_getattr(tx, args[0], name.value)


for _ga in GENERIC_GETATTRIBUTE:
    MODELS[_ga] = _object_getattribute


@model(types.FunctionType.__get__)
def _function_get(tx, args, kwargs):
    fn, inst = args[0], args[1]
    if isinstance(inst, Const) and inst.value is None:
        return fn
    return MethodV(fn, inst)
