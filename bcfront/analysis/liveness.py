"""Liveness of local, cell and free variables, per block and per instruction.

Definition.  A variable is *live* at a point if some path from that point
reads it before writing it.  Paths follow every CFG edge, exceptional ones
included: any instruction of a protected block may raise, so a variable live
at the handler is live throughout the protected block (at every point of it).
What reads and writes is `live_events` (one rule per opcode, in execution order).

Algorithm: backward dataflow over blocks with variable i as bit i of a Python
int.  Each instruction's (gen, kill) masks come from a per-code-unit table
(the few events that depend on the code object are patched; a one-block
function without them folds its units' masks in one loop); one pass over the
blocks in reverse layout order settles every block that has no edge back to
itself or an earlier block, and a worklist iterates the rest to the least
fixpoint.  Per-instruction sets are derived on demand, block by block.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cached_property
from itertools import compress
from typing import TYPE_CHECKING

from .cfg import CFG
from .columns import shared_ints
from .live_events import (
    BY_UNIT,
    FLAGS,
    FLAGS_NO_GLOBALS,
    INTROSPECTION,
    MASKS,
    SECOND,
    fold,
    fold_plain,
    gen_kill,
    numbered_alike,
    pick,
    powers,
    variables_of,
)
from .opcodes import OPNAME

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .bytecode import Bytecode
    from .live_events import Masks


class Liveness:
    """Live variables per block and per instruction (see the module docstring).

    Sets are frozensets of names; the ``*_bits`` variants return the masks
    (bit i = ``variables[i]``).
    """

    variables: tuple[str, ...]
    kinds: dict[str, str]  # variable -> "local" | "cell" | "free"
    bits_in: dict[int, int]  # block -> its live-in mask
    bits_out: dict[int, int]  # block -> its live-out mask
    block_kill: dict[int, int]  # block -> the variables it writes

    def __init__(self, cfg: CFG):
        self.cfg = cfg
        bc = cfg.bytecode
        code = bc.code
        cells, free = code.co_cellvars, code.co_freevars
        if cells or free:
            self.variables, self.kinds = variables_of(code, cells, free)
            flags = None
        else:  # `variables_of`'s common case, inline (a call less)
            names = code.co_varnames
            self.kinds = kinds = dict.fromkeys(names, "local")
            self.variables = names if len(kinds) == len(names) else tuple(kinds)
            flags = (
                bc.opcodes.translate(FLAGS_NO_GLOBALS) if INTROSPECTION.isdisjoint(code.co_names) else None
            )
        # plain: the events are exactly the `_SHAPE` and `_PAIRS` instructions (no cell
        # or free variable, no introspection, no flag 2 left), numbered as `variables`
        # by their arg
        self._flags = flags
        self._plain = plain = flags is not None and 2 not in flags
        if cfg.single_block:  # one block, no edge (most code objects): live-in is what it
            b = cfg.entry  # reads (the CFG's flag: no look at the block itself)
            g, k = fold_plain(bc.units, flags) if plain else (None, None)  # type: ignore[arg-type]  # (plain: flags)
            if g is None:  # (also for plain code with EXTENDED_ARG)
                g, k = fold(self._events()[1])
            self.bits_in = {b: g}
            self.bits_out = {b: 0}
            self.block_kill = {b: k}  # type: ignore[dict-item]  # (k is an int when g is)
            return
        where, masks = self._events()
        if where:
            self._solve(where, masks)
        else:  # nothing reads or writes a variable: all empty
            self.bits_in = live = dict.fromkeys(cfg.blocks, 0)
            self.bits_out = live.copy()
            self.block_kill = live.copy()

    _per_block: dict[int, list[int]] | None  # block -> live-before masks
    _names: dict[int, frozenset[str]] | None  # mask -> names
    _where: tuple[int, ...] | None  # positions of the events
    _masks: Sequence[Masks] | None  # their (gen, kill)
    _gen: dict[int, int] | None  # gen of the blocks with events
    _per_block = _names = _where = _masks = _gen = None  # built on first use

    @cached_property
    def bit(self) -> dict[str, int]:
        """variable name -> its mask."""
        return dict(zip(self.variables, powers(len(self.variables))))

    def _events(self) -> tuple[tuple[int, ...], Sequence[Masks]]:
        """Positions of the events and their (gen, kill) masks (computed once)."""
        if self._where is not None:
            return self._where, self._masks  # type: ignore[return-value]  # (set with _where)
        bc = self.cfg.bytecode
        code = bc.code
        flags = self._flags
        if flags is None:
            flags = bc.opcodes.translate(
                FLAGS_NO_GLOBALS if INTROSPECTION.isdisjoint(code.co_names) else FLAGS
            )
        # the events' positions, then their code units picked by position (fewer than
        # all the instructions a second compress would walk)
        self._where = where = tuple(compress(shared_ints(len(flags)), flags))
        units = pick(bc.units, where)
        masks: Sequence[Masks]
        if self._plain:
            try:
                masks = pick(BY_UNIT, units)  # type: ignore[arg-type]  # (plain: no None)
            except TypeError:  # (opcode, arg) keys: the code has EXTENDED_ARG
                masks = pick(MASKS, units)
        elif (code.co_cellvars or code.co_freevars) and not numbered_alike(code, self.variables):
            # the table numbers variables by oparg: a code object whose fast locals are
            # numbered otherwise than `variables` takes every event from the rules
            nv = len(self.variables)
            gens, kills = gen_kill(bc, self.bit, (1 << nv) - 1, where)
            masks = [(gens[i], kills[i]) for i in where]
        else:
            masks = pick(MASKS, units)
            if 2 in flags:  # events whose masks depend on the code object
                masks = list(masks)
                self._per_code(bc, bytes(compress(flags, flags)), where, masks)
        self._masks = masks
        return where, masks

    def _per_code(self, bc: Bytecode, event_flags: bytes, where: tuple[int, ...], masks: list[Masks]) -> None:
        """Fill in the masks of the `_PER_CODE` events (flag 2), numbered as `_events` checked."""
        code = bc.code
        nv = len(self.variables)
        nfree = len(code.co_freevars)
        params = code.co_varnames[
            : code.co_argcount
            + code.co_kwonlyargcount
            + bool(code.co_flags & 0x04)
            + bool(code.co_flags & 0x08)
        ]
        for e in compress(range(len(where)), event_flags.translate(SECOND)):
            i = where[e]
            name = OPNAME[bc.opcodes[i]]
            if name == "MAKE_CELL":  # reads the argument a cell parameter wraps
                m = 1 << bc.args[i]  # type: ignore[operator]  # (MAKE_CELL has an arg)
                masks[e] = (m if self.variables[bc.args[i]] in params else 0, m)  # type: ignore[index]
            elif name == "COPY_FREE_VARS":  # the free variables are numbered last
                masks[e] = (0, ((1 << nfree) - 1) << (nv - nfree))
            elif bc.argval(i) in INTROSPECTION:  # LOAD_GLOBAL, LOAD_NAME
                masks[e] = ((1 << nv) - 1, 0)

    @property
    def _index(self) -> dict[int, int]:
        return self.cfg.bytecode.index

    @property
    def _block_at(self) -> list[int]:
        """instruction index -> its block's start (built on the first per-instruction query)."""
        at = self._block_at_list
        if at is None:
            at = [0] * len(self.cfg.bytecode.offsets)
            for b, blk in self.cfg.blocks.items():
                at[blk.first : blk.stop] = [b] * blk.size
            self._block_at_list = at
        return at

    _block_at_list: list[int] | None = None

    def _solve(self, where: tuple[int, ...], masks: Sequence[Masks]) -> None:
        """One backward pass over the blocks in reverse offset order, each block's
        (gen, kill) folded from its events on the way; the blocks with an edge to
        themselves or an earlier block (loops, the odd handler placed before) then
        go to a worklist, which iterates to the same least fixpoint."""
        blocks = self.cfg.blocks
        # the dicts are made in offset order (as the results are listed), filled backward;
        # copies of one all-zero dict (a copy is a memcpy, fromkeys re-inserts every key)
        self.bits_in = live_in = dict.fromkeys(blocks, 0)
        self.bits_out = live_out = live_in.copy()
        self.block_kill = block_kill = live_in.copy()
        block_gen: dict[int, int]
        self._gen = block_gen = {}  # gen of the blocks with events, for the worklist
        back: list[int] = []
        e = len(where) - 1  # the last event not folded yet
        last = where[e]  # (its position)
        for b, blk in reversed(blocks.items()):
            succs = blk.succs
            n = len(succs)
            if n == 1:  # the common cases, without a loop
                s = succs[0]
                out = live_in[s]
                if s <= b:  # not final yet: revisit b in the worklist
                    back.append(b)
            elif n == 2:
                s, t = succs
                out = live_in[s] | live_in[t]
                if s <= b or t <= b:
                    back.append(b)
            else:
                out = 0
                for s in succs:
                    out |= live_in[s]
                    if s <= b:
                        back.append(b)
            live_out[b] = out
            first = blk.first
            if last >= first:  # the block has events: fold them (`fold`, inline)
                g = k = 0
                while last >= first:
                    gm, km = masks[e]
                    g = gm | (g & ~km)
                    k |= km
                    e -= 1
                    last = where[e] if e >= 0 else -1
                block_gen[b] = g
                block_kill[b] = k
                out = g | (out & ~k)
            h = blk.handler
            live_in[b] = out if h is None else out | live_in[h.target]
        if back:
            self._iterate(back)

    def _iterate(self, work: list[int]) -> None:
        """Worklist iteration from the state of the first pass, starting at `work`."""
        blocks = self.cfg.blocks
        live_in, live_out = self.bits_in, self.bits_out
        gen: dict[int, int]
        gen, kill = self._gen, self.block_kill  # type: ignore[assignment]  # (_solve set _gen)
        queued = set(work)
        while work:
            b = work.pop()
            queued.discard(b)
            blk = blocks[b]
            out = 0
            for s in blk.succs:
                out |= live_in[s]
            live_out[b] = out
            g = gen.get(b)
            new = out if g is None else g | (out & ~kill[b])
            h = blk.handler
            if h is not None:
                new |= live_in[h.target]
            if new != live_in[b]:
                live_in[b] = new
                for p in blk.preds:
                    if p not in queued:
                        queued.add(p)
                        work.append(p)

    # -- per instruction ------------------------------------------------------
    def _befores(self, b: int) -> list[int]:
        """live-before masks of block `b`'s instructions, computed once per block."""
        per_block = self._per_block
        if per_block is None:
            per_block = self._per_block = {}
        out = per_block.get(b)
        if out is None:
            blk = self.cfg.blocks[b]
            first = blk.first
            exc = self.bits_in[blk.handler.target] if blk.handler is not None else 0
            live = self.bits_out[b]
            out = [0] * blk.size
            where, masks = self._events()
            a = bisect_left(where, first)
            e = bisect_left(where, blk.stop, a) - 1  # the block's last event
            for j in range(blk.size - 1, -1, -1):
                if e >= a and where[e] == first + j:
                    gm, km = masks[e]
                    live = gm | (live & ~km)
                    e -= 1
                live |= exc
                out[j] = live
            per_block[b] = out
        return out

    def live_before_bits(self, offset: int) -> int:
        i = self._index[offset]
        b = self._block_at[i]
        return self._befores(b)[i - self._index[b]]

    def live_after_bits(self, offset: int) -> int:
        i = self._index[offset]
        b = self._block_at[i]
        j = i - self._index[b]
        if j == self.cfg.blocks[b].size - 1:
            return self.bits_out[b]
        return self._befores(b)[j + 1]

    # -- names ----------------------------------------------------------------
    def names(self, mask: int) -> frozenset[str]:
        """The variable names of a mask."""
        cache = self._names
        if cache is None:
            cache = self._names = {}
        out = cache.get(mask)
        if out is None:
            out = frozenset(n for n, m in self.bit.items() if mask & m)
            cache[mask] = out
        return out

    def live_in(self, block: int) -> frozenset[str]:
        return self.names(self.bits_in[block])

    def live_out(self, block: int) -> frozenset[str]:
        return self.names(self.bits_out[block])

    def live_before(self, offset: int) -> frozenset[str]:
        """Variables live just before the instruction at `offset` executes."""
        return self.names(self.live_before_bits(offset))

    def live_after(self, offset: int) -> frozenset[str]:
        """Variables live just after it completes normally.

        For the last instruction of a block this is the block's live-out, which
        includes what its exception handler needs.
        """
        return self.names(self.live_after_bits(offset))

    def is_live_in(self, name: str, block: int) -> bool:
        return bool(self.bits_in[block] & self.bit[name])

    def __repr__(self) -> str:
        return f"<Liveness {len(self.variables)} variables, {len(self.bits_in)} blocks>"
