"""Calls, function creation, returns and generator suspension.

Stack layout of a call (see `split_callable`): 3.11/3.12 push ``NULL, callable``
or ``method, self``; 3.13 pushes ``callable, NULL`` or ``method, self``.
Keyword names come from KW_NAMES (3.11/3.12) or from the stack (CALL_KW, 3.13).
"""

from __future__ import annotations

import dis
import sys

from ....errors import UnsupportedError
from ....reasons import BreakReason
from ...model.tracer import SymbolicRaise
from ...model.values import (
    NULL,
    CellV,
    Const,
    DictV,
    ExceptionV,
    GeneratorV,
    ListV,
    MadeFunctionV,
    MethodV,
    ObjectV,
    TupleV,
    Value,
)
from ...semantics import containers, dispatch, folding, iteration, objects, ops
from ..generators import check_dropped_generators

PY = sys.version_info[:2]


def split_callable(a: Value, b: Value, args: list) -> tuple[Value, list]:
    """The callable and full positional arguments from the two slots below the arguments."""
    if PY < (3, 13):
        if a is NULL:
            return b, args
        return a, [b, *args]
    if b is NULL:
        return a, args
    return a, [b, *args]


def _do_call(tx, f, argc: int, kw_names: tuple):
    args = f.popn(argc)
    b = f.pop()
    a = f.pop()
    nkw = len(kw_names)
    pos, kwv = (args[:-nkw], args[-nkw:]) if nkw else (args, [])
    fn, pos = split_callable(a, b, pos)
    kwargs = dict(zip(kw_names, kwv))
    f.push(objects.call(tx, fn, pos, kwargs))


def call(tx, f, ins):
    names = f.kw_names or ()
    f.kw_names = None
    _do_call(tx, f, ins.arg, names)


def call_kw(tx, f, ins):
    names = f.pop()
    _do_call(tx, f, ins.arg, tuple(names.value))


def kw_names(tx, f, ins):
    f.kw_names = tuple(f.code.co_consts[ins.arg])


def call_function_ex(tx, f, ins):
    kwargs_v = f.pop() if ins.arg & 1 else None
    args_v = f.pop()
    b = f.pop()
    a = f.pop()
    if PY < (3, 13):
        fn = b if a is NULL else a
        if a is not NULL:
            raise UnsupportedError(BreakReason.MALFORMED_BYTECODE, "CALL_FUNCTION_EX with a bound method")
    else:
        fn = a
    if not isinstance(args_v, (TupleV, ListV)) and not _iterable(args_v):
        folding.raise_(
            TypeError,
            f"{function_str(fn)} argument after * must be an iterable, not {args_v.python_type().__name__}",
        )
    pos = iteration.to_list(tx, args_v)
    kwargs = {}
    if kwargs_v is not None:
        if not (isinstance(kwargs_v, DictV) and kwargs_v.cls is dict):  # merged into a dict first
            made = DictV({})
            merge_kwargs(tx, made, kwargs_v, lambda: function_str(fn), lambda: _not_a_mapping(fn, kwargs_v))
            kwargs_v = made
        for k, (_kv, v) in kwargs_v.entries.items():
            if not isinstance(k, str):
                if not objects.checks_keyword_types(fn):
                    raise UnsupportedError(
                        BreakReason.UNSUPPORTED_CALL, f"a keyword that is no str to {fn.describe()}"
                    )
                folding.raise_(TypeError, "keywords must be strings")
            kwargs[k] = v
    f.push(objects.call(tx, fn, pos, kwargs))


