"""The instruction model: `Instr`, `ExceptionEntry`, `Bytecode`, and the `Instr` objects.

`bcfront.analysis.decode` checks a code object and produces a `Bytecode`: flat
columns (offsets, opcodes, args, jump targets), which is all the analyses read.
The `Instr` objects, with their source positions (``co_positions``), are built
here on the first access to `Bytecode.instructions`: column by column when the
code has no EXTENDED_ARG (`_instructions_from_columns`), else one instruction at
a time (`_instructions_one_by_one`, folding the prefixes).  Also here: the
exception table's decoding (`parse_exception_table`) and the walk over code
units that folds EXTENDED_ARG prefixes (`prefixed_units`), which the decoder
shares.
"""

from __future__ import annotations

import bisect
import types
from collections.abc import Callable, Iterator
from itertools import compress, repeat
from operator import add
from typing import Any, NamedTuple, cast

from .columns import positions_flagged
from .cpython import varname_from_oparg
from .opcodes import (
    ARGREPR,
    CONDITIONAL,
    EXTENDED_ARG_BYTE,
    JUMP_FLAGS,
    K_CONST,
    K_INT,
    K_LOCAL,
    KIND,
    KIND_REPR,
    SHARED,
    SIZE,
    TERMINATORS,
    UNITS,
    UnitInfo,
    UnitKey,
    resolve_argval,
)

_new = tuple.__new__
# an instruction's source positions: (lineno, end_lineno, col, end_col), each maybe None
Positions = tuple[int | None, int | None, int | None, int | None]


# A NamedTuple for the reason given at `Instr`: `parse_exception_table` builds one per row.
class ExceptionEntry(NamedTuple):
    """One `co_exceptiontable` row: instructions in [start, end) jump to target."""

    start: int
    end: int  # exclusive
    target: int
    depth: int  # stack depth to unwind to before pushing the exception
    lasti: bool  # whether the offset of the raising instruction is pushed too

    def covers(self, offset: int) -> bool:
        return self.start <= offset < self.end

    @property
    def handler_depth(self) -> int:
        """Stack depth at the first instruction of the handler."""
        return self.depth + self.lasti + 1


# Instr is a NamedTuple rather than a frozen dataclass because a function has
# thousands of them and `tuple.__new__` builds one several times faster than a
# frozen dataclass's __init__ (one object.__setattr__ per field); it is just
# as immutable and structurally comparable.
class Instr(NamedTuple):
    """One decoded instruction (EXTENDED_ARG folded, caches skipped).

    Fields are ordered per-instruction first, then those shared by every
    instruction with the same opcode and argument (the decoder concatenates
    the two halves).
    """

    offset: int  # as dis reports it
    start_offset: int  # first EXTENDED_ARG prefix, else == offset
    next_offset: int  # offset of the following instruction (caches skipped)
    jump_target: int | None  # offset control may jump to (dis's target, prefix skipped)
    positions: Positions  # (lineno, end_lineno, col, end_col), as dis reports them
    argval: object  # as dis reports it
    opname: str  # as dis reports it
    opcode: int
    arg: int | None  # as dis reports it (EXTENDED_ARG bits included)
    op: str  # normalized meaning, see the module table
    stack_effect: int  # on fall-through
    jump_stack_effect: int | None  # when the jump is taken

    @property
    def argrepr(self) -> str:
        """dis's human-readable argument (computed on demand)."""
        rule: Callable[[Instr], str] = ARGREPR.get(self.opname, KIND_REPR[KIND[self.opcode]])
        return rule(self)

    @property
    def lineno(self) -> int | None:
        return self.positions[0]

    @property
    def end_lineno(self) -> int | None:
        return self.positions[1]

    @property
    def col(self) -> int | None:
        return self.positions[2]

    @property
    def end_col(self) -> int | None:
        return self.positions[3]

    @property
    def is_jump(self) -> bool:
        """Unconditional jump: control goes only to `jump_target`."""
        return self.op == "JUMP"

    @property
    def is_branch(self) -> bool:
        """Conditional: control goes to `jump_target` or falls through."""
        return self.op in CONDITIONAL

    @property
    def is_terminator(self) -> bool:
        """Ends the block with no fall-through and no jump (return or raise)."""
        return self.op in TERMINATORS

    @property
    def falls_through(self) -> bool:
        return not (self.op == "JUMP" or self.op in TERMINATORS)

    @property
    def push_null(self) -> bool:
        """LOAD_GLOBAL/LOAD_ATTR variants that also push NULL (or self)."""
        if self.opname == "LOAD_GLOBAL":
            return bool(self.arg is not None and self.arg & 1)
        return self.op == "LOAD_METHOD"

    def __repr__(self) -> str:
        arg = self.argrepr
        return f"<{self.offset} {self.opname}{' ' + arg if arg else ''}>"


