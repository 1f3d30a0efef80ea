"""Control-flow graph of a decoded code object.

Blocks are identified by the offset of their first instruction and kept in
offset order.  A block ends at a jump, branch, return/raise, or just before a
leader (a jump target, an exception handler, or the first instruction whose
exception-table entry differs from its predecessor's, so that every
instruction of a block shares one handler).  Edges carry a kind:

* ``fallthrough`` — to the next block in offset order;
* ``jump`` — an unconditional jump's target;
* ``branch`` — the taken side of a conditional (its other side is fallthrough);
* ``exception`` — from a block covered by an exception-table entry to its handler.

Blocks that cannot be reached from the entry (along any edge kind) are kept and
flagged `reachable=False`.  `EXIT` is a virtual exit node: every block that
returns or raises without a handler has an edge to it (in `exit_preds`), for
post-dominance.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .decode import Bytecode, ExceptionEntry, Instr, decode

EXIT = -1  # the virtual exit's id; never a real offset

EDGE_KINDS = ("fallthrough", "jump", "branch", "exception")


@dataclass(frozen=True, slots=True)
class Edge:
    src: int
    dst: int
    kind: str


@dataclass(slots=True, eq=False)
class Block:
    start: int
    instructions: tuple[Instr, ...]
    handler: ExceptionEntry | None   # shared by every instruction of the block
    reachable: bool = True
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)

    @property
    def end(self) -> int:
        """Offset just past the block's last instruction."""
        return self.instructions[-1].next_offset

    @property
    def last(self) -> Instr:
        return self.instructions[-1]

    def __repr__(self) -> str:
        return f"<Block {self.start}..{self.end} {len(self.instructions)} instrs>"


class CFG:
    """Basic blocks in offset order, typed edges, entry and a virtual exit."""

    def __init__(self, bytecode: Bytecode):
        self.bytecode = bytecode
        self.blocks: dict[int, Block] = {}
        self.edges: list[Edge] = []
        self.exit_preds: list[int] = []
        self._build()

    # -- construction -------------------------------------------------------
    def _build(self) -> None:
        instrs = self.bytecode.instructions
        if not instrs:
            self.entry = 0
            return
        bc = self.bytecode
        leaders = {instrs[0].offset}
        for e in bc.exception_table:
            leaders.add(e.target)
        prev_handler = object()
        for i, ins in enumerate(instrs):
            h = bc.handler_for(ins.offset)
            if h is not prev_handler and i > 0 and h != prev_handler:
                leaders.add(ins.offset)
            prev_handler = h
            if ins.jump_target is not None:
                leaders.add(ins.jump_target)
            if (ins.jump_target is not None or ins.is_terminator) and i + 1 < len(instrs):
                leaders.add(instrs[i + 1].offset)
        current: list[Instr] = []
        starts = []
        for ins in instrs:
            if ins.offset in leaders and current:
                starts.append(current)
                current = []
            current.append(ins)
        starts.append(current)
        for chunk in starts:
            b = Block(chunk[0].offset, tuple(chunk), bc.handler_for(chunk[0].offset))
            self.blocks[b.start] = b
        self.entry = instrs[0].offset
        order = list(self.blocks)
        for i, start in enumerate(order):
            b = self.blocks[start]
            last = b.last
            nxt = order[i + 1] if i + 1 < len(order) else None
            if last.jump_target is not None:
                self._add(start, last.jump_target, "jump" if last.is_jump else "branch")
            if last.falls_through and nxt is not None:
                self._add(start, nxt, "fallthrough")
            if b.handler is not None:
                self._add(start, b.handler.target, "exception")
            if last.op in ("RETURN_VALUE", "RETURN_CONST") or (
                    last.is_terminator and b.handler is None):
                self.exit_preds.append(start)
            elif last.falls_through and nxt is None:
                self.exit_preds.append(start)  # malformed tail; treat as leaving
        self._mark_reachable()

    def _add(self, src: int, dst: int, kind: str) -> None:
        if dst not in self.blocks:
            raise ValueError(f"edge {src}->{dst}: no block starts at {dst}")
        self.edges.append(Edge(src, dst, kind))
        self.blocks[src].succs.append(dst)
        self.blocks[dst].preds.append(src)

    def _mark_reachable(self) -> None:
        for b in self.blocks.values():
            b.reachable = False
        if not self.blocks:
            return
        work = [self.entry]
        self.blocks[self.entry].reachable = True
        while work:
            for s in self.blocks[work.pop()].succs:
                if not self.blocks[s].reachable:
                    self.blocks[s].reachable = True
                    work.append(s)

    # -- queries ------------------------------------------------------------
    def successors(self, start: int) -> list[int]:
        return self.blocks[start].succs

    def predecessors(self, start: int) -> list[int]:
        return self.blocks[start].preds

    def block_of(self, offset: int) -> Block:
        """The block containing the instruction at `offset`."""
        import bisect
        starts = list(self.blocks)
        i = bisect.bisect_right(starts, offset) - 1
        if i < 0:
            raise KeyError(offset)
        return self.blocks[starts[i]]

    @property
    def reachable(self) -> list[int]:
        return [s for s, b in self.blocks.items() if b.reachable]

    @property
    def unreachable(self) -> list[int]:
        return [s for s, b in self.blocks.items() if not b.reachable]

    def edges_of_kind(self, kind: str) -> list[Edge]:
        return [e for e in self.edges if e.kind == kind]

    def __repr__(self) -> str:
        return f"<CFG {self.bytecode.code.co_name}: {len(self.blocks)} blocks, {len(self.edges)} edges>"


def build_cfg(obj) -> CFG:
    """CFG of a function, code object, or already decoded `Bytecode`."""
    return CFG(obj if isinstance(obj, Bytecode) else decode(obj))
