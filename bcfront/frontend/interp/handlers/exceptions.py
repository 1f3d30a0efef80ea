"""Raising and handling exceptions, and `with` blocks.

The handled-exception state (what ``sys.exc_info()`` returns) lives on the
tracer; PUSH_EXC_INFO/POP_EXCEPT save and restore it through the value
stack, as CPython does.  ``with`` calls the manager's ``__enter__`` and
``__exit__`` symbolically: torch's grad-mode and autocast managers change the
symbolic torch state; Python managers are inlined.
"""

from __future__ import annotations

from ....errors import UnsupportedError
from ....reasons import BreakReason
from ...model.tracer import SymbolicRaise
from ...model.values import Const, ExceptionV, ObjectV, TupleV, Value
from ...semantics import attrs, objects


def _as_exception(tx, v: Value):
    if isinstance(v, ExceptionV):
        return v
    if isinstance(v, ObjectV) and isinstance(v.obj, type) and issubclass(v.obj, BaseException):
        exc = objects.construct(tx, v, [], {})
        if isinstance(exc, ExceptionV):
            return exc
    if isinstance(v, ObjectV) and isinstance(v.obj, BaseException):
        return v  # an exception object from outside (re-raised as itself)
    raise SymbolicRaise(ExceptionV(TypeError, [Const("exceptions must derive from BaseException")]))


def raise_varargs(tx, f, ins):
    if ins.arg == 0:
        if tx.exc_info is None:
            raise SymbolicRaise(ExceptionV(RuntimeError, [Const("No active exception to reraise")]))
        raise SymbolicRaise(tx.exc_info)
    cause = f.pop() if ins.arg == 2 else None
    exc = _as_exception(tx, f.pop())
    if cause is not None:
        if isinstance(cause, Const) and cause.value is None:
            cause_v = cause
        else:
            cause_v = _as_exception(tx, cause)
        _set_exception_attrs(tx, exc, {"__cause__": cause_v, "__suppress_context__": Const(True)})
    if tx.exc_info is not None and tx.exc_info is not exc:  # CPython overwrites it
        _set_exception_attrs(tx, exc, {"__context__": tx.exc_info})
    raise SymbolicRaise(exc)


def _set_exception_attrs(tx, exc, values: dict) -> None:
    if isinstance(exc, ExceptionV):
        tx.set(exc, "attrs", {**exc.attrs, **values})
        return
    for name, v in values.items():  # a real exception (made before a break): written to it
        attrs.setattr_(tx, exc, name, v)


def reraise(tx, f, ins):
    raise SymbolicRaise(f.pop())


def push_exc_info(tx, f, ins):
    exc = f.pop()
    f.push(tx.exc_info if tx.exc_info is not None else Const(None))
    tx.set(f, "exc_slots", f.exc_slots + (len(f.stack) - 1,))
    tx.set(tx, "exc_info", exc)
    f.push(exc)


def pop_except(tx, f, ins):
    tx.set(f, "exc_slots", f.exc_slots[:-1])
    prev = f.pop()
    tx.set(tx, "exc_info", None if isinstance(prev, Const) and prev.value is None else prev)


def _classinfo(v: Value):
    if isinstance(v, ObjectV) and isinstance(v.obj, type):
        return v.obj
    if isinstance(v, TupleV):
        return tuple(_classinfo(x) for x in v.items)
    raise UnsupportedError(BreakReason.UNSUPPORTED_EXCEPTION, f"except clause with {v.describe()}")


def check_exc_match(tx, f, ins):
    cls = _classinfo(f.pop())
    exc = f.peek()
    f.push(Const(issubclass(exception_class(exc), cls)))


def exception_class(exc):
    if isinstance(exc, ExceptionV):
        return exc.cls
    if isinstance(exc, ObjectV) and isinstance(exc.obj, BaseException):
        return type(exc.obj)
    return type(None)


def with_except_start(tx, f, ins):
    exc = f.peek()
    exit_fn = f.stack[-4]
    t = exception_class(exc)
    cls = ObjectV(t) if t is not type(None) else Const(None)
    f.push(objects.call(tx, exit_fn, [cls, exc, Const(None)], {}))


def before_with(tx, f, ins):
    if f.parent is None and f.generator is None:  # the root frame
        if tx.__dict__.get("enter_natively") == ins.offset:
            raise UnsupportedError(
                BreakReason.UNRECONSTRUCTABLE,
                "a with block entered natively: a break inside it needs the context manager's "
                "generator, which the trace cannot rebuild",
            )
        tx.root_withs = (*tx.__dict__.get("root_withs", ()), ins.offset)  # see regions.breaks
    mgr = f.pop()
    try:
        exit_fn = attrs.getattr_(tx, mgr, "__exit__")
        enter = attrs.getattr_(tx, mgr, "__enter__")
    except SymbolicRaise as e:
        if isinstance(e.exc, ExceptionV) and issubclass(e.exc.cls, AttributeError):
            # the traced program's exception; Python's context of this one is irrelevant
            raise SymbolicRaise(  # noqa: B904
                ExceptionV(
                    TypeError,
                    [
                        Const(
                            f"'{mgr.python_type().__name__}' object does not support the context "
                            "manager protocol"
                        )
                    ],
                )
            )
        raise
    f.push(exit_fn)
    f.push(objects.call(tx, enter, [], {}))


HANDLERS = {
    "RAISE_VARARGS": raise_varargs,
    "RERAISE": reraise,
    "PUSH_EXC_INFO": push_exc_info,
    "POP_EXCEPT": pop_except,
    "CHECK_EXC_MATCH": check_exc_match,
    "WITH_EXCEPT_START": with_except_start,
    "BEFORE_WITH": before_with,
}
