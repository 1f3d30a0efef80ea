"""Control-flow graph of a decoded code object.

Blocks are identified by the offset of their first instruction and kept in
offset order.  A block ends at a jump, branch, return/raise, or just before a
leader: a jump target, an exception handler, or an instruction where an
exception-table entry begins or ends, so that every instruction of a block
shares one handler (`Block.handler`).  Edges carry a kind:

* ``fallthrough`` — to the next block in offset order;
* ``jump`` — an unconditional jump's target;
* ``branch`` — the taken side of a conditional (its other side is fallthrough);
* ``exception`` — from a block covered by an exception-table entry to its handler.

Blocks that cannot be reached from the entry (along any edge kind) are kept and
flagged `reachable=False`.  `EXIT` is a virtual exit node: every block that
returns, or raises with no handler, has an edge to it (listed in
`exit_preds`, not in `edges`), for post-dominance.  An instruction that may
raise anywhere else is not given an exit edge: post-dominance here is about
normal returns and explicit raises.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from itertools import chain, compress, count, repeat
from operator import itemgetter
from typing import NamedTuple, cast

from .bytecode import Bytecode, ExceptionEntry, Instr
from .ckernels import KERNELS
from .columns import shared_ints
from .decode import decode
from .opcodes import CONDITIONAL, OP, TERMINATORS

EXIT = -1  # the virtual exit's id; never a real offset

EDGE_KINDS = ("fallthrough", "jump", "branch", "exception")


class Edge(NamedTuple):
    """A typed CFG edge between two block starts (a NamedTuple: cheap to build by the thousand)."""

    src: int
    dst: int
    kind: str


class Block:
    """A basic block: the instructions at positions [first, stop) of the bytecode.

    Successors are in edge order (jump/branch target, fall-through, handler),
    predecessors likewise; a block reached along two edges (a branch to the
    next block) is listed twice, once per edge.  `instructions` (the `Instr`
    objects) is built on first access; the analyses read the bytecode's columns.
    """

    __slots__ = ("start", "handler", "succs", "preds", "index", "first", "stop", "_bytecode", "_instructions")
    # A class attribute, not a slot: the CFG stores nothing for the (many) reachable
    # blocks and turns an unreachable one into an `_UnreachableBlock`, which says False.
    reachable = True
    _instructions: tuple[Instr, ...]  # (a slot, unset until first read)

    def __init__(
        self,
        start: int,
        bytecode: Bytecode,
        first: int,
        stop: int,
        handler: ExceptionEntry | None,
        reachable: bool = True,
        succs: list[int] | None = None,
        preds: list[int] | None = None,
        index: int = 0,
    ):
        self.start = start
        self.handler = handler  # shared by every instruction of the block
        if not reachable:
            self.__class__ = _UnreachableBlock
        self.succs = [] if succs is None else succs
        self.preds = [] if preds is None else preds
        self.index = index  # position in offset order
        self.first = first  # position of its first instruction in the bytecode
        self.stop = stop  # one past its last instruction's position
        self._bytecode = bytecode

    @property
    def instructions(self) -> tuple[Instr, ...]:
        try:
            return self._instructions
        except AttributeError:  # not read yet (the CFG leaves the slot unset)
            ins = self._instructions = self._bytecode.instructions[self.first : self.stop]
            return ins

    @property
    def size(self) -> int:
        """Number of instructions."""
        return self.stop - self.first

    @property
    def end(self) -> int:
        """Offset just past the block's last instruction."""
        return self._bytecode.next_offset(self.stop - 1)

    @property
    def last(self) -> Instr:
        return self._bytecode.instructions[self.stop - 1]

    def __repr__(self) -> str:
        return f"<Block {self.start}..{self.end} {self.size} instrs>"


class _UnreachableBlock(Block):
    """A block the entry does not reach (same slots: a `Block` becomes one in place)."""

    __slots__ = ()
    reachable = False


# How each opcode ends a block, by opcode byte: 0 it does not (falls through), 1 branch, 2 jump, 3 return,
# 4 raise: one translate gives a whole function's, in C.
_FALLS, _BRANCH, _JUMP, _RETURN, _RAISE = 0, 1, 2, 3, 4


