"""Construction of SSA form (see `bcfront.analysis.ssa` for what it computes).

Cytron et al.: phis at the iterated dominance frontier of the blocks that
define a variable, pruned by liveness (locals) and by the entry stack depth
(slots); then renaming along the dominator tree, iteratively, with an undo
log.  Two kinds of edge do not carry their source block's exit state, so
their targets get a phi for what differs even when the source dominates them:

* exception edges: the handler sees a variable as it was before whichever
  protected instruction raised (a ``catch`` value when that varies);
* the taken side of a branch whose two sides push different things (3.11's
  FOR_ITER, SEND, JUMP_IF_*_OR_POP).
"""
from __future__ import annotations

from itertools import chain, compress
from operator import add, attrgetter, sub

from .liveness import Liveness
from .ssa import SSA, SSAOp, Value
from .stack import StackInfo


class Builder:
    """One construction; its state is the renaming environment `cur` (a list indexed
    by variable: SSA locals first, then stack slots) with an undo `log` for the
    locals (see `run` for the stack slots)."""

    def __init__(self, ssa: SSA, idom, frontier, liveness: Liveness, stack: StackInfo):
        self.ssa, self.idom, self.frontier = ssa, idom, frontier
        self.live, self.stack = liveness, stack
        self.cfg = ssa.cfg
        self.code = self.cfg.bytecode.code
        self.locals = [n for n in liveness.variables if liveness.kinds[n] == "local"]
        self.lid = {n: i for i, n in enumerate(self.locals)}
        self.nloc = len(self.locals)
        # liveness bit index -> SSA local id (-1 for cells and free variables)
        self.var_of_bit = [self.lid.get(n, -1) for n in liveness.variables]
        self.local_mask = sum(1 << i for i, v in enumerate(self.var_of_bit) if v >= 0)
        self.nvars = self.nloc + stack.max_depth + 1
        self.cur: list = [None] * self.nvars
        self.log: list = []
        self.track: dict | None = None       # var -> values seen in a protected block
        self.track_last: dict | None = None  # var -> value before the block's last instruction

    def set(self, var: int, val: Value, last: bool = False) -> None:
        old = self.cur[var]
        if old is val:
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
        for b in self.idom:
            blk = cfg.blocks[b]
            lo = blk.first
            hi = lo + len(blk.instructions)
            # slots whose content some instruction changes: the first of each one's
            # `moved` at C speed (a negative sentinel when it has none), then the rest
            effs = effects[lo:hi]
            bases = list(map(sub, depth[lo:hi], map(_POPS, effs)))
            w = set(map(add, bases, map(_MOVED0, effs)))
            for k in compress(range(hi - lo), map(_MOVED_REST, effs)):
                w.update([bases[k] + j for j in effs[k].moved[1:]])
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
                if diff and blk.last.jump_target is not None:
                    self.jump_diff.append((b, blk.last.jump_target, diff))
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
        bit_of = {v: 1 << self.var_of_bit.index(v) for v in range(nloc)}
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
        in_edges: dict[int, list] = {b: [] for b in idom}
        out_edges: dict[int, list] = {b: [] for b in idom}
        for e in cfg.edges:
            if e.src in idom:
                in_edges[e.dst].append(e)
                out_edges[e.src].append(e)
                if e.kind == "exception":
                    self.handlers[e.dst] = cfg.blocks[e.src].handler
                    self.exc_preds.setdefault(e.dst, []).append(e.src)
        self.phi_at: dict[int, dict[int, Value]] = {}
        self.in_pos: dict[int, dict] = {}
        for b, vs in self.place_phis().items():
            table = self.phi_at[b] = {}
            edges = tuple((e.src, e.kind) for e in in_edges[b])
            self.in_pos[b] = {edge: i for i, edge in enumerate(edges)}
            for var in vs:
                phi = table[var] = Value("phi", self.locals[var] if var < self.nloc
                                         else var - self.nloc, b, None, [None] * len(edges))
                phi.edges = edges
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
            self.block(item, out_edges[item])
            kids = children[item]
            if kids:
                stack_exit[item] = cur[nloc:]
                work.extend(reversed(kids))
        for b, vals in self.phi_at.items():
            ssa.phis[b] = list(vals.values())
            for v in ssa.phis[b]:
                if None in v.args:
                    raise AssertionError(f"a phi at block {b} lacks an argument")
                v.args = tuple(v.args)
        self.finish()

    def make_entry(self) -> None:
        code, cfg = self.code, self.cfg
        nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) \
            + bool(code.co_flags & 0x08)
        params = set(code.co_varnames[:nargs])
        self.cell_params: dict[str, Value] = {}
        for n in self.live.variables:
            kind = self.live.kinds[n]
            if kind == "local":
                v = Value("param" if n in params else "undef", n, cfg.entry, None, ())
                self.cur[self.lid[n]] = v
                self.ssa.entry.append(v)
            elif kind == "cell" and n in params:
                v = Value("param", n, cfg.entry, None, ())
                self.cell_params[n] = v
                self.ssa.entry.append(v)

    def block(self, b: int, outs) -> None:
        ssa, st, nloc, cfg = self.ssa, self.stack, self.nloc, self.cfg
        cur = self.cur
        blk = cfg.blocks[b]
        for var, phi in self.phi_at.get(b, {}).items():
            self.set(var, phi)
        entry = self.handlers.get(b)
        if entry is not None:
            vals = []
            for k in range(entry.depth, entry.handler_depth):
                v = Value("lasti" if entry.lasti and k == entry.depth else "exc", k, b, None, ())
                vals.append(v)
                cur[nloc + k] = v
            ssa.handler_values[b] = vals
        ssa.stack_in[b] = tuple(cur[nloc:nloc + st.depth_in[b]])
        protected = blk.handler is not None
        if protected:
            self.track, self.track_last = {}, {}
        track = self.track
        instrs = blk.instructions
        lo = blk.first
        hi = lo + len(instrs)
        last = instrs[-1]
        jump_override = None
        local_ops = _LOCAL_OPS
        ops = ssa.ops
        new = _new
        for ins, eff, d in zip(instrs, st.effects[lo:hi], st.depth[lo:hi]):
            pops = eff.pops
            base = nloc + d - pops
            handler = local_ops.get(ins.opname)
            if handler is None and eff.plain:
                # the common case: reads its inputs, pushes new values in order
                uses = tuple(cur[base:base + pops])
                n = eff.news
                if n == 1:
                    v = Value("op", d - pops, b, ins.offset, ())
                    if track is not None:
                        self.tracked(base, cur[base], v, ins is last)
                    cur[base] = v
                    defs = (v,)
                elif n:
                    defs = tuple([Value("op", d - pops + p, b, ins.offset, ()) for p in range(n)])
                    if track is not None:
                        for p, v in enumerate(defs):
                            self.tracked(base + p, cur[base + p], v, ins is last)
                    cur[base:base + n] = defs
                else:
                    defs = ()
                ops[ins.offset] = new(SSAOp, (ins, b, d, pops, uses, defs, defs))
                continue
            inputs = cur[base:base + pops]
            if handler is None:
                off = ins.offset
                defs = news = tuple([Value("op", base - nloc + p, b, off, ()) for p in eff.new_pos])
                uses = tuple(inputs) if eff.reads_all else tuple([inputs[u] for u in eff.uses])
            else:
                news, uses, defs = handler(self, ins, inputs, b, ins is last)
            if eff.plain:
                results = news
                slot = base
                for val in news:
                    old = cur[slot]
                    if old is not val:
                        cur[slot] = val
                        if track is not None:
                            self.tracked(slot, old, val, ins is last)
                    slot += 1
            else:
                results = tuple([news[o] if o >= 0 else inputs[~o] for o in eff.fall])
                for j in eff.moved:
                    val = results[j]
                    old = cur[base + j]
                    if old is not val:
                        cur[base + j] = val
                        if track is not None:
                            self.tracked(base + j, old, val, ins is last)
                if ins is last and eff.jump != eff.fall:
                    jump_override = {base + j: (news[o] if o >= 0 else inputs[~o])
                                     for j, o in enumerate(eff.jump)}
            ops[ins.offset] = new(SSAOp, (ins, b, d, pops, uses, defs, results))
        catch_vals: dict[int, Value] = {}
        for e in outs:
            phis = self.phi_at.get(e.dst)
            if phis is None:
                continue
            pos = self.in_pos[e.dst][(e.src, e.kind)]
            for var, phi in phis.items():
                if e.kind == "exception":
                    val = catch_vals.get(var)
                    if val is None:
                        val = catch_vals[var] = self.catch_value(var, b)
                elif jump_override is not None and e.kind != "fallthrough" \
                        and var in jump_override:
                    val = jump_override[var]
                else:
                    val = cur[var]
                phi.args[pos] = val
        if protected:
            self.track = self.track_last = None

    def catch_value(self, var: int, b: int) -> Value:
        """The value of `var` that the handler of protected block `b` may see."""
        seen = self.track.get(var)
        if seen is None:
            return self.track_last.get(var, self.cur[var])
        distinct = list(dict.fromkeys(seen))
        if len(distinct) == 1:
            return distinct[0]
        name = self.locals[var] if var < self.nloc else var - self.nloc
        v = Value("catch", name, b, None, tuple(distinct))
        self.ssa.catches.setdefault(b, []).append(v)
        return v

    # -- phase 4: numbering and def-use -----------------------------------------------
    def finish(self) -> None:
        """Number values in program order (entry, then per block: phis, handler values,
        instruction definitions, catch values); def-use links wait for a request."""
        ssa = self.ssa
        order = list(ssa.entry)
        ops = ssa.ops
        for b in sorted(self.idom):
            order += ssa.phis.get(b, ())
            order += ssa.handler_values.get(b, ())
            order += chain.from_iterable(map(_DEFS, map(ops.__getitem__, map(
                _OFFSET, self.cfg.blocks[b].instructions))))
            order += ssa.catches.get(b, ())
        counter: dict[str, int] = {}
        vnum = 0
        for i, v in enumerate(order):
            v.id = i
            v._ssa = ssa
            if v.var.__class__ is str:
                k = v.num = counter.get(v.var, 0)
                counter[v.var] = k + 1
            else:
                v.num = vnum
                vnum += 1
        ssa.values = order


