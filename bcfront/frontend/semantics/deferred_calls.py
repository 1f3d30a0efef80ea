"""Calls a region makes for real after its graph: logging, whose only effect is output.

A ``Logger.debug/info/warning/error/critical/log`` call on values known at capture is not
traced (logging walks the real stack to name its caller, and reads levels, handlers and the
clock): it is recorded, with the caller's place taken from the trace, and made for real after
the region's writes (`CallLogV.replay_ops`) the way ``Logger._log`` makes it: `emit_log`
asks ``isEnabledFor`` then, and hands ``makeRecord`` that place.  Its result is None.  On
values not known at capture the logging code is traced as any other.

An unbounded ``functools.lru_cache`` function called on known values whose wrapped code does
nothing but such calls and returns None -- a procedure, transformers' ``warning_once`` -- is
recorded as one call of the cached function itself (`defer_cached_procedure`): its cache
decides at run time, as natively, whether the wrapped code runs, and the entry needs no
guard on the cache.

Making a call later is right only when nothing it reads changes between its place and the
region's end.  A write the region makes after a recorded call to a logging object (logger,
handler, filter, formatter, manager), to the ``logging`` or ``sys`` module, or to an
object or module the recorded procedure was handed or lives in -- and, after a cached
procedure that may read containers, to any outside list, dict or set (its code may read a
config dict) -- breaks the graph at that write (a write watcher, `Tracer.write_watchers`),
so the call is made before it.  A procedure reads no container when its code is straight
logger calls (`plain_logging_code`: no jump, subscript, ``in``, loop or other call, its
``*args``/``**kwargs`` only passed on) and its trace ran no other Python code and recorded
one logging call per call instruction: transformers' ``warning_once``.
"""

from __future__ import annotations

import dis
import inspect
import logging
import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from ..model.effects import DEFERRED_CALL
from ..model.frame import decoded
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, ItemSource, Ref
from ..model.values import Const, DictV, ListV, ObjectV, SetV, Value
from . import dispatch
from .folding import NotConst, as_python
from .registry import MODELS

_LOG = "deferred_call_log"
_WATCHED_TYPES = (
    logging.Filterer,
    logging.Filter,
    logging.Formatter,
    logging.Manager,
    logging.PlaceHolder,
)


class CallLogV(Value):
    """The calls recorded in the trace, in order: ``(function, args)`` of known values;
    one per trace, marked mutated so the region makes them after its writes."""

    __slots__ = ("calls", "watched", "reads_containers")

    def __init__(self):
        super().__init__(None)
        self.calls: tuple = ()
        self.watched: frozenset = frozenset()  # ids of objects a later write must not touch
        self.reads_containers = False  # a recorded call may read any outside list/dict/set

    def python_type(self):
        return type(None)

    def describe(self):
        return "calls made after the region"

    def describe_effect(self) -> tuple[str, str]:
        """The effect log's (kind, target) of the call just recorded."""
        fn, args = self.calls[-1]
        if fn is emit_log:
            logger, level, _, msg = args[:4]
            return DEFERRED_CALL, f"{logging.getLevelName(level).lower()} on logger {logger.name!r}: {msg!r}"
        return DEFERRED_CALL, f"{getattr(fn, '__qualname__', fn)}{args!r}"

    def replay_ops(self, rb) -> None:
        ns = rb.ns
        for fn, args in self.calls:  # after every write: `positions` come last
            rb.positions.append(f"{ns.const(fn, 'deferred')}(*{ns.const(args, 'deferred_args')})")


def _log(tx) -> CallLogV:
    if getattr(tx, _LOG, None) is None:
        tx.set(tx, "write_watchers", (*tx.write_watchers, _watch))
    return tx.trace_value(_LOG, CallLogV, mutated=False)  # (`record` marks it, per call)


def record(tx, fn, args: tuple, watched=(), reads_containers: bool | None = None) -> Const:
    """Record ``fn(*args)`` (values known now) to be made after the region; None.
    `reads_containers`: whether the call may read an outside list, dict or set (unsaid: a
    logging call reads none, anything else may)."""
    log = _log(tx)
    if reads_containers is None:
        reads_containers = not (fn is emit_log or _is_api_log(fn))
    tx.set(log, "calls", (*log.calls, (fn, args)))
    tx.set(log, "watched", log.watched | {id(o) for o in watched})
    if reads_containers and not log.reads_containers:
        tx.set(log, "reads_containers", True)
    tx.mark_mutated(log)  # in the effect log explain shows, at its place
    return Const(None)


