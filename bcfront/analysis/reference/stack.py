"""Reference stack depths: a worklist over instructions (abstract interpretation).

The depth before the first instruction is 0.  From an instruction at depth d
with effect e (`stack_effects.effect_of`, the per-opcode rules), control reaches:

* the next instruction, at ``d - e.pops + len(e.fall)``, unless it jumps
  unconditionally, returns or raises;
* its jump target, at ``d - e.pops + len(e.jump)``, if it jumps or branches;
* the handler of the exception-table entry covering it, at the entry's
  `handler_depth`.

Each instruction is given a depth when first reached; reaching it again with
another depth is an error (`StackDepthError`), as is popping below the bottom.
Unreachable instructions keep -1.  The fast version is `bcfront.analysis.stack`.
"""

from __future__ import annotations

from ..bytecode import Bytecode
from ..stack import StackDepthError
from ..stack_effects import effect_of


def stack_depths(bc: Bytecode) -> list[int]:
    """Depth before each instruction, by position (-1: unreachable)."""
    instrs = bc.instructions
    position = {ins.offset: i for i, ins in enumerate(instrs)}
    depth = [-1] * len(instrs)
    if not instrs:
        return depth

    def reach(i: int, d: int) -> None:
        if depth[i] < 0:
            depth[i] = d
            work.append(i)
        elif depth[i] != d:
            raise StackDepthError(f"instruction {instrs[i].offset} reached with depths {depth[i]} and {d}")

    work: list[int] = []
    reach(0, 0)
    while work:
        i = work.pop()
        ins, d = instrs[i], depth[i]
        eff = effect_of(ins, bc.version)
        if d < eff.pops:
            raise StackDepthError(f"instruction {ins.offset} pops below the bottom")
        if not (ins.is_jump or ins.is_terminator) and i + 1 < len(instrs):
            reach(i + 1, d - eff.pops + len(eff.fall))
        if ins.jump_target is not None and (ins.is_jump or ins.is_branch):
            reach(position[ins.jump_target], d - eff.pops + len(eff.jump))
        entry = bc.handler_for(ins.offset)
        if entry is not None:
            reach(position[entry.target], entry.handler_depth)
    return depth
