"""Abstract simulation of the operand stack: depth and slot use of each instruction.

Definitions.  Stack slots are numbered from 0 at the bottom.  `depth` of an
instruction is the number of slots in use just before it executes.  What each
instruction pops, reads and pushes is its `Effect` (`stack_effects`, the
per-opcode rules).

Exception handlers start at depth ``entry.depth + entry.lasti + 1`` (the
stack unwound to `depth`, then the raising offset if `lasti`, then the
exception).  Depths must agree wherever control merges; `StackDepthError`
says where they do not.  Unreachable blocks have no depth (-1).
"""

from __future__ import annotations

from itertools import accumulate
from operator import attrgetter, itemgetter, sub

from .cfg import CFG, FALLTHROUGH_ONLY, Block
from .ckernels import KERNELS
from .opcodes import PY
from .stack_effects import BY_UNIT, PY_TABLE, Effect, effect_of


class StackDepthError(ValueError):
    """Two paths reach one instruction with different stack depths (or a pop underflows)."""


_NET = attrgetter("net")  # (for the careful walk)
_POPS = attrgetter("pops")


class StackInfo:
    """Stack depth before every reachable instruction and each instruction's `Effect`.

    `depth[i]` and `effects[i]` are indexed like ``bytecode.instructions``;
    `depth_in[b]` is the entry depth of reachable block `b`, `block_low[b]` the lowest
    slot an instruction of it pops (the least ``depth[i] - effects[i].pops``): it changes
    no slot below that.
    """

    # slots: one object fewer per function (no instance dict) for the allocator and the GC
    __slots__ = ("cfg", "version", "_bytecode", "effects", "depth", "depth_in", "max_depth", "block_low")

    def __init__(self, cfg: CFG):
        bc = cfg.bytecode
        self.cfg = cfg
        self.version = version = bc.version
        self._bytecode = bc
        effects: list[Effect]
        if version == PY:
            # the table's `column`, its common case inline (one call less per function):
            # one C-level pick from the unit-indexed list, checked for units not met yet
            units = bc.units
            try:
                effects = (
                    # (None for a unit not met yet: checked below; an (opcode, arg) key: TypeError)
                    list(itemgetter(*units)(BY_UNIT)) if len(units) > 1 else [BY_UNIT[u] for u in units]  # type: ignore[misc,index]
                )
                if not all(effects):  # (an Effect is always true, None is not)
                    effects = PY_TABLE.column(bc)
            except TypeError:  # (opcode, arg) keys: the code has EXTENDED_ARG
                effects = PY_TABLE.column(bc)
        else:
            effects = [effect_of(ins, version) for ins in bc.instructions]
        self.effects: list[Effect] = effects
        blocks = cfg.blocks
        if len(blocks) == 1:  # most code objects: no edges to follow
            if self._one_block(blocks, effects):
                return
        elif blocks and self._in_layout_order(cfg, effects):
            return
        self.depth: list[int] = [-1] * len(effects)
        self.depth_in: dict[int, int] = {}
        self.block_low: dict[int, int] = {}
        self.max_depth = 0
        if blocks:
            self._simulate()  # the careful walk, and its error messages

    @property
    def index(self) -> dict[int, int]:
        """offset -> instruction position (the bytecode's)."""
        return self._bytecode.index

    # The fast walks: depths of the whole function in one pass over the effects, in
    # layout order; False (nothing set) if a pop underflows, two paths disagree or a
    # block is reached only from later ones (which CPython's compiler does not lay
    # out), for `_simulate` to say where.  A plain Python loop: cheaper, on the short
    # blocks most code is made of, than the chain of C-level passes (picks through
    # unit-indexed columns, running sums, compares) it replaced, each call of which has
    # a fixed cost and a generic per-item one.

    def _one_block(self, blocks: dict[int, Block], effects: list[Effect]) -> bool:
        ((b, blk),) = blocks.items()
        if blk.succs:  # one that loops onto itself: the careful walk
            return False
        depth: list[int] = []
        if BLOCK_DEPTHS(effects, 0, len(effects), 0, depth) is None:
            return False  # a pop below the bottom
        self.depth = depth
        self.depth_in = {b: 0}
        # (its first instruction pops nothing from the empty stack: its base is 0)
        self.block_low = {b: 0}
        self.max_depth = max(depth)
        return True

    def _in_layout_order(self, cfg: CFG, effects: list[Effect]) -> bool:
        """The blocks in layout order, each one's entry depth known from an earlier one
        (`entry`, filled in along the edges): its depths follow from it, and its edges
        give its successors theirs."""
        blocks = cfg.blocks
        kinds = cfg.out_kinds
        entry = {cfg.entry: 0}
        get = entry.get
        depth_in = {}  # (in layout order, as the careful walk's is not)
        block_low = {}
        depth: list[int] = []
        block_depths = BLOCK_DEPTHS
        for b, blk in blocks.items():
            d = get(b)
            if d is None:
                if blk.reachable:
                    return False  # reached only from later blocks
                depth += [-1] * blk.size
                continue
            depth_in[b] = d
            ends = block_depths(effects, blk.first, blk.stop, d, depth)
            if ends is None:
                return False  # a pop below the bottom
            # d: the depth after the last instruction's fall-through
            d, block_low[b] = ends
            ks = kinds[b]
            if ks is FALLTHROUGH_ONLY:  # (the commonest kinds without a loop)
                dst = blk.succs[0]
                old = get(dst)
                if old is None:
                    entry[dst] = d
                elif old != d:
                    return False
                continue
            if not ks:
                continue
            for dst, kind in zip(blk.succs, ks):
                if kind == "fallthrough":
                    nd = d
                elif kind == "exception":  # the handler's depth (`handler_depth`, inline)
                    h = blk.handler
                    nd = h.depth + h.lasti + 1  # type: ignore[union-attr]  # an exception edge: a handler
                else:
                    eff = effects[blk.stop - 1]  # (the last instruction's)
                    nd = depth[-1] - eff.pops + len(eff.jump)
                old = get(dst)
                if old is None:
                    entry[dst] = nd
                elif old != nd:
                    return False
        self.depth = depth
        self.depth_in = depth_in
        self.block_low = block_low
        self.max_depth = max(depth)
        return True

    def _simulate(self) -> None:
        cfg, effects, depth = self.cfg, self.effects, self.depth
        blocks = cfg.blocks
        depth_in = self.depth_in
        depth_in[cfg.entry] = 0
        work = [cfg.entry]
        top = 0
        kinds = cfg.out_kinds
        nets = list(map(_NET, effects))
        pops = list(map(_POPS, effects))
        while work:
            b = work.pop()
            block = blocks[b]
            lo, hi = block.first, block.stop
            # depths before each instruction (and after the last one's fall-through)
            ds = list(accumulate(nets[lo:hi], initial=depth_in[b]))
            low = self.block_low[b] = min(map(sub, ds, pops[lo:hi]))
            if low < 0:
                self._underflow(lo, ds, effects[lo:hi])
            fall = ds.pop()
            depth[lo:hi] = ds
            d = ds[-1]
            eff = effects[hi - 1]
            m = max(ds)
            if m > top:
                top = m
            hd = block.handler.handler_depth if block.handler is not None else 0
            for dst, kind in zip(block.succs, kinds[b]):
                if kind == "exception":
                    nd = hd
                elif kind == "fallthrough":
                    nd = fall
                else:
                    nd = d - eff.pops + len(eff.jump)
                if nd > top:
                    top = nd
                old = depth_in.get(dst)
                if old is None:
                    depth_in[dst] = nd
                    work.append(dst)
                elif old != nd:
                    raise StackDepthError(
                        f"{cfg.bytecode.code.co_qualname}: block {dst} is entered with stack "
                        f"depth {old} and, along the {kind} edge from block {b}, with depth {nd}"
                    )
        self.max_depth = top

    def _underflow(self, lo: int, ds: list[int], effs: list[Effect]) -> None:
        for k, (d, eff) in enumerate(zip(ds, effs)):
            if d < eff.pops:
                off = self.cfg.bytecode.offsets[lo + k]
                raise StackDepthError(
                    f"{self.cfg.bytecode.code.co_qualname}: the instruction at "
                    f"offset {off} pops {eff.pops} values from a stack of "
                    f"depth {d}"
                )

    # -- queries ------------------------------------------------------------
    def depth_before(self, offset: int) -> int:
        """Stack depth just before the instruction at `offset` (-1 if unreachable)."""
        return self.depth[self.index[offset]]

    def depth_after(self, offset: int, edge_kind: str = "fallthrough") -> int:
        i = self.index[offset]
        eff = self.effects[i]
        if self.depth[i] < 0:
            return -1
        return self.depth[i] - eff.pops + len(eff.outs(edge_kind))

    def reads(self, offset: int) -> tuple[int, ...]:
        """Absolute stack slots the instruction at `offset` reads."""
        i = self.index[offset]
        d, eff = self.depth[i], self.effects[i]
        if d < 0:
            return ()
        base = d - eff.pops
        return tuple(base + u for u in eff.uses)

    def writes(self, offset: int, edge_kind: str = "fallthrough") -> tuple[int, ...]:
        """Absolute slots whose content the instruction changes (new or moved values)."""
        i = self.index[offset]
        d, eff = self.depth[i], self.effects[i]
        if d < 0:
            return ()
        base = d - eff.pops
        return tuple(base + j for j, o in enumerate(eff.outs(edge_kind)) if o >= 0 or ~o != j)


def block_depths(effects: list[Effect], lo: int, hi: int, d: int, depth: list[int]) -> tuple[int, int] | None:
    """Append to `depth` the stack depth before each instruction ``lo .. hi-1`` of one
    block, entered at depth `d`; return the depth after the last one's fall-through and
    the block's lowest slot an instruction pops (at most `d`), or None if a pop goes
    below the bottom.  The reference of the C kernel ``block_depths`` (`ckernels`)."""
    push = depth.append
    low = d
    for eff in effects[lo:hi]:
        base = d - eff.pops
        if base < low:
            if base < 0:
                return None
            low = base
        push(d)
        d += eff.net
    return d, low


# the C kernel where built, else its reference
BLOCK_DEPTHS = KERNELS.block_depths if KERNELS is not None else block_depths
