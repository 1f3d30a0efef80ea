"""Continuation functions: the original bytecode, resumed at an offset (built with `bytecode`).

``make_resume(fn, offset, stack, live)`` returns a new function whose code is
the original code object's, preceded by a prologue that

1. copies the closure (COPY_FREE_VARS); the function's own cell variables
   arrive as arguments holding the cell objects themselves (the region rebuilt
   them, and closures made before the break hold the very same cells, so a
   write through either side is seen by the other) -- so, unlike the
   compiler's code, no MAKE_CELL: the parameter's slot already holds a cell;
2. pushes the saved stack: each slot is a parameter ``___stack<i>``, or PUSH_NULL
   for a NULL slot -- and re-enters the except/finally blocks the offset is inside
   (PUSH_EXC_INFO on the exception each one handles; see `make_resume`);
3. jumps to `offset`.

Its parameters are the stack slots, the live locals, then the cells, so the
values arrive exactly where the original frame had them; in a function that
calls zero-argument ``super()``, the original first local comes first (CPython's
``super()`` reads the frame's first slot).  Everything else --
the instructions after `offset`, exception table, line numbers -- is the
original's, so a break inside try/except/finally, a with block or a loop
resumes inside it: the handlers still cover the resumed instructions, and a
finally block runs exactly once.  The abstract `bytecode.Bytecode` is mapped
to decoded instructions one to one (labels and try markers aside), which we
check instruction by instruction; 3.13's two-local superinstructions are the
one exception (each becomes its two plain halves, see below).  Every
continuation is validated before use (`resume_check`): what CPython could not
run is refused, and the function runs natively instead.
"""

from __future__ import annotations

import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.frame import ORIGINAL_OFFSETS, decoded
from .resume_check import SUPER, check_continuation

PY = sys.version_info[:2]
CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08
CO_GENERATOR_LIKE = 0x20 | 0x80 | 0x100 | 0x200


def stack_param(i: int) -> str:
    return f"___stack{i}"


def _abstract(code):
    try:
        from bytecode import Bytecode, Instr
    except ImportError as e:  # a declared dependency; say so clearly when it is missing
        raise UnsupportedError(
            BreakReason.NO_CONTINUATION, f"the bytecode library is missing ({e})"
        ) from None
    b = Bytecode.from_code(code)
    reals = [i for i, x in enumerate(b) if isinstance(x, Instr)]
    bc, _ = decoded(code)
    if len(reals) != len(bc.instructions) or any(
        b[p].name != d.opname for p, d in zip(reals, bc.instructions)
    ):
        raise UnsupportedError(
            BreakReason.NO_CONTINUATION, "bytecode library and decoder disagree on this code"
        )
    return b, reals, bc


EXC_PARAM = "___exc_info"


