"""Running the breaking instruction natively, as generated Python source.

At a graph break the region function executes the one instruction the trace
could not represent, on the real values, then calls a continuation.  Each
handler here writes that instruction as Python statements over the stack
slots' expressions and returns its *outcomes*: ``NativeOutcome(condition, offset,
stack)`` -- if `condition` (a Python expression, or None for "otherwise")
holds, execution resumes at bytecode `offset` with `stack` (expressions;
None marks a NULL slot).  A branch has two outcomes, FOR_ITER two (next item
or exhausted), everything else one.

The table covers what breaks in practice: calls, branches on tensors,
iteration, attribute access, operators, subscripts, f-string formatting,
unpacking, raise, `with` entry and `with` exit on an exception raised
natively.  An instruction not in the table makes the whole function run
natively (recorded in explain).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..semantics.ops import BINARY_OPS, COMPARE

PY = sys.version_info[:2]
SENTINEL = type("Exhausted", (), {"__repr__": lambda self: "<exhausted>"})()


@dataclass
class NativeOutcome:
    condition: str | None
    offset: int
    stack: list


class Ctx:
    """What a native handler sees: the instruction, the stack slots and an emitter."""

    def __init__(self, ins, stack, ns, lines, bc, kw_names, caller=None, values=None):
        self.ins = ins
        self.values = list(values) if values is not None else None  # the symbolic stack
        # (fn, args, kwargs) -> the expression calling ``fn(*args, **kwargs)`` (kwargs None:
        # none), or None: a plain call written in place
        self.caller = caller
        self.stack = list(stack)  # expressions; None = NULL
        self.ns = ns
        self.lines = lines
        self.bc = bc
        self.kw_names = kw_names

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def pop(self, n: int = 1) -> list:
        out = self.stack[-n:] if n else []
        del self.stack[len(self.stack) - n :]
        return out

    def result(self, expr: str) -> str:
        name = self.ns.fresh("r")
        self.emit(f"{name} = {expr}")
        return name

    def next(self, pushed=()) -> list[NativeOutcome]:
        return [NativeOutcome(None, self.ins.next_offset, self.stack + list(pushed))]

    def h(self, name: str) -> str:
        return self.ns.helper(name)

    def c(self, obj, hint=None) -> str:
        return self.ns.const(obj, hint)

    def calling(self, fn: str, pos: list, names=(), values=()) -> str:
        """The expression of the call ``fn(*pos, **dict(zip(names, values)))``."""
        if self.caller is None:
            return f"{fn}({_call_args(self, pos, names, values)})"
        kwargs = "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(names, values)) + "}" if names else None
        return self.caller(fn, "(" + "".join(f"{p}, " for p in pos) + ")", kwargs)


def _null_pair(value: str) -> list:
    return [None, value] if PY < (3, 13) else [value, None]


def _call_args(ctx, pos, kw_names, kw_values) -> str:
    parts = list(pos)
    if kw_names:
        parts.append("**{" + ", ".join(f"{k!r}: {v}" for k, v in zip(kw_names, kw_values)) + "}")
    return ", ".join(parts)


def _split(a, b, args):
    if PY < (3, 13):
        return (b, args) if a is None else (a, [b, *args])
    return (a, args) if b is None else (a, [b, *args])


def call(ctx):
    argc = ctx.ins.arg
    names = tuple(ctx.kw_names or ())
    if ctx.ins.op == "CALL_KW":
        ctx.pop()  # the names tuple; its values came in ctx.kw_names
    args = ctx.pop(argc)
    a, b = ctx.pop(2)
    fn, pos = _split(a, b, args[: len(args) - len(names)] if names else args)
    kwv = args[len(args) - len(names) :] if names else []
    return ctx.next([ctx.result(ctx.calling(fn, pos, names, kwv))])


def call_function_ex(ctx):
    kwargs = ctx.pop()[0] if ctx.ins.arg & 1 else None
    args = ctx.pop()[0]
    a, b = ctx.pop(2)
    fn = b if (PY < (3, 13) and a is None) else a
    if ctx.caller is not None:  # the arguments travel whole: the callee's own rules decide
        return ctx.next([ctx.result(ctx.caller(fn, args, kwargs))])
    text = f"{fn}(*{args}" + (f", **{kwargs})" if kwargs else ")")
    return ctx.next([ctx.result(text)])


def _branch(test):
    def h(ctx):
        v = ctx.pop()[0]
        cond = ctx.result(test(ctx, v))
        return [
            NativeOutcome(cond, ctx.ins.jump_target, list(ctx.stack)),
            NativeOutcome(None, ctx.ins.next_offset, list(ctx.stack)),
        ]

    return h


def _jump_or_pop(jump_if_true: bool):
    def h(ctx):
        v = ctx.stack[-1]
        cond = ctx.result(f"{ctx.h('bool')}({v})" if jump_if_true else f"not {v}")
        return [
            NativeOutcome(cond, ctx.ins.jump_target, list(ctx.stack)),
            NativeOutcome(None, ctx.ins.next_offset, list(ctx.stack[:-1])),
        ]

    return h


def to_bool(ctx):
    v = ctx.pop()[0]
    return ctx.next([ctx.result(f"{ctx.h('bool')}({v})")])


def for_iter(ctx):
    it = ctx.stack[-1]
    r = ctx.result(f"{ctx.h('next')}({it}, {ctx.c(SENTINEL, 'exhausted')})")
    target = ctx.ins.jump_target
    if PY >= (3, 12):
        i = ctx.bc.index_of(target)
        target = ctx.bc.instructions[i + (1 if PY == (3, 12) else 2)].offset
    done = ctx.result(f"{r} is {ctx.c(SENTINEL, 'exhausted')}")
    return [
        NativeOutcome(done, target, list(ctx.stack[:-1])),
        NativeOutcome(None, ctx.ins.next_offset, list(ctx.stack) + [r]),
    ]


def binary_op(ctx):
    a, b = ctx.pop(2)
    fn = BINARY_OPS[ctx.ins.arg]
    return ctx.next([ctx.result(f"{ctx.c(fn)}({a}, {b})")])


def compare_op(ctx):
    a, b = ctx.pop(2)
    text = f"{ctx.c(COMPARE[ctx.ins.argval])}({a}, {b})"
    if PY >= (3, 13) and ctx.ins.arg & 16:
        text = f"{ctx.h('bool')}({text})"
    return ctx.next([ctx.result(text)])


def _simple(n, template, pushes=True):
    def h(ctx):
        vals = ctx.pop(n)
        text = template(ctx, *vals)
        if pushes:
            return ctx.next([ctx.result(text)])
        ctx.emit(text)
        return ctx.next()

    return h


def load_attr(ctx):
    obj = ctx.pop()[0]
    v = ctx.result(f"{ctx.h('getattr')}({obj}, {ctx.ins.argval!r})")
    return ctx.next(_null_pair(v) if ctx.ins.op == "LOAD_METHOD" else [v])


def format_value(ctx):
    spec = ctx.pop()[0] if ctx.ins.arg & 4 else "''"
    v = ctx.pop()[0]
    conv = {1: "str", 2: "repr", 3: "ascii"}.get(ctx.ins.arg & 3)
    if conv:
        v = f"{ctx.h(conv)}({v})"
    return ctx.next([ctx.result(f"{ctx.h('format')}({v}, {spec})")])


def unpack_sequence(ctx):
    v = ctx.pop()[0]
    n = ctx.ins.arg
    names = [ctx.ns.fresh("u") for _ in range(n)]
    ctx.emit(f"{', '.join(names)}{',' if n == 1 else ''} = {v}")
    return ctx.next(list(reversed(names)))


def raise_varargs(ctx):
    n = ctx.ins.arg
    vals = ctx.pop(n)
    if n == 0:
        ctx.emit("raise")
    elif n == 1:
        ctx.emit(f"raise {vals[0]}")
    else:
        ctx.emit(f"raise {vals[0]} from {vals[1]}")
    return []


def before_with(ctx):
    mgr = ctx.pop()[0]
    exit_ = ctx.result(f"{ctx.h('type')}({mgr}).__exit__.__get__({mgr})")
    entered = ctx.result(f"{ctx.h('type')}({mgr}).__enter__({mgr})")
    return ctx.next([exit_, entered])


def with_except_start(ctx):
    # [exit, lasti, prev_exc, exc] stay; exit(type(exc), exc, exc.__traceback__) is pushed
    exit_, exc = ctx.stack[-4], ctx.stack[-1]
    if exit_ is None or exc is None:
        raise UnsupportedError(BreakReason.NO_CONTINUATION, "WITH_EXCEPT_START with a NULL slot")
    if ctx.values is None or ctx.values[-1].source is None:
        # an exception raised in the trace is rebuilt without its traceback, which
        # __exit__ receives; only a real one (raised natively) is passed on
        raise UnsupportedError(BreakReason.NO_CONTINUATION, "__exit__ of an exception raised in the trace")
    args = [f"{ctx.h('type')}({exc})", exc, f"{exc}.__traceback__"]
    return ctx.next([ctx.result(ctx.calling(exit_, args))])


_SELF_MATCHING = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


def match_class(subject, cls, count: int, names: tuple):
    """MATCH_CLASS on real objects: the matched attributes as a tuple, or None."""
    if not isinstance(cls, type):
        raise TypeError("called match pattern must be a class")
    if not isinstance(subject, cls):
        return None
    values, wanted = [], []
    if count:
        match_args = getattr(cls, "__match_args__", None)
        if match_args is None and cls in _SELF_MATCHING and count == 1:
            values.append(subject)
        elif match_args is None or len(match_args) < count:
            raise TypeError(
                f"{cls.__name__}() accepts {len(match_args or ())} positional sub-patterns ({count} given)"
            )
        else:
            wanted = list(match_args[:count])
    for name in [*wanted, *names]:
        try:
            values.append(getattr(subject, name))
        except AttributeError:
            return None
    return tuple(values)


NATIVE = {
    "CALL": call,
    "CALL_KW": call,
    "CALL_FUNCTION_EX": call_function_ex,
    "POP_JUMP_IF_TRUE": _branch(lambda c, v: f"{c.h('bool')}({v})"),
    "POP_JUMP_IF_FALSE": _branch(lambda c, v: f"not {v}"),
    "POP_JUMP_IF_NONE": _branch(lambda c, v: f"{v} is None"),
    "POP_JUMP_IF_NOT_NONE": _branch(lambda c, v: f"{v} is not None"),
    "JUMP_IF_TRUE_OR_POP": _jump_or_pop(True),
    "JUMP_IF_FALSE_OR_POP": _jump_or_pop(False),
    "TO_BOOL": to_bool,
    "FOR_ITER": for_iter,
    "BINARY_OP": binary_op,
    "COMPARE_OP": compare_op,
    "BINARY_SUBSCR": _simple(2, lambda c, a, b: f"{a}[{b}]"),
    "STORE_SUBSCR": _simple(3, lambda c, v, a, b: f"{a}[{b}] = {v}", pushes=False),
    "DELETE_SUBSCR": _simple(2, lambda c, a, b: f"del {a}[{b}]", pushes=False),
    "BINARY_SLICE": _simple(3, lambda c, a, lo, hi: f"{a}[{lo}:{hi}]"),
    "STORE_SLICE": _simple(4, lambda c, v, a, lo, hi: f"{a}[{lo}:{hi}] = {v}", pushes=False),
    "CONTAINS_OP": lambda ctx: _simple(2, lambda c, a, b: f"({a} {'not in' if ctx.ins.arg else 'in'} {b})")(
        ctx
    ),
    "IS_OP": lambda ctx: _simple(2, lambda c, a, b: f"({a} {'is not' if ctx.ins.arg else 'is'} {b})")(ctx),
    "UNARY_NEGATIVE": _simple(1, lambda c, a: f"-{a}"),
    "UNARY_POSITIVE": _simple(1, lambda c, a: f"+{a}"),
    "UNARY_INVERT": _simple(1, lambda c, a: f"~{a}"),
    "UNARY_NOT": _simple(1, lambda c, a: f"not {a}"),
    "GET_ITER": _simple(1, lambda c, a: f"{c.h('iter')}({a})"),
    "LOAD_ATTR": load_attr,
    "LOAD_METHOD": load_attr,
    "STORE_ATTR": _simple(2, lambda c, v, o: f"{c.h('setattr')}({o}, {c.ins.argval!r}, {v})", pushes=False),
    "DELETE_ATTR": _simple(1, lambda c, o: f"{c.h('delattr')}({o}, {c.ins.argval!r})", pushes=False),
    "FORMAT_VALUE": format_value,
    "FORMAT_SIMPLE": _simple(1, lambda c, v: f"{c.h('format')}({v}, '')"),
    "FORMAT_WITH_SPEC": _simple(2, lambda c, v, spec: f"{c.h('format')}({v}, {spec})"),
    "CONVERT_VALUE": _simple(1, lambda c, v: f"{c.h({1: 'str', 2: 'repr', 3: 'ascii'}[c.ins.arg])}({v})"),
    "UNPACK_SEQUENCE": unpack_sequence,
    "RAISE_VARARGS": raise_varargs,
    "BEFORE_WITH": before_with,
    "WITH_EXCEPT_START": with_except_start,
    "MATCH_CLASS": _simple(
        3, lambda c, s, cls, names: f"{c.c(match_class)}({s}, {cls}, {c.ins.arg}, {names})"
    ),
}


def native_outcomes(ctx) -> list[NativeOutcome]:
    h = NATIVE.get(ctx.ins.op)
    if h is None:
        raise UnsupportedError(BreakReason.NO_CONTINUATION, f"{ctx.ins.opname} cannot be run on its own")
    return h(ctx)