def _ending_table() -> bytes:
    ends = bytearray(256)
    for code, op in enumerate(OP):
        if op is None:
            continue
        if op == "JUMP":
            ends[code] = _JUMP
        elif op in CONDITIONAL:
            ends[code] = _BRANCH
        elif op in ("RETURN_VALUE", "RETURN_CONST"):
            ends[code] = _RETURN
        elif op in TERMINATORS:
            ends[code] = _RAISE
    return bytes(ends)


_ENDS = _ending_table()
_JUMPS_OR_BRANCHES = bytes(how in (_BRANCH, _JUMP) for how in range(256))  # on _ENDS values
# 1 for the opcodes that end a block (a translate table), and those that jump or branch
_ENDER_FLAGS = bytes(bool(how) for how in _ENDS)
_JUMPERS = bytes(c for c in range(256) if _ENDS[c] in (_BRANCH, _JUMP))


class CFG:
    """Basic blocks in offset order, typed edges, entry and a virtual exit."""

    def __init__(self, bytecode: Bytecode):
        self.bytecode = bytecode
        offsets = bytecode.offsets
        n = len(offsets)
        opbytes = bytecode.opcodes
        # one block: no table, no instruction but the last ends a block (a translate to
        # flags, then a memchr: cheaper than a regex search), and that one does not jump
        if (
            n
            and not bytecode.exception_table
            and 1 not in opbytes[:-1].translate(_ENDER_FLAGS)
            and opbytes[-1] not in _JUMPERS
        ):
            self._one_block(offsets[0], n)
            return
        # (the attributes in the same order on both paths: the instances share their keys)
        self.blocks: dict[int, Block] = {}
        self.exit_preds: list[int] = []
        # block -> kinds of its edges, as succs (shared tuples, one per combination)
        self.out_kinds: dict[int, tuple[str, ...]] = {}
        self.entry = 0
        self._starts: list[int] = []
        self._rpo: list[int] = []
        self.single_block = False
        if n:
            self._build()

    # -- construction -------------------------------------------------------
    def _build(self) -> None:
        bc = self.bytecode
        offsets = bc.offsets
        n = len(offsets)
        # `ints[k]` is k: the positions below, and the one object used for each block
        # start (offsets, jump targets and the exception table each hold their own int
        # objects): every list holds one int object per block, and callers may compare
        # blocks with `is`
        ints = shared_ints(bc.end + 1)
        self.entry = entry = ints[offsets[0]]
        targets = bc.targets
        ends = bc.opcodes.translate(_ENDS)
        # leaders: the entry, each instruction after a block-ending one, jump targets
        # (positions by binary search: decode checked that every jump target and table
        # entry lands on an instruction) and the table's edges
        leaders = set(compress(ints, b"\1" + ends[:-1]))  # the entry, and after each ender
        jumps: Iterable[int] | None = bc.jumps  # the jump targets, listed by the column decoders
        if jumps is None:  # (a jump's target is an int)
            jumps = cast("Iterable[int]", compress(targets, ends.translate(_JUMPS_OR_BRANCHES)))
        leaders.update(map(bisect.bisect_left, repeat(offsets), jumps))
        table: Sequence[ExceptionEntry] = bc.exception_table
        if table:
            if len(table) > 1:
                table = sorted(table, key=_BY_START)
            # each entry's start, target and end (which may be a prefix or the end)
            leaders.update(
                map(bisect.bisect_left, repeat(offsets), chain.from_iterable(map(_EDGE_OFFSETS, table)))
            )
        leaders.discard(n)
        cuts = sorted(leaders)
        cuts.append(n)
        # Blocks in order, each with the table entry covering its first instruction (the
        # table is walked alongside) and its out-edges: the last instruction's jump, then
        # fall-through, then the handler.  Predecessor lists exist before their blocks,
        # filled as the edges are made (so in the order of their sources, then of edges).
        # `edges` is built from the successors and their kinds when first read.
        blocks = self.blocks
        starts = self._starts = list(map(ints.__getitem__, map(offsets.__getitem__, cuts[:-1])))
        plists: list[list[int]] = [[] for _ in starts]  # each block's predecessors
        preds = dict(zip(starts, plists))
        MAKE_BLOCKS(
            bc,
            cuts,
            starts,
            plists,
            preds,
            ends,
            targets,
            ints,
            table,
            blocks,
            self.out_kinds,
            self.exit_preds,
        )
        self._rpo = rpo = BLOCK_RPO(blocks, entry, blocks[entry].succs, True)
        if len(rpo) != len(blocks):  # (`reachable` is True unless the block says not)
            for b in blocks.keys() - rpo:
                blocks[b].__class__ = _UnreachableBlock

    def _one_block(self, entry: int, n: int) -> None:
        """The whole code is one block (no instruction but the last ends a block, and that
        one does not jump; no exception table): it returns, raises, or falls off the end.
        Most code objects: the attributes are set once each, the block's slots directly."""
        blk = _new_block(Block)
        blk.start = entry
        blk.handler = None
        blk.succs = []
        blk.preds = []
        blk.index = blk.first = 0
        blk.stop = n
        blk._bytecode = self.bytecode
        self.blocks = {entry: blk}
        self.exit_preds = [entry]
        self.out_kinds = {entry: _NO_EDGE}
        self.entry = entry
        # (one list for the offset order and the RPO, which are the same here and read-only)
        self._starts = self._rpo = [entry]
        self.single_block = True  # the analyses' answers are fixed (`dominance`, `loops`)

    # -- queries ------------------------------------------------------------
    @property
    def edges(self) -> list[Edge]:
        """Every edge, by source block in offset order, each block's in successor order
        (built on first access from the successor lists and `out_kinds`)."""
        edges = self.__dict__.get("_edges")
        if edges is None:
            new, blocks, kinds = _new, self.blocks, self.out_kinds
            edges = self._edges = [
                new(Edge, (s, d, k)) for s in self._starts for d, k in zip(blocks[s].succs, kinds[s])
            ]
        return edges

    def successors(self, start: int) -> list[int]:
        return self.blocks[start].succs

    def predecessors(self, start: int) -> list[int]:
        return self.blocks[start].preds

    def block_of(self, offset: int) -> Block:
        """The block containing the instruction at `offset` (binary search, O(log n))."""
        i = bisect.bisect_right(self._starts, offset) - 1
        if i < 0:
            raise KeyError(offset)
        blk = self.blocks[self._starts[i]]
        if offset >= blk.end:
            raise KeyError(offset)
        return blk

    @property
    def order(self) -> list[int]:
        """Block starts in offset order."""
        return self._starts

    @property
    def rpo(self) -> list[int]:
        """Reachable blocks in reverse post-order of a DFS from the entry (successors in
        edge order).  The reachable blocks are exactly these."""
        return self._rpo

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


