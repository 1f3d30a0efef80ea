"""Static single assignment form of a code object's locals and stack slots.

Definitions.  Every definition of a fast local or of a stack slot is one
`Value`, defined exactly once:

* ``param`` / ``undef`` — the entry value of each local (a parameter, or
  "unbound"); ``undef`` also marks ``DELETE_FAST`` and the clear half of
  3.12's ``LOAD_FAST_AND_CLEAR``;
* ``store`` — ``STORE_FAST`` and friends: local ``x.3`` takes the stored value;
* ``op`` — a value an instruction pushes (``v7 = BINARY_OP(+)(v3, v5)``);
* ``phi`` — at a block head, one argument per reachable incoming edge;
* ``exc`` / ``lasti`` — what an exception handler finds pushed on entry;
* ``catch`` — when a local or slot changes inside a protected block, the
  handler may see any of its values there; a ``catch`` value at the end of
  that block merges them and is the phi argument along its exception edge.

Loading a local pushes the local's current value itself (no copy), and stack
moves (SWAP, COPY, FOR_ITER keeping its iterator) move values, so def-use
chains lead from a definition straight to the instructions that consume it.
Cells and free variables are shared memory, not SSA names: each
``LOAD_DEREF`` defines a new value.

Construction (Cytron et al.): phis at the iterated dominance frontier of the
blocks that define a variable, pruned by liveness (locals) and by the entry
stack depth (slots); exception handlers also get a phi for every variable
that a protected block changes; then renaming along the dominator tree,
iteratively, with an undo log.  Unreachable blocks have no SSA.
"""
from __future__ import annotations

from .cfg import CFG
from .liveness import Liveness, _EVENTS
from .stack import StackInfo


class Value:
    """One SSA value.  `var` is the local's name or the stack slot number."""
    __slots__ = ("id", "name", "kind", "var", "block", "offset", "args", "edges", "uses")

    def __init__(self, id, name, kind, var, block, offset=None, args=()):
        self.id = id
        self.name = name
        self.kind = kind          # param undef store op phi exc lasti catch
        self.var = var            # local name (str) or stack slot (int); None for cells
        self.block = block        # block that defines it
        self.offset = offset      # defining instruction, None at block heads/ends
        self.args = args          # operands (phi: aligned with `edges`)
        self.edges = ()           # phi only: incoming (src block, edge kind) pairs
        self.uses: list = []      # SSAOp or Value (phi/catch) that read it

    def __repr__(self) -> str:
        return self.name


class SSAOp:
    """One instruction in SSA form: the values it reads and defines, and what it pushes."""
    __slots__ = ("instr", "block", "depth", "pops", "uses", "defs", "results")

    def __init__(self, instr, block, depth, pops, uses, defs, results):
        self.instr = instr
        self.block = block
        self.depth = depth        # stack depth before it
        self.pops = pops          # stack slots it consumes
        self.uses = uses          # values read (stack inputs and locals)
        self.defs = defs          # values defined
        self.results = results    # values on its output slots (fall-through), bottom first

    @property
    def offset(self) -> int:
        return self.instr.offset

    def __repr__(self) -> str:
        return f"<SSAOp {self.instr.offset} {self.instr.opname}>"


