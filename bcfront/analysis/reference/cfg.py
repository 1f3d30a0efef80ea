"""Reference CFG construction: leaders, then blocks, then edges (the textbook way).

1. Leaders: the first instruction; every jump target; every instruction after
   a jump, branch, return or raise; the first instruction at or after where an
   exception-table entry starts or ends, and every handler.
2. A block runs from a leader up to the next leader.
3. Edges of a block, from its last instruction: the jump or branch target
   (kind ``jump`` or ``branch``), then the next block if control can fall
   through (``fallthrough``), then the handler of the table entry covering the
   block's first instruction (``exception``).  A block whose last instruction
   returns, raises without a handler, or falls off the end of the code (or
   branches there) also leads to the virtual exit.
4. Reachable blocks: a depth-first search from the entry along every edge.

Same definitions as `bcfront.analysis.cfg` (whose docstring gives them).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..bytecode import Bytecode, ExceptionEntry


@dataclass
class RefBlock:
    start: int  # offset of its first instruction
    first: int  # position of its first instruction
    stop: int  # one past its last instruction's position
    handler: ExceptionEntry | None
    succs: list[tuple[int, str]] = field(default_factory=list)  # (block, edge kind)
    preds: list[int] = field(default_factory=list)


@dataclass
class RefCFG:
    entry: int
    blocks: dict[int, RefBlock]  # by start offset, in offset order
    exit_preds: list[int]  # blocks with an edge to the virtual exit
    reachable: set[int]
    rpo: list[int]  # reachable blocks in reverse post-order


def build_cfg(bc: Bytecode) -> RefCFG:
    """The CFG of decoded bytecode, by the steps in the module docstring."""
    instrs = bc.instructions
    if not instrs:
        return RefCFG(0, {}, [], set(), [])
    position = {ins.offset: i for i, ins in enumerate(instrs)}
    table = bc.exception_table
    # 1. leaders (as instruction positions)
    leaders = {0}
    for i, ins in enumerate(instrs):
        if ins.jump_target is not None:
            leaders.add(position[ins.jump_target])
        if ins.is_jump or ins.is_branch or ins.is_terminator:
            leaders.add(i + 1)
    for e in table:  # (an entry may end at an EXTENDED_ARG prefix: the next instruction)
        for offset in (e.start, e.end, e.target):
            leaders.add(next((i for i, ins in enumerate(instrs) if ins.offset >= offset), len(instrs)))
    leaders.discard(len(instrs))
    cuts = sorted(leaders) + [len(instrs)]
    # 2. blocks
    blocks: dict[int, RefBlock] = {}
    for first, stop in itertools.pairwise(cuts):
        start = instrs[first].offset
        handler = next((e for e in table if e.start <= start < e.end), None)
        blocks[start] = RefBlock(start, first, stop, handler)
    # 3. edges
    starts = list(blocks)
    exit_preds = []
    for k, b in enumerate(starts):
        blk = blocks[b]
        last = instrs[blk.stop - 1]
        after = starts[k + 1] if k + 1 < len(starts) else None
        if last.jump_target is not None and last.is_jump:
            blk.succs.append((last.jump_target, "jump"))
        elif last.jump_target is not None and last.is_branch:
            blk.succs.append((last.jump_target, "branch"))
        falls = not (last.is_jump or last.is_terminator)
        if falls and after is not None:
            blk.succs.append((after, "fallthrough"))
        if falls and after is None:
            exit_preds.append(b)  # falls off the end (or may branch there)
        elif last.is_terminator and (last.op in ("RETURN_VALUE", "RETURN_CONST") or blk.handler is None):
            exit_preds.append(b)
        if blk.handler is not None:
            blk.succs.append((blk.handler.target, "exception"))
    for b in starts:
        for s, _ in blocks[b].succs:
            blocks[s].preds.append(b)
    # 4. reachability and reverse post-order (a DFS, successors in edge order)
    entry = starts[0]
    seen = {entry}
    post: list[int] = []
    stack = [(entry, iter(blocks[entry].succs))]
    while stack:
        node, it = stack[-1]
        for s, _ in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(blocks[s].succs)))
                break
        else:
            stack.pop()
            post.append(node)
    return RefCFG(entry, blocks, exit_preds, seen, post[::-1])
