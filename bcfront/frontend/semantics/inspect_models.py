"""``inspect.signature`` / ``inspect.unwrap`` of a function, folded at capture under guards.

A Python function's signature is a function of a few of its attributes: the
``__wrapped__`` chain (and ``__signature__``, ``_partialmethod``) in each
``__dict__``, then the last function's ``__code__``, ``__defaults__``,
``__kwdefaults__`` and ``__annotations__``.  `signature` guards exactly those
(presence or absence of the names, the identity of each object and of each
item of the two dicts) and computes the real ``inspect.signature`` once; the
``Signature`` is immutable, so the traced code holds it as an object.  Its
``parameters`` (a read-only ``mappingproxy`` of an immutable mapping) becomes a
symbolic mappingproxy (`mapping_proxies.ProxyDictV`) over its mapping: ``len``,
iteration, ``in``, ``[]``, ``keys/values/items/get`` are the mapping's; a store raises.
`unwrap` follows the same guarded chain (no ``stop`` callback).  Other callables
(classes, partials, objects with ``__call__``) run the real code, inlined.
"""

from __future__ import annotations

import inspect
import types
from typing import cast

from ..model.builder import wrap
from ..model.guard_kinds import GuardKind
from ..model.mapping_proxies import ProxyDictV, proxied
from ..model.sources import AttrSource, ItemSource
from ..model.values import Const, DictV, MadeFunctionV, MethodV, ObjectV, Value
from . import dispatch
from .classes import source_of
from .folding import NotConst, as_python, as_symbolic, from_python
from .registry import MODELS

_MAX_CHAIN = 64  # longer __wrapped__ chains run the real code (its recursion-limit check)
_MARKS = ("__wrapped__", "__signature__", "_partialmethod")


def _guard_dict(tx, src, d) -> None:
    """A small dict of a function (``__kwdefaults__``, ``__annotations__``): same length,
    same object under each key."""
    if d is None:
        return
    tx.guard(GuardKind.LENGTH, src, len(d))
    for k, x in d.items():
        if not isinstance(k, str):
            raise NotConst(k)
        tx.guard(GuardKind.ID_MATCH, ItemSource(src, k), x)


def _chain(tx, fv: ObjectV, *, signature: bool, follow: bool = True):
    """Follow ``__wrapped__`` from function `fv` under guards (`follow`); the last function
    and its source, or None when the chain leaves plain functions (the caller runs the real
    code).  For `signature`, a ``__signature__`` stops the chain, as in inspect."""
    fn, src = fv.obj, source_of(fv)
    marks: tuple[str, ...] = _MARKS if signature else ("__wrapped__",)
    if not follow:
        marks = marks[1:]
    for _ in range(_MAX_CHAIN):
        d = fn.__dict__
        for name in marks:
            if name not in d:
                tx.guard(GuardKind.NOT_PRESENT, AttrSource(src, "__dict__"), None, name)
        if "_partialmethod" in d and signature:
            return None
        if signature and "__signature__" in d:
            tx.guard(GuardKind.ID_MATCH, AttrSource(src, "__signature__"), d["__signature__"])
            return fn, src
        if not follow or "__wrapped__" not in d:
            return fn, src
        nxt = d["__wrapped__"]
        if not isinstance(nxt, types.FunctionType):
            return None
        src = AttrSource(src, "__wrapped__")
        tx.guard(GuardKind.ID_MATCH, src, nxt)
        fn = nxt
    return None


def _guard_body(tx, fn, src) -> None:
    for name in ("__code__", "__defaults__"):
        tx.guard(GuardKind.ID_MATCH, AttrSource(src, name), getattr(fn, name))
    tx.guard(GuardKind.ID_MATCH, AttrSource(src, "__kwdefaults__"), fn.__kwdefaults__)
    _guard_dict(tx, AttrSource(src, "__kwdefaults__"), fn.__kwdefaults__)
    tx.guard(GuardKind.ID_MATCH, AttrSource(src, "__annotations__"), fn.__annotations__)
    _guard_dict(tx, AttrSource(src, "__annotations__"), fn.__annotations__)