class SSA:
    """SSA form of one code object (see the module docstring)."""

    def __init__(self, cfg: CFG, idom, frontier, liveness: Liveness, stack: StackInfo):
        self.cfg = cfg
        self.values: list[Value] = []
        self.entry: list[Value] = []
        self.phis: dict[int, list[Value]] = {}
        self.handler_values: dict[int, list[Value]] = {}
        self.catches: dict[int, list[Value]] = {}
        self.ops: dict[int, SSAOp] = {}
        self.stack_in: dict[int, tuple[Value, ...]] = {}
        self._locals_in: dict[int, dict[str, Value]] = {}
        if cfg.blocks:
            _Builder(self, idom, frontier, liveness, stack).run()

    # -- queries ---------------------------------------------------------------
    def uses_of(self, value: Value) -> list:
        """Instructions (`SSAOp`) and phi/catch values that read `value`."""
        return value.uses

    def value(self, name: str) -> Value:
        """The value printed as `name` (``"v7"``, ``"x.2"``)."""
        idx = getattr(self, "_by_name", None)
        if idx is None:
            idx = self._by_name = {v.name: v for v in self.values}
        return idx[name]

    def definitions(self, local: str) -> list[Value]:
        """Every value of local `local`, in definition order."""
        return [v for v in self.values if v.var == local]

    def locals_in(self, block: int) -> dict[str, Value]:
        """The value of each local live on entry to `block`."""
        return self._locals_in[block]

    def stack_before(self, offset: int) -> tuple[Value, ...]:
        """The stack, bottom first, just before the instruction at `offset`."""
        op = self.ops[offset]
        stack = list(self.stack_in[op.block])
        for ins in self.cfg.blocks[op.block].instructions:
            if ins.offset == offset:
                return tuple(stack)
            o = self.ops[ins.offset]
            stack[len(stack) - o.pops:] = o.results
        raise KeyError(offset)

    def __str__(self) -> str:
        from .render import ssa_text
        return ssa_text(self)

    def __repr__(self) -> str:
        return (f"<SSA {self.cfg.bytecode.code.co_qualname}: {len(self.values)} values, "
                f"{sum(map(len, self.phis.values()))} phis>")


