"""Static single assignment form of a code object's locals and stack slots.

Definitions.  Every definition of a fast local or of a stack slot is one
`SSAValue`, defined exactly once:

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

How it is built: `bcfront.analysis.ssa_build`.  Unreachable blocks have no SSA.

Types: an `SSAValue`'s ``args`` hold the builder's integer ids until `SSA` turns
them into values (`SSA._materialize`), so the constructor takes them as `Any`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from .cfg import CFG
from .ssa_build import Builder
from .ssa_form import IntegerSSA

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .bytecode import Instr
    from .liveness import Liveness
    from .stack import StackInfo


class SSAValue:
    """One SSA value.  `var` is the local's name or the stack slot number."""

    __slots__ = ("id", "num", "kind", "var", "block", "offset", "args", "edges", "_ssa", "_uses")

    id: int  # position in `SSA.values`
    num: int  # the number in its name (per local, or among the stack values)
    args: tuple[SSAValue, ...]
    edges: tuple[tuple[int, str], ...]
    _ssa: SSA
    _uses: list[SSAOp | SSAValue]

    def __init__(self, kind: str, var: str | int, block: int, offset: int | None, args: Any):
        self.kind = kind  # param undef store op phi exc lasti catch
        self.var = var  # local name (str) or stack slot (int)
        self.block = block  # block that defines it
        self.offset = offset  # defining instruction, None at block heads/ends
        self.args = args  # operands (phi: aligned with `edges`)
        self.edges = ()  # phi only: incoming (src block, edge kind) pairs
        # id and num are given when construction ends

    @property
    def name(self) -> str:
        """``v7`` for a stack value, ``x.2`` for a value of local x."""
        return f"{self.var}.{self.num}" if isinstance(self.var, str) else f"v{self.num}"

    @property
    def uses(self) -> list[SSAOp | SSAValue]:
        """The instructions (`SSAOp`) and phi/catch values that read this value."""
        try:
            return self._uses
        except AttributeError:  # def-use chains are linked on first request
            self._ssa._link_uses()
            return self._uses

    def __repr__(self) -> str:
        return self.name


class SSAOp(NamedTuple):
    """One instruction in SSA form: the values it reads and defines, and what it pushes.

    A NamedTuple because there is one per instruction and `tuple.__new__` builds
    one several times faster than a class's ``__init__``; equality and hashing
    are by identity, as for `SSAValue`.
    """

    instr: Instr
    block: int
    depth: int  # stack depth before it
    pops: int  # stack slots it consumes
    uses: tuple[SSAValue, ...]  # values read (stack inputs and locals)
    defs: tuple[SSAValue, ...]  # values defined
    results: tuple[SSAValue, ...]  # values on its output slots (fall-through), bottom first

    # (mypy takes a NamedTuple body's assignments for fields)
    __eq__ = object.__eq__  # type: ignore[misc]
    __ne__ = object.__ne__  # type: ignore[misc]
    __hash__ = object.__hash__  # type: ignore[misc]

    @property
    def offset(self) -> int:
        return self.instr.offset

    def __repr__(self) -> str:
        return f"<SSAOp {self.instr.offset} {self.instr.opname}>"


