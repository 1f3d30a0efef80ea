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
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from .cfg import CFG
from .columns import shared_ints
from .cpython import varname_from_oparg
from .opcodes import BIG_ENDIAN, OPNAME

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from types import CodeType
    from typing import Protocol, TypeAlias, TypeVar

    from _typeshed import SupportsGetItem

    from .bytecode import Bytecode
    from .opcodes import UnitKey

    class _InsLike(Protocol):
        """What an `_EVENTS` rule reads of an instruction (an `Instr` or an `_Ins`)."""

        @property
        def opname(self) -> str: ...
        @property
        def argval(self) -> Any: ...  # (a variable name, or a pair of them, for the rules)

    # a rule: (instruction, its code) -> [("r" | "w", name)], in execution order
    _Rule: TypeAlias = Callable[[_InsLike, CodeType], list[tuple[str, str]]]
    _Masks: TypeAlias = tuple[int, int]  # (gen, kill)
    _T = TypeVar("_T")

_INTROSPECTION = frozenset({"locals", "vars", "dir", "eval", "exec", "super"})


def _pair(ins: _InsLike, code: CodeType) -> tuple[str, ...]:
    a = ins.argval
    return tuple(a) if isinstance(a, tuple) else (a,)


def _make_cell(ins: _InsLike, code: CodeType) -> list[tuple[str, str]]:
    name = ins.argval
    nargs = (
        code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    )
    if name in code.co_varnames[:nargs]:
        return [("r", name), ("w", name)]
    return [("w", name)]


def _global(ins: _InsLike, code: CodeType) -> list[tuple[str, str]]:
    return [("r", "*")] if ins.argval in _INTROSPECTION else []


# opname -> function(ins, code) -> [("r" | "w", name)], in execution order.
# (The tables by name are looked up with `OPNAME` entries: None for an unused opcode.)
_EVENTS: dict[str | None, _Rule] = {
    **dict.fromkeys(
        [
            "LOAD_FAST",
            "LOAD_FAST_CHECK",
            "LOAD_DEREF",
            "LOAD_CLOSURE",
            "LOAD_CLASSDEREF",
            "LOAD_FROM_DICT_OR_DEREF",
            "STORE_DEREF",
            "DELETE_DEREF",
        ],
        lambda ins, code: [("r", ins.argval)],
    ),
    "STORE_FAST": lambda ins, code: [("w", ins.argval)],
    **dict.fromkeys(
        ["DELETE_FAST", "LOAD_FAST_AND_CLEAR"], lambda ins, code: [("r", ins.argval), ("w", ins.argval)]
    ),
    "LOAD_FAST_LOAD_FAST": lambda ins, code: [("r", n) for n in _pair(ins, code)],
    "STORE_FAST_STORE_FAST": lambda ins, code: [("w", n) for n in _pair(ins, code)],
    "STORE_FAST_LOAD_FAST": lambda ins, code: list(zip(("w", "r"), _pair(ins, code))),
    "MAKE_CELL": _make_cell,
    "COPY_FREE_VARS": lambda ins, code: [("w", n) for n in code.co_freevars],
    "LOAD_GLOBAL": _global,
    "LOAD_NAME": _global,
}


def instruction_events(ins: _InsLike, code: CodeType) -> list[tuple[str, str]]:
    """The reads (``"r"``) and writes (``"w"``) of variables that `ins` (an `Instr` of
    `code`) does, in execution order, as ``(kind, name)``; the name ``"*"`` stands for
    every variable.  The definition the module docstring gives, one instruction at a
    time (the reference liveness reads it; the fast path folds it into masks)."""
    rule = _EVENTS.get(ins.opname)
    return [] if rule is None else rule(ins, code)


_POW2 = [1 << i for i in range(64)]


def _powers(n: int) -> list[int]:
    """At least `n` powers of two, 1 first (one shared list, grown on demand)."""
    if n > len(_POW2):
        _POW2.extend(1 << i for i in range(len(_POW2), n))
    return _POW2


