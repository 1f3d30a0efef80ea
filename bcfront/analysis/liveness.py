"""Liveness of local, cell and free variables, per block and per instruction.

Definition.  A variable is *live* at a point if some path from that point
reads it before writing it.  Paths follow every CFG edge, exceptional ones
included: any instruction of a protected block may raise, so a variable live
at the handler is live throughout the protected block (at every point of it).

What reads and writes (one table, `_EVENTS`, in execution order per opcode):

* fast locals: ``LOAD_FAST``/``LOAD_FAST_CHECK`` read; ``STORE_FAST`` writes;
  ``DELETE_FAST`` reads (it fails if the variable is unbound, so whoever
  resumes the code must have it) then writes (unbound); 3.12's
  ``LOAD_FAST_AND_CLEAR`` reads then writes (NULL); 3.13's super-instructions
  do their two halves in order (``STORE_FAST_LOAD_FAST a, b`` writes a, then
  reads b).
* cells and free variables are shared with closures, so what must survive is
  the cell object, not its current content: every reference
  (``LOAD_DEREF``, ``STORE_DEREF``, ``DELETE_DEREF``, ``LOAD_CLOSURE``, 3.13's
  ``LOAD_FAST`` of a cell, ``LOAD_CLASSDEREF``, ``LOAD_FROM_DICT_OR_DEREF``)
  reads it; only ``MAKE_CELL`` (which reads the argument it wraps, if the cell
  is a parameter) and ``COPY_FREE_VARS`` write.
* frame introspection: loading the global ``locals``, ``vars``, ``dir``,
  ``eval``, ``exec`` or ``super`` (zero-argument super reads the first
  argument and ``__class__`` behind the compiler's back) reads every variable.

Algorithm: backward iterative dataflow over blocks with variables as bits of
Python ints; per-instruction sets are derived on demand, block by block.
"""
from __future__ import annotations

from bisect import bisect_left
from itertools import compress
from typing import NamedTuple

from .cfg import CFG

_INTROSPECTION = frozenset({"locals", "vars", "dir", "eval", "exec", "super"})


def _pair(ins, code):
    a = ins.argval
    return tuple(a) if isinstance(a, tuple) else (a,)


def _make_cell(ins, code):
    name = ins.argval
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) \
        + bool(code.co_flags & 0x08)
    if name in code.co_varnames[:nargs]:
        return [("r", name), ("w", name)]
    return [("w", name)]


def _global(ins, code):
    return [("r", "*")] if ins.argval in _INTROSPECTION else []


# opname -> function(ins, code) -> [("r" | "w", name)], in execution order.
_EVENTS = {
    **dict.fromkeys(["LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE",
                     "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF", "STORE_DEREF",
                     "DELETE_DEREF"], lambda ins, code: [("r", ins.argval)]),
    "STORE_FAST": lambda ins, code: [("w", ins.argval)],
    **dict.fromkeys(["DELETE_FAST", "LOAD_FAST_AND_CLEAR"],
                    lambda ins, code: [("r", ins.argval), ("w", ins.argval)]),
    "LOAD_FAST_LOAD_FAST": lambda ins, code: [("r", n) for n in _pair(ins, code)],
    "STORE_FAST_STORE_FAST": lambda ins, code: [("w", n) for n in _pair(ins, code)],
    "STORE_FAST_LOAD_FAST": lambda ins, code: list(zip(("w", "r"), _pair(ins, code))),
    "MAKE_CELL": _make_cell,
    "COPY_FREE_VARS": lambda ins, code: [("w", n) for n in code.co_freevars],
    "LOAD_GLOBAL": _global,
    "LOAD_NAME": _global,
}


def variables_of(code) -> tuple[tuple[str, ...], dict[str, str]]:
    """All fast-local, cell and free variable names of `code`, and each one's kind."""
    kinds: dict[str, str] = {}
    for n in code.co_varnames:
        kinds[n] = "local"
    for n in code.co_cellvars:
        kinds[n] = "cell"       # a cell parameter is both; what it holds is a cell
    for n in code.co_freevars:
        kinds[n] = "free"
    return tuple(kinds), kinds


# The common shapes of `_EVENTS`, as (gen, kill) of the instruction's one name:
# the inner loop of `gen_kill` handles these without building event lists.
_READ, _WRITE, _READ_WRITE = 1, 2, 3
_SHAPE = {
    **dict.fromkeys(["LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE",
                     "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF", "STORE_DEREF",
                     "DELETE_DEREF"], _READ),
    "STORE_FAST": _WRITE,
    "DELETE_FAST": _READ_WRITE,
    "LOAD_FAST_AND_CLEAR": _READ_WRITE,
}


def _event_masks() -> tuple[bytes, bytes]:
    """opcode byte -> 1 if it has `_EVENTS`, else 0 (for bytes.translate); the second
    mask leaves out the global loads, events only when the code names an
    introspection builtin."""
    from .decode import _OPNAME
    every = bytes(n in _EVENTS for n in _OPNAME)
    fast = bytes(n in _EVENTS and n not in ("LOAD_GLOBAL", "LOAD_NAME") for n in _OPNAME)
    return every, fast


_EVENT_MASK, _EVENT_MASK_NO_GLOBALS = _event_masks()


class _Ins(NamedTuple):
    """What an `_EVENTS` rule reads of an instruction (built for the rare rules only)."""
    opname: str
    argval: object


def _shape_table() -> list:
    from .decode import _OPNAME
    return [_SHAPE.get(n) for n in _OPNAME]


