"""Models of the C dict kinds' own methods: ``defaultdict``, ``OrderedDict``, mappingproxy.

A defaultdict is a `c_instances.DefaultDictV`, a `DictV` that also holds its default
factory: every dict operation applies to it, and a missing key runs its C
``__missing__`` (`_missing`: the factory called, its result stored and returned; a
KeyError without one).  An OrderedDict is a `DictV` of class OrderedDict whose entries
keep their order; here are the methods that reorder it (``move_to_end``, ``popitem``
from either end).  A mappingproxy is a `mapping_proxies.ProxyDictV`: each of its methods
is its mapping's (CPython calls ``mapping.get``, ``mapping.keys``, ...), so its model is
the model of that method of the mapping's class, run on the mapping.  Each model is
registered under the C method it stands for.
"""

from __future__ import annotations

import collections
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import DefaultDictV
from ..model.mapping_proxies import ProxyDictV
from ..model.tracer import SymbolicRaise
from ..model.values import Const, DictV, ExceptionV, MadeFunctionV, MethodV, ObjectV, PartialV, TupleV
from . import dispatch, ops
from .containers import dict_update
from .folding import NotConst, as_python, raise_
from .ops import hkey
from .registry import MODELS, ctor, model

defaultdict = collections.defaultdict
OrderedDict = collections.OrderedDict


def _is_callable(v) -> bool | None:
    """Whether value `v` is callable; None when that is not known here."""
    if isinstance(v, (MadeFunctionV, MethodV, PartialV)):
        return True
    if isinstance(v, ObjectV):
        return callable(v.obj)
    if isinstance(v, Const):
        return callable(v.value)
    return None


@ctor(defaultdict)
def _new(tx, clsv, args, kwargs):
    factory = args[0] if args else Const(None)
    ok = _is_callable(factory)
    if ok is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"defaultdict of {factory.describe()}")
    if not ok and not (isinstance(factory, Const) and factory.value is None):
        raise_(TypeError, "first argument must be callable or None")
    d = DefaultDictV({}, factory)
    if len(args) > 1:
        dict_update(tx, [d, *args[1:]], {})
    if kwargs:
        dict_update(tx, [d], kwargs)
    return d


def _dd(v) -> DefaultDictV:
    if not isinstance(v, DefaultDictV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"defaultdict method on {v.describe()}")
    return v


@model(defaultdict.__missing__)
def _missing(tx, args, kwargs):
    d, key = _dd(args[0]), args[1]
    if isinstance(d.factory, Const) and d.factory.value is None:
        raise SymbolicRaise(ExceptionV(KeyError, [key]))
    value = dispatch.call(tx, d.factory, [], {})
    ops.setitem(tx, d, key, value)
    return value


@model(defaultdict.__dict__["default_factory"])
def _factory(tx, args, kwargs):
    return _dd(args[0]).factory


@model(defaultdict.copy, defaultdict.__copy__)
def _copy(tx, args, kwargs):
    d = _dd(args[0])
    return DefaultDictV(d.entries, d.factory)


@model(defaultdict.__repr__)
def _repr(tx, args, kwargs):
    d = _dd(args[0])
    factory = MODELS[repr](tx, [d.factory], {})
    try:
        items = repr({k: as_python(e[1]) for k, e in d.entries.items()})
    except NotConst:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL, "repr() of a defaultdict of values not known"
        ) from None
    if not isinstance(factory, Const):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "repr() of a defaultdict's factory")
    return Const(f"defaultdict({factory.value}, {items})")


# -- OrderedDict ----------------------------------------------------------------------------------


def _od(v) -> DictV:
    if not (isinstance(v, DictV) and issubclass(v.cls, OrderedDict)):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"OrderedDict method on {v.describe()}")
    return v


def _flag(tx, args, kwargs, name: str, default: bool = True) -> bool:
    return ops.truth(tx, args[0] if args else kwargs.get(name, Const(default)))


@model(OrderedDict.move_to_end)
def _move_to_end(tx, args, kwargs):
    d = _od(args[0])
    hk = hkey(tx, args[1])
    if hk not in d.entries:
        raise SymbolicRaise(ExceptionV(KeyError, [args[1]]))
    entry = d.entries[hk]
    rest = {k: e for k, e in d.entries.items() if k != hk}
    last = _flag(tx, args[2:], kwargs, "last")
    tx.set(d, "entries", {**rest, hk: entry} if last else {hk: entry, **rest})
    ops.touch(tx, d)
    return Const(None)


@model(OrderedDict.popitem)
def _popitem(tx, args, kwargs):
    d = _od(args[0])
    if not d.entries:
        raise_(KeyError, "dictionary is empty")
    last = _flag(tx, args[1:], kwargs, "last")
    hk = next(reversed(d.entries)) if last else next(iter(d.entries))
    entries = dict(d.entries)
    k, v = entries.pop(hk)
    tx.set(d, "entries", entries)
    ops.touch(tx, d)
    return TupleV((k, v))


# -- mappingproxy ---------------------------------------------------------------------------------


def _through_mapping(name: str):
    def run(tx, args, kwargs):
        p = args[0] if args else None
        if not isinstance(p, ProxyDictV):
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"mappingproxy.{name} of a value not known")
        cls = p.mapping.cls
        m = MODELS.get(getattr(cls, name, None))
        if m is None:
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"mappingproxy.{name} of a {cls.__name__}")
        return m(tx, [p.mapping, *args[1:]], kwargs)

    return run


@ctor(types.MappingProxyType)
def _new_proxy(tx, clsv, args, kwargs):
    """``MappingProxyType(d)`` of an exact dict: a view of that very dict."""
    if kwargs or len(args) != 1 or type(args[0]) is not DictV or args[0].cls is not dict:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "a mappingproxy of anything but a dict")
    return ProxyDictV(args[0])


_PROXY_METHODS = "__getitem__ __contains__ __len__ __iter__ __reversed__ get keys values items copy"
for _name in _PROXY_METHODS.split():
    MODELS[getattr(types.MappingProxyType, _name)] = _through_mapping(_name)
