"""Phi placement for SSA construction (`bcfront.analysis.ssa_build`).

`place` makes the phi values of a construction and returns them, with what the
renaming needs to fill their arguments, as a `PhiPlacement`; `place_phis` finds
where they go.  The construction is passed in as a `PhiSite` (what placement
reads of it), so this module does not import the builder.

Cytron et al.'s iterated dominance frontier, pruned by liveness (locals) and by
the entry stack depth (slots), plus the phis that exception edges and branches
pushing differently on their two sides need (see `ssa_build`).  On bitmasks,
every variable at once: a local is liveness's bit for it, stack slot s is bit
``nbits + s`` (``nbits`` = the number of liveness variables).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from .bytecode import ExceptionEntry
    from .cfg import CFG
    from .liveness import Liveness
    from .stack import StackInfo
    from .stack_effects import Effect


class PhiSite(Protocol):
    """What phi placement reads of an SSA construction (`ssa_build.Builder` is one)."""

    cfg: CFG
    idom: Mapping[int, int | None]
    frontier: Mapping[int, set[int]]
    live: Liveness
    stack: StackInfo
    locals: Sequence[str]  # the SSA locals' names, by local id
    nloc: int  # how many SSA locals (variable ids below it are locals)
    local_mask: int  # liveness's bits of the SSA locals
    recs: list[Any]  # the value records (`new` appends one; its id is ~its index)

    def local_ids(self) -> dict[str, int]: ...


class PhiPlacement(NamedTuple):
    """Where the phis of a construction are and how their arguments arrive."""

    handlers: dict[int, ExceptionEntry]  # handler block -> its exception-table entry
    phi_at: dict[int, dict[int, int]]  # block -> {variable id: its phi's value id}
    phi_edges: dict[int, tuple[tuple[int, str], ...]]  # block -> incoming (src, edge kind)
    feeds: dict[int, list[tuple[int, str, int]]]  # block -> (phi block, kind, arg position)
    changing: set[int]  # protected blocks that change what their handler wants


def has_edge_phis(bd: PhiSite) -> bool:
    """Whether some block has a handler or ends in a branch whose taken side pushes
    differently: the phis that blocks without a dominance frontier can get."""
    blocks, effects = bd.cfg.blocks, bd.stack.effects
    if bd.cfg.bytecode.exception_table:  # (a handler needs a table entry)
        for b in bd.idom:
            if blocks[b].handler is not None:
                return True
    for b in bd.idom:
        eff = effects[blocks[b].stop - 1]
        if eff.jump != eff.fall:
            return True
    return False


def place(bd: PhiSite) -> PhiPlacement:
    """Phi values (argument lists still empty) for every block that needs some, and
    what renaming needs to fill them (empty dicts where there is nothing)."""
    cfg, idom = bd.cfg, bd.idom
    blocks = cfg.blocks
    exc_preds: dict[int, list[int]] = {}
    handlers: dict[int, ExceptionEntry] = {}
    if cfg.bytecode.exception_table:  # (no table, no handler: most functions)
        for b, blk in blocks.items():  # a block with a handler has an exception edge
            h = blk.handler
            if h is not None and b in idom:
                handlers[h.target] = h
                exc_preds.setdefault(h.target, []).append(b)
    phis, changing = place_phis(bd, handlers, exc_preds)
    phi_at: dict[int, dict[int, int]] = {}
    phi_edges: dict[int, tuple[tuple[int, str], ...]] = {}
    feeds: dict[int, list[tuple[int, str, int]]] = {}
    placement = PhiPlacement(handlers, phi_at, phi_edges, feeds, changing)
    if not phis:  # (40% of the multi-block code objects)
        return placement
    kinds = cfg.out_kinds
    names = bd.locals
    nloc = bd.nloc
    recs = bd.recs
    for b, vs in phis.items():
        table: dict[int, int] = {}
        phi_at[b] = table
        # incoming (src, kind) pairs in the order of `cfg.edges`
        edges: list[tuple[int, str]] = []
        for p in dict.fromkeys(blocks[b].preds):
            if p in idom:
                ks = kinds[p]
                if len(ks) == 1:  # (its one successor is b)
                    edges.append((p, ks[0]))
                    continue
                succs = blocks[p].succs
                j = succs.index(b)
                edges.append((p, ks[j]))
                if succs.count(b) > 1:  # (rare: several edges from p to b)
                    edges += [(p, k) for s, k in zip(succs[j + 1 :], ks[j + 1 :]) if s == b]
        phi_edges[b] = in_edges = tuple(edges)
        for pos, (p, k) in enumerate(in_edges):
            if p in feeds:
                feeds[p].append((b, k, pos))
            else:
                feeds[p] = [(b, k, pos)]
        n = len(in_edges)
        for var in vs:  # (each record made inline, as `new` would)
            recs.append(("phi", names[var] if var < nloc else var - nloc, b, None, [None] * n))
            table[var] = -len(recs)
    return placement


def place_phis(
    bd: PhiSite, handlers: dict[int, ExceptionEntry], exc_preds: dict[int, list[int]]
) -> tuple[dict[int, list[int]], set[int]]:
    """block -> the variables (ids, ascending) that need a phi there (`handlers`:
    handler block -> its table entry, `exc_preds`: handler block -> its protected
    blocks), and the protected blocks that change a variable their handler has a phi
    for.  Only slots below a block's entry depth are wanted there, so only those are
    tracked."""
    cfg, st, live = bd.cfg, bd.stack, bd.live
    depth_in = st.depth_in
    nbits = len(live.variables)
    local_mask = bd.local_mask
    bits_in = live.bits_in
    frontier = bd.frontier
    fronts = frontier.values()
    # the variables wanted at a block that can receive a phi (in a frontier, a handler;
    # branch targets below): live locals, slots below its entry depth (a handler's:
    # below the depth its table entry unwinds to)
    wanted = (
        {h: (bits_in[h] & local_mask) | (((1 << entry.depth) - 1) << nbits) for h, entry in handlers.items()}
        if handlers
        else {}
    )
    get = wanted.get
    # only the blocks with a dominance frontier, and the protected ones, can place a
    # phi with their definitions, and only for the variables wanted where they place
    # it: block -> those variables (the blocks with an empty frontier skipped in C; a
    # frontier block's wanted mask made when first met)
    need = {}
    for b, f in compress(frontier.items(), fronts):
        m = 0
        for y in f:
            w = get(y)
            if w is None:
                w = wanted[y] = (bits_in[y] & local_mask) | (((1 << depth_in[y]) - 1) << nbits)
            m |= w
        if m:
            need[b] = m
    for h, srcs in exc_preds.items():
        m = wanted[h]
        if m:
            for b in srcs:
                need[b] = need.get(b, 0) | m
    written, jump_diff = _written(bd, nbits, need)
    for b, _ in jump_diff:
        if b not in wanted:
            wanted[b] = (bits_in[b] & local_mask) | (((1 << depth_in[b]) - 1) << nbits)
    defs = written.copy()
    defs[cfg.entry] = defs.get(cfg.entry, 0) | local_mask
    phis: dict[int, int] = {}
    # a handler needs a phi for every variable a protected block changes, even when
    # that block dominates it: the handler does not see its exit value.  Only those
    # blocks are tracked while renaming (`Builder.changing`): in the others, every
    # variable the handler wants keeps the value it entered with.
    changing = set()
    for h, srcs in exc_preds.items():
        for b in srcs:
            new = written.get(b, 0) & wanted[h]
            if new:
                phis[h] = phis.get(h, 0) | new
                defs[h] = defs.get(h, 0) | new
                changing.add(b)
    for target, diff in jump_diff:
        new = diff & wanted[target]
        if new:
            phis[target] = phis.get(target, 0) | new
            defs[target] = defs.get(target, 0) | new
    for h, entry in handlers.items():
        defs[h] = defs.get(h, 0) | (
            (((1 << entry.handler_depth) - 1) >> entry.depth) << (nbits + entry.depth)
        )
    # iterated dominance frontier, all variables at once (a block goes back on the
    # work list whenever it gains definitions)
    work = [b for b, m in defs.items() if m]
    while work:
        x = work.pop()
        dx = defs[x]
        for y in frontier.get(x, ()):
            new = dx & wanted[y] & ~phis.get(y, 0)
            if new:
                phis[y] = phis.get(y, 0) | new
                old = defs.get(y, 0)
                if old | new != old:
                    defs[y] = old | new
                    work.append(y)
    if not phis:
        return {}, changing
    locs, variables = bd.locals, live.variables
    if bd.nloc == nbits and tuple(locs) == variables:
        # every variable a local, numbered alike: a variable's id is its bit
        return {b: _bits(m) for b, m in phis.items()}, changing
    return {b: _var_ids(bd, m, nbits) for b, m in phis.items()}, changing


def _bits(mask: int) -> list[int]:
    """The positions of the bits of `mask`, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _var_ids(bd: PhiSite, mask: int, nbits: int) -> list[int]:
    """The variable ids of the bits of `mask`, ascending (locals keep liveness's order)."""
    lid, names, nloc = bd.local_ids(), bd.live.variables, bd.nloc
    return [lid[names[k]] if k < nbits else nloc + k - nbits for k in _bits(mask)]