def variables_of(
    code: CodeType, cells: tuple[str, ...] | None = None, free: tuple[str, ...] | None = None
) -> tuple[tuple[str, ...], dict[str, str]]:
    """All fast-local, cell and free variable names of `code`, and each one's kind
    (`cells` and `free`: its co_cellvars and co_freevars, if the caller has them)."""
    # dict.fromkeys runs in C; a cell parameter keeps its place among the locals.  Each
    # co_* tuple is read once: 3.11 builds a new one on every access
    names = code.co_varnames
    kinds = dict.fromkeys(names, "local")
    if cells is None:
        cells, free = code.co_cellvars, code.co_freevars
    if not (cells or free) and len(kinds) == len(names):
        return names, kinds  # the common case: no names to merge
    if cells:
        kinds.update(dict.fromkeys(cells, "cell"))  # what it holds is a cell
    if free:
        kinds.update(dict.fromkeys(free, "free"))
    return tuple(kinds), kinds


# The common shapes of `_EVENTS`, as (gen, kill) of the instruction's one name.
_READ, _WRITE, _READ_WRITE = 1, 2, 3
_SHAPE: dict[str | None, int] = {
    **dict.fromkeys(
        [
            "LOAD_FAST",
            "LOAD_FAST_CHECK",
            "LOAD_DEREF",
            "LOAD_CLOSURE",
            "LOAD_CLASSDEREF",
            "LOAD_FROM_DICT_OR_DEREF",
            "STORE_DEREF",
            "DELETE_DEREF",
        ],
        _READ,
    ),
    "STORE_FAST": _WRITE,
    "DELETE_FAST": _READ_WRITE,
    "LOAD_FAST_AND_CLEAR": _READ_WRITE,
}
# 3.13's super-instructions: two variables packed in the arg as (hi << 4) | lo,
# as (gen, kill) of the masks `hi` and `lo` (``STORE_FAST_LOAD_FAST`` writes hi, then reads lo)
_PAIRS: dict[str | None, Callable[[int, int], _Masks]] = {
    "LOAD_FAST_LOAD_FAST": lambda hi, lo: (hi | lo, 0),
    "STORE_FAST_STORE_FAST": lambda hi, lo: (0, hi | lo),
    "STORE_FAST_LOAD_FAST": lambda hi, lo: (lo & ~hi, hi),
}
# The `_EVENTS` whose masks depend on more than the code unit (the parameters, the
# free variables, the global's name): computed per instruction from the rules.
_PER_CODE = ("MAKE_CELL", "COPY_FREE_VARS", "LOAD_GLOBAL", "LOAD_NAME")


def _event_flags() -> tuple[bytes, bytes]:
    """opcode byte -> 1 if its masks come from `_MASKS`, 2 if they depend on the code,
    0 if it touches no variable (for bytes.translate).  The second table leaves out
    the global loads: events only when the code names an introspection builtin."""
    every = bytes(0 if n not in _EVENTS else 2 if n in _PER_CODE else 1 for n in OPNAME)
    fast = bytes(0 if n in ("LOAD_GLOBAL", "LOAD_NAME") else f for n, f in zip(OPNAME, every))
    return every, fast


_FLAGS, _FLAGS_NO_GLOBALS = _event_flags()
_SECOND = bytes(f == 2 for f in range(256))  # flag 2 -> 1, others -> 0


class _Ins(NamedTuple):
    """What an `_EVENTS` rule reads of an instruction (built for the rare rules only)."""

    opname: str
    argval: object


def _unit_masks(key: UnitKey) -> tuple[int, int]:
    """The (gen, kill) masks of the instruction with code unit `key` (`Bytecode.units`:
    an int, or (opcode, arg) after EXTENDED_ARG) if it is a `_SHAPE` or `_PAIRS`
    instruction, with variable i as bit i; (0, 0) for any other."""
    op: int
    arg: int
    if key.__class__ is int:
        op, arg = (key >> 8, key & 255) if BIG_ENDIAN else (key & 255, key >> 8)
    else:
        op, arg = key  # type: ignore[assignment, misc]  # (not an int: an (opcode, int arg) pair)
    name = OPNAME[op]
    sh = _SHAPE.get(name)
    if sh is not None:
        m = 1 << arg
        return (m if sh & _READ else 0, m if sh & _WRITE else 0)
    if name in _PAIRS:
        return _PAIRS[name](1 << (arg >> 4), 1 << (arg & 15))
    return (0, 0)


