"""A started generator, rebuilt suspended at its yield: a generator of the resumed code.

A generator suspended at a ``yield`` (a ``@contextmanager``'s, inside its ``with``
block when the block breaks the graph) holds a position no Python code can
create.  `make_resumed_generator` makes a generator function whose code is the
original one behind a prologue (`resume.make_resume` with a generator
prologue), called with the yield's stack slots, the frame's locals and a flag
box; `suspend` calls it and steps it once, which runs nothing of the user's:
the generator stops at the prologue's own ``yield`` (point A), and from there

* ``next(g)`` / ``g.send(v)`` push the saved stack and `v` and jump to the
  instruction after the original yield: the code goes on exactly as the
  suspended generator would;
* ``g.throw(e)`` (``close()`` too: GeneratorExit) raises `e` again, under the
  exception handler that covers the original yield (the same try/finally
  blocks run), or out of the generator when none does;
* once a trace has run the rest of the generator itself, `finish` sets the
  flag and closes it: the thrown GeneratorExit then returns at once, so the
  code after the yield never runs a second time (CPython closes a generator it
  collects, which would run its finally block).

The next trace models such a generator again from its frame
(`model.resumed_gens`): `RESUMED` says, for each resumed code, where its
state lies.  3.11 to 3.13 (their ``YIELD_VALUE``/``RESUME`` arguments differ); a
generator with cells, NULL stack slots or inside an except block is refused.
"""

from __future__ import annotations

import sys

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.frame import decoded
from ..model.resumed_gens import DONE_PARAM, RESUMED, ResumedCode
from .resume import make_resume, stack_param

PY = sys.version_info[:2]
# the argument of point A's YIELD_VALUE: none on 3.11; on 3.12 the depth of the try blocks
# around it (1 would let close() skip them: CPython's implicit StopIteration handler is then
# the only one); 0 on 3.13, where RESUME 1 (not 5) after it says the same
_YIELD_ARG = {(3, 11): None, (3, 12): 2, (3, 13): 0}
_MADE: dict = {}  # (code, yield offset, stack depth, locals) -> (function, ResumedCode)


def _refuse(why: str):
    raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, f"a generator suspended at a yield {why}")


def make_resumed_generator(fn, yield_offset: int, depth: int, names: tuple[str, ...]):
    """(generator function, `ResumedCode`) for `fn`'s code suspended at the ``YIELD_VALUE``
    at `yield_offset` with `depth` stack slots (none NULL) below the yielded value and the
    locals `names` bound; its parameters: the stack slots, `names`, then the flag box."""
    code = fn.__code__
    key = (code, yield_offset, depth, names)
    hit = _MADE.get(key)
    if hit is not None:
        return hit
    if PY not in _YIELD_ARG:
        _refuse(f"on Python {PY[0]}.{PY[1]}")
    if code.co_cellvars or code.co_freevars:
        _refuse("with cell variables")
    bc, _ = decoded(code)
    k = bc.index_of(yield_offset)
    if bc.instructions[k].opname != "YIELD_VALUE" or k + 1 >= len(bc.instructions):
        _refuse("that is not a yield")
    after = bc.instructions[k + 1].offset
    prologue = _prologue(bc.handler_for(yield_offset), depth)
    out = make_resume(fn, after, [False] * depth, list(names), f"{code.co_name}_resumed", prologue=prologue)
    new_code = out.__code__
    # where a generator stopped at A reports it is (f_lasti: the yield on 3.11/3.12, the
    # instruction after it on 3.13), from a probe: the prologue reads no argument before A
    probe = out(*[None] * (depth + len(names)), [True])
    next(probe)
    a = probe.gi_frame.f_lasti
    probe.close()  # the flag is set: it returns at A
    info = ResumedCode(code, yield_offset, tuple(stack_param(i) for i in range(depth)), names, a)
    RESUMED[new_code] = info
    _MADE[key] = (out, info)
    return out, info


def suspend(make, lasti: int, *args):
    """``make(*args)`` stepped to its point A (see the module docstring)."""
    gen = make(*args)
    next(gen)
    if gen.gi_frame is None or gen.gi_frame.f_lasti != lasti:
        raise RuntimeError("bcfront: a rebuilt generator did not stop where it should (a bcfront bug)")
    return gen


def _prologue(handler, depth: int):
    """The generator prologue `make_resume` puts before the original code (see above)."""

    def build(b, reals, bc, inserts, label):
        from bytecode import Instr, Label, TryBegin, TryEnd

        jump_if_false = "POP_JUMP_FORWARD_IF_FALSE" if PY < (3, 12) else "POP_JUMP_IF_FALSE"
        caught, route = Label(), Label()

        def under_top():  # the saved stack slots, below the value on top
            out = []
            for i in range(depth):
                out += [Instr("LOAD_FAST", stack_param(i)), Instr("SWAP", 2)]
            return out

        at_a = TryBegin(caught, False, 0)
        pro = [
            Instr("RETURN_GENERATOR"),
            Instr("POP_TOP"),
            Instr("RESUME", 0),
            at_a,
            Instr("LOAD_CONST", None),
        ]
        arg = _YIELD_ARG[PY]
        pro += [Instr("YIELD_VALUE") if arg is None else Instr("YIELD_VALUE", arg), Instr("RESUME", 1)]
        pro += [TryEnd(at_a), *under_top(), Instr("JUMP_FORWARD", label)]
        # thrown in at A: finished by a trace -> return; else raise it at the original yield
        pro += [caught, Instr("LOAD_FAST", DONE_PARAM), Instr("LOAD_CONST", 0), Instr("BINARY_SUBSCR")]
        pro += [Instr(jump_if_false, route), Instr("POP_TOP"), Instr("LOAD_CONST", None)]
        pro += [Instr("RETURN_VALUE"), route, *under_top()]
        if handler is None:
            pro.append(Instr("RAISE_VARARGS", 1))
        else:
            there = TryBegin(_label_at(b, reals, bc, inserts, handler.target), handler.lasti, handler.depth)
            pro += [there, Instr("RAISE_VARARGS", 1), TryEnd(there)]
        return pro, (DONE_PARAM,), depth + 3

    return build


def _label_at(b, reals, bc, inserts, offset: int):
    """The label of the original instruction at `offset` (an exception handler's target)."""
    from bytecode import Instr, Label

    pos = reals[bc.index_of(offset)]
    p = pos - 1
    while p >= 0 and not isinstance(b[p], Instr):
        if isinstance(b[p], Label):
            return b[p]
        p -= 1
    label = Label()
    inserts.setdefault(pos, []).append(label)
    return label
