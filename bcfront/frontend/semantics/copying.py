"""``copy.copy`` and ``copy.deepcopy`` on symbolic values, following CPython's protocol.

Builtin containers copy as ``_copy_dispatch``/``_deepcopy_dispatch`` say (a
deep copy keeps the sharing inside the value: a memo by value identity);
immutable values and functions, classes and modules are their own copies.  An
instance of a Python class goes through ``object.__reduce_ex__(4)``:
``cls.__new__(cls)``, then its ``__dict__`` (deep-copied for a deep copy)
stored without ``__setattr__``, then, for a dict subclass, its ``items()``
stored with ``y[k] = v``.  A class's own ``__copy__`` is called; anything the
protocol would run that is not modelled here (``__deepcopy__``,
``__reduce__``/``__getstate__``/``__setstate__`` of the user's, ``__slots__``,
``copyreg`` reducers, tensors) is a graph break at the call.
"""

from __future__ import annotations

import collections
import copy
import copyreg
import types
from typing import NoReturn, TypeVar

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import CInstanceV, DefaultDictV
from ..model.sources import ConstSource, Ref
from ..model.values import Const, DictV, ListV, MadeFunctionV, NewObjectV, ObjectV, SetV, TupleV, Value
from . import dispatch, ops
from .attrs import getattr_
from .classes import MISS, is_heap_type, lookup_dunder, mro_lookup
from .folding import as_python
from .iteration import to_list
from .registry import model

_ATOMIC = (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, property, range)
_OBJECT_PROTOCOL = {
    "__reduce_ex__": object.__reduce_ex__,
    "__reduce__": object.__reduce__,
    "__getstate__": getattr(object, "__getstate__", MISS),
}


V = TypeVar("V", bound=Value)


def _cannot_copy(what: str) -> NoReturn:
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"copying {what}")