def make_resume(
    fn: types.FunctionType,
    offset: int,
    stack_nulls: list[bool],
    live: list[str],
    name: str,
    exc_slots: tuple[int, ...] = (),
    exits: dict[int, tuple[int, int]] | None = None,
    prologue=None,
) -> types.FunctionType:
    """A function running `fn`'s code from `offset` with the given stack and locals.

    Its parameters: the non-NULL stack slots, ``___exc_info`` (with `exc_slots`), the
    `live` locals (cell variables excluded), then every cell variable of `fn`, each
    passed the cell object itself (`CELL_PARAMS` names them on the function).

    `exc_slots` are the stack indices of the "previous exception" slots of the except /
    finally blocks the offset is inside (outermost first).  CPython's PUSH_EXC_INFO pushed
    them and made the caught exception the handled one (``sys.exc_info()``, bare
    ``raise``, implicit ``__context__``); the prologue re-enters each block the same way:
    it runs PUSH_EXC_INFO on the exception handled there -- the next block's saved slot,
    or the extra parameter ``___exc_info`` for the innermost -- and keeps the
    previous exception it pushes in place of the saved slot (O12).

    `exits` ({original offset: (stack depth there, depth of its exception handler)}) makes
    a *loop runner* instead: it takes one more parameter, ``___exit``, and before each of
    those instructions it calls ``___exit(high, low, offset)`` (the stack's slots, see
    `handoff_code`), which returns ``(True, r)`` -- the runner returns `r`, a tail call to
    a captured continuation there -- or ``(False, reversed(high))`` -- the stack is rebuilt
    and the instruction runs natively.

    `prologue` (a generator's code only, `resume_gen`) replaces the prologue that pushes the
    stack and jumps: ``prologue(b, reals, bc, inserts, label)`` gets the abstract code, its
    instruction positions, the decoded code, the labels to insert before positions of `b`
    (it may add some) and the label of `offset`, and returns its instructions (labels and
    try markers allowed), its parameters (after the others) and the stack slots it needs."""
    from bytecode import Bytecode, Instr, Label

    code = fn.__code__
    if code.co_flags & CO_GENERATOR_LIKE and prologue is None:
        raise UnsupportedError(BreakReason.NO_CONTINUATION, "continuations of generators and coroutines")
    b, reals, bc = _abstract(code)
    _set_try_depths(b, reals, bc)
    index = bc.index_of(offset)
    label = Label()
    inserts = {reals[index]: [label]}
    before: dict[int, int] = {}  # original instruction index -> instructions inserted before it
    inserted: set[int] = set()
    for x, (depth, keep) in (exits or {}).items():
        k = bc.index_of(x)
        where = bc.instructions[k].positions[0] or code.co_firstlineno
        run = handoff_code(x, depth, keep, where)
        inserts.setdefault(reals[k], []).extend(run)
        inserted.update(id(ins) for ins in run)
        before[k] = sum(1 for ins in run if not isinstance(ins, Label))
    body: list = []
    own = prologue(b, reals, bc, inserts, label) if prologue is not None else None
    for pos, item in enumerate(b):
        body.extend(inserts.get(pos, ()))
        body.append(item)
    instrs = [x for x in body if isinstance(x, Instr)]
    body, widths = _split_superinstructions(body)
    widths = [w for x, w in zip(instrs, widths) if id(x) not in inserted]  # the originals'
    pro = []
    if code.co_freevars:
        pro.append(Instr("COPY_FREE_VARS", len(code.co_freevars)))
    pro.append(Instr("RESUME", 0))
    handled = {
        p: (stack_param(exc_slots[k + 1]) if k + 1 < len(exc_slots) else EXC_PARAM)
        for k, p in enumerate(exc_slots)
    }
    for i, null in enumerate(stack_nulls):
        if i in handled:
            pro += [Instr("LOAD_FAST", handled[i]), Instr("PUSH_EXC_INFO"), Instr("POP_TOP")]
        else:
            pro.append(Instr("PUSH_NULL") if null else Instr("LOAD_FAST", stack_param(i)))
    pro.append(Instr("JUMP_FORWARD", label))
    own_params, own_stack = (), 0
    if own is not None:
        pro, own_params, own_stack = own
    for ins in pro:
        if isinstance(ins, Instr):
            ins.lineno = code.co_firstlineno
    nb = Bytecode(pro + body)
    nb.name = code.co_name  # tracebacks and explain show the user's function
    nb.qualname = code.co_qualname
    nb.filename = code.co_filename
    nb.first_lineno = code.co_firstlineno
    nb.docstring = None
    cells = list(code.co_cellvars)
    live = [n for n in live if n not in cells]
    args = (
        [stack_param(i) for i, null in enumerate(stack_nulls) if not null]
        + ([EXC_PARAM] if exc_slots else [])
        + live
        + cells
    )
    args = super_first(code, args) + ([EXIT_PARAM] if exits else []) + list(own_params)
    nb.argnames = args
    nb.argcount = len(args)
    nb.posonlyargcount = 0
    nb.kwonlyargcount = 0
    nb.flags = code.co_flags & ~(CO_VARARGS | CO_VARKEYWORDS)
    nb.freevars = list(code.co_freevars)
    nb.cellvars = list(code.co_cellvars)
    try:
        # Keep the original handlers' stack depths, and the original stack size: the
        # library's flow analysis starts at the prologue and never sees the try-entries
        # it skips, so it gets their depths wrong and leaves their handlers out of the
        # size (a handler then pushes past the frame's stack).  After the prologue every
        # instruction runs at its original depth (`resume_check` verifies it).
        new_code = nb.to_code(
            stacksize=max(code.co_stacksize, len(stack_nulls) + 1, own_stack)
            + max((keep + 4 for _, keep in (exits or {}).values()), default=0),
            compute_exception_stack_depths=False,
        )
    except Exception as e:  # noqa: BLE001 - the library could not assemble it: no continuation, run natively
        raise UnsupportedError(
            BreakReason.NO_CONTINUATION, f"assembling the continuation failed: {e}"
        ) from None
    out = types.FunctionType(new_code, fn.__globals__, name, None, fn.__closure__)
    out.__qualname__ = f"{fn.__qualname__}.<resume@{offset}>"
    n_pro = sum(isinstance(ins, Instr) for ins in pro)
    offmap, aliases = _offset_map(new_code, n_pro, bc, widths, before)
    check_continuation(new_code, code, offmap, aliases)
    out.__bcfront_resume__ = (fn, offmap)
    setattr(out, CELL_PARAMS, tuple(cells))
    ORIGINAL_OFFSETS[new_code] = offmap
    return out


def super_self(code) -> str | None:
    """The local zero-argument ``super()`` reads in frames of `code`, or None when it does not
    use it: CPython reads the frame's first local (the first parameter, or the ``*args``
    tuple), so a continuation must keep that value in its own first slot."""
    if "__class__" not in code.co_freevars or not code.co_varnames:
        return None
    if code.co_argcount or code.co_kwonlyargcount or code.co_flags & (CO_VARARGS | CO_VARKEYWORDS):
        return code.co_varnames[0]
    return None


def super_first(code, params: list) -> list:
    """`params` (a continuation's parameter names, or its arguments in that order, as
    ``(name, value)`` pairs) with the one ``super()`` reads moved first (`super_self`)."""
    first = super_self(code)
    names = [p[0] if isinstance(p, tuple) else p for p in params]
    if first is None or first not in names:
        return list(params)
    i = names.index(first)
    return [params[i]] + params[:i] + params[i + 1 :]