def outside_function(tx, v: Value) -> Value:
    """`v`, or for an outside function a continuation received by its code (a
    `MadeFunctionV` with a source, `cells.function_by_code`), the function itself: its
    source's guards (code, globals, defaults) already hold it."""
    if isinstance(v, MadeFunctionV) and v.source is not None:
        real = next((o for o in tx.keepalive if tx.by_id.get(id(o)) is v), None)
        if isinstance(real, types.FunctionType):
            return ObjectV(real, v.source)
    return v


def _signature(tx, args, kwargs):
    real = inspect.signature
    try:
        opts = {k: as_python(v) for k, v in kwargs.items()}
    except NotConst:
        return dispatch.inline_call(tx, ObjectV(real), args, kwargs)
    plain = (
        len(args) == 1
        and set(opts) <= {"follow_wrapped", "globals", "locals", "eval_str"}
        and opts.get("globals") is None
        and opts.get("locals") is None
        and not opts.get("eval_str", False)
    )
    target = args[0] if args else None
    bound = isinstance(target, MethodV)
    fv = outside_function(tx, target.func if bound else target)
    if not (plain and isinstance(fv, ObjectV) and isinstance(fv.obj, types.FunctionType)):
        return dispatch.inline_call(tx, ObjectV(real), args, kwargs)
    follow = bool(opts.get("follow_wrapped", True))
    try:
        found = _chain(tx, fv, signature=True, follow=follow)
        if found is None:
            return dispatch.inline_call(tx, ObjectV(real), args, kwargs)
        fn, src = found
        if fn.__dict__.get("__signature__") is None:  # computed from the function itself
            _guard_body(tx, fn, src)
    except NotConst:
        return dispatch.inline_call(tx, ObjectV(real), args, kwargs)
    obj = types.MethodType(fv.obj, _BOUND) if bound else fv.obj
    try:
        sig = real(obj, **opts)
    except Exception as e:  # noqa: BLE001 - what Python raises, symbolically
        raise as_symbolic(e) from None
    return from_python(sig)


class _Bound:
    """The ``self`` of a bound method whose signature is asked: never read."""


_BOUND = _Bound()


def _unwrap(tx, args, kwargs):
    if len(args) != 1 or kwargs:  # a stop callback: the real code, inlined
        return dispatch.inline_call(tx, ObjectV(inspect.unwrap), args, kwargs)
    fv = outside_function(tx, args[0])
    if not (isinstance(fv, ObjectV) and isinstance(fv.obj, types.FunctionType)):
        return dispatch.inline_call(tx, ObjectV(inspect.unwrap), args, kwargs)
    found = _chain(tx, fv, signature=False)
    if found is None:
        return dispatch.inline_call(tx, ObjectV(inspect.unwrap), args, kwargs)
    fn, src = found
    return args[0] if fn is fv.obj else wrap(tx, fn, src)


def _parameters(tx, args, kwargs):
    """``Signature.parameters``: a read-only mapping of an immutable Signature's own."""
    sv = args[0] if len(args) == 1 and not kwargs else None
    if not (isinstance(sv, ObjectV) and type(sv.obj) is inspect.Signature):
        return dispatch.inline_call(tx, ObjectV(_PARAMETERS_GET), args, kwargs)
    return parameters_value(tx, sv.obj)


def parameters_value(tx, sig: inspect.Signature) -> Value:
    """The symbolic ``sig.parameters``: a mapping of class mappingproxy (stores raise), one
    per Signature (``sig.parameters is sig.parameters``)."""
    real = sig.parameters
    v = tx.by_id.get(id(real))
    if v is None:
        entries = {k: (Const(k), ObjectV(p)) for k, p in real.items()}
        v = ProxyDictV(DictV(entries, cls=type(proxied(real))))
        tx.by_id[id(real)] = v
        tx.keepalive.append(real)
    return v


_PARAMETERS_GET = cast(property, inspect.Signature.parameters).fget

MODELS[inspect.signature] = _signature
MODELS[inspect.unwrap] = _unwrap
MODELS[_PARAMETERS_GET] = _parameters