class _MaskTable(dict["UnitKey", "_Masks"]):
    """Code unit -> its `_unit_masks`, filled on first use: a function's masks are then
    one C-level map over its units (`Liveness` checks that the code numbers its
    variables as `variables`)."""

    def __missing__(self, key: UnitKey) -> _Masks:
        masks = _unit_masks(key)
        if len(self) < 100_000:
            self[key] = masks
        return masks


_MASKS = _MaskTable()


def _masks_by_unit() -> tuple[_Masks | None, ...]:
    """`_unit_masks` of every int code unit (a 16-bit word of co_code) whose opcode is
    a `_SHAPE` or `_PAIRS` one, None for every other: indexing picks a column faster
    than a dict, and ``filter(None, ...)`` keeps just the events.  A tuple of ints
    and None, which the garbage collector stops tracking (a list would be walked,
    all 65536 slots, by every full collection)."""
    out: list[_Masks | None] = [None] * 65536
    for op, name in enumerate(OPNAME):
        if name in _SHAPE or name in _PAIRS:
            for arg in range(256):
                key = op << 8 | arg if BIG_ENDIAN else arg << 8 | op
                out[key] = _unit_masks(key)
    return tuple(out)


_BY_UNIT = _masks_by_unit()


def gen_kill(
    bc: Bytecode, bit: dict[str, int], all_bits: int, where: Iterable[int] | None = None
) -> tuple[list[int], list[int]]:
    """Per instruction of `bc` (a `Bytecode`), the (gen, kill) masks of
    ``before = gen | (after & ~kill)``, from the `_EVENTS` rules.

    `where` lists the positions of the instructions that read or write a
    variable (every position if None); the others have empty masks.
    """
    code = bc.code
    ops = bc.opcodes
    n = len(ops)
    gens, kills = [0] * n, [0] * n
    for i in range(n) if where is None else where:
        rule = _EVENTS.get(OPNAME[ops[i]])
        g = k = 0
        if rule is not None:
            # compose backward: a read adds to gen, a write removes from gen and adds to kill
            # (a rule was found: OPNAME gave a name)
            for kind, name in reversed(rule(_Ins(OPNAME[ops[i]], bc.argval(i)), code)):  # type: ignore[arg-type]
                m = all_bits if name == "*" else bit.get(name, 0)
                if kind == "r":
                    g |= m
                else:
                    g &= ~m
                    k |= m
        gens[i] = g
        kills[i] = k
    return gens, kills


def _numbered_alike(code: CodeType, variables: tuple[str, ...]) -> bool:
    """Whether fast-locals slot i holds ``variables[i]`` for every i, and no slot is
    left over (a class body's ``__class__`` cell next to a free ``__class__`` has two
    slots for one name)."""
    local = varname_from_oparg(code)
    if tuple(map(local, range(len(variables)))) != variables:
        return False
    try:
        local(len(variables))
    except IndexError:
        return True
    return False


def _pick(table: SupportsGetItem[Any, _T], keys: tuple[Any, ...]) -> tuple[_T, ...]:
    """``tuple(table[k] for k in keys)``, in one C call (itemgetter) from two keys on:
    a tuple `keys` is passed to it as is, and its tuple result is kept (no copies)."""
    if len(keys) > 1:
        return itemgetter(*keys)(table)  # type: ignore[no-any-return]  # (typeshed: Any)
    return tuple([table[k] for k in keys])


def _fold(masks: Sequence[_Masks]) -> tuple[int, int]:
    """(gen, kill) of a sequence of events' (gen, kill): kill is everything they write."""
    g = k = 0
    for gm, km in reversed(masks):
        g = gm | (g & ~km)
        k |= km
    return g, k