_SHAPE_OF = _shape_table()      # opcode byte -> _READ / _WRITE / _READ_WRITE / None


def gen_kill(bc, bit: dict[str, int], all_bits: int,
             where=None) -> tuple[list[int], list[int]]:
    """Per instruction of `bc` (a `Bytecode`), the (gen, kill) masks of
    ``before = gen | (after & ~kill)``.

    `where` lists the positions of the instructions that read or write a
    variable (every position if None); the others have empty masks.
    """
    from .decode import _OPNAME
    code = bc.code
    ops, args = bc.opcodes, bc.args
    n = len(ops)
    gens, kills = [0] * n, [0] * n
    events, shape_of = _EVENTS, _SHAPE_OF
    local = code._varname_from_oparg
    for i in (range(n) if where is None else where):
        op = ops[i]
        sh = shape_of[op]
        if sh is not None:      # these take a local, cell or free variable (dis: haslocal/hasfree)
            m = bit.get(local(args[i]), 0)
            if sh & _READ:
                gens[i] = m
            if sh != _READ:
                kills[i] = m
            continue
        rule = events.get(_OPNAME[op])
        g = k = 0
        if rule is not None:
            # compose backward: a read adds to gen, a write removes from gen and adds to kill
            for kind, name in reversed(rule(_Ins(_OPNAME[op], bc.argval(i)), code)):
                m = all_bits if name == "*" else bit.get(name, 0)
                if kind == "r":
                    g |= m
                else:
                    g &= ~m
                    k |= m
        gens[i] = g
        kills[i] = k
    return gens, kills


class Liveness:
    """Live variables per block and per instruction (see the module docstring).

    Sets are frozensets of names; the ``*_bits`` variants return the masks
    (bit i = ``variables[i]``).
    """

    def __init__(self, cfg: CFG):
        self.cfg = cfg
        code = cfg.bytecode.code
        self.variables, self.kinds = variables_of(code)
        self.bit = {n: 1 << i for i, n in enumerate(self.variables)}
        all_bits = (1 << len(self.variables)) - 1
        bc = cfg.bytecode
        ops = bc.opcodes
        mask = _EVENT_MASK if _INTROSPECTION.intersection(code.co_names) else _EVENT_MASK_NO_GLOBALS
        self._where = list(compress(range(len(ops)), ops.translate(mask)))
        self._gen, self._kill = gen_kill(bc, self.bit, all_bits, self._where)
        self._per_block: dict[int, list[int]] = {}
        self._names: dict[int, frozenset[str]] = {}
        self.bits_in: dict[int, int] = {}
        self.bits_out: dict[int, int] = {}
        self.block_kill: dict[int, int] = {}    # block -> every variable it writes
        self._solve()

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
                at[blk.first:blk.stop] = [b] * blk.size
            self._block_at_list = at
        return at

    _block_at_list = None

    def _summaries(self) -> dict[int, tuple[int, int]]:
        """Per block (G, K) with ``live_in = G | (live_out & ~K) | live_in(handler)``;
        only the instructions that touch a variable take part."""
        gens, kills, where = self._gen, self._kill, self._where
        out = {}
        block_kill = self.block_kill
        empty = (0, 0)
        for b, blk in self.cfg.blocks.items():
            lo = blk.first
            a = bisect_left(where, lo)
            z = bisect_left(where, blk.stop, a)
            if a == z:
                out[b] = empty
                block_kill[b] = 0
                continue
            g = k = 0
            for j in reversed(where[a:z]):
                g = gens[j] | (g & ~kills[j])
                k = kills[j] | k
            out[b] = (g, k & ~g)
            block_kill[b] = k
        return out

    def _solve(self) -> None:
        blocks = self.cfg.blocks
        if not self._where:             # nothing reads or writes a variable: all empty
            self.bits_in = dict.fromkeys(blocks, 0)
            self.bits_out = dict.fromkeys(blocks, 0)
            self.block_kill = dict.fromkeys(blocks, 0)
            return
        summary = self._summaries()
        live_in = {b: 0 for b in blocks}
        live_out = {b: 0 for b in blocks}
        handler = {b: (blk.handler.target if blk.handler is not None else None)
                   for b, blk in blocks.items()}
        work = list(blocks)             # offset order; popped from the end = backward
        queued = set(work)
        while work:
            b = work.pop()
            queued.discard(b)
            blk = blocks[b]
            out = 0
            for s in blk.succs:
                out |= live_in[s]
            live_out[b] = out
            g, k = summary[b]
            new = g | (out & ~k)
            h = handler[b]
            if h is not None:
                new |= live_in[h]
            if new != live_in[b]:
                live_in[b] = new
                for p in blk.preds:
                    if p not in queued:
                        queued.add(p)
                        work.append(p)
        self.bits_in, self.bits_out = live_in, live_out

    # -- per instruction ------------------------------------------------------
    def _befores(self, b: int) -> list[int]:
        """live-before masks of block `b`'s instructions, computed once per block."""
        out = self._per_block.get(b)
        if out is None:
            blk = self.cfg.blocks[b]
            n = blk.size
            i = blk.first
            exc = self.bits_in[blk.handler.target] if blk.handler is not None else 0
            live = self.bits_out[b]
            out = [0] * n
            gens, kills = self._gen, self._kill
            for j in range(n - 1, -1, -1):
                live = gens[i + j] | (live & ~kills[i + j]) | exc
                out[j] = live
            self._per_block[b] = out
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
        out = self._names.get(mask)
        if out is None:
            out = frozenset(n for n, m in self.bit.items() if mask & m)
            self._names[mask] = out
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