def merge_kwargs(tx, d: DictV, v: Value, callee, not_a_mapping) -> None:
    """``PyDict_Update(d, v)`` (DICT_UPDATE, `callee` None) or ``_PyDict_MergeEx(d, v, 2)``
    (a call's ``**v``: DICT_MERGE, CALL_FUNCTION_EX; `callee` gives the callee's name),
    with the errors ceval words after it: an AttributeError (no ``keys``, or one raised
    by the mapping's own code) is `not_a_mapping()`; for a call, a key already there, or a
    KeyError of one argument out of the mapping (3.12+; 3.11 rewords only the unnormalized
    one C raised, which the trace cannot tell: a break), names the keyword."""

    def equal_key(key):
        folding.raise_(TypeError, f"{callee()} got multiple values for keyword argument '{_key_str(key)}'")

    try:
        containers.merge(tx, d, v, on_equal_key=equal_key if callee is not None else None)
    except SymbolicRaise as e:
        cls = e.exc.python_type()
        if issubclass(cls, AttributeError):
            not_a_mapping()
        if callee is None or not issubclass(cls, KeyError):
            raise
        if PY < (3, 12):
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "a KeyError out of a ** mapping") from None
        if not (isinstance(e.exc, ExceptionV) and len(e.exc.args) == 1):
            raise
        equal_key(e.exc.args[0])


def _key_str(key: Value) -> str:
    """``%S`` of a key: ``str(key)`` of a key known by its value."""
    if isinstance(key, Const) and type(key.value) in (str, int, float, bool, type(None), bytes, tuple):
        return str(key.value)
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"the text of {key.describe()} in a call error")


def _not_a_mapping(fn: Value, v: Value):
    folding.raise_(
        TypeError, f"{function_str(fn)} argument after ** must be a mapping, not {v.python_type().__name__}"
    )


def _iterable(v: Value) -> bool:
    cls = v.python_type()
    return hasattr(cls, "__iter__") or hasattr(cls, "__getitem__")


def callee_below(f, depth: int) -> Value:
    """The callable of a CALL_FUNCTION_EX whose arguments tuple is `depth` slots below the
    top of the stack (DICT_MERGE's error names it)."""
    a, b = f.stack[-depth - 2], f.stack[-depth - 1]
    if PY < (3, 13):
        return b if a is NULL else a
    return a


def function_str(v: Value) -> str:
    """CPython's ``_PyObject_FunctionStr``: ``module.qualname()`` (no module for builtins),
    as call errors name the callee ("fuzz.g() argument after ** must be a mapping")."""
    if isinstance(v, MadeFunctionV):
        qualname, module = v.qualname, v.globals.get("__name__")
    elif isinstance(v, MethodV):  # a bound method: its function's names
        return function_str(v.func)
    elif isinstance(v, (Const, ObjectV)):
        obj = v.value if isinstance(v, Const) else v.obj
        try:
            qualname = obj.__qualname__
        except AttributeError:
            return str(obj)
        module = getattr(obj, "__module__", None)
    else:
        return f"{v.python_type().__name__} object"
    if isinstance(module, str) and module != "builtins":
        return f"{module}.{qualname}()"
    return f"{qualname}()"


# -- function creation -------------------------------------------------------------------------


def make_function(tx, f, ins):
    code = f.pop()
    if not isinstance(code, Const):
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_FUNCTION, "MAKE_FUNCTION without a constant code object"
        )
    fn = MadeFunctionV(code.value, f.globals, code.value.co_qualname)
    flags = ins.arg or 0
    if PY < (3, 13):
        if flags & 0x08:
            fn.closure = _closure(f.pop())
        if flags & 0x04:
            fn.annotations = f.pop()
        if flags & 0x02:
            fn.kwdefaults = _kwdefaults(f.pop())
        if flags & 0x01:
            fn.defaults = _defaults(f.pop())
    f.push(fn)


def set_function_attribute(tx, f, ins):
    fn = f.pop()
    value = f.pop()
    flag = ins.arg
    if flag == 0x08:
        fn.closure = _closure(value)
    elif flag == 0x04:
        fn.annotations = value
    elif flag == 0x02:
        fn.kwdefaults = _kwdefaults(value)
    elif flag == 0x01:
        fn.defaults = _defaults(value)
    else:
        raise UnsupportedError(BreakReason.UNSUPPORTED_FUNCTION, f"function attribute flag {flag}")
    f.push(fn)


def _closure(v):
    items = v.items if isinstance(v, TupleV) else None
    if items is None or not all(isinstance(c, CellV) for c in items):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CLOSURE, "closure tuple of non-cells")
    return tuple(items)