class _Copier:
    def __init__(self, tx, deep: bool):
        self.tx, self.deep = tx, deep
        self.memo: dict[int, Value] = {}

    def __call__(self, v: Value) -> Value:
        if not self.deep:
            return self.copy(v)
        hit = self.memo.get(id(v))
        if hit is None:
            hit = self.copy(v)
        return hit

    def item(self, v: Value) -> Value:
        return self(v) if self.deep else v

    def keep(self, v: Value, y: V) -> V:
        if self.deep:
            self.memo[id(v)] = y
        return y

    def copy(self, v: Value) -> Value:
        if isinstance(v, (Const, MadeFunctionV)):
            return v
        if isinstance(v, ObjectV) and isinstance(v.obj, _ATOMIC):
            return v
        if isinstance(v, ListV) and v.cls is not list:  # its class and __dict__ go along
            _cannot_copy(f"a {v.cls.__qualname__} (a list subclass)")
        if isinstance(v, ListV):
            y = self.keep(v, ListV([]))
            y.items = [self.item(x) for x in v.items]
            return y
        if isinstance(v, TupleV) and v.cls is tuple:
            if not self.deep:
                return v
            items = [self(x) for x in v.items]
            if all(a is b for a, b in zip(items, v.items)):
                return v
            return self.keep(v, TupleV(items))
        if isinstance(v, SetV):
            if v.frozen and not self.deep:
                return v
            if self.deep and not all(isinstance(x, (Const, ObjectV)) for x in v.entries.values()):
                _cannot_copy("a set of objects made in the trace")  # each would be copied
            return self.keep(v, SetV(v.entries, v.frozen))  # constants and classes: themselves
        if isinstance(v, DictV) and (
            v.cls is dict or (v.cls is collections.OrderedDict and v.source is None)
        ):
            # an OrderedDict from outside may have a __dict__ (its __reduce__ copies it)
            d = self.keep(v, DictV({}, v.cls))
            d.entries = {hk: (self.item(k), self.item(x)) for hk, (k, x) in v.entries.items()}
            return d
        if isinstance(v, (NewObjectV, DictV)) or (isinstance(v, ObjectV) and is_heap_type(type(v.obj))):
            return self.instance(v)
        _cannot_copy(v.describe())

    def instance(self, v: Value) -> Value:
        """``_reconstruct(x, memo, *x.__reduce_ex__(4))`` for an instance of a Python class."""
        tx = self.tx
        cls = v.python_type()
        if not self.deep:
            own = mro_lookup(cls, "__copy__")
            if isinstance(own, types.FunctionType):
                return dispatch.call(tx, ObjectV(own), [v], {})
        if cls in copyreg.dispatch_table or mro_lookup(cls, "__deepcopy__") is not MISS:
            _cannot_copy(f"a {cls.__qualname__} (its own copy hooks)")
        for name, expected in _OBJECT_PROTOCOL.items():
            if mro_lookup(cls, name) is not expected:
                _cannot_copy(f"a {cls.__qualname__} (its own {name})")
        if any(
            mro_lookup(cls, n) is not MISS for n in ("__setstate__", "__getnewargs__", "__getnewargs_ex__")
        ):
            _cannot_copy(f"a {cls.__qualname__} (its own pickling state)")
        base = next(c for c in cls.__mro__ if not is_heap_type(c))
        if base not in (object, dict, collections.OrderedDict):
            _cannot_copy(f"a {cls.__qualname__} (a subclass of {base.__name__})")
        if any(c.__dict__.get("__slots__") for c in cls.__mro__) or cls.__dictoffset__ == 0:
            _cannot_copy(f"a {cls.__qualname__} with __slots__")
        # the instance's __getattribute__ sees the protocol's lookups: it must find object's
        reduce_ex = getattr_(tx, v, "__reduce_ex__")
        func = getattr(reduce_ex, "func", None)
        if not (isinstance(func, ObjectV) and func.obj is object.__reduce_ex__):
            _cannot_copy(f"a {cls.__qualname__} (__reduce_ex__ is not object's)")
        state = _state(tx, v)
        clsv = ObjectV(cls, ConstSource(Ref(cls, cls.__qualname__)))
        y = dispatch.call(tx, getattr_(tx, clsv, "__new__"), [clsv], {})
        if not isinstance(y, (NewObjectV, DictV)) or y.python_type() is not cls:
            _cannot_copy(f"a {cls.__qualname__} (its __new__)")
        self.keep(v, y)
        for k, x in state:
            x = self.item(x)
            if isinstance(y, NewObjectV):
                tx.set(y, "attrs", {**y.attrs, k: x})
            else:
                tx.set(y.attrs, "entries", {**y.attrs.entries, k: (Const(k), x)})
        if isinstance(v, DictV):
            for pair in to_list(tx, dispatch.call(tx, getattr_(tx, v, "items"), [], {})):
                key, x = to_list(tx, pair)
                ops.setitem(tx, y, self.item(key), self.item(x))
        return y


def _state(tx, v: Value) -> list:
    """The instance ``__dict__`` as (name, value) pairs, read directly (object.__getstate__)."""
    if isinstance(v, NewObjectV):
        return list(v.attrs.items())
    if isinstance(v, DictV):
        return [] if v.attrs is None else [(as_python(k), x) for k, x in v.attrs.entries.values()]
    d = getattr_(tx, v, "__dict__")
    if not isinstance(d, DictV):
        _cannot_copy(f"the __dict__ of {v.describe()}")
    return [(as_python(k), x) for k, x in d.entries.values()]


@model(copy.copy)
def _copy(tx, args, kwargs):
    if len(args) != 1 or kwargs:
        _cannot_copy("with these arguments")
    if isinstance(args[0], (CInstanceV, DefaultDictV)):  # its class's __copy__, as copy.copy
        m = lookup_dunder(args[0], "__copy__")
        if m is not None:
            return dispatch.call(tx, m, [args[0]], {})
    return _Copier(tx, deep=False)(args[0])


@model(copy.deepcopy)
def _deepcopy(tx, args, kwargs):
    memo = args[1] if len(args) > 1 else kwargs.get("memo", Const(None))
    if len(args) > 2 or set(kwargs) - {"memo"} or not (isinstance(memo, Const) and memo.value is None):
        _cannot_copy("with a memo")
    return _Copier(tx, deep=True)(args[0])
