"""Calling an Enum class: ``Color(1)``, ``Perm(6)``, and Flag operators that call it.

``EnumType.__call__`` with one value looks the member up (``Enum.__new__``: the value
map, then ``_missing_``).  When the class keeps the enum module's own ``__new__`` and
``_missing_`` and the value is a constant (or a member), the answer depends on the class
and the value alone: members are fixed once the class exists, and a Flag's composite
members are made once and cached.  So the lookup runs at capture time, for real, and
the member is a constant of the entry (identity, as enum members compare); a
ValueError it raises is the trace's, in CPython's words.  Other calls (the functional
API, keywords, a ``_missing_`` of the user's) inline ``EnumType.__call__`` itself.
"""

from __future__ import annotations

import enum
import types

from ..model.builder import guard_class_lookup, wrap
from ..model.sources import ConstSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import Const, ExceptionV, ObjectV
from . import dispatch
from .classes import mro_lookup

# the enum module's own lookup steps: a class keeping them runs no code of the user's
_OWN_MISSING = frozenset(c.__dict__["_missing_"].__func__ for c in (enum.Enum, enum.Flag))


def _plain_lookup(cls) -> bool:
    missing = mro_lookup(cls, "_missing_")
    return (
        mro_lookup(cls, "__new__") is enum.Enum.__dict__["__new__"]
        and isinstance(missing, classmethod)
        and missing.__func__ in _OWN_MISSING
    )


def enum_call(tx, clsv: ObjectV, args, kwargs):
    """``cls(*args, **kwargs)`` for an Enum class `cls` whose metaclass is EnumType."""
    cls = clsv.obj
    meta_call = mro_lookup(type(cls), "__call__")
    for name in ("__new__", "_missing_"):
        guard_class_lookup(tx, cls, name)
    if len(args) == 1 and not kwargs and _plain_lookup(cls):
        v = args[0]
        if isinstance(v, Const) or (isinstance(v, ObjectV) and type(v.obj) is cls):
            try:
                member = cls(v.value if isinstance(v, Const) else v.obj)
            except (ValueError, TypeError) as e:
                raise SymbolicRaise(ExceptionV(type(e), [Const(str(e))])) from None
            return wrap(tx, member, ConstSource(Ref(member, repr(member)[:60])), guard=False)
    if not isinstance(meta_call, types.FunctionType):
        return None
    return dispatch.call(tx, ObjectV(meta_call), [clsv, *args], kwargs)