def _watch(tx, value) -> None:
    """Break at a write that a recorded call could read (see the module docstring)."""
    log = getattr(tx, _LOG, None)
    if log is None or not log.calls:
        return
    if isinstance(value, (ListV, DictV, SetV)) and value.source is not None:
        if log.reads_containers:
            # a cached procedure's code may read any outside container (a config dict)
            raise UnsupportedError(
                BreakReason.WRITE_AFTER_LOGGING,
                f"a write to {value.describe()} after a cached logging procedure the region makes at its end",
            )
        return
    if not isinstance(value, ObjectV):
        return
    obj = value.obj
    if (
        isinstance(obj, _WATCHED_TYPES)
        or obj is logging
        or obj is sys
        or obj is logging.__dict__
        or obj is sys.__dict__
        or id(obj) in log.watched
    ):
        raise UnsupportedError(
            BreakReason.WRITE_AFTER_LOGGING,
            f"a write to {value.describe()} after a logging call the region makes at its end",
        )


# -- logging ------------------------------------------------------------------------------


def _is_api_log(fn) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and fn is torch._C._log_api_usage_once


def emit_log(logger, level, where, msg, args, kwargs) -> None:
    """``Logger._log`` with the caller's place known: `where` is (filename, lineno, function)."""
    if not logger.isEnabledFor(level):
        return
    fn, lno, func = where
    record = logger.makeRecord(logger.name, level, fn, lno, msg, args, None, func, kwargs.get("extra"), None)
    logger.handle(record)


def _is_internal(filename: str) -> bool:
    """A frame logging's ``findCaller`` skips."""
    return filename == logging._srcfile or ("importlib" in filename and "_bootstrap" in filename)


def _caller(tx, stacklevel: int):
    """The (filename, lineno, function) ``findCaller`` would name, from the trace's frames;
    None when it lies outside them."""
    frames = tx.frames
    i = len(frames)
    while stacklevel > 0:
        i -= 1
        if i < 0:
            return None
        f = frames[i]
        if not _is_internal(f.code.co_filename):
            stacklevel -= 1
    f = frames[i]
    lineno = f.cur.lineno if f.cur is not None else f.code.co_firstlineno
    return (f.code.co_filename, lineno, f.code.co_name)


class _NotKnown(Exception):
    """A logging argument whose text is not known at capture (a tensor, a value made here)."""


def _argument(v: Value, objects: list):
    """A logging argument as the call will receive it: a literal, or an object from outside
    (formatted when the record is, so a later write to it breaks: watched)."""
    if isinstance(v, ObjectV) and not _is_tensor(v.obj):
        objects.append(v.obj)
        return v.obj
    try:
        x = as_python(v)
    except NotConst:
        raise _NotKnown from None
    if not is_literal_tree(x):
        raise _NotKnown
    return x