_new = tuple.__new__
_POPS = attrgetter("pops")
_MOVED0 = attrgetter("moved0")
_MOVED_REST = attrgetter("moved_rest")
_DEFS = attrgetter("defs")
_OFFSET = attrgetter("offset")


# -- per-opcode handlers for fast locals: (builder, ins, inputs, block, is_last) ->
#    (values for the effect's new outputs, values used, values defined)

def _names(ins) -> tuple:
    a = ins.argval
    return a if a.__class__ is tuple else (a,)


def _load(bd, name, ins, b, uses, defs):
    """The value a load of `name` pushes: the local's value, or a new one for a cell."""
    var = bd.lid.get(name)
    if var is None:
        i = bd.stack.index[ins.offset]
        v = Value("op", bd.stack.depth[i] - bd.stack.effects[i].pops + len(defs), b,
                  ins.offset, ())
        defs.append(v)
        return v
    v = bd.cur[var]
    uses.append(v)
    return v


def _store(bd, name, val, ins, b, last, defs):
    var = bd.lid.get(name)
    if var is not None:
        v = Value("store", name, b, ins.offset, (val,))
        defs.append(v)
        bd.set(var, v, last)


def _clear(bd, name, ins, b, last, defs):
    var = bd.lid.get(name)
    if var is not None:
        v = Value("undef", name, b, ins.offset, ())
        defs.append(v)
        bd.set(var, v, last)


