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

How it is built: `bcfront.analysis.ssa_build`.  Unreachable blocks have no SSA.
"""
from __future__ import annotations

import contextlib
import gc
from typing import TYPE_CHECKING, NamedTuple

from .cfg import CFG

if TYPE_CHECKING:
    from .liveness import Liveness
    from .stack import StackInfo


class Value:
    """One SSA value.  `var` is the local's name or the stack slot number."""
    __slots__ = ("id", "num", "kind", "var", "block", "offset", "args", "edges", "_ssa", "_uses")

    def __init__(self, kind, var, block, offset, args):
        self.kind = kind          # param undef store op phi exc lasti catch
        self.var = var            # local name (str) or stack slot (int)
        self.block = block        # block that defines it
        self.offset = offset      # defining instruction, None at block heads/ends
        self.args = args          # operands (phi: aligned with `edges`)
        self.edges = ()           # phi only: incoming (src block, edge kind) pairs
        # id and num are given when construction ends

    @property
    def name(self) -> str:
        """``v7`` for a stack value, ``x.2`` for a value of local x."""
        return f"{self.var}.{self.num}" if isinstance(self.var, str) else f"v{self.num}"

    @property
    def uses(self) -> list:
        """The instructions (`SSAOp`) and phi/catch values that read this value."""
        try:
            return self._uses
        except AttributeError:      # def-use chains are linked on first request
            self._ssa._link_uses()
            return self._uses

    def __repr__(self) -> str:
        return self.name


class SSAOp(NamedTuple):
    """One instruction in SSA form: the values it reads and defines, and what it pushes.

    A NamedTuple because there is one per instruction and `tuple.__new__` builds
    one several times faster than a class's ``__init__``; equality and hashing
    are by identity, as for `Value`.
    """
    instr: object       # the `Instr`
    block: int
    depth: int          # stack depth before it
    pops: int           # stack slots it consumes
    uses: tuple         # values read (stack inputs and locals)
    defs: tuple         # values defined
    results: tuple      # values on its output slots (fall-through), bottom first

    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

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
        self._idom, self._liveness, self.stack = idom, liveness, stack
        self._locals_in: dict[int, dict[str, Value]] = {}
        self._last_defs: dict[int, dict[str, Value]] = {}
        if cfg.blocks:
            from .ssa_build import Builder
            with gc_paused():
                Builder(self, idom, frontier, liveness, stack).run()

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
        """The value of each local (not cell) live on entry to `block`."""
        out = self._locals_in.get(block)
        if out is None:
            live = self._liveness
            out = self._locals_in[block] = {
                n: self._reaching(n, block) for n in live.live_in(block)
                if live.kinds[n] == "local"}
        return out

    def _reaching(self, name: str, block: int) -> Value:
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


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector.  Construction allocates an object or two
    per instruction; with a large heap alive (a caller analyzing thousands of
    functions) the full collections that this triggers cost more than the
    construction itself, and it creates no garbage cycles to collect."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
