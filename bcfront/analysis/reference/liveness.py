"""Reference liveness: iterative backward dataflow over sets of names.

For each block, from its live-out set, walk the instructions backward: a write
removes the variable, a read adds it (each instruction's events in reverse
execution order, as `live_events.instruction_events` lists them; ``"*"`` reads
every variable).  Any instruction of a protected block may raise, so the
handler's live-in set is live before every instruction of the block.

    live_out(b) = ⋃ live_in(s) over the successors s of b (handlers included)
    live_in(b)  = the walk's result at b's first instruction

Iterated over all blocks until nothing changes (the least fixpoint), from empty
sets.  The fast version is `bcfront.analysis.liveness` (bitmasks, one pass in
layout order and a worklist).
"""

from __future__ import annotations

from types import CodeType

from ..bytecode import Instr
from ..live_events import instruction_events, variables_of
from .cfg import RefCFG


def _before(ins: Instr, code: CodeType, after: set[str], everything: tuple[str, ...]) -> set[str]:
    """The variables live before `ins`, given those live after it."""
    live = set(after)
    for kind, name in reversed(instruction_events(ins, code)):
        names = everything if name == "*" else (name,)
        if kind == "w":
            live.difference_update(names)
        else:
            live.update(n for n in names if n in everything)
    return live


def liveness(
    cfg: RefCFG, instrs: tuple[Instr, ...], code: CodeType
) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """(live_in, live_out) of every block, reachable or not."""
    everything = variables_of(code)[0]
    live_in: dict[int, set[str]] = {b: set() for b in cfg.blocks}
    live_out: dict[int, set[str]] = {b: set() for b in cfg.blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(list(cfg.blocks)):
            blk = cfg.blocks[b]
            out = set()
            for s, _ in blk.succs:
                out |= live_in[s]
            exc = live_in[blk.handler.target] if blk.handler is not None else set()
            live = out
            for i in range(blk.stop - 1, blk.first - 1, -1):
                live = _before(instrs[i], code, live, everything) | exc
            if out != live_out[b] or live != live_in[b]:
                live_out[b], live_in[b] = out, live
                changed = True
    return live_in, live_out


def live_before(
    cfg: RefCFG,
    instrs: tuple[Instr, ...],
    code: CodeType,
    live_in: dict[int, set[str]],
    live_out: dict[int, set[str]],
) -> list[set[str]]:
    """The variables live before each instruction (by position; unreachable ones too)."""
    everything = variables_of(code)[0]
    out: list[set[str]] = [set() for _ in instrs]
    for b, blk in cfg.blocks.items():
        exc = live_in[blk.handler.target] if blk.handler is not None else set()
        live = live_out[b]
        for i in range(blk.stop - 1, blk.first - 1, -1):
            live = _before(instrs[i], code, live, everything) | exc
            out[i] = live
    return out