class Bytecode:
    """A decoded code object: instructions in offset order plus its exception table.

    The analyses read the columns, one entry per instruction (EXTENDED_ARG
    folded, caches skipped): `offsets`, `opcodes` (one bytes object), `args`
    (as dis reports them), `targets` (jump target offset or None) and `units` (keys
    for per-(opcode, arg) tables).  The `Instr` objects are built on first access
    to `instructions`.
    """

    __slots__ = (
        "code",
        "exception_table",
        "version",
        "offsets",
        "opcodes",
        "args",
        "targets",
        "end",
        "units",
        "_instructions",
        "_index",
        "_starts",
        "raw",
        "jumps",
    )

    def __init__(
        self,
        code: types.CodeType,
        offsets: list[int],
        opcodes: bytes,
        args: list[int | None],
        targets: list[int | None],
        end: int,
        exception_table: tuple[ExceptionEntry, ...],
        version: tuple[int, int],
        units: list[UnitKey] | None = None,
        raw: bytes | None = None,
        jumps: list[int] | None = None,
    ):
        self.code = code
        # per instruction, a key for per-(opcode, arg) tables: its code unit (an int,
        # as co_code holds it) when it has no EXTENDED_ARG, else (opcode, arg)
        self.units: list[UnitKey] = list(zip(opcodes, args)) if units is None else units
        self.offsets = offsets
        self.opcodes = opcodes
        self.args = args
        self.targets = targets
        self.end = end  # offset just past the last instruction (and its caches)
        self.exception_table = exception_table
        self.version = version
        self._instructions: tuple[Instr, ...] | None = None
        self._index: dict[int, int] | None = None
        self._starts: list[int] | None = None
        # co_code when the instructions are exactly its units whose opcode is neither
        # 0 (a cache) nor EXTENDED_ARG (the column decoders), for `check_structure`; the
        # column decoders also list the jump targets (None: not listed)
        self.raw, self.jumps = raw, jumps

    def __repr__(self) -> str:
        return f"<Bytecode {self.code.co_qualname}: {len(self.offsets)} instructions>"

    @property
    def instructions(self) -> tuple[Instr, ...]:
        """The `Instr` of every instruction, in offset order (built on first access)."""
        ins = self._instructions
        if ins is None:
            ins = self._instructions = _instructions(self.code)
        return ins

    def at(self, offset: int) -> Instr:
        return self.instructions[self.index_of(offset)]

    @property
    def index(self) -> dict[int, int]:
        """offset -> position in `instructions` (built once, shared by the analyses)."""
        idx = self._index
        if idx is None:
            idx = self._index = dict(zip(self.offsets, range(len(self.offsets))))
        return idx

    def next_offset(self, i: int) -> int:
        """Offset of the instruction after the `i`-th (caches skipped), or `end`."""
        return self.offsets[i + 1] if i + 1 < len(self.offsets) else self.end

    def argval(self, i: int) -> object:
        """The `i`-th instruction's argval, as dis reports it (without building `Instr`)."""
        op = self.opcodes[i]
        target = self.targets[i]
        if target is not None:
            return target
        code = self.code
        return resolve_argval(KIND[op], self.args[i], code.co_consts, code.co_names, varname_from_oparg(code))

    def index_of(self, offset: int) -> int:
        try:
            return self.index[offset]
        except KeyError:
            raise KeyError(f"no instruction at offset {offset}") from None

    def handler_for(self, offset: int) -> ExceptionEntry | None:
        """The exception-table entry covering `offset` (entries never overlap), O(log n)."""
        starts = self._starts
        if starts is None:
            starts = self._starts = [e.start for e in self.exception_table]
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0 and offset < self.exception_table[i].end:
            return self.exception_table[i]
        return None