class _Builder:
    def __init__(self, ssa: SSA, idom, frontier, liveness: Liveness, stack: StackInfo):
        self.ssa, self.idom, self.frontier = ssa, idom, frontier
        self.live, self.stack = liveness, stack
        self.cfg = ssa.cfg
        code = self.cfg.bytecode.code
        self.code = code
        self.locals = [n for n in liveness.variables if liveness.kinds[n] == "local"]
        self.lid = {n: i for i, n in enumerate(self.locals)}
        self.nloc = len(self.locals)
        self.nvars = self.nloc + stack.max_depth + 1
        self.cur: list = [None] * self.nvars
        self.log: list = []
        self.track: dict | None = None       # var -> values seen in a protected block
        self.track_last: dict | None = None  # var -> value before the block's last instruction

    # -- values --------------------------------------------------------------------
    def new(self, kind, var, block, offset=None, args=()) -> Value:
        # ids and names are given at the end, in program order (see `number`)
        return Value(-1, None, kind, var, block, offset, args)

    def number(self) -> None:
        """Name every value in program order: entry, then per block phis, handler
        values, instruction definitions and catch values.  Stack values are
        ``v0, v1, ...``; a local's values are ``x.0, x.1, ...``."""
        ssa = self.ssa
        order = list(ssa.entry)
        for b in sorted(self.idom):
            order += ssa.phis.get(b, ())
            order += ssa.handler_values.get(b, ())
            for ins in self.cfg.blocks[b].instructions:
                order += ssa.ops[ins.offset].defs
            order += ssa.catches.get(b, ())
        counter: dict[str, int] = {}
        vnum = 0
        for i, v in enumerate(order):
            v.id = i
            if isinstance(v.var, str):
                k = counter.get(v.var, 0)
                counter[v.var] = k + 1
                v.name = f"{v.var}.{k}"
            else:
                v.name = f"v{vnum}"
                vnum += 1
        ssa.values = order

    def set(self, var: int, val: Value, last: bool = False) -> None:
        old = self.cur[var]
        if old is val:
            return
        self.log.append((var, old))
        self.cur[var] = val
        if self.track is not None:
            if last:
                if var not in self.track:
                    self.track_last.setdefault(var, old)
            elif var in self.track:
                self.track[var].append(val)
            else:
                self.track[var] = [old, val]

    # -- phase 1: where each variable is defined ---------------------------------------
    def def_blocks(self) -> list[set[int]]:
        cfg, st, nloc, lid = self.cfg, self.stack, self.nloc, self.lid
        defs = [set() for _ in range(self.nvars)]
        self.written: dict[int, set[int]] = {}
        self.jump_diff: list[tuple[int, int, set[int]]] = []
        index = st.index
        for b in self.idom:
            blk = cfg.blocks[b]
            w = set()
            i = index[b]
            for ins in blk.instructions:
                d, eff = st.depth[i], st.effects[i]
                base = nloc + d - eff.pops
                for j, o in enumerate(eff.fall):
                    if o >= 0 or ~o != j:
                        w.add(base + j)
                if ins is blk.last and eff.jump != eff.fall:
                    # slots the taken jump leaves differently from the fall-through:
                    # the jump target cannot inherit them from this block's exit state
                    # (past the fall-through's outputs a slot keeps its input, ~j)
                    diff = {base + j for j, o in enumerate(eff.jump)
                            if o != (eff.fall[j] if j < len(eff.fall) else ~j)}
                    w |= diff
                    if diff and ins.jump_target is not None:
                        self.jump_diff.append((b, ins.jump_target, diff))
                rule = _EVENTS.get(ins.opname)
                if rule is not None:
                    for kind, name in rule(ins, self.code):
                        if kind == "w" and name in lid:
                            w.add(lid[name])
                i += 1
            self.written[b] = w
            for v in w:
                defs[v].add(b)
        for v in range(nloc):
            defs[v].add(cfg.entry)
        return defs

    # -- phase 2: phi placement -------------------------------------------------------
    def place_phis(self) -> dict[int, list[int]]:
        cfg, st, live, nloc = self.cfg, self.stack, self.live, self.nloc
        defs = self.def_blocks()
        live_bits = [live.bit[n] for n in self.locals]
        phis: dict[int, set[int]] = {}

        def wanted(v, b):
            if v < nloc:
                return bool(live.bits_in[b] & live_bits[v])
            k = v - nloc
            if b in self.handlers:
                return k < self.handlers[b].depth
            return k < st.depth_in[b]

        # handlers: a variable a protected block changes needs a phi, even when
        # the protected block dominates the handler (its exit value is not the
        # value the handler sees)
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
        for h, entry in self.handlers.items():
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
                x = work.pop()
                for y in frontier.get(x, ()):
                    has = phis.get(y)
                    if has is not None and v in has:
                        continue
                    if wanted(v, y):
                        phis.setdefault(y, set()).add(v)
                        if y not in seen:
                            seen.add(y)
                            work.append(y)
        return {b: sorted(vs) for b, vs in phis.items()}

    # -- phase 3: renaming -------------------------------------------------------------
    def run(self) -> None:
        cfg, ssa = self.cfg, self.ssa
        self.handlers = {}                   # handler block -> its exception entry
        self.exc_preds: dict[int, list[int]] = {}
        in_edges: dict[int, list] = {b: [] for b in self.idom}
        out_edges: dict[int, list] = {b: [] for b in self.idom}
        for e in cfg.edges:
            if e.src in self.idom and e.dst in self.idom:
                in_edges[e.dst].append(e)
                out_edges[e.src].append(e)
                if e.kind == "exception":
                    self.handlers[e.dst] = cfg.blocks[e.src].handler
                    self.exc_preds.setdefault(e.dst, []).append(e.src)
        self.in_pos = {b: {(e.src, e.kind): i for i, e in enumerate(es)}
                       for b, es in in_edges.items()}
        self.phi_at: dict[int, dict[int, Value]] = {}
        for b, vs in self.place_phis().items():
            table = self.phi_at[b] = {}
            for var in vs:
                phi = table[var] = self.new("phi", self.locals[var] if var < self.nloc
                                            else var - self.nloc, b)
                phi.args = [None] * len(in_edges[b])
                phi.edges = tuple((e.src, e.kind) for e in in_edges[b])
        self.make_entry()
        children: dict[int, list[int]] = {b: [] for b in self.idom}
        for b, d in self.idom.items():
            if d is not None:
                children[d].append(b)
        work: list = [cfg.entry]
        while work:
            item = work.pop()
            if isinstance(item, tuple):          # leaving a subtree: undo its definitions
                mark = item[0]
                log, cur = self.log, self.cur
                while len(log) > mark:
                    var, old = log.pop()
                    cur[var] = old
                continue
            work.append((len(self.log),))
            self.block(item, out_edges[item])
            work.extend(reversed(children[item]))
        for b, vals in self.phi_at.items():
            ssa.phis[b] = list(vals.values())
            for v in ssa.phis[b]:
                if any(a is None for a in v.args):
                    raise AssertionError(f"a phi at block {b} lacks an argument")
                v.args = tuple(v.args)
        self.number()

    def make_entry(self) -> None:
        code, cfg = self.code, self.cfg
        nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) \
            + bool(code.co_flags & 0x08)
        params = set(code.co_varnames[:nargs])
        self.cell_params: dict[str, Value] = {}
        for n in self.live.variables:
            kind = self.live.kinds[n]
            if kind == "local":
                v = self.new("param" if n in params else "undef", n, cfg.entry)
                self.cur[self.lid[n]] = v
                self.ssa.entry.append(v)
            elif kind == "cell" and n in params:
                v = self.new("param", n, cfg.entry)
                self.cell_params[n] = v
                self.ssa.entry.append(v)

    def block(self, b: int, outs) -> None:
        ssa, st, nloc, cfg = self.ssa, self.stack, self.nloc, self.cfg
        blk = cfg.blocks[b]
        for var, phi in self.phi_at.get(b, {}).items():
            self.set(var, phi)
        entry = self.handlers.get(b)
        if entry is not None:
            vals = []
            for k in range(entry.depth, entry.handler_depth):
                kind = "lasti" if entry.lasti and k == entry.depth else "exc"
                v = self.new(kind, k, b)
                vals.append(v)
                self.set(nloc + k, v)
            ssa.handler_values[b] = vals
        depth_in = st.depth_in[b]
        ssa.stack_in[b] = tuple(self.cur[nloc:nloc + depth_in])
        live = self.live
        ssa._locals_in[b] = {n: self.cur[self.lid[n]] for n in live.live_in(b)
                             if n in self.lid}
        protected = blk.handler is not None
        if protected:
            self.track, self.track_last = {}, {}
        i = st.index[b]
        last = blk.last
        jump_override = None
        for ins in blk.instructions:
            is_last = ins is last
            d, eff = st.depth[i], st.effects[i]
            base = d - eff.pops
            cur = self.cur
            inputs = cur[nloc + base:nloc + d]
            handler = _HANDLERS.get(ins.opname, _default)
            news, uses, defs = handler(self, ins, inputs, eff, b, is_last)
            for j, o in enumerate(eff.fall):
                val = news[o] if o >= 0 else inputs[~o]
                if cur[nloc + base + j] is not val:
                    self.set(nloc + base + j, val, is_last)
            results = tuple(news[o] if o >= 0 else inputs[~o] for o in eff.fall)
            op = SSAOp(ins, b, d, eff.pops, tuple(uses), tuple(defs), results)
            ssa.ops[ins.offset] = op
            for u in op.uses:
                u.uses.append(op)
            if is_last and eff.jump != eff.fall:
                jump_override = {nloc + base + j: (news[o] if o >= 0 else inputs[~o])
                                 for j, o in enumerate(eff.jump)}
            i += 1
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
                elif jump_override is not None and e.kind in ("jump", "branch") \
                        and var in jump_override:
                    val = jump_override[var]
                else:
                    val = self.cur[var]
                phi.args[pos] = val
                val.uses.append(phi)
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
        v = self.new("catch", name, b, None, tuple(distinct))
        for a in distinct:
            a.uses.append(v)
        self.ssa.catches.setdefault(b, []).append(v)
        return v

    # -- helpers for the handlers ------------------------------------------------------
    def op_values(self, n: int, b: int, ins) -> list[Value]:
        """`n` new values of `ins`; each one's var is the slot it is first pushed to."""
        i = self.stack.index[ins.offset]
        eff = self.stack.effects[i]
        base = self.stack.depth[i] - eff.pops
        out = []
        for k in range(n):
            pos = eff.fall.index(k) if k in eff.fall else eff.jump.index(k) if k in eff.jump else 0
            out.append(self.new("op", base + pos, b, ins.offset))
        return out


