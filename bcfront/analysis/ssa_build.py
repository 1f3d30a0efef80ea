"""Construction of SSA form (see `bcfront.analysis.ssa` for what it computes).

Cytron et al.: phis at the iterated dominance frontier of the blocks that
define a variable, pruned by liveness (locals) and by the entry stack depth
(slots); then renaming along the dominator tree, iteratively, with an undo
log.  Renaming works on integer value ids, and records per instruction only
what it reads and defines (see `SSA` for the layout); `SSA` turns them into
`Value` and `SSAOp` objects only when a caller asks for them.

Two kinds of edge do not carry their source block's exit state, so their
targets get a phi for what differs even when the source dominates them:

* exception edges: the handler sees a variable as it was before whichever
  protected instruction raised (a ``catch`` value when that varies);
* the taken side of a branch whose two sides push different things (3.11's
  FOR_ITER, SEND, JUMP_IF_*_OR_POP).
"""
from __future__ import annotations

from bisect import bisect_left
from itertools import compress, count
from operator import add, attrgetter

from .liveness import Liveness
from .ssa import SSA
from .stack import StackInfo


class Builder:
    """One construction; its state is the renaming environment `cur` (a list indexed
    by variable: SSA locals first, then stack slots, holding value ids) with an undo
    `log` for the locals (see `run` for the stack slots).  `vals` holds the value
    records, indexed by id."""

    def __init__(self, ssa: SSA, idom, frontier, liveness: Liveness, stack: StackInfo):
        self.ssa, self.idom, self.frontier = ssa, idom, frontier
        self.live, self.stack = liveness, stack
        self.cfg = ssa.cfg
        self.bc = self.cfg.bytecode
        self.code = self.bc.code
        self.local = self.code._varname_from_oparg   # a local-variable opcode's arg -> name
        ssa._uses = [None] * len(self.bc.offsets)
        ssa._flat = []
        ssa._first = [-1] * len(self.bc.offsets)
        self.locals = [n for n in liveness.variables if liveness.kinds[n] == "local"]
        self.lid = {n: i for i, n in enumerate(self.locals)}
        self.nloc = len(self.locals)
        # liveness bit index -> SSA local id (-1 for cells and free variables)
        self.var_of_bit = [self.lid.get(n, -1) for n in liveness.variables]
        self.local_mask = sum(1 << i for i, v in enumerate(self.var_of_bit) if v >= 0)
        self.nvars = self.nloc + stack.max_depth + 1
        # LOAD_FAST's arg -> SSA local id, for the args this code uses
        self.lid_of_arg = {}
        for k in range(len(self.code.co_varnames)):
            var = self.lid.get(self.local(k))
            if var is not None:
                self.lid_of_arg[k] = var
        self.cur: list = [None] * self.nvars
        self.log: list = []
        self.vals: list[tuple] = []
        self.track: dict | None = None       # var -> values seen in a protected block
        self.track_last: dict | None = None  # var -> value before the block's last instruction

    def new(self, kind: str, var, b: int, offset, args=()) -> int:
        """A new value record; its id."""
        vals = self.vals
        vals.append((kind, var, b, offset, args))
        return len(vals) - 1

    def set(self, var: int, val: int, last: bool = False) -> None:
        old = self.cur[var]
        if old == val:
            return
        self.log += (var, old)
        self.cur[var] = val
        if self.track is not None:
            self.tracked(var, old, val, last)

    def tracked(self, var, old, val, last) -> None:
        track = self.track
        if last:
            if var not in track:
                self.track_last.setdefault(var, old)
        elif var in track:
            track[var].append(val)
        else:
            track[var] = [old, val]

    def locals_of(self, mask: int) -> list[int]:
        out = []
        m = mask & self.local_mask
        while m:
            low = m & -m
            out.append(self.var_of_bit[low.bit_length() - 1])
            m ^= low
        return out

    # -- phase 1: where each variable is defined ---------------------------------------
    def def_blocks(self) -> list[set[int]]:
        cfg, st, nloc = self.cfg, self.stack, self.nloc
        effects, depth = st.effects, st.depth
        defs = [set() for _ in range(self.nvars)]
        self.written: dict[int, set[int]] = {}
        self.jump_diff: list[tuple[int, int, set[int]]] = []
        block_kill = self.live.block_kill
        # per instruction, the first two stack slots whose content it changes (its
        # `moved[0]` and `moved[1]`), at C speed over the whole function: negative when
        # it changes none (the sentinel) or is unreachable; a third one is rare
        first = list(map(add, depth, map(_FIRST_REL, effects)))
        second = list(map(add, depth, map(_SECOND_REL, effects)))
        rest = list(compress(range(len(effects)), map(_MOVED_MORE, effects)))
        for b in self.idom:
            blk = cfg.blocks[b]
            lo = blk.first
            hi = blk.stop
            w = set(first[lo:hi])
            w.update(second[lo:hi])
            if rest:
                for k in rest[bisect_left(rest, lo):bisect_left(rest, hi)]:
                    base = depth[k] - effects[k].pops
                    w.update([base + j for j in effects[k].moved[2:]])
            w = {nloc + x for x in w if x >= 0}
            km = block_kill[b]
            i = hi - 1
            eff = effects[i]
            if eff.jump != eff.fall:
                # slots the taken jump leaves differently from the fall-through (past
                # the fall-through's outputs a slot keeps its input, ~j): the jump
                # target cannot inherit them from this block's exit state
                base = nloc + depth[i] - eff.pops
                diff = {base + j for j, o in enumerate(eff.jump)
                        if o != (eff.fall[j] if j < len(eff.fall) else ~j)}
                w |= diff
                target = self.bc.targets[i]
                if diff and target is not None:
                    self.jump_diff.append((b, target, diff))
            w.update(self.locals_of(km))
            self.written[b] = w
            for v in w:
                defs[v].add(b)
        for v in range(nloc):
            defs[v].add(cfg.entry)
        return defs

    # -- phase 2: phi placement -------------------------------------------------------
    def place_phis(self) -> dict[int, list[int]]:
        st, live, nloc = self.stack, self.live, self.nloc
        defs = self.def_blocks()
        bit_of = {v: 1 << k for k, v in enumerate(self.var_of_bit) if v >= 0}
        handlers = self.handlers
        phis: dict[int, set[int]] = {}

        def wanted(v, b):
            if v < nloc:
                return bool(live.bits_in[b] & bit_of[v])
            entry = handlers.get(b)
            return v - nloc < (entry.depth if entry is not None else st.depth_in[b])

        # a handler needs a phi for every variable a protected block changes, even
        # when that block dominates it: the handler does not see its exit value
        for h, srcs in self.exc_preds.items():
            for b in srcs:
                for v in self.written[b]:
                    if wanted(v, h):
                        phis.setdefault(h, set()).add(v)
                        defs[v].add(h)
        for b, target, diff in self.jump_diff:
            for v in diff:
                if target in st.depth_in and wanted(v, target):
                    phis.setdefault(target, set()).add(v)
                    defs[v].add(target)
        for h, entry in handlers.items():
            for k in range(entry.depth, entry.handler_depth):
                defs[nloc + k].add(h)
        frontier = self.frontier
        deepest = max(st.depth_in.values(), default=0)
        for v in range(nloc + deepest):
            blocks = defs[v]
            if not blocks:
                continue
            work = list(blocks)
            seen = set(blocks)
            while work:
                for y in frontier.get(work.pop(), ()):
                    has = phis.get(y)
                    if (has is None or v not in has) and wanted(v, y):
                        phis.setdefault(y, set()).add(v)
                        if y not in seen:
                            seen.add(y)
                            work.append(y)
        return {b: sorted(vs) for b, vs in phis.items()}

    # -- phase 3: renaming -------------------------------------------------------------
    def run(self) -> None:
        cfg, ssa, idom = self.cfg, self.ssa, self.idom
        self.handlers = {}                   # handler block -> its exception entry
        self.exc_preds: dict[int, list[int]] = {}
        blocks, kinds = cfg.blocks, cfg.out_kinds
        for b in cfg.order:                  # a block with a handler has an exception edge
            h = blocks[b].handler
            if h is not None and b in idom:
                self.handlers[h.target] = h
                self.exc_preds.setdefault(h.target, []).append(b)
        self.phi_at: dict[int, dict[int, int]] = {}
        self.in_pos: dict[int, dict] = {}
        phi_edges = ssa._phi_edges
        for b, vs in self.place_phis().items():
            table = self.phi_at[b] = {}
            # incoming (src, kind) pairs in the order of `cfg.edges`
            edges = phi_edges[b] = tuple(
                (p, k) for p in dict.fromkeys(blocks[b].preds) if p in idom
                for s, k in zip(blocks[p].succs, kinds[p]) if s == b)
            self.in_pos[b] = {edge: i for i, edge in enumerate(edges)}
            for var in vs:
                table[var] = self.new("phi", self.locals[var] if var < self.nloc
                                      else var - self.nloc, b, None, [None] * len(edges))
        self.make_entry()
        children: dict[int, list[int]] = {b: [] for b in idom}
        for b, d in idom.items():
            if d is not None:
                children[d].append(b)
        # Preorder walk of the dominator tree.  Locals are restored with an undo log
        # when a subtree is left; the stack slots (few, and rewritten by nearly every
        # instruction) are instead copied from the immediate dominator's exit state.
        work: list = [cfg.entry]
        log, cur, nloc = self.log, self.cur, self.nloc
        stack_exit: dict[int, list] = {}
        order = ssa._order
        while work:
            item = work.pop()
            if item.__class__ is tuple:          # leaving a subtree: undo its definitions
                mark = item[0]
                while len(log) > mark:       # the log is flat: var, old, var, old, ...
                    old = log.pop()
                    cur[log.pop()] = old
                continue
            work.append((len(log),))
            d = idom[item]
            if d is not None:
                cur[nloc:] = stack_exit[d]
            order.append(item)
            self.block(item)
            kids = children[item]
            if kids:
                stack_exit[item] = cur[nloc:]
                work.extend(reversed(kids))
        vals = self.vals
        for b, table in self.phi_at.items():
            ids = ssa._phis[b] = list(table.values())
            for v in ids:
                if None in vals[v][4]:
                    raise AssertionError(f"a phi at block {b} lacks an argument")
        ssa._vals = vals

    def make_entry(self) -> None:
        code, cfg = self.code, self.cfg
        nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) \
            + bool(code.co_flags & 0x08)
        params = set(code.co_varnames[:nargs])
        self.cell_params: dict[str, int] = {}
        entry = self.ssa._entry
        for n in self.live.variables:
            kind = self.live.kinds[n]
            if kind == "local":
                v = self.new("param" if n in params else "undef", n, cfg.entry, None)
                self.cur[self.lid[n]] = v
                entry.append(v)
            elif kind == "cell" and n in params:
                v = self.new("param", n, cfg.entry, None)
                self.cell_params[n] = v
                entry.append(v)

    def block(self, b: int) -> None:
        ssa, st, nloc, cfg = self.ssa, self.stack, self.nloc, self.cfg
        cur = self.cur
        blk = cfg.blocks[b]
        for var, phi in self.phi_at.get(b, {}).items():
            self.set(var, phi)
        entry = self.handlers.get(b)
        if entry is not None:
            hv = []
            for k in range(entry.depth, entry.handler_depth):
                v = self.new("lasti" if entry.lasti and k == entry.depth else "exc", k, b, None)
                hv.append(v)
                cur[nloc + k] = v
            ssa._handler_values[b] = hv
        ssa._stack_in[b] = tuple(cur[nloc:nloc + st.depth_in[b]])
        protected = blk.handler is not None
        if protected:
            self.track, self.track_last = {}, {}
        track = self.track
        bc = self.bc
        lo = blk.first
        hi = blk.stop
        last = hi - 1
        jump_override = None
        local_ops = _LOCAL_OPS
        load_fast = _LOAD_FAST
        lid_of_arg = self.lid_of_arg
        uses_at, first_at, special = ssa._uses, ssa._first, ssa._special
        flat = ssa._flat
        vals = self.vals
        append = vals.append
        for i, op, arg, eff, d in zip(count(lo), bc.opcodes[lo:hi], bc.args[lo:hi],
                                      st.effects[lo:hi], st.depth[lo:hi]):
            pops = eff.pops
            base = nloc + d - pops
            if op in load_fast:
                var = lid_of_arg.get(arg)
                if var is not None:     # a load of a local pushes its value: uses_at holds it
                    v = uses_at[i] = cur[var]
                    first_at[i] = -3
                    old = cur[base]
                    if old != v:
                        cur[base] = v
                        if track is not None:
                            self.tracked(base, old, v, i == last)
                    continue
            handler = local_ops[op]
            if handler is None and eff.plain:
                # the common case: reads its inputs, pushes new values in order (the
                # record of a value an instruction pushes is the instruction's position)
                if pops:
                    uses_at[i] = len(flat)
                    flat += cur[base:base + pops]
                n = eff.news
                if n == 1:
                    v = first_at[i] = len(vals)
                    append(i)
                    if track is not None:
                        self.tracked(base, cur[base], v, i == last)
                    cur[base] = v
                elif n:
                    v = first_at[i] = len(vals)
                    vals += [i] * n
                    defs = range(v, v + n)
                    if track is not None:
                        for p, v in enumerate(defs):
                            self.tracked(base + p, cur[base + p], v, i == last)
                    cur[base:base + n] = defs
                continue
            inputs = cur[base:base + pops]
            if handler is None:
                v = len(vals)
                vals += [i] * eff.news
                defs = news = tuple(range(v, len(vals)))
                uses = inputs if eff.reads_all else [inputs[u] for u in eff.uses]
            else:
                news, uses, defs = handler(self, i, inputs, b, i == last)
            if eff.plain:
                results = news
                slot = base
                for val in news:
                    old = cur[slot]
                    if old != val:
                        cur[slot] = val
                        if track is not None:
                            self.tracked(slot, old, val, i == last)
                    slot += 1
            else:
                results = tuple([news[o] if o >= 0 else inputs[~o] for o in eff.fall])
                for j in eff.moved:
                    val = results[j]
                    old = cur[base + j]
                    if old != val:
                        cur[base + j] = val
                        if track is not None:
                            self.tracked(base + j, old, val, i == last)
                if i == last and eff.jump != eff.fall:
                    jump_override = {base + j: (news[o] if o >= 0 else inputs[~o])
                                     for j, o in enumerate(eff.jump)}
            uses_at[i] = uses
            first_at[i] = -2
            special[i] = (defs, results)
        catch_vals: dict[int, int] = {}
        for dst, kind in zip(blk.succs, cfg.out_kinds[b]):
            phis = self.phi_at.get(dst)
            if phis is None:
                continue
            pos = self.in_pos[dst][(b, kind)]
            for var, phi in phis.items():
                if kind == "exception":
                    val = catch_vals.get(var)
                    if val is None:
                        val = catch_vals[var] = self.catch_value(var, b)
                elif jump_override is not None and kind != "fallthrough" \
                        and var in jump_override:
                    val = jump_override[var]
                else:
                    val = cur[var]
                vals[phi][4][pos] = val
        if protected:
            self.track = self.track_last = None

    def catch_value(self, var: int, b: int) -> int:
        """The value of `var` that the handler of protected block `b` may see."""
        seen = self.track.get(var)
        if seen is None:
            return self.track_last.get(var, self.cur[var])
        distinct = list(dict.fromkeys(seen))
        if len(distinct) == 1:
            return distinct[0]
        name = self.locals[var] if var < self.nloc else var - self.nloc
        v = self.new("catch", name, b, None, tuple(distinct))
        self.ssa._catches.setdefault(b, []).append(v)
        return v