def _written(bd: PhiSite, nbits: int, need: dict[int, int]) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """Per block b of `need`, the mask of the variables of ``need[b]`` it writes (locals
    it kills, slots whose content changes); and (target, slot mask) for the branches
    whose taken side leaves slots (below the deepest entry depth) differently from the
    fall-through."""
    block_kill = bd.live.block_kill
    written = {b: km for b, m in need.items() if (km := block_kill[b] & m)}
    st = bd.stack
    depth_in = st.depth_in
    if not any(depth_in.values()):  # no stack value crosses a block
        return written, []
    blocks = bd.cfg.blocks
    effects, depth, block_low = st.effects, st.depth, st.block_low
    # the slots a block changes, for the blocks that need some: those whose frontier
    # (or handler) has a nonzero entry depth
    for b, m in need.items():
        reach = (m >> nbits).bit_length()  # the slots below it matter
        if not reach:
            continue
        blk = blocks[b]
        lo, hi = blk.first, blk.stop
        din = depth_in[b]
        # A slot at or above the entry depth is changed iff the stack grows past it
        # (the instruction that first covers it writes it): those below the highest
        # depth the block reaches.  A slot below the entry depth is changed only by an
        # instruction whose inputs reach down to it.
        m = 0
        if din < reach:
            eff = effects[hi - 1]
            top = max(max(depth[lo:hi]), depth[hi - 1] + eff.net)
            if top > din:
                m = ((1 << min(top, reach)) - 1) >> din << din
        lim = din if din < reach else reach
        if block_low[b] < lim:
            m |= slots_changed(effects, depth, lo, hi, lim)
        if m:
            written[b] = written.get(b, 0) | (m << nbits)
    # the branches whose two sides push differently (3.11's FOR_ITER, SEND, ...)
    jump_diff = []
    deepest = 0
    for b in bd.idom:
        i = blocks[b].stop - 1
        eff = effects[i]
        if eff.jump == eff.fall:
            continue
        # slots the taken jump leaves differently from the fall-through (past the
        # fall-through's outputs a slot keeps its input, ~j): the jump target cannot
        # inherit them from this block's exit state
        if not deepest:
            deepest = max(depth_in.values())
        base = depth[i] - eff.pops
        diff = 0
        for j, o in enumerate(eff.jump):
            if o != (eff.fall[j] if j < len(eff.fall) else ~j) and base + j < deepest:
                diff |= 1 << (base + j)
        if not diff:
            continue
        target = bd.cfg.bytecode.targets[i]
        if target is not None and target in depth_in:
            jump_diff.append((target, diff << nbits))
        m = need.get(b, 0) >> nbits
        if m:
            written[b] = written.get(b, 0) | (diff << nbits)
    return written, jump_diff


def slots_changed(effects: Sequence[Effect], depth: Sequence[int], lo: int, hi: int, lim: int) -> int:
    """The mask of the slots below `lim` that instructions [lo, hi) change (any time,
    the last instruction's fall-through included): an instruction changes no slot below
    the base of its inputs."""
    m = 0
    for eff, d in zip(effects[lo:hi], depth[lo:hi]):
        base = d - eff.pops
        if base < lim:
            for j in eff.moved:
                if base + j < lim:
                    m |= 1 << (base + j)
    return m