# -- per-opcode handlers: (builder, ins, inputs, effect, block, is_last) ->
#    (values for the effect's new outputs, values used, values defined)

def _default(bd: _Builder, ins, inputs, eff, b, last):
    news = bd.op_values(eff.news, b, ins)
    return news, [inputs[u] for u in eff.uses], news


def _names(ins) -> tuple:
    a = ins.argval
    return tuple(a) if isinstance(a, tuple) else (a,)


def _load(bd, name, ins, b, uses, defs):
    """The value a load of `name` pushes: the local's value, or a new one for a cell."""
    var = bd.lid.get(name)
    if var is None:
        v = bd.op_values(1, b, ins)[0]
        defs.append(v)
        return v
    v = bd.cur[var]
    uses.append(v)
    return v


def _store(bd, name, val, ins, b, last, defs):
    var = bd.lid.get(name)
    if var is None:
        return
    v = bd.new("store", name, b, ins.offset, (val,))
    defs.append(v)
    bd.set(var, v, last)


def _clear(bd, name, ins, b, last, defs):
    var = bd.lid.get(name)
    if var is None:
        return
    v = bd.new("undef", name, b, ins.offset)
    defs.append(v)
    bd.set(var, v, last)


def _h_load_fast(bd, ins, inputs, eff, b, last):
    uses, defs = [], []
    news = [_load(bd, n, ins, b, uses, defs) for n in _names(ins)]
    return news, uses, defs


