"""`contextvars.ContextVar` reads inside captured code.

``var.get()`` reads the current context: the value it finds at capture time
becomes a value with a source that reads the variable again on every call
(``ContextRead.value``), so the usual guards pin it (a constant's value, an
object's identity) and writes into a mutable value are replayed through it.
``var.set(v)`` and ``var.reset(token)`` change the context and hand out
tokens, which the generated code cannot re-create at a graph break: they
are breaks with that reason, and run natively.
"""

from __future__ import annotations

import contextvars

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import ExceptionV, ObjectV
from .registry import model

UNSET = object()  # what the reader returns for a variable with no value


class ContextRead:
    """What a guard calls to read a context variable again: ``ContextRead(var).value``."""

    __slots__ = ("var",)

    def __init__(self, var: contextvars.ContextVar):
        self.var = var

    @property
    def value(self):
        try:
            return self.var.get()  # the variable's own default applies
        except LookupError:
            return UNSET

    def __repr__(self):
        return f"ContextRead({self.var.name})"


_READERS: dict = {}  # id(var) -> (var, its reader): one source per variable


def _reader(var) -> ContextRead:
    hit = _READERS.get(id(var))
    if hit is None or hit[0] is not var:
        hit = _READERS[id(var)] = (var, ContextRead(var))
    return hit[1]


@model(contextvars.ContextVar.get)
def _get(tx, args, kwargs):
    if not args or not isinstance(args[0], ObjectV) or kwargs or len(args) > 2:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "ContextVar.get with these arguments")
    var = args[0].obj
    reader = _reader(var)
    src = AttrSource(ConstSource(Ref(reader, repr(reader))), "value")
    value = reader.value
    if value is UNSET:
        tx.guard(GuardKind.ID_MATCH, src, UNSET)
        if len(args) == 2:
            return args[1]
        raise SymbolicRaise(ExceptionV(LookupError, [args[0]]))
    return wrap(tx, value, src)


def _changes_context(name):
    def m(tx, args, kwargs):
        raise UnsupportedError(
            BreakReason.CALL_TO_C_FUNCTION, f"ContextVar.{name} changes the context; it runs natively"
        )

    return m


for _name in ("set", "reset"):
    model(getattr(contextvars.ContextVar, _name))(_changes_context(_name))