_POPS = attrgetter("pops")
_FIRST_REL = attrgetter("first_rel")
_SECOND_REL = attrgetter("second_rel")
_MOVED_MORE = attrgetter("moved_more")


# -- per-opcode handlers for fast locals: (builder, instruction position, inputs, block,
#    is_last) -> (values for the effect's new outputs, values used, values defined)

def _names(bd, i) -> tuple:
    a = bd.bc.argval(i)
    return a if a.__class__ is tuple else (a,)


def _load(bd, name, i, b, uses, defs):
    """The value a load of `name` pushes: the local's value, or a new one for a cell."""
    var = bd.lid.get(name)
    if var is None:
        v = bd.new("op", bd.stack.depth[i] - bd.stack.effects[i].pops + len(defs), b,
                   bd.bc.offsets[i])
        defs.append(v)
        return v
    v = bd.cur[var]
    uses.append(v)
    return v


def _store(bd, name, val, i, b, last, defs):
    var = bd.lid.get(name)
    if var is not None:
        v = bd.new("store", name, b, bd.bc.offsets[i], (val,))
        defs.append(v)
        bd.set(var, v, last)


def _clear(bd, name, i, b, last, defs):
    var = bd.lid.get(name)
    if var is not None:
        v = bd.new("undef", name, b, bd.bc.offsets[i])
        defs.append(v)
        bd.set(var, v, last)