class SSA:
    """SSA form of one code object (see the module docstring).

    Construction renames on integer value ids (`bcfront.analysis.ssa_build`);
    the object view -- `values`, `entry`, `phis`, `handler_values`, `catches`,
    `ops`, `stack_in` -- is built from them on the first access to any of these.
    """

    _VIEW = frozenset({"values", "entry", "phis", "handler_values", "catches", "ops", "stack_in"})

    # the view (made by `_materialize`) and the query caches (`__getattr__` makes them)
    values: list[SSAValue]
    entry: list[SSAValue]
    phis: dict[int, list[SSAValue]]
    handler_values: dict[int, list[SSAValue]]
    catches: dict[int, list[SSAValue]]
    ops: dict[int, SSAOp]
    stack_in: dict[int, tuple[SSAValue, ...]]
    _locals_in: dict[int, dict[str, SSAValue]]
    _last_defs: dict[int, dict[str, SSAValue]]
    _by_name: dict[str, SSAValue]

    def __init__(
        self,
        cfg: CFG,
        idom: Mapping[int, int | None],
        frontier: Mapping[int, set[int]],
        liveness: Liveness,
        stack: StackInfo,
    ):
        self.cfg = cfg
        self._idom, self._liveness, self.stack = idom, liveness, stack
        # the integer form the builder made (see `IntegerSSA` for its layout)
        self.form = Builder(cfg, idom, frontier, liveness, stack).run() if cfg.blocks else IntegerSSA()

    def __getattr__(self, name: str) -> Any:
        if name in SSA._VIEW:
            self._materialize()
            return self.__dict__[name]
        if name in ("_locals_in", "_last_defs"):  # query caches, made on first use
            d = self.__dict__[name] = {}
            return d
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _materialize(self) -> None:
        """Build the `SSAValue` and `SSAOp` objects from the integer form, numbered in
        program order (entry, then per block in offset order: phis, handler values,
        instruction definitions, catch values)."""
        # op values first (filled in below), then the records backwards: id ~k, a
        # negative index, finds record k
        form = self.form
        recs = form.recs
        lead = form.lead
        if lead is None:
            recs = [SSAValue(*rec) for rec in recs]
        else:  # the first n records kept as names (`Builder.make_entry`)
            nargs, b, n = lead
            recs = [
                SSAValue("param" if k < nargs else "undef", name, b, None, ())
                for k, name in enumerate(recs[:n])
            ] + [SSAValue(*rec) for rec in recs[n:]]
        recs.reverse()
        # (None: an op value's place until the loop below makes it)
        objs: list[SSAValue] = [None] * form.nops + recs  # type: ignore[assignment]
        get = objs.__getitem__
        instrs = self.cfg.bytecode.instructions
        blocks = self.cfg.blocks
        effects, depth = self.stack.effects, self.stack.depth
        special, flat, starts, op_starts, stores = (
            form.special,
            form.flat,
            form.starts,
            form.op_starts,
            form.stores,
        )
        ops: dict[int, SSAOp] = {}
        defs_at: dict[int, tuple[SSAValue, ...]] = {}
        uses: tuple[SSAValue, ...]
        u: Sequence[int]  # (a slice of `flat`, or a tuple)
        def_ids: Sequence[int]  # (a range, a tuple or a list)
        res_ids: Sequence[int]
        defs: tuple[SSAValue, ...]
        results: tuple[SSAValue, ...]
        new = tuple.__new__
        # in a preorder of the dominator tree every value an instruction reads already
        # exists (and `ops`, so the use lists, come in that order)
        for b in _dom_preorder(self._idom, form.order):
            blk = blocks[b]
            fo, nv = starts.get(b, 0), op_starts.get(b, 0)
            for i in range(blk.first, blk.stop):
                ins = instrs[i]
                eff, dep = effects[i], depth[i]
                s = special.get(i)
                if s.__class__ is int:
                    uses = (objs[s],)
                    defs, results = (), uses
                else:
                    if s is None:
                        r = stores.get(i)
                        if r is None:
                            u = flat[fo : fo + eff.pops]
                            fo += eff.pops
                            def_ids = res_ids = range(nv, nv + eff.news)
                        else:  # a store to a local: reads its record's args, defines it
                            u, def_ids, res_ids = (form.recs[~r][4],), (r,), ()
                    else:
                        u, def_ids, res_ids = s
                    if def_ids:
                        base = dep - eff.pops
                        f = def_ids[0]
                        for vid in def_ids:
                            if vid >= 0:
                                objs[vid] = SSAValue("op", base + eff.new_pos[vid - f], b, ins.offset, ())
                                nv = vid + 1
                    uses = tuple(map(get, u))
                    defs = tuple(map(get, def_ids))
                    results = defs if res_ids is def_ids else tuple(map(get, res_ids))
                defs_at[i] = defs
                ops[ins.offset] = new(SSAOp, (ins, b, dep, eff.pops, uses, defs, results))
        for v in recs:
            a = v.args
            if a.__class__ is int:  # a store renamed inline: its one argument
                v.args = (get(a),)
            elif a:
                v.args = tuple(map(get, a))
        for b, ids in form.phis.items():
            edges = form.phi_edges[b]
            for i in ids:
                objs[i].edges = edges
        d = self.__dict__
        d["ops"] = ops
        d["entry"] = entry = list(map(get, form.entry))
        d["phis"] = phis = {b: list(map(get, ids)) for b, ids in form.phis.items()}
        d["handler_values"] = hv = {b: list(map(get, ids)) for b, ids in form.handler_values.items()}
        d["catches"] = catches = {b: list(map(get, ids)) for b, ids in form.catches.items()}
        stack_in = form.stack_in  # (the blocks entered with an empty stack left out)
        d["stack_in"] = {b: tuple(map(get, stack_in[b])) if b in stack_in else () for b in form.order}
        order = list(entry)
        for b in sorted(self._idom):
            order += phis.get(b, ())
            order += hv.get(b, ())
            blk = blocks[b]
            for i in range(blk.first, blk.stop):
                order += defs_at[i]
            order += catches.get(b, ())
        counter: dict[str, int] = {}
        vnum = 0
        for i, v in enumerate(order):
            v.id = i
            v._ssa = self
            if v.var.__class__ is str:
                k = v.num = counter.get(v.var, 0)
                counter[v.var] = k + 1
            else:
                v.num = vnum
                vnum += 1
        d["values"] = order

    def _link_uses(self) -> None:
        for v in self.values:
            v._uses = []
        for op in self.ops.values():
            for u in op.uses:
                u._uses.append(op)
        for vs in (*self.phis.values(), *self.catches.values()):
            for v in vs:
                for a in v.args:
                    a._uses.append(v)

    # -- queries ---------------------------------------------------------------
    def uses_of(self, value: SSAValue) -> list[SSAOp | SSAValue]:
        """Instructions (`SSAOp`) and phi/catch values that read `value`."""
        return value.uses

    def value(self, name: str) -> SSAValue:
        """The value printed as `name` (``"v7"``, ``"x.2"``)."""
        idx = getattr(self, "_by_name", None)
        if idx is None:
            idx = self._by_name = {v.name: v for v in self.values}
        return idx[name]

    def definitions(self, local: str) -> list[SSAValue]:
        """Every value of local `local`, in definition order."""
        return [v for v in self.values if v.var == local]

    def locals_in(self, block: int) -> dict[str, SSAValue]:
        """The value of each local (not cell) live on entry to `block`."""
        out = self._locals_in.get(block)
        if out is None:
            live = self._liveness
            out = self._locals_in[block] = {
                n: self._reaching(n, block) for n in live.live_in(block) if live.kinds[n] == "local"
            }
        return out

    def _reaching(self, name: str, block: int) -> SSAValue:
        # the phi here, else the last definition in the closest dominator that has
        # one (renaming walked the dominator tree, so this is what it saw)
        phis = {v.var: v for v in self.phis.get(block, ())}
        if name in phis:
            return phis[name]
        d = self._idom[block]
        while d is not None:
            last = self._last_defs.get(d)
            if last is None:
                last = self._last_defs[d] = {}
                for ins in self.cfg.blocks[d].instructions:
                    for v in self.ops[ins.offset].defs:
                        if v.var.__class__ is str:
                            last[v.var] = v
                for v in self.phis.get(d, ()):
                    if v.var.__class__ is str:
                        last.setdefault(v.var, v)
            if name in last:
                return last[name]
            d = self._idom[d]
        return next(v for v in self.entry if v.var == name)

    def stack_before(self, offset: int) -> tuple[SSAValue, ...]:
        """The stack, bottom first, just before the instruction at `offset`."""
        op = self.ops[offset]
        stack = list(self.stack_in[op.block])
        for ins in self.cfg.blocks[op.block].instructions:
            if ins.offset == offset:
                return tuple(stack)
            o = self.ops[ins.offset]
            stack[len(stack) - o.pops :] = o.results
        raise KeyError(offset)

    def __str__(self) -> str:
        return ssa_text(self)

    def __repr__(self) -> str:
        return (
            f"<SSA {self.cfg.bytecode.code.co_qualname}: {len(self.values)} values, "
            f"{sum(map(len, self.phis.values()))} phis>"
        )


