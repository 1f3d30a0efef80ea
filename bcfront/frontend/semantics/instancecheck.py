"""`isinstance` and `issubclass` as CPython runs them (issue 25, item 9).

The order is CPython's: the exact-type shortcut; a tuple (or a union) item by item;
then the metaclass's ``__instancecheck__``/``__subclasscheck__``.  ``type``'s own checks
read the MRO and an overridden ``__class__`` (a property such as
``Mock(spec=nn.Linear)``'s, traced like any attribute read); ABCMeta's read the ABC's
registry and caches, answered at capture time and guarded by `AbcAnswers` (below); a
metaclass check in Python is traced, so a guard covers what it reads; one in C breaks
the graph.
"""

from __future__ import annotations

import abc
import types
import typing

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import guard_class_lookup
from ..model.guard_kinds import GuardKind
from ..model.sources import RecheckedSource, Ref
from ..model.values import Const, ObjectV, TupleV, Value
from . import dispatch, ops
from .attrs import getattr_
from .classes import MISS, is_heap_type, mro_lookup
from .folding import as_python, fold

_TYPE_CHECKS = (type.__dict__["__instancecheck__"], type.__dict__["__subclasscheck__"])
_ABC_CHECKS = (abc.ABCMeta.__dict__["__instancecheck__"], abc.ABCMeta.__dict__["__subclasscheck__"])
_OBJECT_CLASS = object.__dict__["__class__"]
_TOKEN = Ref(abc.get_cache_token, "abc.get_cache_token")
_UNSETTLED = None  # an answer no check equals: the trace saw two, or an exception


class AbcAnswers:
    """The ABCMeta answers one capture relied on, as its guard checks them: true while abc's
    cache token (which every ``register`` anywhere changes) is the one they were last
    checked under; else each is asked again, and where all are unchanged the new token is
    remembered.  A registration that changes none of them -- a module imported lazily, by
    the program or by torch during a later capture (networkx registers a Mapping on the
    first symbolic int) -- costs one re-check, not a recapture; one that changes an answer
    fails the guard.  (The token is read before the answers are asked, so a registration
    racing the check leaves an older token: the next call asks again.)  It holds classes
    only, never an instance."""

    __slots__ = ("answers", "version")

    def __init__(self):
        self.version = abc.get_cache_token()
        self.answers: dict[tuple, object] = {}  # (fn, *classes) -> the bool the trace used

    def note(self, key: tuple, found: object) -> None:
        if self.answers.setdefault(key, found) is not found:
            self.answers[key] = _UNSETTLED  # answered both ways in one trace

    def __call__(self) -> bool:
        token = abc.get_cache_token()
        if token == self.version:
            return True
        try:
            if any(bool(fn(*args)) is not found for (fn, *args), found in self.answers.items()):
                return False
        except Exception:  # noqa: BLE001 - a check that raises now: the guard fails
            return False
        self.version = token
        return True


def class_infos(v: Value) -> list[tuple[object, Value]]:
    """The classes of a classinfo argument, each with a value standing for it, flattened
    (nested tuples and unions are checked item by item, as CPython does)."""
    if isinstance(v, ObjectV) and isinstance(v.obj, type):
        return [(v.obj, v)]
    if isinstance(v, TupleV):
        return [ci for x in v.items for ci in class_infos(x)]
    if isinstance(v, Const) and isinstance(v.value, tuple):
        return [ci for x in v.value for ci in class_infos(ObjectV(x) if isinstance(x, type) else Const(x))]
    if isinstance(v, ObjectV) and type(v.obj).__name__ in ("UnionType", "_UnionGenericAlias"):
        args = typing.get_args(v.obj)
        if all(isinstance(a, type) for a in args):
            return [(a, ObjectV(a)) for a in args]
    raise UnsupportedError(BreakReason.UNSUPPORTED_ISINSTANCE, f"isinstance with {v.describe()}")


