"""Calls of ``functools.lru_cache`` functions in captured code: the cache is observable.

Tracing the wrapped code would repeat its side effects on every call of the entry (a
``warning_once`` warning each time), where the native call runs it once and then answers
from the cache.  An unbounded cache's call on values known at capture is made for real then
(`lru_cached`), unless it is a procedure, made after the region
(`deferred_calls.defer_cached_procedure`); a bounded one, which may drop entries, is traced
only when its code writes nothing outside and returns a value that differs from the cached
object only by identity, or a self-filling memo's lookup (`_bounded`, `memo_lookups`);
anything else breaks.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from ..model.guard_kinds import GuardKind
from ..model.guards import Guard
from ..model.sources import AttrSource, CallSource, ConstSource, Ref
from ..model.values import Const, MethodV, ObjectV, RuntimeV, SetV, TupleV, Value, specialized_deep
from . import dispatch
from .deferred_calls import defer_cached_procedure, is_literal_tree
from .folding import as_python, python_args
from .memo_lookups import memo_lookup
from .pure_c import IMMUTABLE_OBJECTS


def lru_cached(wrapper):
    """A call of a ``functools.lru_cache`` function (unbounded) on values known now: made
    for real at capture, so the cache holds it -- as the native call would leave it -- and
    its result (the very object the cache keeps) is a constant of the entry, guarded on the
    cache's size (``cache_clear()``
    makes the next call capture, and run the function, again).  Tracing the wrapped code
    instead would repeat its side effects on every call (``warning_once`` warning each
    time); anything else breaks."""

    def model(tx, args, kwargs):
        args = [specialized_deep(a) for a in args]  # a symbolic int is a cache key: its value
        kwargs = {k: specialized_deep(v) for k, v in kwargs.items()}
        what = f"{getattr(wrapper, '__qualname__', 'a function')} (functools.lru_cache)"
        c_call = BreakReason.CALL_TO_C_FUNCTION
        if wrapper.cache_parameters()["maxsize"] is not None:  # it may drop an entry unseen
            return _bounded(tx, wrapper, what, args, kwargs)
        pa, pk = python_args(args, kwargs, c_call, f"{what} on values known at run time", _known)
        deferred = defer_cached_procedure(tx, wrapper, pa, pk, args, kwargs)
        if deferred is not None:  # a procedure (``warning_once``): made after the region
            return deferred
        if tx.mutated:  # the writes the region replays at its end would land after its effects
            raise UnsupportedError(c_call, f"{what} after writes to outside objects")
        try:
            out = wrapper(*pa, **pk)
        except Exception:  # noqa: BLE001 - not cached: the native call raises (again) at its place
            raise UnsupportedError(c_call, f"{what} raised") from None
        # the cache's size after the last such call of the capture is what the entry relies on
        infos = tx.__dict__.setdefault("lru_cache_info", {})  # per capture: one Ref, one guard key
        info = infos.get(id(wrapper))
        if info is None:
            name = getattr(wrapper, "__qualname__", "lru_cache")
            info = infos[id(wrapper)] = Ref(wrapper.cache_info, f"{name}.cache_info")
        size = AttrSource(CallSource(info), "currsize")
        tx.guards.restate(Guard(GuardKind.CONSTANT_MATCH, size, wrapper.cache_info().currsize))
        if is_literal_tree(out):
            return Const(out)
        # the object the cache holds (and hands every later call): by identity, as natively
        return wrap(tx, out, ConstSource(Ref(out, f"{what} result")))

    return model


def _bounded(tx, wrapper, what: str, args, kwargs) -> Value:
    """A bounded cache may have dropped this call's entry, so whether the function runs is
    not known: its code is traced, which is right only for a function that writes nothing
    outside (checked) and returns a value that differs from the cached object only by identity
    (`_differs_only_by_identity`: ``urlsplit``'s SplitResult, fnmatch's matcher), or the
    lookup of a memo that fills itself, used only by calls (`memo_lookups`: ``quote``'s
    quoter).  Anything else breaks."""
    fn = getattr(wrapper, "__wrapped__", None)
    if not isinstance(fn, types.FunctionType):
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{what}: a bounded cache")
    writes = len(tx.mutated)
    out = dispatch.inline_call(tx, ObjectV(fn), args, kwargs)
    if len(tx.mutated) != writes:
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{what}: a bounded cache over writes")
    if not _differs_only_by_identity(out):
        memo = memo_lookup(out)  # a self-filling memo's lookup (quote's): used only by calls
        if memo is not None:
            return memo
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{what}: a bounded cache returning an object")
    return out


def _differs_only_by_identity(v: Value) -> bool:
    """Whether `v`, the result of the cached function's code traced, would differ from the
    object a cache hit hands back only by its identity: the rule for tracing a bounded cache.

    Natively a hit returns the very object the miss made; traced, every call makes its own.
    Only ``is`` and ``id`` tell the two apart when neither can change nor holds anything that
    can, so no call can see what an earlier one did to it: a constant, a frozenset (its
    entries are constants), a tuple of such values (or an instance of a tuple class without an
    instance dict: namedtuple, structseq), or a C method bound to an object of a type that
    never changes (``re.compile(p).match``, fnmatch's cached matcher: made again, it does
    what the cached one does).  Anything else -- a list, dict or set, a tuple holding one, a
    method bound to a dict, any other object -- may be changed through one result and the
    change seen through the next natively, never when traced: refused."""
    check = _IDENTITY_ONLY.get(type(v))
    return check is not None and check(v)


def _immutable_tuple(v: TupleV) -> bool:
    return (v.cls is tuple or v.cls.__dictoffset__ == 0) and all(map(_differs_only_by_identity, v.items))


def _immutable_method(v: MethodV) -> bool:
    if not (isinstance(v.obj, ObjectV) and isinstance(v.func, ObjectV)):
        return False
    owner = type(v.obj.obj)
    return (
        owner in IMMUTABLE_OBJECTS
        and isinstance(v.func.obj, types.MethodDescriptorType)
        and v.func.obj.__objclass__ is owner
    )


# value class -> whether a value of it differs from the cached object only by identity
_IDENTITY_ONLY: dict[type, Callable[[Any], bool]] = {
    Const: lambda v: True,  # immutable by construction
    RuntimeV: lambda v: True,  # a scalar known at run time: immutable too
    SetV: lambda v: v.frozen,
    TupleV: _immutable_tuple,
    MethodV: _immutable_method,
}


def _known(v: Value):
    """The real object a value stands for when it is known now: a constant, an object from
    outside, a tuple of them (NotConst otherwise)."""
    if isinstance(v, ObjectV):
        return v.obj
    if isinstance(v, TupleV) and v.cls is tuple:
        return tuple(_known(x) for x in v.items)
    return as_python(v)