def _fold_plain(units: list[UnitKey], flags: bytes) -> tuple[int, int] | tuple[None, None]:
    """`_fold` of a plain code object's events (the units `flags` marks), in one loop
    over them: forward, a read counts unless an earlier event wrote the variable
    (the same masks as `_fold`'s backward composition, without a list to reverse);
    (None, None) if a unit is not an int (EXTENDED_ARG)."""
    g = k = 0
    try:
        for u in compress(units, flags):
            gm, km = _BY_UNIT[u]  # type: ignore[index, misc]  # (tuple key, None: TypeError)
            g |= gm & ~k
            k |= km
    except TypeError:
        return None, None
    return g, k


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
                bc.opcodes.translate(_FLAGS_NO_GLOBALS) if _INTROSPECTION.isdisjoint(code.co_names) else None
            )
        # plain: the events are exactly the `_SHAPE` and `_PAIRS` instructions (no cell
        # or free variable, no introspection, no flag 2 left), numbered as `variables`
        # by their arg
        self._flags = flags
        self._plain = plain = flags is not None and 2 not in flags
        if cfg.single_block:  # one block, no edge (most code objects): live-in is what it
            b = cfg.entry  # reads (the CFG's flag: no look at the block itself)
            g, k = _fold_plain(bc.units, flags) if plain else (None, None)  # type: ignore[arg-type]  # (plain: flags)
            if g is None:  # (also for plain code with EXTENDED_ARG)
                g, k = _fold(self._events()[1])
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
    _masks: Sequence[_Masks] | None  # their (gen, kill)
    _gen: dict[int, int] | None  # gen of the blocks with events
    _per_block = _names = _where = _masks = _gen = None  # built on first use

    @cached_property
    def bit(self) -> dict[str, int]:
        """variable name -> its mask."""
        return dict(zip(self.variables, _powers(len(self.variables))))

    def _events(self) -> tuple[tuple[int, ...], Sequence[_Masks]]:
        """Positions of the events and their (gen, kill) masks (computed once)."""
        if self._where is not None:
            return self._where, self._masks  # type: ignore[return-value]  # (set with _where)
        bc = self.cfg.bytecode
        code = bc.code
        flags = self._flags
        if flags is None:
            flags = bc.opcodes.translate(
                _FLAGS_NO_GLOBALS if _INTROSPECTION.isdisjoint(code.co_names) else _FLAGS
            )
        # the events' positions, then their code units picked by position (fewer than
        # all the instructions a second compress would walk)
        self._where = where = tuple(compress(shared_ints(len(flags)), flags))
        units = _pick(bc.units, where)
        masks: Sequence[_Masks]
        if self._plain:
            try:
                masks = _pick(_BY_UNIT, units)  # type: ignore[arg-type]  # (plain: no None)
            except TypeError:  # (opcode, arg) keys: the code has EXTENDED_ARG
                masks = _pick(_MASKS, units)
        elif (code.co_cellvars or code.co_freevars) and not _numbered_alike(code, self.variables):
            # the table numbers variables by oparg: a code object whose fast locals are
            # numbered otherwise than `variables` takes every event from the rules
            nv = len(self.variables)
            gens, kills = gen_kill(bc, self.bit, (1 << nv) - 1, where)
            masks = [(gens[i], kills[i]) for i in where]
        else:
            masks = _pick(_MASKS, units)
            if 2 in flags:  # events whose masks depend on the code object
                masks = list(masks)
                self._per_code(bc, bytes(compress(flags, flags)), where, masks)
        self._masks = masks
        return where, masks

    def _per_code(
        self, bc: Bytecode, event_flags: bytes, where: tuple[int, ...], masks: list[_Masks]
    ) -> None:
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
        for e in compress(range(len(where)), event_flags.translate(_SECOND)):
            i = where[e]
            name = OPNAME[bc.opcodes[i]]
            if name == "MAKE_CELL":  # reads the argument a cell parameter wraps
                m = 1 << bc.args[i]  # type: ignore[operator]  # (MAKE_CELL has an arg)
                masks[e] = (m if self.variables[bc.args[i]] in params else 0, m)  # type: ignore[index]
            elif name == "COPY_FREE_VARS":  # the free variables are numbered last
                masks[e] = (0, ((1 << nfree) - 1) << (nv - nfree))
            elif bc.argval(i) in _INTROSPECTION:  # LOAD_GLOBAL, LOAD_NAME
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

    def _solve(self, where: tuple[int, ...], masks: Sequence[_Masks]) -> None:
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
            if last >= first:  # the block has events: fold them (`_fold`, inline)
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
