"""Rebuilding a generator the trace created, for the code after a graph break.

A generator that has not started yet (its frame has run no user instruction:
a generator expression handed to ``sum``, ``list`` or a ``for`` loop whose
body breaks on the first item) is rebuilt by calling its function again with
the arguments it was bound to: a generator object is nothing but that frame.
A started generator holds a suspended position no Python code can recreate
directly.  Two kinds are rebuilt anyway:

* a generator expression with a single ``for`` and no cells, suspended at its
  ``yield``: its frame holds nothing but its argument iterator ``.0`` (on the
  stack, as the loop's iterator, and as the local), so a fresh generator over
  that iterator at its current position goes on exactly as the suspended one;
* a generator function whose steps so far can be run again with nothing
  outside seeing it: made afresh and advanced natively by as many steps as
  the trace ran (`GeneratorV.steps`).  Only when that is provably harmless:
  its code is on a whitelist (locals, constants, arithmetic, comparisons,
  loops, calls of a few pure builtins -- no attribute access, no stores
  outside the frame, no cells), it never rebinds a parameter, and the
  arguments are immutable (constants, tuples, tensors the graph does not
  write in place), so the replayed steps compute what the traced ones did;
* any other generator suspended at a plain ``yield`` (a ``@contextmanager``'s
  inside its ``with`` block): a generator of its code resumed after that yield
  with its stack and locals (`resume_gen`), stopped at its own prologue's
  yield, which goes on, throws and closes as the original.

Any other started generator stays unrebuildable (a root ``with`` around the
break is then entered natively, else the whole function runs natively).
"""

from __future__ import annotations

import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import NULL, CellV, Const, DictV, TensorV, TupleV
from .resume_gen import make_resumed_generator, suspend

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


class UnrebuildableGenerator(UnsupportedError):
    """A started generator the code after a break would need (a ``@contextmanager``'s,
    suspended in its ``with`` block): `breaks` may enter that block natively instead."""


def advanced(it, n: int):
    """`it` after `n` items (run time: a started iterator rebuilt at its position)."""
    for _ in range(n):
        next(it)
    return it


def rebuild_generator(rb, gen) -> str:
    """An expression creating a fresh generator equal to the unstarted `gen` (memoized in
    `rb`, so every reference gets the same object)."""
    frame = gen.frame
    code = frame.code
    replay = 0
    if gen.started and not _restartable_genexpr(frame):
        if not _replayable(rb, frame):
            at_yield = _suspended_at_yield(rb, gen)
            if at_yield is not None:
                return at_yield
            raise UnrebuildableGenerator(
                BreakReason.UNRECONSTRUCTABLE, "a generator suspended inside its body cannot be rebuilt"
            )
        replay = gen.steps
    if gen.done:
        raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, "a finished generator")
    if frame.fn is None:
        raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, "a generator without its function")
    names = code.co_varnames
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount

    def arg(name):
        v = frame.locals[name]
        return rb.expr(v.contents if isinstance(v, CellV) else v)

    parts = [arg(n) for n in names[:n_pos]]
    i = n_pos + n_kw
    if code.co_flags & CO_VARARGS:
        star = frame.locals[names[i]]
        if not isinstance(star, TupleV):
            raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, "a generator's *args is not a tuple")
        parts.append(f"*{rb.expr(star)}")
        i += 1
    kw = {n: arg(n) for n in names[n_pos : n_pos + n_kw]}
    parts.append("**{" + ", ".join(f"{k!r}: {e}" for k, e in kw.items()) + "}")
    if code.co_flags & CO_VARKEYWORDS:
        dstar = frame.locals[names[i]]
        if not isinstance(dstar, DictV):
            raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, "a generator's **kwargs is not a dict")
        parts.append(f"**{rb.expr(dstar)}")
    made = f"{rb.expr(frame.fn)}({', '.join(parts)})"
    if replay:
        made = f"{rb.ns.const(advanced, 'advanced')}({made}, {replay})"
    return rb.temp(made, gen, "gen")


def _suspended_at_yield(rb, gen) -> str | None:
    """A generator suspended at a plain ``yield`` (not ``yield from``, not inside an except
    block), as a generator of its code resumed there (`resume_gen`), or None."""
    frame = gen.frame
    ins = frame.cur
    if gen.done or ins is None or ins.opname != "YIELD_VALUE" or frame.exc_slots:
        return None
    nxt = frame.instrs[frame.ip] if frame.ip < len(frame.instrs) else None
    if nxt is None or nxt.opname != "RESUME" or nxt.arg != 1 or any(v is NULL for v in frame.stack):
        return None
    code = frame.code
    names = tuple(n for n in code.co_varnames if n in frame.locals)
    fn = types.FunctionType(code, frame.globals, code.co_name)
    try:
        make, info = make_resumed_generator(fn, ins.offset, len(frame.stack), names)
    except UnsupportedError:
        return None
    args = [rb.expr(v) for v in frame.stack] + [rb.expr(frame.locals[n]) for n in names] + ["[False]"]
    made = f"{rb.ns.const(suspend, 'suspend')}({rb.ns.const(make)}, {info.lasti}, {', '.join(args)})"
    return rb.temp(made, gen, "gen")