def _h_load_and_clear(bd, ins, inputs, eff, b, last):
    uses, defs = [], []
    news = [_load(bd, ins.argval, ins, b, uses, defs)]
    _clear(bd, ins.argval, ins, b, last, defs)
    return news, uses, defs


def _h_delete_fast(bd, ins, inputs, eff, b, last):
    uses, defs = [], []
    var = bd.lid.get(ins.argval)
    if var is not None:
        uses.append(bd.cur[var])
    _clear(bd, ins.argval, ins, b, last, defs)
    return [], uses, defs


def _h_store_fast(bd, ins, inputs, eff, b, last):
    defs = []
    _store(bd, ins.argval, inputs[0], ins, b, last, defs)
    return [], [inputs[0]], defs


def _h_store_store(bd, ins, inputs, eff, b, last):
    first, second = _names(ins)
    defs = []
    _store(bd, first, inputs[1], ins, b, last, defs)   # the first store takes the top
    _store(bd, second, inputs[0], ins, b, last, defs)
    return [], [inputs[1], inputs[0]], defs


def _h_store_load(bd, ins, inputs, eff, b, last):
    store, load = _names(ins)
    uses, defs = [inputs[0]], []
    _store(bd, store, inputs[0], ins, b, last, defs)
    pushed = _load(bd, load, ins, b, uses, defs)
    if defs and uses[-1] is defs[0]:      # `x = ...; x`: it reloads what it stored
        uses.pop()
    return [pushed], uses, defs


def _h_make_cell(bd, ins, inputs, eff, b, last):
    v = bd.cell_params.get(ins.argval)
    return [], ([v] if v is not None else []), []


_HANDLERS = {
    "LOAD_FAST": _h_load_fast,
    "LOAD_FAST_CHECK": _h_load_fast,
    "LOAD_FAST_LOAD_FAST": _h_load_fast,
    "LOAD_FAST_AND_CLEAR": _h_load_and_clear,
    "DELETE_FAST": _h_delete_fast,
    "STORE_FAST": _h_store_fast,
    "STORE_FAST_STORE_FAST": _h_store_store,
    "STORE_FAST_LOAD_FAST": _h_store_load,
    "MAKE_CELL": _h_make_cell,
}