def _dom_preorder(idom: Mapping[int, int | None], blocks: Sequence[int]) -> Sequence[int]:
    """A preorder of the dominator tree of `blocks` (a topological order of it, root
    first), visiting children in that order."""
    if len(blocks) <= 1:
        return blocks
    children: dict[int, list[int]] = {b: [] for b in blocks}
    for b in blocks:
        d = idom[b]
        if d is not None:
            children[d].append(b)
    out: list[int] = []
    work = [blocks[0]]
    while work:
        b = work.pop()
        out.append(b)
        work.extend(reversed(children[b]))
    return out


# -- SSA listing ----------------------------------------------------------------


def _op_line(op: SSAOp, stack: StackInfo) -> str:
    ins = op.instr
    head = ins.opname
    arg = ins.argrepr or ("" if ins.arg is None else str(ins.arg))
    if arg:
        head += f"({arg})"
    if op.uses and (op.defs or op.uses != op.results):
        head += "(" + ", ".join(v.name for v in op.uses) + ")"
    if op.defs:
        head = ", ".join(v.name for v in op.defs) + " = " + head
    if op.results:
        # loads and stack moves: what lands in the slots it changes, if not defined here
        moved = [op.results[j] for j in stack.effects[stack.index[ins.offset]].moved]
        moved = [v for v in moved if all(v is not d for d in op.defs)]
        if moved:
            head += " -> " + ", ".join(v.name for v in moved)
    if ins.lineno is not None:
        head += f"  # line {ins.lineno}"
    return head