def _meta_check(tx, cls, which: int):
    """The metaclass's ``__instancecheck__`` (which=0) or ``__subclasscheck__`` (1), its
    lookup guarded when the metaclass is a Python class."""
    meta = type(cls)
    name = ("__instancecheck__", "__subclasscheck__")[which]
    if is_heap_type(meta):
        guard_class_lookup(tx, meta, name)
    return mro_lookup(meta, name)


def _abc_answer(tx, fn, *args) -> bool:
    """ABCMeta's answer, computed now: it depends on the registries, which the capture's
    `AbcAnswers` (guarded) checks, and on the classes, which are guarded already."""
    answers = tx.abc_answers
    if answers is None:
        answers = tx.abc_answers = AbcAnswers()
        tx.guard(GuardKind.CONSTANT_MATCH, RecheckedSource(_TOKEN, Ref(answers, "abc_answers_hold")), True)
    key = (fn, *args)
    try:
        found = bool(as_python(fold(fn, *args)))
    except BaseException:
        answers.note(key, _UNSETTLED)
        raise
    answers.note(key, found)
    return found


def _call_check(tx, check, cls_v: Value, arg: Value, name: str) -> bool:
    if not isinstance(check, types.FunctionType):
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ISINSTANCE,
            f"{name} with a metaclass {getattr(check, '__qualname__', check)!s} written in C",
        )
    return ops.truth(tx, dispatch.call(tx, ObjectV(check), [cls_v, arg], {}))


def _class_attr(tx, v: Value, t: type):
    """``v.__class__`` (CPython reads it as an attribute, after the type): `t` unless the
    class overrides ``__class__`` or ``__getattribute__``."""
    if not is_heap_type(t):
        return t
    guard_class_lookup(tx, t, "__class__")
    guard_class_lookup(tx, t, "__getattribute__")
    if mro_lookup(t, "__class__") is _OBJECT_CLASS and mro_lookup(t, "__getattribute__") in (
        MISS,
        object.__getattribute__,
    ):
        return t
    c = getattr_(tx, v, "__class__")
    if isinstance(c, ObjectV) and isinstance(c.obj, type):
        return c.obj
    if isinstance(c, Const):
        return c.value if isinstance(c.value, type) else t
    raise UnsupportedError(BreakReason.UNSUPPORTED_ISINSTANCE, f"isinstance with __class__ {c.describe()}")


def instance_of(tx, v: Value, info: Value) -> bool:
    t = v.python_type()
    for cls, cls_v in class_infos(info):
        if t is cls:
            return True
        check = MISS if type(cls) is type else _meta_check(tx, cls, 0)
        if check is MISS or check is _TYPE_CHECKS[0]:
            if cls in t.__mro__:
                return True
            c = _class_attr(tx, v, t)
            found = c is not t and cls in c.__mro__
        elif check is _ABC_CHECKS[0]:
            c = _class_attr(tx, v, t)
            found = _abc_answer(tx, issubclass, t, cls)
            found = found or (c is not t and _abc_answer(tx, issubclass, c, cls))
        else:
            found = _call_check(tx, check, cls_v, v, "isinstance")
        if found:
            return True
    return False


def subclass_of(tx, derived: Value, info: Value) -> bool:
    if not (isinstance(derived, ObjectV) and isinstance(derived.obj, type)):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ISINSTANCE, f"issubclass of {derived.describe()}")
    sub, sub_v = derived.obj, derived
    for cls, cls_v in class_infos(info):
        check = MISS if type(cls) is type else _meta_check(tx, cls, 1)
        if check is MISS or check is _TYPE_CHECKS[1]:
            found = bool(as_python(fold(issubclass, sub, cls)))
        elif check is _ABC_CHECKS[1]:
            found = _abc_answer(tx, issubclass, sub, cls)
        else:
            found = _call_check(tx, check, cls_v, sub_v, "issubclass")
        if found:
            return True
    return False