# The kinds of a block's out-edges (`CFG.out_kinds`): one tuple per combination, shared.
_NO_EDGE, FALLTHROUGH_ONLY, _JUMP_ONLY = (), ("fallthrough",), ("jump",)
_BRANCH_ONLY, _BRANCH_FALL = ("branch",), ("branch", "fallthrough")
# (in the order of the ending codes below: falls off the end, falls through, branches
# at the end, branches, jumps)
_EDGE_KIND_TUPLES = (_NO_EDGE, FALLTHROUGH_ONLY, _BRANCH_ONLY, _BRANCH_FALL, _JUMP_ONLY)
_AND_EXCEPTION = {k: k + ("exception",) for k in _EDGE_KIND_TUPLES}
_START, _END, _TARGET = 0, 1, 2  # an `ExceptionEntry`'s fields, by index
_BY_START = itemgetter(_START)
_EDGE_OFFSETS = itemgetter(_START, _TARGET, _END)
_new = tuple.__new__
_new_block = object.__new__


def block_rpo(blocks: dict[int, Block], root: int, first: Iterable[int], forward: bool) -> list[int]:
    """`dominance.reverse_postorder` specialized to blocks (the same DFS, without the
    callable): `root`, then the blocks reached from its neighbours `first` and on
    through each block's `succs` (`forward`: the CFG from its entry) or `preds` (the
    reversed CFG from `EXIT`), in reverse post-order, neighbours visited in order.
    The blocks not found yet are a copy of `blocks` (a memcpy), each popped when
    found: one C call per edge both tests and marks.  The path is two parallel stacks
    (its nodes, and an iterator over each one's neighbours): no tuple per step; a
    node without neighbours is finished as soon as it is found.  The reference of the
    C kernel ``block_rpo`` (`ckernels`), which `BLOCK_RPO` is where built."""
    todo = blocks.copy()
    pop = todo.pop
    pop(root, None)
    order: list[int] = []
    path = [root]
    pending = [iter(first)]
    while pending:
        for s in pending[-1]:
            blk = pop(s, None)
            if blk is not None:
                out = blk.succs if forward else blk.preds
                if out:
                    path.append(s)
                    pending.append(iter(out))
                    break
                order.append(s)
        else:
            pending.pop()
            order.append(path.pop())
    order.reverse()
    return order