def _phi_line(v: SSAValue) -> str:
    args = ", ".join(
        f"{src}{'!' if kind == 'exception' else ''}: {a.name}" for (src, kind), a in zip(v.edges, v.args)
    )
    return f"{v.name} = phi({args})"


def ssa_text(ssa: SSA) -> str:
    """One line per instruction (``v7 = BINARY_OP(+)(v3, v5)  # line 4``), phis at
    block heads (``!`` marks an exception edge), catch values at block ends."""
    cfg = ssa.cfg
    lines = []
    if ssa.entry:
        lines.append("entry: " + "  ".join(f"{v.name} = {v.kind}" for v in ssa.entry))
    for b in sorted(ssa.stack_in):
        blk = cfg.blocks[b]
        preds = ", ".join(str(p) for p in blk.preds) or "-"
        stack = ", ".join(v.name for v in ssa.stack_in[b])
        lines.append(f"block {b}:  preds {preds}" + (f"  stack [{stack}]" if stack else ""))
        for v in ssa.phis.get(b, ()):
            lines.append(f"        {_phi_line(v)}")
        for v in ssa.handler_values.get(b, ()):
            lines.append(f"        {v.name} = {'LASTI' if v.kind == 'lasti' else 'EXCEPTION'}")
        for ins in blk.instructions:
            lines.append(f"  {ins.offset:>5} {_op_line(ssa.ops[ins.offset], ssa.stack)}")
        for v in ssa.catches.get(b, ()):
            lines.append(
                f"        {v.name} = catch({', '.join(a.name for a in v.args)})  # what the handler may see"
            )
    return "\n".join(lines)