def _h_load_fast(bd, i, inputs, b, last):
    name = bd.local(bd.bc.args[i])
    var = bd.lid.get(name)
    if var is not None:                         # the common case, kept short
        t = (bd.cur[var],)
        return t, t, ()
    uses, defs = [], []
    news = [_load(bd, name, i, b, uses, defs)]
    return news, tuple(uses), tuple(defs)


def _h_load_pair(bd, i, inputs, b, last):
    uses, defs = [], []
    news = [_load(bd, n, i, b, uses, defs) for n in _names(bd, i)]
    return news, tuple(uses), tuple(defs)


def _h_load_and_clear(bd, i, inputs, b, last):
    uses, defs = [], []
    name = bd.local(bd.bc.args[i])
    news = [_load(bd, name, i, b, uses, defs)]
    _clear(bd, name, i, b, last, defs)
    return news, tuple(uses), tuple(defs)


def _h_delete_fast(bd, i, inputs, b, last):
    uses, defs = [], []
    name = bd.local(bd.bc.args[i])
    var = bd.lid.get(name)
    if var is not None:
        uses.append(bd.cur[var])
    _clear(bd, name, i, b, last, defs)
    return (), tuple(uses), tuple(defs)


def _h_store_fast(bd, i, inputs, b, last):
    defs = []
    _store(bd, bd.local(bd.bc.args[i]), inputs[0], i, b, last, defs)
    return (), (inputs[0],), tuple(defs)