def _positions(code: types.CodeType, n: int) -> list[Positions]:
    positions: list[Positions] = list(code.co_positions())
    if len(positions) != n:
        if positions:  # a genuine line table covers every code unit, caches included
            raise ValueError(
                f"the line table covers {len(positions)} code units, the "
                f"bytecode has {n} (co_code was replaced)"
            )
        positions = [(None, None, None, None)] * n
    return positions


def _instructions(code: types.CodeType) -> tuple[Instr, ...]:
    """The `Instr` objects of a code object that `decode` accepted."""
    raw = code.co_code
    positions = _positions(code, len(raw) >> 1)
    out = _instructions_from_columns(code, raw, raw[0::2], positions)
    if out is not None:
        return out
    walked = _instructions_one_by_one(code, raw, positions)
    if any(ins.start_offset != ins.offset for ins in walked):
        walked, _ = _fold_prefixes(walked, ())
    return tuple(walked)


def _instructions_from_columns(
    code: types.CodeType, raw: bytes, ops: bytes, positions: list[Positions]
) -> tuple[Instr, ...] | None:
    """The fast path, column by column with C-level iterators; None if there are EXTENDED_ARGs.

    ``co_code`` zeroes every inline cache unit and no instruction has opcode
    0 (CACHE), so the instructions are exactly the units with a non-zero
    opcode byte -- provided their sizes add up to the whole, which is checked;
    None sends the caller to the careful loop (and its error messages).
    """
    if EXTENDED_ARG_BYTE in ops:
        return None
    n = len(ops)
    starts = list(compress(range(0, 2 * n, 2), ops))
    opbytes = bytes(compress(ops, ops))
    if sum(opbytes.translate(SIZE)) != n:
        return None
    words = list(compress(memoryview(raw).cast("H"), ops))
    # argval of a non-jump instruction depends only on its code unit: resolve each
    # distinct unit once (the common kinds inline: this loop is hot)
    argvals: dict[int, Any] = {}  # (the constants are anything)
    # (no EXTENDED_ARG here: no unit maps to None)
    table = cast("dict[UnitKey, UnitInfo]", UNITS)
    consts, names, local = code.co_consts, code.co_names, varname_from_oparg(code)
    try:
        for w in set(words):
            shared, kind, size, delta = table[w]
            if kind <= K_INT:
                argvals[w] = shared[2]
            elif kind == K_LOCAL:
                argvals[w] = local(shared[2])
            elif kind == K_CONST:
                argvals[w] = consts[shared[2]]
            elif delta is None:
                argvals[w] = resolve_argval(kind, shared[2], consts, names, local)
    except ValueError:
        return None  # an opcode this interpreter does not have: the loop will say where
    vals = list(map(argvals.get, words))
    targets: list[int | None] = [None] * len(words)
    for i in positions_flagged(opbytes, JUMP_FLAGS):
        targets[i] = vals[i] = starts[i] + table[words[i]][3]  # type: ignore[operator]  # a jump's delta is an int
    nexts = starts[1:]
    nexts.append(2 * n)
    head = zip(starts, starts, nexts, targets, compress(positions, ops), vals)
    return tuple(map(_new, repeat(Instr), map(add, head, map(SHARED.__getitem__, words))))