def _restartable_genexpr(frame) -> bool:
    """A generator expression suspended at its yield whose whole state is its iterator."""
    code = frame.code
    it = frame.locals.get(".0")
    if code.co_name != "<genexpr>" or it is None or code.co_cellvars or code.co_freevars:
        return False
    if len(frame.stack) != 1 or frame.stack[0] is not it:
        return False
    from ..model.frame import decoded

    return sum(ins.opname == "FOR_ITER" for ins in decoded(code)[0].instructions) == 1


# what a replayed generator step may run (3.11-3.13 spellings)
_PURE_OPS = frozenset(
    [
        "RESUME",
        "RETURN_GENERATOR",
        "POP_TOP",
        "NOP",
        "EXTENDED_ARG",
        "CACHE",
        "PRECALL",
        "PUSH_NULL",
        "COPY",
        "SWAP",
        "LOAD_FAST",
        "LOAD_FAST_CHECK",
        "LOAD_FAST_LOAD_FAST",
        "STORE_FAST",
        "STORE_FAST_STORE_FAST",
        "STORE_FAST_LOAD_FAST",
        "LOAD_CONST",
        "RETURN_CONST",
        "RETURN_VALUE",
        "YIELD_VALUE",
        "GET_ITER",
        "FOR_ITER",
        "END_FOR",
        "JUMP_BACKWARD",
        "JUMP_FORWARD",
        "JUMP_BACKWARD_NO_INTERRUPT",
        "POP_JUMP_IF_FALSE",
        "POP_JUMP_IF_TRUE",
        "POP_JUMP_IF_NONE",
        "POP_JUMP_IF_NOT_NONE",
        "POP_JUMP_FORWARD_IF_FALSE",
        "POP_JUMP_FORWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_FALSE",
        "POP_JUMP_BACKWARD_IF_TRUE",
        "POP_JUMP_FORWARD_IF_NONE",
        "POP_JUMP_FORWARD_IF_NOT_NONE",
        "COMPARE_OP",
        "TO_BOOL",
        "UNARY_NEGATIVE",
        "UNARY_NOT",
        "UNARY_INVERT",
        "BUILD_TUPLE",
        "UNPACK_SEQUENCE",
        "BINARY_SUBSCR",
        "CALL",
        "CALL_INTRINSIC_1",
        "RERAISE",
        "LOAD_GLOBAL",
        "IS_OP",
        "CONTAINS_OP",
    ]
)
_PURE_BUILTINS = frozenset(
    {
        "range",
        "len",
        "abs",
        "min",
        "max",
        "enumerate",
        "zip",
        "reversed",
        "int",
        "float",
        "bool",
        "divmod",
        "round",
    }
)
_INPLACE_MIN = 13  # BINARY_OP arguments from here on are the in-place forms (+= ...)


def _replayable(rb, frame) -> bool:
    """Whether running the generator's first steps again is invisible (module docstring)."""
    code = frame.code
    if code.co_name == "<genexpr>" or code.co_cellvars or code.co_freevars or frame.fn is None:
        return False
    if code.co_flags & (CO_VARARGS | CO_VARKEYWORDS):
        return False
    params = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    import builtins

    from ..model.frame import decoded

    fn_globals = frame.globals
    for ins in decoded(code)[0].instructions:
        op = ins.opname
        if op == "BINARY_OP":
            if ins.arg >= _INPLACE_MIN:
                return False
            continue
        if op not in _PURE_OPS:
            return False
        if op == "LOAD_GLOBAL":
            name = ins.argval
            b = frame.builtins
            real = b.get(name) if isinstance(b, dict) else getattr(b, name, None)
            if name not in _PURE_BUILTINS or name in fn_globals or real is not getattr(builtins, name):
                return False
        if op.startswith("STORE_FAST"):
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            if params & set(names):
                return False
    mutation = getattr(rb, "has_mutation", True)
    return all(_immutable(frame.locals.get(n), mutation) for n in params)


def _immutable(v, tensors_written: bool) -> bool:
    if isinstance(v, Const):
        return True
    if isinstance(v, TensorV):
        return not tensors_written
    if isinstance(v, TupleV) and v.cls is tuple:
        return all(_immutable(x, tensors_written) for x in v.items)
    return False