def _h_store_store(bd, i, inputs, b, last):
    first, second = _names(bd, i)
    defs = []
    _store(bd, first, inputs[1], i, b, last, defs)   # the first store takes the top
    _store(bd, second, inputs[0], i, b, last, defs)
    return (), (inputs[1], inputs[0]), tuple(defs)


def _h_store_load(bd, i, inputs, b, last):
    store, load = _names(bd, i)
    uses, defs = [inputs[0]], []
    _store(bd, store, inputs[0], i, b, last, defs)
    pushed = _load(bd, load, i, b, uses, defs)
    if defs and uses[-1] == defs[0]:      # `x = ...; x`: it reloads what it stored
        uses.pop()
    return (pushed,), tuple(uses), tuple(defs)


def _h_make_cell(bd, i, inputs, b, last):
    v = bd.cell_params.get(bd.local(bd.bc.args[i]))
    return (), ((v,) if v is not None else ()), ()


def _local_ops() -> list:
    """opcode byte -> handler (None for the opcodes that do not touch a fast local)."""
    from .decode import _OPNAME
    by_name = {
        "LOAD_FAST": _h_load_fast,
        "LOAD_FAST_CHECK": _h_load_fast,
        "LOAD_FAST_LOAD_FAST": _h_load_pair,
        "LOAD_FAST_AND_CLEAR": _h_load_and_clear,
        "DELETE_FAST": _h_delete_fast,
        "STORE_FAST": _h_store_fast,
        "STORE_FAST_STORE_FAST": _h_store_store,
        "STORE_FAST_LOAD_FAST": _h_store_load,
        "MAKE_CELL": _h_make_cell,
    }
    return [by_name.get(n) for n in _OPNAME]


_LOCAL_OPS = _local_ops()
_LOAD_FAST = frozenset(op for op, h in enumerate(_LOCAL_OPS) if h is _h_load_fast)
