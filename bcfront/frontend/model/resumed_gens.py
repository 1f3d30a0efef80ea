"""Generators a region rebuilt at their yield, modelled again by the next trace.

A region that ends inside a ``@contextmanager``'s ``with`` block hands the
code after the break a generator suspended at its yield, rebuilt by
`regions.resume_gen` (a generator of a resumed code, stopped at its own point
A, its state in its parameters).  `RESUMED` maps each such code to a
`ResumedCode`: which original yield it stands for and where its stack and
locals lie.  When a later trace meets the generator (the ``with`` block's
``__exit__`` steps it), `wrap_resumed` models it as a generator frame of the
original code at that yield, its stack and locals read from the real frame
(``gi_frame.f_locals``, guarded), so the trace runs the rest of the generator
in the graph instead of breaking at ``next()``.  What the trace did to it is
replayed after the region (`OutsideGeneratorV.replay_ops`): a generator the
trace ran to its end is `finish`-ed (closed without running its code again).
"""

from __future__ import annotations

import builtins as _py_builtins
from dataclasses import dataclass

from ...errors import UnsupportedError
from ...reasons import BreakReason
from .frame import Frame
from .guard_kinds import GuardKind
from .sources import AttrSource, ItemSource
from .values import GeneratorV

DONE_PARAM = "___done"  # the flag box parameter: [True] once a trace ran the rest


@dataclass(frozen=True)
class ResumedCode:
    code: object  # the original generator's code object
    yield_offset: int  # its YIELD_VALUE the generator stands suspended at
    stack: tuple[str, ...]  # the parameters holding the stack slots below the yielded value
    names: tuple[str, ...]  # the parameters holding the original locals
    lasti: int  # f_lasti of the resumed code's own yield (point A)


RESUMED: dict = {}  # resumed generator code -> ResumedCode (filled by regions.resume_gen)


def finish(gen) -> None:
    """Mark a rebuilt generator run to its end by a trace and close it: its code after the
    yield does not run (again)."""
    gen.gi_frame.f_locals[DONE_PARAM][0] = True
    gen.close()


class OutsideGeneratorV(GeneratorV):
    """A generator from outside the trace, rebuilt by a region (`RESUMED`): a symbolic frame
    of the original code at its yield; its run in the trace is replayed on the real one."""

    __slots__ = ()

    def describe(self):
        return f"generator {self.frame.name} (suspended at a yield)"

    def describe_effect(self) -> tuple[str, str]:
        return "generator-step", self.source.readable()

    def replay_ops(self, rb) -> None:
        if not self.done:
            raise UnsupportedError(
                BreakReason.UNRECONSTRUCTABLE, "a generator from outside left suspended at another yield"
            )
        target = rb.pinned(self.source.expr(rb.ns))
        rb.positions.append(f"{rb.ns.const(finish, 'finish_generator')}({target})")


def wrap_resumed(tx, gen, source, wrap, remember):
    """The `OutsideGeneratorV` of real generator `gen` (fetched from `source`) of a resumed
    code, guarded to still stand at its point A; None when its code is not one of those."""
    info = RESUMED.get(gen.gi_code)
    frame_obj = gen.gi_frame
    if info is None or frame_obj is None or frame_obj.f_lasti != info.lasti:
        return None
    f_locals = frame_obj.f_locals
    if f_locals.get(DONE_PARAM) != [False]:
        return None
    tx.guard(GuardKind.TYPE_MATCH, source, type(gen))
    tx.guard(GuardKind.CONSTANT_MATCH, AttrSource(source, "gi_code"), gen.gi_code)
    frame_src = AttrSource(source, "gi_frame")
    tx.guard(GuardKind.CONSTANT_MATCH, AttrSource(frame_src, "f_lasti"), info.lasti)
    locals_src = AttrSource(frame_src, "f_locals")
    tx.guard(GuardKind.CONSTANT_MATCH, ItemSource(ItemSource(locals_src, DONE_PARAM), 0), False)
    fn_globals = frame_obj.f_globals
    b = fn_globals.get("__builtins__", _py_builtins)
    parent = tx.frames[-1] if tx.frames else None  # a callee's depth: a break is not inside it
    frame = Frame(info.code, fn_globals, b if isinstance(b, dict) else vars(b), parent=parent)
    v = OutsideGeneratorV(frame)
    v.source = source
    remember(tx, gen, v, source)  # one value however it is reached
    frame.generator = v
    frame.locals = {n: wrap(tx, f_locals[n], ItemSource(locals_src, n)) for n in info.names}
    frame.stack = [wrap(tx, f_locals[n], ItemSource(locals_src, n)) for n in info.stack]
    k = frame.bc.index_of(info.yield_offset)
    frame.cur = frame.instrs[k]
    frame.ip = k + 1
    v.started = True
    v.steps = 1
    return v
