"""Construction of SSA form (see `bcfront.analysis.ssa` for what it computes).

Cytron et al.: phis at the iterated dominance frontier of the blocks that
define a variable, pruned by liveness (locals) and by the entry stack depth
(slots); then renaming in reverse post-order, each block starting from its
immediate dominator's exit state.  Renaming works on integer value ids, and
records per instruction only what it reads and defines (see `SSA` for the
layout); `SSA` turns them into `SSAValue` and `SSAOp` objects only when a caller
asks for them.

Two kinds of edge do not carry their source block's exit state, so their
targets get a phi for what differs even when the source dominates them:

* exception edges: the handler sees a variable as it was before whichever
  protected instruction raised (a ``catch`` value when that varies);
* the taken side of a branch whose two sides push different things (3.11's
  FOR_ITER, SEND, JUMP_IF_*_OR_POP).

Costs.  Most code objects are one block without a handler: they skip phi
placement (`bcfront.analysis.ssa_phis`, on bitmasks).  The renaming loop
handles the common instructions inline (loads and stores of locals, 3.13's paired
loads and stores and its loads of cell objects, MAKE_CELL, "plain" ones that read
their inputs and push new values, ones that move inputs);
the rest goes through `Builder.step` (with the handlers of `ssa_locals` for the
other instructions on fast locals), and so does, in a protected block, every
instruction that may change a stack slot its handler has a phi for (the values
the handler can see of it must be tracked).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .ckernels import KERNELS
from .columns import SHARED_INTS, shared_ints
from .cpython import varname_from_oparg
from .ssa_form import IntegerSSA
from .ssa_inline import rename_inline
from .ssa_locals import LOCAL_OPS, ValueId
from .ssa_phis import has_edge_phis, place
from .stack_effects import (
    LOAD_LOCAL,
    LOCAL_OTHER,
    WRAP_CELL,
    Effect,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from collections.abc import Set as AbstractSet

    from .bytecode import ExceptionEntry
    from .cfg import CFG, Block
    from .liveness import Liveness
    from .stack import StackInfo


class Builder:
    """One construction.  Its state is the renaming environment: `loc` (the value id of
    each SSA local) and `stk` (the value id in each stack slot).  A variable id `var`
    is a local below `nloc`, else stack slot ``var - nloc``.  Value ids: a value an instruction
    pushes (an ``op`` value, the bulk) gets the next number of a counter, ``0, 1, ...``;
    every other value is a record ``(kind, var, block, offset, args)`` in `recs`, and
    its id is ``~k`` for record k (so the two never collide, and `SSA` can look both up
    in one list)."""

    # defaults, replaced (never mutated) by the instances that need otherwise
    track: dict[int, list[ValueId]] | None = None  # var -> values seen in a protected block
    track_last: dict[int, ValueId] | None = None  # var -> value before the block's last instruction
    tvars: Mapping[int, ValueId] = {}  # the variables to track
    # (block, {var: value along its last branch's jump})
    jump_override: tuple[int, dict[int, ValueId]] | None = None
    phi_at: dict[int, dict[int, ValueId]] = {}  # block -> {var: its phi}
    handlers: dict[int, ExceptionEntry] = {}  # handler block -> its exception entry
    feeds: dict[int, list[tuple[int, str, int]]] = {}  # block -> its out-edges to blocks with phis
    changing: AbstractSet[int] = frozenset()  # protected blocks that change what their handler wants
    cell_params: dict[str, ValueId]  # cell parameter -> its entry value (`make_entry`)

    def __init__(
        self,
        cfg: CFG,
        idom: Mapping[int, int | None],
        frontier: Mapping[int, set[int]],
        liveness: Liveness,
        stack: StackInfo,
    ):
        self.idom, self.frontier = idom, frontier
        self.live, self.stack = liveness, stack
        self.cfg = cfg
        self.bc = bc = cfg.bytecode
        self.code = code = bc.code
        self.form = form = IntegerSSA()
        self.flat, self.recs, self.special = form.flat, form.recs, form.special
        # (`co_varnames`: the locals' names in arg order)
        self.varnames = names = code.co_varnames
        variables = liveness.variables
        nbits = len(variables)
        if not (code.co_cellvars or code.co_freevars) and nbits == len(names):
            # every variable is a local, in arg order (as `variables_of` found), and a
            # local-variable opcode's arg is the local's id
            self.locals: Sequence[str] = names
            self.nloc = nloc = nbits
            self.lid: dict[str, int] | None = None  # (`local_ids`)
            # (the ints 0..nloc-1 at their own index: decode's shared list, never mutated)
            self.var_of_arg: list[int] = SHARED_INTS if nloc <= len(SHARED_INTS) else shared_ints(nloc)
            self.local_mask = (1 << nbits) - 1  # liveness's bits of the locals
        else:
            kinds = liveness.kinds
            self.locals = locs = [v for v in names if kinds[v] == "local"]
            self.nloc = nloc = len(locs)
            self.lid = lid = dict(zip(locs, range(nloc)))
            # a local-variable opcode's arg -> SSA local id, -1 for a cell or free
            # variable (cells and free variables numbered after the locals, for 3.13's
            # LOAD_FAST)
            var_of = self.var_of_arg = [lid.get(m, -1) for m in names]
            var_of += [-1] * nbits  # at least the cells and free variables
            self.local_mask = sum(1 << k for k, n in enumerate(variables) if kinds[n] == "local")
        # (None: not given a value yet; renaming reads only locals and slots it has set)
        self.loc: list[ValueId]  # (`make_entry` makes it)
        self.stk: list[ValueId] = [None] * (stack.max_depth + 1)  # type: ignore[list-item]
        self.nv = 0  # the next op value id

    def local_ids(self) -> dict[str, int]:
        """Local name -> SSA local id (made on first use)."""
        lid = self.lid
        if lid is None:
            lid = self.lid = dict(zip(self.locals, range(self.nloc)))
        return lid

    def local(self, arg: int | None) -> str:
        """The name a local-variable opcode's arg stands for."""
        return varname_from_oparg(self.code)(arg)  # type: ignore[arg-type]  # (such an opcode has an arg)

    def new(self, kind: str, var: Any, b: int, offset: int | None, args: Any = ()) -> ValueId:
        """A new value record; its id."""
        recs = self.recs
        recs.append((kind, var, b, offset, args))
        return -len(recs)  # ~(len(recs) - 1)

    def set(self, var: int, val: int, last: bool = False) -> None:
        """Give local `var` the value `val` (tracked in a protected block)."""
        loc = self.loc
        old = loc[var]
        if old == val:
            return
        loc[var] = val
        if self.track is not None:
            self.tracked(var, old, val, last)

    def put(self, slot: int, val: int, last: bool) -> None:
        """Put `val` in stack slot `slot` (tracked in a protected block)."""
        stk = self.stk
        old = stk[slot]
        if old != val:
            stk[slot] = val
            if self.track is not None:
                self.tracked(self.nloc + slot, old, val, last)

    def tracked(self, var: int, old: ValueId, val: ValueId, last: bool) -> None:
        if var not in self.tvars:
            return
        track: dict[int, list[ValueId]] = self.track  # type: ignore[assignment]  # (set: called while tracking)
        if last:
            if var not in track:
                self.track_last.setdefault(var, old)  # type: ignore[union-attr]  # (set with `track`)
        elif var in track:
            track[var].append(val)
        else:
            track[var] = [old, val]

    # -- driver ------------------------------------------------------------------------
    def run(self) -> IntegerSSA:
        """Build the SSA form (once per builder) and return it."""
        cfg, idom, form = self.cfg, self.idom, self.form
        entry = cfg.entry
        blk = cfg.blocks[entry]
        self.make_entry()
        # one block entered only at the start (most code objects): no phis to place
        if len(idom) > 1 or blk.handler is not None or entry in blk.preds:
            if any(self.frontier.values()) or has_edge_phis(self):
                placed = place(self)
                if placed.handlers:
                    self.handlers = placed.handlers
                    form.handler_values, form.catches = {}, {}
                if placed.changing:
                    self.changing = placed.changing
                if placed.phi_at:
                    self.phi_at, self.feeds = placed.phi_at, placed.feeds
                    form.phis, form.phi_edges = {}, placed.phi_edges
        self.walk()
        form.nops = self.nv
        return form

    def walk(self) -> None:
        """Rename block by block in reverse post-order (`cfg.rpo`: a block comes after its
        immediate dominator).

        The loop over a block's instructions handles inline the plain instructions
        (read every input, push new values), loads of locals and, unless the block
        is tracked, stores; the rest goes through `step`.  A plain instruction records
        nothing of its own: its inputs are the next ``pops`` entries of `flat` and its
        values the next ``news`` op ids, counted from the block's `IntegerSSA.starts` and
        ``op_starts`` entries."""
        cfg, form, idom = self.cfg, self.form, self.idom
        # A block starts from its immediate dominator's exit state: the state at hand
        # when the dominator is the block just renamed, else a copy taken at the
        # dominator's exit.  Only a block with several successors needs the copy: one
        # with a single successor s dominates s at most (a path to a block it dominates
        # leaves it through s, so s dominates that block too), and the depth-first
        # search behind the order visits s from it, so s comes right after it.
        # (the reachable blocks: the entry alone when `idom` has one block)
        order = form.order = cfg.rpo
        # (one block: its starts are 0 and its stack empty, nothing to record; the class's
        # empty read-only dicts stay)
        starts: dict[int, int]
        op_starts: dict[int, int]
        stack_in: dict[int, tuple[ValueId, ...]]
        if len(order) > 1:
            form.starts = starts = {}
            form.op_starts = op_starts = {}
            form.stack_in = stack_in = {}
        else:
            # (read-only, never written: the one block records nothing)
            starts = op_starts = form.starts  # type: ignore[assignment]
            stack_in = form.stack_in  # type: ignore[assignment]
        loc_exit: dict[int, list[ValueId]] = {}
        stk_exit: dict[int, list[ValueId]] = {}
        loc, stk, flat, recs = self.loc, self.stk, self.flat, self.recs
        special, stores = self.special, form.stores
        blocks = cfg.blocks
        phi_at, handlers, feeds, changing = self.phi_at, self.handlers, self.feeds, self.changing
        depth_in = self.stack.depth_in
        # (the args of the instructions that read them, local-variable ones: never None)
        args: list[int]
        args, offsets = self.bc.args, self.bc.offsets  # type: ignore[assignment]
        effs = st_effs = self.stack.effects
        var_of, names, nloc = self.var_of_arg, self.locals, self.nloc
        nv = self.nv
        rename = RENAME_INLINE
        ctx = (stk, loc, flat, recs, special, stores, args, offsets, var_of, names)
        prev = None
        for b in order:
            dom = idom[b]
            if dom != prev and dom is not None:
                loc[:] = loc_exit[dom]
                stk[:] = stk_exit[dom]
            phis = phi_at.get(b)
            if phis is not None:
                for var, phi in phis.items():
                    if var < nloc:
                        loc[var] = phi
                    else:
                        stk[var - nloc] = phi
            if b in handlers:
                self.enter_handler(b, handlers[b])
            din = depth_in[b]
            # (only what is not empty or zero: a tuple, which the collector stops tracking)
            if din:
                stack_in[b] = tuple(stk[:din])
            blk = blocks[b]
            lo, hi = blk.first, blk.stop
            h = blk.handler
            if flat:
                starts[b] = len(flat)
            if nv:
                op_starts[b] = nv
            tracking = False
            if b in changing:
                # a handler that sees a change here: track what it can see
                tracking = True
                touching = self.start_tracking(b, blk, phi_at[h.target])  # type: ignore[union-attr]  # (protected)
                if touching:
                    # the instructions that may change a tracked slot go through `step`
                    # (those that only move inputs track them inline)
                    for i in touching:
                        if not effs[i].moves:
                            if effs is st_effs:
                                effs = effs[:]  # (a copy: the stack phase's column)
                            effs[i] = _OTHER
            # runs of the common kinds renamed inline (`rename_inline`, in C where built),
            # each other instruction through `other`
            i, d, last = lo, din, hi - 1
            while True:
                i, d, nv = rename(ctx, effs, i, hi, d, nv, b, tracking)
                if i >= hi:
                    break
                nv = self.other(b, i, effs[i], d, nv, i == last, tracking)
                d += st_effs[i].net  # (`effs[i]` may be the `_OTHER` mark)
                i += 1
            if tracking:
                self.nv = nv
                self.phi_args(b)
                self.track = self.track_last = None
            elif b in feeds:
                self.nv = nv
                self.phi_args(b)
            if len(blk.succs) > 1:  # its children may come later: keep its state
                loc_exit[b] = loc[:]
                stk_exit[b] = stk[:]
            prev = b
        self.nv = nv
        if not phi_at:
            return
        for b in sorted(phi_at):  # blocks in offset order
            ids = form.phis[b] = list(phi_at[b].values())  # type: ignore[index]  # (`run` made it a dict)
            for pv in ids:
                if None in recs[~pv][4]:
                    raise AssertionError(f"a phi at block {b} lacks an argument")

    def other(self, b: int, i: int, eff: Effect, d: int, nv: int, last: bool, tracking: bool) -> int:
        """Rename instruction `i` of block `b`, one `rename_inline` does not take, at stack
        depth `d` with `nv` the next op value id; returns the next op value id.  One that
        moves some inputs (COPY, SWAP, LIST_APPEND, ...; not a branch whose sides differ)
        and MAKE_CELL here, the rest through `step`."""
        if eff.moves and (not last or eff.jump == eff.fall):  # as in `step`
            stk = self.stk
            base = d - eff.pops
            inputs = stk[base:d]
            n = eff.news
            news = range(nv, nv + n)
            if n:
                nv += n
                results = eff.fall_pick(inputs + list(news))  # type: ignore[operator]  # (an itemgetter)
            else:
                results = eff.fall_pick(inputs)  # type: ignore[operator]  # (an itemgetter)
            if tracking:  # (`put` tracks what the handler may see)
                for j in eff.moved:
                    self.put(base + j, results[j], last)
            else:
                for j in eff.moved:
                    stk[base + j] = results[j]
            # (tuples of ints throughout: the collector stops tracking them)
            self.special[i] = (
                tuple(inputs) if eff.reads_all else tuple([inputs[u] for u in eff.uses]),
                news,
                results,
            )
            return nv
        if eff is WRAP_CELL:  # MAKE_CELL reads the parameter a cell wraps
            # (as `_h_make_cell`; the name looked up here, not once per code object:
            # MAKE_CELL is rare)
            cv = self.cell_params.get(varname_from_oparg(self.code)(self.bc.args[i]))  # type: ignore[arg-type]  # (it has an arg)
            self.special[i] = ((cv,) if cv is not None else (), (), ())
            return nv
        self.nv = nv
        self.step(b, i, last)
        return self.nv

    def enter_handler(self, b: int, entry: ExceptionEntry) -> None:
        """The values handler `b` finds pushed: the raising offset (if `lasti`), then the
        exception, from the entry's depth on."""
        hv: list[ValueId] = []
        stk, recs = self.stk, self.recs
        k = entry.depth
        if entry.lasti:  # (the records made inline, as `new` would)
            recs.append(("lasti", k, b, None, ()))
            stk[k] = v = -len(recs)
            hv.append(v)
            k += 1
        recs.append(("exc", k, b, None, ()))  # (the exception: one value, on top)
        stk[k] = v = -len(recs)
        hv.append(v)
        self.form.handler_values[b] = hv  # type: ignore[index]  # (`run` made it a dict)

    def make_entry(self) -> None:
        """The entry values: each local's (a parameter, or unbound), each cell
        parameter's (records made inline, as `new` would)."""
        code, live = self.code, self.live
        nargs = (
            code.co_argcount
            + code.co_kwonlyargcount
            + bool(code.co_flags & 0x04)
            + bool(code.co_flags & 0x08)
        )
        names = self.varnames
        b = self.cfg.entry
        self.cell_params = cell_params = {}
        recs = self.recs
        if self.locals is names:  # all locals, in arg order: ids -1, -2, ... in order
            # the records ("param" or "undef", name, b, None, ()) kept as the names alone
            # (`IntegerSSA.lead`; no tuple per local)
            recs += names
            count = len(names)
            self.form.lead = (nargs, b, count)
            # the entry's ids as a range (no list for the collector to traverse), the
            # locals' values as a slice of the shared list (a list of its own)
            self.form.entry = range(-1, -count - 1, -1)
            self.loc = _NEGATIVE[:count] if count <= len(_NEGATIVE) else list(self.form.entry)
            return
        loc: list[ValueId] = [None] * self.nloc  # type: ignore[list-item]  # (all set below)
        self.loc = loc
        params = names[:nargs]
        entry: list[ValueId] = []
        self.form.entry = entry
        lid, kinds = self.local_ids(), live.kinds
        for n in live.variables:
            kind = kinds[n]
            if kind == "local":
                recs.append(("param" if n in params else "undef", n, b, None, ()))
                loc[lid[n]] = v = -len(recs)
                entry.append(v)
            elif kind == "cell" and n in params:
                recs.append(("param", n, b, None, ()))
                cell_params[n] = v = -len(recs)
                entry.append(v)

    # -- renaming: protected blocks and the instructions `walk` does not inline -------
    def start_tracking(self, b: int, blk: Block, wanted: dict[int, ValueId]) -> list[int]:
        """Start tracking the values the handler of protected block `b` may see of the
        variables `wanted` (those with a phi at the handler; no other is asked for).
        Returns the positions of the instructions that write a wanted stack slot (they
        must go through `step`, which tracks them); the others leave the wanted slots
        as they are (one that only reads them, or writes only slots no phi wants),
        and only local stores (through `step` and `set`) need tracking."""
        self.track, self.track_last, self.tvars = {}, {}, wanted
        nloc = self.nloc
        top = max(wanted) - nloc + 1  # above the highest wanted slot
        if top <= 0:  # no slot wanted
            return []
        st = self.stack
        if st.block_low[b] >= top:  # no instruction reaches down to them
            return []
        slots = 0  # the wanted slots, as a mask
        for v in wanted:
            if v >= nloc:
                slots |= 1 << (v - nloc)
        lo, hi = blk.first, blk.stop
        out = []
        # (an instruction writes no slot below the base of its inputs)
        for i, eff, d in zip(range(lo, hi), st.effects[lo:hi], st.depth[lo:hi]):
            base = d - eff.pops
            if base < top:
                for j in eff.moved:
                    if slots >> (base + j) & 1:
                        out.append(i)
                        break
        return out

    def step(self, b: int, i: int, last: bool) -> None:
        """Rename one instruction, any kind."""
        st = self.stack
        eff, d = st.effects[i], st.depth[i]
        pops = eff.pops
        base = d - pops
        stk = self.stk
        if eff is LOAD_LOCAL:
            var = self.var_of_arg[self.bc.args[i]]  # type: ignore[index]  # (a LOAD_FAST has an arg)
            if var >= 0:
                v = self.special[i] = self.loc[var]
                self.put(base, v, last)
                return
        handler = LOCAL_OPS[self.bc.opcodes[i]]
        if handler is None and eff.plain:
            if pops:
                self.flat += stk[base:d]
            n = eff.news
            if n:
                v = self.nv
                self.nv = v + n
                for p in range(n):
                    self.put(base + p, v + p, last)
            return
        inputs = stk[base:d]
        news: Sequence[ValueId]
        uses: Sequence[ValueId]
        defs: Sequence[ValueId]
        if handler is None:
            v = self.nv
            self.nv = v + eff.news
            defs = news = tuple(range(v, v + eff.news))
            uses = inputs if eff.reads_all else [inputs[u] for u in eff.uses]
        else:
            news, uses, defs = handler(self, i, inputs, b, last)
        if eff.plain:
            results = news
            for p, val in enumerate(news):
                self.put(base + p, val, last)
        else:
            results = eff.fall_pick(inputs + list(news)) if news else eff.fall_pick(inputs)  # type: ignore[operator]
            for j in eff.moved:
                self.put(base + j, results[j], last)
            if last and eff.jump != eff.fall:
                nloc = self.nloc
                self.jump_override = (
                    b,
                    {nloc + base + j: (news[o] if o >= 0 else inputs[~o]) for j, o in enumerate(eff.jump)},
                )
        self.special[i] = (uses, defs, results)

    def phi_args(self, b: int) -> None:
        """Fill this block's argument of the phis of its successors."""
        phi_at, recs, nloc, loc, stk = self.phi_at, self.recs, self.nloc, self.loc, self.stk
        jo = self.jump_override  # set by this block's last instruction?
        jump_override = jo[1] if jo and jo[0] == b else None
        for dst, kind, pos in self.feeds[b]:
            if kind == "exception":
                if self.track is not None:
                    self.catch_args(b, phi_at[dst], pos)
                    continue
                override = None  # (untracked: the block changes nothing the handler sees)
            else:
                override = jump_override if kind != "fallthrough" else None
            for var, phi in phi_at[dst].items():
                if override is not None and var in override:
                    val = override[var]
                else:
                    val = loc[var] if var < nloc else stk[var - nloc]
                recs[~phi][4][pos] = val

    def catch_args(self, b: int, phis: dict[int, ValueId], pos: int) -> None:
        """Fill protected block `b`'s argument of its handler's phis `phis`: for each
        variable, the value it had when the block began if the block never changes it,
        else what the block's tracking saw (one value, or a ``catch`` merging them)."""
        recs, nloc, loc, stk = self.recs, self.nloc, self.loc, self.stk
        track: dict[int, list[ValueId]]
        track_last: dict[int, ValueId]
        track, track_last = self.track, self.track_last  # type: ignore[assignment]  # (set: called while tracking)
        for var, phi in phis.items():
            seen = track.get(var)
            if seen is None:
                val = track_last.get(var)  # changed only by the last instruction
                if val is None:  # unchanged
                    val = loc[var] if var < nloc else stk[var - nloc]
            else:
                val = self.catch_value(var, b, seen)
            recs[~phi][4][pos] = val

    def catch_value(self, var: int, b: int, seen: list[ValueId]) -> ValueId:
        """The value of `var` that the handler of protected block `b` may see, given the
        values `seen` in the block."""
        distinct = list(dict.fromkeys(seen))
        if len(distinct) == 1:
            return distinct[0]
        name = self.locals[var] if var < self.nloc else var - self.nloc
        v = self.new("catch", name, b, None, tuple(distinct))
        self.form.catches.setdefault(b, []).append(v)  # type: ignore[attr-defined]  # (`run` made it a dict)
        return v


# the inline renaming: the C kernel where built, else its reference
RENAME_INLINE = KERNELS.rename_inline if KERNELS is not None else rename_inline

_NEGATIVE = list(range(-1, -257, -1))  # the entry's value ids, -1, -2, ... (`make_entry`)


# The mark of an instruction `walk` must hand to `step` (one that may change a slot a
# handler sees): an `Effect`, as the column's entries are (a second type there undoes
# the interpreter's specialization of the attribute reads), neither simple nor moving.
_OTHER = Effect(0, (), (), (), 1, LOCAL_OTHER)