def _is_tensor(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _logger_call(level: int | None, fn):
    def model(tx, args, kwargs):
        try:
            return _record_log(tx, level, args, kwargs)
        except NotConst:  # not a plain logger call: its code, traced
            return dispatch.inline_call(tx, ObjectV(fn), args, kwargs)
        except _NotKnown:
            lvl = level if level is not None else as_python(args[1])
            if args[0].obj.__dict__.get("_cache", {}).get(lvl) is False:  # cached: no lock taken
                enabled = dispatch.call(tx, ObjectV(logging.Logger.isEnabledFor), [args[0], Const(lvl)], {})
                if isinstance(enabled, Const) and enabled.value is False:
                    return Const(None)  # nothing is logged, as natively
            raise UnsupportedError(
                BreakReason.IO, f"logging a value not known at capture ({fn.__qualname__})"
            ) from None

    return model


def _record_log(tx, level, args, kwargs) -> Value:
    if not args or not isinstance(args[0], ObjectV):
        raise NotConst
    logger, rest = args[0].obj, list(args[1:])
    cls = type(logger)
    if not isinstance(logger, logging.Logger) or any(
        getattr(cls, n) is not getattr(logging.Logger, n) for n in ("_log", "findCaller", "isEnabledFor")
    ):
        raise NotConst  # a logger class of its own making: its code, traced
    if level is None:  # Logger.log(level, msg, *args)
        if not rest:
            raise NotConst
        level = as_python(rest.pop(0))
        if type(level) is not int:
            raise NotConst
    kw = {k: as_python(v) for k, v in kwargs.items()}
    if set(kw) - {"stacklevel", "extra", "exc_info", "stack_info"} or not rest:
        raise NotConst
    if kw.get("exc_info") or kw.get("stack_info") or kw.get("extra") is not None:
        raise NotConst  # they read the exception being handled or the real stack
    stacklevel = kw.get("stacklevel", 1)
    if type(stacklevel) is not int:
        raise NotConst
    where = _caller(tx, max(stacklevel, 1))
    if where is None:
        raise NotConst
    objects: list = []
    msg, *margs = (_argument(v, objects) for v in rest)
    call: tuple = (logger, level, where, msg, tuple(margs), {})
    return record(tx, emit_log, call, watched=(logger, *objects))


for _name, _level in (
    ("debug", logging.DEBUG),
    ("info", logging.INFO),
    ("warning", logging.WARNING),
    ("error", logging.ERROR),
    ("critical", logging.CRITICAL),
    ("log", None),
):
    _fn = getattr(logging.Logger, _name)
    MODELS[_fn] = _logger_call(_level, _fn)


def _get_logger(tx, args, kwargs) -> Value:
    """``logging.getLogger(name)`` of a logger that exists: that logger (its lookup takes
    logging's lock, a C call), guarded by identity in the manager's table."""
    try:
        name = as_python(args[0]) if len(args) == 1 and not kwargs else None
    except NotConst:
        name = None
    manager = logging.Logger.manager
    existing = manager.loggerDict.get(name) if type(name) is str and name != logging.root.name else None
    if not isinstance(existing, logging.Logger):
        return dispatch.inline_call(tx, ObjectV(_GET_LOGGER), args, kwargs)
    table = AttrSource(ConstSource(Ref(manager, "logging.Logger.manager")), "loggerDict")
    source = ItemSource(table, name)
    tx.guard(GuardKind.ID_MATCH, source, existing)
    return wrap(tx, existing, source)


_GET_LOGGER = logging.getLogger
MODELS[_GET_LOGGER] = _get_logger


# -- lru_cache procedures -----------------------------------------------------------------


def defer_cached_procedure(tx, wrapper, pa: tuple, pk: dict, args, kwargs) -> Value | None:
    """A call of the unbounded cache `wrapper` on known values `pa`/`pk`, made after the
    region, when its wrapped code traced here does nothing but recorded calls and returns
    None; None (and nothing recorded) otherwise."""
    fn = getattr(wrapper, "__wrapped__", None)
    if not isinstance(fn, types.FunctionType) or pk or not returns_none_only(fn.__code__):
        return None
    cp = tx.checkpoint()
    before = len(tx.mutated)
    log = getattr(tx, _LOG, None)
    calls_before = len(log.calls) if log is not None else 0
    steps_before = tx.steps
    try:
        out = dispatch.inline_call(tx, ObjectV(fn), args, kwargs)
    except UnsupportedError:
        tx.rollback(cp)
        return None
    steps = tx.steps - steps_before
    log = getattr(tx, _LOG, None)
    made = log.calls[calls_before:] if log is not None else ()
    writes = [v for v in tx.mutated[before:] if not isinstance(v, CallLogV)]
    tx.rollback(cp)  # the wrapped code's recorded calls: the cached function makes them
    if writes or not (isinstance(out, Const) and out.value is None):
        return None
    owner = sys.modules.get(fn.__module__)
    code = fn.__code__
    calls = plain_logging_code(code, fn.__globals__, pa)
    reads = not (
        calls is not None
        and steps == len(decoded(code)[0].instructions)  # no other Python code ran
        and len(made) == calls
        and all(f is emit_log for f, _ in made)
    )
    watched = (*pa, *((owner, owner.__dict__) if owner else ()))
    return record(tx, wrapper, pa, watched=watched, reads_containers=reads)


_LOGGER_METHODS = frozenset(("debug", "info", "warning", "error", "critical", "log"))
_NO_STACK_EFFECT = frozenset(
    ("RESUME", "NOP", "CACHE", "EXTENDED_ARG", "PRECALL", "KW_NAMES", "COPY_FREE_VARS")
)
_NULL, _LOGGER_CALL, _STAR_ARGS, _STAR_KWARGS, _FRESH = "null", "logger-call", "*args", "**kwargs", "fresh"


class _Shape:
    """The abstract stack of `plain_logging_code`: what each entry is, not its value."""

    def __init__(self, code: types.CodeType, pa: tuple):
        n = code.co_argcount + code.co_kwonlyargcount
        names = code.co_varnames
        self.params: dict = {name: ("object", v) for name, v in zip(names[: code.co_argcount], pa)}
        if code.co_flags & inspect.CO_VARARGS:
            self.params[names[n]] = _STAR_ARGS
            n += 1
        if code.co_flags & inspect.CO_VARKEYWORDS:
            self.params[names[n]] = _STAR_KWARGS
        self.stack: list = []

    def pop(self, n: int = 1) -> list:
        if n > len(self.stack):
            raise IndexError
        out = self.stack[len(self.stack) - n :]
        del self.stack[len(self.stack) - n :]
        return out

    def attr(self, owner, name: str):
        """A logging method of a plain ``Logger`` (the one `emit_log` models), else a value."""
        if name in _LOGGER_METHODS and type(owner) is tuple:  # ("object", the real object)
            logger = owner[1]
            if issubclass(type(logger), logging.Logger) and inspect.getattr_static(
                logger, name, None
            ) is getattr(logging.Logger, name):
                return _LOGGER_CALL
        return None

    def call(self, n: int) -> None:
        """A call whose callable sits under `n` entries: a logger's method, or refused."""
        pair = self.pop(n + 2)[:2]
        if not any(p is _LOGGER_CALL for p in pair) or not all(p is _LOGGER_CALL or p is _NULL for p in pair):
            raise ValueError
        self.stack.append(None)


def plain_logging_code(code: types.CodeType, fn_globals: dict, pa: tuple) -> int | None:
    """How many calls `code`, run on positional arguments `pa`, makes when it is straight
    logger calls that read no container; None when it may be anything else.

    Straight: no jump, exception handler or store; each entry is a parameter, a global, a
    constant, an attribute, a new tuple or dict, or a call whose callable is a logging
    method (`_LOGGER_METHODS`) of a plain ``Logger`` the code reaches through a parameter or
    a global (looked up statically: no code runs); ``*`` and ``**`` only pass on the code's
    own ``*args``/``**kwargs`` (a tuple; a dict made by the call) or a new tuple or dict.
    No subscript, ``in``, operator, iteration or comprehension gets through: the code reads
    no list, dict or set, so no write to one can change what it does."""
    if not (3, 11) <= sys.version_info[:2] <= (3, 13) or code.co_exceptiontable:
        return None
    shape = _Shape(code, pa)
    stack = shape.stack
    calls = 0
    try:
        for ins in dis.get_instructions(code):
            op, arg = ins.opname, ins.arg or 0
            if op in _NO_STACK_EFFECT:
                continue
            if op == "PUSH_NULL":
                stack.append(_NULL)
            elif op == "LOAD_CONST":
                stack.append(None)
            elif op in ("LOAD_FAST", "LOAD_FAST_CHECK"):
                stack.append(shape.params[ins.argval])
            elif op == "LOAD_FAST_LOAD_FAST":
                stack.extend(shape.params[name] for name in ins.argval)
            elif op == "LOAD_GLOBAL":
                if arg & 1:
                    stack.append(_NULL)
                found = dict.get(fn_globals, ins.argval, _NULL)  # (no __missing__ or __eq__ runs)
                stack.append(("object", found) if found is not _NULL else None)
            elif op == "LOAD_ATTR" or op == "LOAD_METHOD":
                (owner,) = shape.pop()
                what = shape.attr(owner, ins.argval)
                stack.append(what)
                if op == "LOAD_METHOD" or (sys.version_info >= (3, 12) and arg & 1):
                    stack.append(what if what is not None else _NULL)
            elif op == "BUILD_TUPLE" or op == "BUILD_MAP":
                shape.pop(arg if op == "BUILD_TUPLE" else 2 * arg)
                stack.append(_FRESH)
            elif op == "DICT_MERGE":
                (merged,) = shape.pop()
                if not (merged is _STAR_KWARGS or merged is _FRESH) or stack[-arg] is not _FRESH:
                    return None
            elif op == "CALL" or op == "CALL_KW":
                shape.call(arg + (op == "CALL_KW"))
                calls += 1
            elif op == "CALL_FUNCTION_EX":
                star = shape.pop(1 + (arg & 1))
                if not (star[0] is _STAR_ARGS or star[0] is _FRESH):
                    return None
                if arg & 1 and not (star[1] is _STAR_KWARGS or star[1] is _FRESH):
                    return None
                shape.call(0)
                calls += 1
            elif op == "POP_TOP" or op == "RETURN_VALUE":
                shape.pop()
            elif op != "RETURN_CONST":
                return None
    except (IndexError, KeyError, ValueError):  # an entry of another kind: not plain
        return None
    return calls


def returns_none_only(code: types.CodeType) -> bool:
    """Every ``return`` of `code` returns None (a plain function, not a generator): a
    procedure, by its bytecode."""
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    prev = None
    for ins in dis.get_instructions(code):
        if ins.opname == "RETURN_VALUE" and not (
            prev is not None and prev.opname == "LOAD_CONST" and prev.argval is None
        ):
            return False
        if ins.opname == "RETURN_CONST" and ins.argval is not None:
            return False
        prev = ins
    return True


def is_literal_tree(x) -> bool:
    """None, a bool, number, str or bytes, or a tuple of them: a result safe as a constant."""
    if type(x) is tuple:
        return all(is_literal_tree(i) for i in x)
    return x is None or type(x) in (bool, int, float, complex, str, bytes)