CELL_PARAMS = "__bcfront_cells__"  # a continuation's parameters that are passed cells


# continuation code object -> {its offset: the original code's offset}, for reports
def _set_try_depths(b, reals, bc) -> None:
    """Give each TryBegin the stack depth of the original exception-table entry it opens
    (we keep them rather than let the library recompute them; see make_resume)."""
    from bytecode import TryBegin

    by_start = {e.start: e for e in bc.exception_table}
    real_at = {pos: i for i, pos in enumerate(reals)}
    for pos, item in enumerate(b):
        if not isinstance(item, TryBegin):
            continue
        nxt = next((p for p in range(pos + 1, len(b)) if p in real_at), None)
        entry = by_start.get(bc.instructions[real_at[nxt]].offset) if nxt is not None else None
        if entry is None:
            raise UnsupportedError(
                BreakReason.NO_CONTINUATION, "cannot match a try block to the exception table"
            )
        item.stack_depth = entry.depth


def _offset_map(new_code, n_prologue: int, bc, widths: list[int], before: dict[int, int]):
    """Offsets of the continuation's instructions -> offsets of the same original instructions
    (both halves of a split superinstruction map to the original one); and the first
    offset of each inserted hand-off -> the original instruction it stands before (a jump
    there stands for a jump to that instruction)."""
    new, _ = decoded(new_code)
    body = new.instructions[n_prologue:]
    if len(body) != sum(widths) + sum(before.values()) or len(widths) != len(bc.instructions):
        raise UnsupportedError(
            BreakReason.NO_CONTINUATION, "the continuation does not mirror the original code"
        )
    out, aliases, pos = {}, {}, 0
    for k, (width, b) in enumerate(zip(widths, bc.instructions)):
        extra = before.get(k, 0)
        if extra:
            aliases[body[pos].offset] = b.offset
            pos += extra
        for a in body[pos : pos + width]:
            out[a.offset] = b.offset
        pos += width
    return out, aliases


EXIT_PARAM = "___exit"


def handoff_code(x: int, depth: int, keep: int, lineno: int) -> list:
    """The instructions (and a label) that call ``___exit(high, low, x)`` before original
    offset `x` (see `make_resume`):
    return the tail call it gives, or rebuild the stack and fall through.

    `low` is a copy of the `keep` lowest slots (the depth of the exception handler covering
    the spot: they stay on the stack, so the stack never drops below the handler's depth),
    `high` the other ``depth - keep`` slots, taken off the stack and rebuilt from the
    reversed tuple ``___exit`` gives back."""
    from bytecode import Instr, Label

    native = Label()
    high = depth - keep
    out: list[Instr | Label] = [Instr("BUILD_TUPLE", high)]
    out += [Instr("COPY", keep + 1) for _ in range(keep)]  # the low slots, bottom first
    out.append(Instr("BUILD_TUPLE", keep))
    if PY >= (3, 13):  # callable, NULL, high, low
        out += [Instr("LOAD_FAST", EXIT_PARAM), Instr("SWAP", 3), Instr("PUSH_NULL"), Instr("SWAP", 3)]
    else:  # NULL, callable, high, low
        out += [Instr("PUSH_NULL"), Instr("SWAP", 3), Instr("LOAD_FAST", EXIT_PARAM), Instr("SWAP", 3)]
    out.append(Instr("LOAD_CONST", x))
    if PY < (3, 12):
        out.append(Instr("PRECALL", 3))
    out += [
        Instr("CALL", 3),
        Instr("UNPACK_SEQUENCE", 2),  # (done, payload): done on top
        Instr("POP_JUMP_FORWARD_IF_FALSE" if PY < (3, 12) else "POP_JUMP_IF_FALSE", native),
        Instr("RETURN_VALUE"),
        native,
        Instr("UNPACK_SEQUENCE", high),  # reversed: the first of them ends lowest
    ]
    for ins in out:
        if isinstance(ins, Instr):
            ins.lineno = lineno
    return out


# 3.13 superinstructions pack two local indices into 4-bit halves of one argument.  The
# continuation's parameters come first among its locals and shift every other index, so
# a pair may no longer fit -- and the bytecode library packs it without checking, making
# the instruction read or write a wrong local (O4's segfault, O5, O6).  The continuation
# uses the two plain instructions instead (`resume_check.SUPER`).


def _split_superinstructions(body: list) -> tuple[list, list[int]]:
    """`body` with every superinstruction split in two, and the number of instructions each
    original instruction became (in order)."""
    from bytecode import Instr

    out, widths = [], []
    for item in body:
        if not isinstance(item, Instr):
            out.append(item)
            continue
        pair = SUPER.get(item.name)
        if pair is None:
            out.append(item)
            widths.append(1)
            continue
        names: tuple = item.arg  # type: ignore[assignment]  # a superinstruction's pair of names
        for op, name in zip(pair, names):
            out.append(Instr(op, name, location=item.location))
        widths.append(2)
    return out, widths
