"""`contextvars.ContextVar` reads inside captured code.

``var.get()`` reads the current context: the value it finds at capture time
becomes a value with a source that reads the variable again on every call
(``ContextRead.value``), so the usual guards pin it (a constant's value, an
object's identity) and writes into a mutable value are replayed through it.
``var.set(v)`` and ``var.reset(token)`` are modelled: the trace keeps a log
of them (`ContextLogV`, journaled), ``get`` after a ``set`` sees the value
set, ``set`` hands out a symbolic token (`ContextTokenV`) holding the value
it replaced.  The region replays the log for real, in order, after its graph
(`ContextLogV.replay_ops`); a token that outlives the region (handed to a
continuation at a break, returned) is the real token that replayed ``set``
returned (`ContextTokenV.rebuild` replays the log up to its ``set`` first).
A token reset twice, or with another variable, breaks so that the call raises
natively; a real token from before the region (a continuation's input) is
reset with its ``old_value`` read under a guard.
"""

from __future__ import annotations

import contextvars

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import Const, ExceptionV, ObjectV, Value
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


class ContextLogV(Value):
    """The trace's ``set``/``reset`` calls, in order: ``("set", var, value, token)`` and
    ``("reset", var, token)``; one per trace, marked mutated so the region replays it."""

    __slots__ = ("ops",)

    def __init__(self):
        super().__init__(None)
        self.ops = ()

    def python_type(self):
        return type(None)

    def describe(self):
        return "ContextVar writes"

    def flush(self, rb, upto: int) -> None:
        """Emit the ops not yet emitted, up to index `upto` included."""
        done = getattr(rb, "context_ops_done", 0)
        for i in range(done, upto + 1):
            op = self.ops[i]
            var = rb.ns.const(op[1], "context_var")
            if op[0] == "set":
                rb.temp(f"{var}.set({rb.expr(op[2])})", op[3], "token")
            else:
                rb.emit(f"{var}.reset({rb.expr(op[2])})")
            rb.context_ops_done = i + 1

    def replay_ops(self, rb) -> None:
        self.flush(rb, len(self.ops) - 1)


class ContextTokenV(Value):
    """A token made by ``var.set`` in the trace: `old` is the value it replaced (a value, or
    UNSET), `index` its op in `log`; `used` once reset."""

    __slots__ = ("var", "old", "log", "index", "used")

    def __init__(self, var, old, log, index):
        super().__init__(None)
        self.var, self.old, self.log, self.index, self.used = var, old, log, index, False

    def python_type(self):
        return contextvars.Token

    def describe(self):
        return f"Token({self.var.name})"

    def rebuild(self, rb) -> str:
        self.log.flush(rb, self.index)
        return rb.memo[id(self)]


_LOG = "context_var_log"


def _log(tx) -> ContextLogV:
    return tx.trace_value(_LOG, ContextLogV)


def _var_default(var):
    """What ``var.get()`` gives with no value set: its default, or UNSET."""
    try:
        return contextvars.Context().run(var.get)
    except LookupError:
        return UNSET


def _current(tx, var, var_v):
    """The variable's value now (a value, or UNSET), and whether the trace wrote it."""
    log = getattr(tx, _LOG, None)
    for op in reversed(log.ops if log is not None else ()):
        if op[1] is not var:
            continue
        if op[0] == "set":
            return op[2]
        tok = op[2]
        if isinstance(tok, ContextTokenV):
            old = tok.old
        else:
            old = wrap(tx, tok.obj.old_value, AttrSource(tok.source, "old_value"))
            if isinstance(old, ObjectV) and old.obj is contextvars.Token.MISSING:
                old = UNSET
        if old is UNSET:
            default = _var_default(var)
            if default is UNSET:
                return UNSET
            if type(default) not in (int, float, str, bool, bytes, type(None)):
                raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "ContextVar.get of a reset variable")
            return Const(default)
        return old
    return _read(tx, var_v)


def _read(tx, var_v):
    var = var_v.obj
    reader = _reader(var)
    src = AttrSource(ConstSource(Ref(reader, repr(reader))), "value")
    value = reader.value
    if value is UNSET:
        tx.guard(GuardKind.ID_MATCH, src, UNSET)
        return UNSET
    return wrap(tx, value, src)


def _var_arg(args, kwargs, n, what):
    if not args or not isinstance(args[0], ObjectV) or kwargs or len(args) > n:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"ContextVar.{what} with these arguments")
    return args[0]


@model(contextvars.ContextVar.get)
def _get(tx, args, kwargs):
    var_v = _var_arg(args, kwargs, 2, "get")
    value = _current(tx, var_v.obj, var_v)
    if value is UNSET:
        if len(args) == 2:
            return args[1]
        raise SymbolicRaise(ExceptionV(LookupError, [var_v]))
    return value


@model(contextvars.ContextVar.set)
def _set(tx, args, kwargs):
    var_v = _var_arg(args, kwargs, 2, "set")
    if len(args) != 2:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "ContextVar.set without a value")
    var = var_v.obj
    old = _current(tx, var, var_v)
    log = _log(tx)
    tok = ContextTokenV(var, old, log, len(log.ops))
    tx.set(log, "ops", log.ops + (("set", var, args[1], tok),))
    return tok


@model(contextvars.ContextVar.reset)
def _reset(tx, args, kwargs):
    var_v = _var_arg(args, kwargs, 2, "reset")
    if len(args) != 2:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "ContextVar.reset without a token")
    var, tok = var_v.obj, args[1]
    if isinstance(tok, ContextTokenV):
        if tok.used or tok.var is not var:
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION,
                "ContextVar.reset of a used or foreign token raises natively",
            )
        tx.set(tok, "used", True)
    elif isinstance(tok, ObjectV) and isinstance(tok.obj, contextvars.Token) and tok.source is not None:
        owner = wrap(tx, tok.obj.var, AttrSource(tok.source, "var"))
        if not (isinstance(owner, ObjectV) and owner.obj is var):
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION,
                "ContextVar.reset of another variable's token raises",
            )
    else:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"ContextVar.reset of {tok.describe()}")
    log = _log(tx)
    tx.set(log, "ops", log.ops + (("reset", var, tok),))
    return Const(None)