def make_blocks(
    bc: Bytecode,
    cuts: list[int],
    starts: list[int],
    plists: list[list[int]],
    preds: dict[int, list[int]],
    ends: bytes,
    targets: list[int | None],
    ints: list[int],
    table: Sequence[ExceptionEntry],
    blocks: dict[int, Block],
    out_kinds: dict[int, tuple[str, ...]],
    exit_preds: list[int],
) -> None:
    """`CFG._build`'s loop over the blocks: make each `Block` into `blocks` (block k holds
    the instructions at positions ``cuts[k] .. cuts[k+1]-1`` and starts at offset
    ``starts[k]``; `ends`: how each instruction ends a block, `_ENDS`' codes), with the
    table entry covering its first instruction (`table`, sorted by start, walked
    alongside) and its out-edges -- the last instruction's jump, then fall-through, then
    the handler -- into `out_kinds`, each edge's source appended to its target's
    predecessor list (`plists[k]`, ``preds[start]``: the same lists), and the blocks that
    leave the function to `exit_preds`.  The reference of the C kernel ``make_blocks``
    (`ckernels`), which `MAKE_BLOCKS` is where built."""
    # (the annotations below instead of `cast` calls: this runs once per code object)
    nxt_starts: list[int | None] = starts[1:]  # type: ignore[assignment]
    nxt_starts.append(None)
    nxt_plists: list[list[int] | None] = plists[1:]  # type: ignore[assignment]  # (the fall-through's, without a lookup)
    nxt_plists.append(None)
    k, nt = 0, len(table)
    h = None
    out: list[int]
    kinds: tuple[str, ...]
    block = _new_block
    for bi, a, b, start, nxt, ps, nps in zip(count(), cuts, cuts[1:], starts, nxt_starts, plists, nxt_plists):
        if nt:
            # (the entries' fields by index, _START/_END/_TARGET: a tuple subscript is
            # cheaper than a NamedTuple field's descriptor)
            while k < nt and table[k][_END] <= start:
                k += 1
            h = table[k] if k < nt and table[k][_START] <= start else None
        how = ends[b - 1]
        if how == _FALLS:
            if nxt is None:  # falls off the end: malformed, treat as leaving
                out, kinds = [], _NO_EDGE
                exit_preds.append(start)
            else:
                out, kinds = [nxt], FALLTHROUGH_ONLY
                nps.append(start)
        elif how == _BRANCH:
            dst = ints[targets[b - 1]]
            preds[dst].append(start)
            if nxt is None:
                out, kinds = [dst], _BRANCH_ONLY
                exit_preds.append(start)
            else:
                out, kinds = [dst, nxt], _BRANCH_FALL
                nps.append(start)
        elif how == _JUMP:
            dst = ints[targets[b - 1]]
            out, kinds = [dst], _JUMP_ONLY
            preds[dst].append(start)
        else:
            out, kinds = [], _NO_EDGE
            if how == _RETURN or h is None:
                exit_preds.append(start)
        if h is not None:
            dst = ints[h[_TARGET]]
            out.append(dst)
            kinds = _AND_EXCEPTION[kinds]
            preds[dst].append(start)
        out_kinds[start] = kinds
        # the slots one by one: cheaper than a call to Block.__init__
        blk = blocks[start] = block(Block)
        blk.start = start
        blk.handler = h
        blk.succs = out
        blk.preds = ps
        blk.index = bi
        blk.first = a
        blk.stop = b
        blk._bytecode = bc  # (`_instructions` stays unset until first read)


# the C kernels where built, else their references
if KERNELS is not None:
    # (the class whose slots it sets, and the edge kinds' tuples: each alone, then with
    # an exception edge added)
    KERNELS.set_cfg(Block, _EDGE_KIND_TUPLES + tuple(_AND_EXCEPTION[k] for k in _EDGE_KIND_TUPLES))
    BLOCK_RPO, MAKE_BLOCKS = KERNELS.block_rpo, KERNELS.make_blocks
else:
    BLOCK_RPO, MAKE_BLOCKS = block_rpo, make_blocks


def build_cfg(obj: object) -> CFG:
    """CFG of a function, code object, or already decoded `Bytecode`."""
    return CFG(obj if isinstance(obj, Bytecode) else decode(obj))