def _defaults(v):
    if isinstance(v, TupleV):
        return tuple(v.items)
    if isinstance(v, Const) and isinstance(v.value, tuple):
        return tuple(Const(x) for x in v.value)
    raise UnsupportedError(BreakReason.UNSUPPORTED_FUNCTION, "non-tuple defaults")


def _kwdefaults(v):
    if isinstance(v, DictV):
        return {k: e[1] for k, e in v.entries.items()}
    raise UnsupportedError(BreakReason.UNSUPPORTED_FUNCTION, "non-dict keyword defaults")


# -- returns and generators ------------------------------------------------------------------------


def return_value(tx, f, ins):
    if tx.suspended_in_try:
        _check_dropped(tx, f, f.stack[-1] if f.stack else None)
    return ("return", f.pop())


def return_const(tx, f, ins):
    if tx.suspended_in_try:
        _check_dropped(tx, f, None)
    return ("return", Const(ins.argval))


def _check_dropped(tx, f, kept):
    check_dropped_generators(tx, f, kept)


def return_generator(tx, f, ins):
    return ("generator", None)


def yield_value(tx, f, ins):
    return ("yield", f.pop())


def get_yield_from_iter(tx, f, ins):
    v = f.pop()
    f.push(v if isinstance(v, GeneratorV) else iteration.get_iter(tx, v))


def send(tx, f, ins):
    value = f.pop()
    receiver = f.peek()
    try:
        if isinstance(receiver, GeneratorV):
            out = dispatch.resume_generator(tx, receiver, value)
        else:
            if not (isinstance(value, Const) and value.value is None):
                raise UnsupportedError(
                    BreakReason.UNSUPPORTED_GENERATOR, "send() to a non-generator iterator"
                )
            out = iteration.next_value(tx, receiver)
    except iteration.Exhausted as e:
        result = e.value if e.value is not None else Const(None)
        if PY < (3, 12):
            f.pop()
        f.push(result)
        f.jump(ins.jump_target)
        return None
    f.push(out)
    return None


# -- intrinsics (3.12+) ----------------------------------------------------------------------------


def call_intrinsic_1(tx, f, ins):
    name = dis._intrinsic_1_descs[ins.arg]
    v = f.pop()
    if name == "INTRINSIC_UNARY_POSITIVE":
        import operator

        f.push(ops.unary(tx, operator.pos, v))
    elif name == "INTRINSIC_LIST_TO_TUPLE":
        f.push(TupleV(v.items if isinstance(v, ListV) else iteration.to_list(tx, v)))
    elif name == "INTRINSIC_STOPITERATION_ERROR":
        if isinstance(v, ExceptionV) and issubclass(v.cls, StopIteration):
            f.push(ExceptionV(RuntimeError, [Const("generator raised StopIteration")]))
        else:
            f.push(v)
    else:
        raise UnsupportedError(BreakReason.UNSUPPORTED_OPCODE, f"CALL_INTRINSIC_1 {name}")


def call_intrinsic_2(tx, f, ins):
    name = dis._intrinsic_2_descs[ins.arg]
    raise UnsupportedError(BreakReason.UNSUPPORTED_OPCODE, f"CALL_INTRINSIC_2 {name}")


HANDLERS = {
    "CALL": call,
    "CALL_KW": call_kw,
    "KW_NAMES": kw_names,
    "CALL_FUNCTION_EX": call_function_ex,
    "MAKE_FUNCTION": make_function,
    "SET_FUNCTION_ATTRIBUTE": set_function_attribute,
    "RETURN_VALUE": return_value,
    "RETURN_CONST": return_const,
    "RETURN_GENERATOR": return_generator,
    "YIELD_VALUE": yield_value,
    "SEND": send,
    "GET_YIELD_FROM_ITER": get_yield_from_iter,
    "CALL_INTRINSIC_1": call_intrinsic_1,
    "CALL_INTRINSIC_2": call_intrinsic_2,
}