def _h_load_fast(bd, ins, inputs, b, last):
    var = bd.lid.get(ins.argval)
    if var is not None:                         # the common case, kept short
        t = (bd.cur[var],)
        return t, t, ()
    uses, defs = [], []
    news = [_load(bd, n, ins, b, uses, defs) for n in _names(ins)]
    return news, tuple(uses), tuple(defs)


def _h_load_pair(bd, ins, inputs, b, last):
    uses, defs = [], []
    news = [_load(bd, n, ins, b, uses, defs) for n in _names(ins)]
    return news, tuple(uses), tuple(defs)


def _h_load_and_clear(bd, ins, inputs, b, last):
    uses, defs = [], []
    news = [_load(bd, ins.argval, ins, b, uses, defs)]
    _clear(bd, ins.argval, ins, b, last, defs)
    return news, tuple(uses), tuple(defs)


def _h_delete_fast(bd, ins, inputs, b, last):
    uses, defs = [], []
    var = bd.lid.get(ins.argval)
    if var is not None:
        uses.append(bd.cur[var])
    _clear(bd, ins.argval, ins, b, last, defs)
    return (), tuple(uses), tuple(defs)


def _h_store_fast(bd, ins, inputs, b, last):
    defs = []
    _store(bd, ins.argval, inputs[0], ins, b, last, defs)
    return (), (inputs[0],), tuple(defs)


def _h_store_store(bd, ins, inputs, b, last):
    first, second = _names(ins)
    defs = []
    _store(bd, first, inputs[1], ins, b, last, defs)   # the first store takes the top
    _store(bd, second, inputs[0], ins, b, last, defs)
    return (), (inputs[1], inputs[0]), tuple(defs)


def _h_store_load(bd, ins, inputs, b, last):
    store, load = _names(ins)
    uses, defs = [inputs[0]], []
    _store(bd, store, inputs[0], ins, b, last, defs)
    pushed = _load(bd, load, ins, b, uses, defs)
    if defs and uses[-1] is defs[0]:      # `x = ...; x`: it reloads what it stored
        uses.pop()
    return (pushed,), tuple(uses), tuple(defs)


def _h_make_cell(bd, ins, inputs, b, last):
    v = bd.cell_params.get(ins.argval)
    return (), ((v,) if v is not None else ()), ()


_LOCAL_OPS = {
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