def _instructions_one_by_one(code: types.CodeType, raw: bytes, positions: list[Positions]) -> list[Instr]:
    """The careful path: one instruction at a time, folding EXTENDED_ARG prefixes."""
    n = len(raw) >> 1
    consts, names, local = code.co_consts, code.co_names, varname_from_oparg(code)
    out = []
    for start, k, (shared, kind, size, delta) in prefixed_units(raw, n):
        off = 2 * k
        if delta is None:
            target, argval = None, resolve_argval(kind, shared[2], consts, names, local)
        else:
            target = argval = off + delta
        out.append(_new(Instr, (off, 2 * start, 2 * (k + size), target, positions[k], argval) + shared))
    return out


def prefixed_units(raw: bytes, n: int) -> Iterator[tuple[int, int, UnitInfo]]:
    """(first unit of its EXTENDED_ARG prefixes, its own unit, its `UNITS` entry) for each
    instruction of `raw`, in order; the careful walk both slow paths share."""
    k = 0
    while k < n:
        start = k
        info = UNITS[(raw[2 * k], raw[2 * k + 1])]
        arg = 0
        while info is None:  # EXTENDED_ARG: accumulate into the next instruction's arg
            arg = arg << 8 | raw[2 * k + 1]
            k += 1
            if k >= n:
                raise ValueError("EXTENDED_ARG at the end of the bytecode")
            info = UNITS[(raw[2 * k], arg << 8 | raw[2 * k + 1])]
        yield start, k, info
        k += info[2]
    if k != n:
        raise ValueError("the last instruction's inline caches run past the end")


def _fold_prefixes(
    out: list[Instr], table: tuple[ExceptionEntry, ...]
) -> tuple[list[Instr], tuple[ExceptionEntry, ...]]:
    """Redirect jumps, next offsets and table entries aimed at EXTENDED_ARG prefixes."""
    prefixes: dict[int | None, int] = {}  # (looked up with jump targets too, maybe None)
    for ins in out:
        if ins.start_offset != ins.offset:
            for p in range(ins.start_offset, ins.offset, 2):
                prefixes[p] = ins.offset
    fixed = []
    for ins in out:
        t, nx = ins.jump_target, ins.next_offset
        if t in prefixes or nx in prefixes:
            ins = ins._replace(jump_target=prefixes.get(t, t), next_offset=prefixes.get(nx, nx))
        fixed.append(ins)
    table = tuple(
        ExceptionEntry(
            prefixes.get(e.start, e.start), e.end, prefixes.get(e.target, e.target), e.depth, e.lasti
        )
        for e in table
    )
    return fixed, table


def parse_exception_table(code: types.CodeType) -> tuple[ExceptionEntry, ...]:
    """Decode `co_exceptiontable` (varint-encoded, in code units) with exclusive ends."""
    data = code.co_exceptiontable
    if not data:
        return ()
    if data[-1] & 64:  # the last number goes on past the end
        raise IndexError("index out of range")
    # each byte's six bits, then each byte with bit 6 set (more follows) shifted into the
    # next one, and dropped: the numbers' values, with Python work per extra byte only
    vals = list(data.translate(_LOW6))
    for i in compress(range(len(data)), data.translate(_MORE)):
        vals[i + 1] |= vals[i] << 6
    vals = list(compress(vals, data.translate(_LAST)))
    if len(vals) % 4:
        raise ValueError("truncated exception table")
    rows = iter(vals)  # zip'ed with itself: the rows' four numbers
    return tuple(
        [
            _new(
                ExceptionEntry,
                (start * 2, (start + size) * 2, target * 2, depth_lasti >> 1, bool(depth_lasti & 1)),
            )
            for start, size, target, depth_lasti in zip(rows, rows, rows, rows)
        ]
    )


# The table's numbers: six bits per byte, big end first, bit 6 set on every byte but the
# last (bit 7 marks an entry's first number: not needed here).
_LOW6 = bytes(b & 63 for b in range(256))
_MORE = bytes(b >> 6 & 1 for b in range(256))
_LAST = bytes(1 - (b >> 6 & 1) for b in range(256))
