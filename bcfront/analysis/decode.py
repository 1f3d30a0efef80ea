"""Version-neutral decoding of CPython 3.11–3.13 bytecode.

This is the only module that knows how CPython versions spell things
differently; everything above it (CFG, analyses, the symbolic interpreter)
reads `Instr.op` and the normalized fields.  Each `Instr` keeps `offset`,
`opname`, `opcode`, `arg` and `argval` exactly as `dis` reports them
(`tests/analysis/test_decode.py` checks this on the corpus and the standard
library); `argrepr` too, except that 3.13's jump labels (``to L3``) are
written as offsets (``to 24``), as 3.11 and 3.12 do.

Version differences, in one table (``op`` is the normalized operation):

======================================  =====================  =====================  =====================
meaning                                 3.11                   3.12                   3.13
======================================  =====================  =====================  =====================
unconditional jump (op ``JUMP``)        JUMP_FORWARD,          JUMP_FORWARD,          same as 3.12
                                        JUMP_BACKWARD,         JUMP_BACKWARD,
                                        JUMP_BACKWARD_NO_      JUMP_BACKWARD_NO_
                                        INTERRUPT              INTERRUPT
pop and branch (``POP_JUMP_IF_*``)      POP_JUMP_FORWARD_IF_*  POP_JUMP_IF_*          POP_JUMP_IF_* (after
                                        POP_JUMP_BACKWARD_IF_*                        an explicit TO_BOOL)
branch keeping the value on one path    JUMP_IF_{TRUE,FALSE}   (gone: COPY+POP_JUMP)  (gone)
                                        _OR_POP
method load (op ``LOAD_METHOD``)        LOAD_METHOD            LOAD_ATTR, arg & 1     LOAD_ATTR, arg & 1
global load pushing NULL                LOAD_GLOBAL, arg & 1   same                   same; argrepr
                                                                                      ``name + NULL``
call                                    PRECALL + CALL,        CALL, KW_NAMES         CALL; CALL_KW takes
                                        KW_NAMES before        before                 names from the stack
for-loop exit                           FOR_ITER jumps past    FOR_ITER "jumps" to    FOR_ITER "jumps" to
                                        the loop, popping the  END_FOR with a dummy   END_FOR; END_FOR and
                                        iterator               pushed; END_FOR pops 2 POP_TOP pop 1 each
return a constant                       LOAD_CONST+RETURN_     RETURN_CONST           RETURN_CONST
                                        VALUE
super-instructions                      —                      —                      LOAD_FAST_LOAD_FAST,
                                                                                      STORE_FAST_LOAD_FAST,
                                                                                      STORE_FAST_STORE_FAST
                                                                                      (argval: name pair)
function attributes                     MAKE_FUNCTION flags    MAKE_FUNCTION flags    SET_FUNCTION_ATTRIBUTE
comprehensions                          nested code object     inlined (LOAD_FAST_    inlined
                                                               AND_CLEAR/SWAP)
KW_NAMES argval                         dis.UNKNOWN (the       the names tuple        (gone: CALL_KW)
                                        names: co_consts[arg])
intrinsics                              dedicated opcodes      CALL_INTRINSIC_1/2     CALL_INTRINSIC_1/2
slicing                                 BUILD_SLICE+BINARY_    BINARY_SLICE,          same as 3.12
                                        SUBSCR                 STORE_SLICE
comparison argval                       cmp_op[arg]            cmp_op[arg >> 4]       cmp_op[arg >> 5]
                                                                                      (arg & 16: to bool)
f-string conversion                     FORMAT_VALUE arg       FORMAT_VALUE arg       CONVERT_VALUE +
                                                                                      FORMAT_SIMPLE/_SPEC
relative jump base                      next instruction       after the inline       after the inline
                                                               caches                 caches (POP_JUMP_IF_*
                                                                                      and JUMP_BACKWARD have
                                                                                      one)
RETURN_GENERATOR stack effect           dis: 0; decoded: +1    dis: 0; decoded: +1    dis: +1 (the value
                                        (the POP_TOP after it  (same)                 sent at the first
                                        pops the sent value)                          resume)
opcode numbers                          RESUME 151,            RESUME 151,            RESUME 149,
                                        HAVE_ARGUMENT 90       HAVE_ARGUMENT 90       HAVE_ARGUMENT 44
======================================  =====================  =====================  =====================

Jump targets follow `dis` (so block leaders agree with it); stack effects come
from `dis.stack_effect` (``jump=False`` for the fall-through, ``jump=True`` for
the taken jump) and therefore agree with CPython's compiler, which makes the
3.12/3.13 ``FOR_ITER``/``END_FOR`` modelling consistent; the one correction is
RETURN_GENERATOR's, in the table.

EXTENDED_ARG prefixes are folded into the instruction they extend: a jump or
exception-table entry aimed at the prefix is redirected to the instruction
itself, whose `start_offset` remembers where the prefix began.  Inline cache
entries are skipped.  Exception-table entries are decoded from
`co_exceptiontable` directly, with exclusive ends.

The decoder reads ``co_code`` itself rather than going through
`dis.get_instructions` (several times slower), and in two layers: `decode`
produces flat columns (`Bytecode.offsets`, `opcodes`, `args`, `targets`),
which is all the analyses read, checked as below; the `Instr` objects, with
their source positions (``co_positions``), are built on the first access to
`Bytecode.instructions`.  A code object built for
another CPython (e.g. ``code.replace(co_code=...)`` with 3.12 bytes on 3.11)
shows up as an opcode this interpreter does not have, a missing ``RESUME``
after the prologue, an argument out of range, a jump into the middle of an
instruction, a line table that does not cover the bytecode, or (3.11, code
that has not run yet) instructions where this version keeps its zeroed inline
caches; `decode` then raises `BytecodeVersionError` naming this version and
the one `versions.guess_version` infers from its opcode tables.  Bytes that
are valid bytecode of this interpreter are decoded as such: that is what it
would run.

This module holds the instruction model (`Instr`, `ExceptionEntry`,
`Bytecode`) and the decoder; this interpreter's per-opcode tables and the
``argrepr`` rules live in `bcfront.analysis.opcodes`.
"""
from __future__ import annotations

import bisect
import types
from array import array
from itertools import accumulate, compress, repeat
from operator import add, itemgetter
from typing import NamedTuple
from zlib import adler32

from ..errors import BcfrontError
from .decode_checks import args_fit, check_args, check_structure, lands, resumes
from .opcodes import (_ARG_OF_UNIT, _ARGREPR, _ARGS, _EXTENDED_ARG, _EXTENDED_ARG_BYTE,
                      _KIND, _KIND_OF, _KIND_REPR, _MAX_SIZE, _RESUME, _SHARED, _SIZE, _SIZE2,
                      _UNITS, K_CONST, K_INT, K_JBACK, K_JFWD, K_LOCAL, PY, SUPPORTED, _argval,
                      _new)
# re-exported: cfg, stack and ssa_build read these opcode tables from here
from .opcodes import (_BRANCH_RENAME, _CONDITIONAL, _OP, _OPNAME, _TERMINATORS,  # noqa: F401
                      _UNCONDITIONAL)
from .versions import guess_version




_SUPPORTED_HERE = PY in SUPPORTED


class BytecodeVersionError(BcfrontError, ValueError):
    """A code object that was not compiled by the running CPython."""


# A NamedTuple for the reason given at `Instr`: `parse_exception_table` builds one per row.
class ExceptionEntry(NamedTuple):
    """One `co_exceptiontable` row: instructions in [start, end) jump to target."""
    start: int
    end: int        # exclusive
    target: int
    depth: int      # stack depth to unwind to before pushing the exception
    lasti: bool     # whether the offset of the raising instruction is pushed too

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
    offset: int                 # as dis reports it
    start_offset: int           # first EXTENDED_ARG prefix, else == offset
    next_offset: int            # offset of the following instruction (caches skipped)
    jump_target: int | None     # offset control may jump to (dis's target, prefix skipped)
    positions: tuple            # (lineno, end_lineno, col, end_col), as dis reports them
    argval: object              # as dis reports it
    opname: str                 # as dis reports it
    opcode: int
    arg: int | None             # as dis reports it (EXTENDED_ARG bits included)
    op: str                     # normalized meaning, see the module table
    stack_effect: int           # on fall-through
    jump_stack_effect: int | None  # when the jump is taken

    @property
    def argrepr(self) -> str:
        """dis's human-readable argument (computed on demand)."""
        return _ARGREPR.get(self.opname, _KIND_REPR[_KIND[self.opcode]])(self)

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
        return self.op in _CONDITIONAL

    @property
    def is_terminator(self) -> bool:
        """Ends the block with no fall-through and no jump (return or raise)."""
        return self.op in _TERMINATORS

    @property
    def falls_through(self) -> bool:
        return not (self.op == "JUMP" or self.op in _TERMINATORS)

    @property
    def push_null(self) -> bool:
        """LOAD_GLOBAL/LOAD_ATTR variants that also push NULL (or self)."""
        if self.opname == "LOAD_GLOBAL":
            return bool(self.arg & 1)
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
    __slots__ = ("code", "exception_table", "version", "offsets", "opcodes", "args",
                 "targets", "end", "units", "_instructions", "_index", "_starts", "_raw",
                 "_jumps")

    def __init__(self, code: types.CodeType, offsets: list, opcodes: bytes, args: list,
                 targets: list, end: int, exception_table: tuple[ExceptionEntry, ...],
                 version: tuple[int, int], units: list | None = None, raw: bytes | None = None,
                 jumps: list | None = None):
        self.code = code
        # per instruction, a key for per-(opcode, arg) tables: its code unit (an int,
        # as co_code holds it) when it has no EXTENDED_ARG, else (opcode, arg)
        self.units = list(zip(opcodes, args)) if units is None else units
        self.offsets = offsets
        self.opcodes = opcodes
        self.args = args
        self.targets = targets
        self.end = end              # offset just past the last instruction (and its caches)
        self.exception_table = exception_table
        self.version = version
        self._instructions = self._index = self._starts = None
        # co_code when the instructions are exactly its units whose opcode is neither
        # 0 (a cache) nor EXTENDED_ARG (the column decoders), for `check_structure`; the
        # column decoders also list the jump targets (None: not listed)
        self._raw, self._jumps = raw, jumps

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

    def argval(self, i: int):
        """The `i`-th instruction's argval, as dis reports it (without building `Instr`)."""
        op = self.opcodes[i]
        if self.targets[i] is not None:
            return self.targets[i]
        code = self.code
        return _argval(_KIND[op], self.args[i], code.co_consts, code.co_names,
                       code._varname_from_oparg)

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


# -- what the caller passed --------------------------------------------------

def code_of(obj) -> types.CodeType:
    """The code object behind a function, method, or code object; TypeError otherwise."""
    if isinstance(obj, types.CodeType):
        return obj
    for _ in range(16):
        if isinstance(obj, types.FunctionType):
            return obj.__code__
        if isinstance(obj, types.MethodType):
            obj = obj.__func__
            continue
        if hasattr(obj, "__wrapped__") and not isinstance(obj, type):
            obj = obj.__wrapped__
            continue
        break
    raise TypeError(f"bcfront.analyze needs a Python function or code object, got {_describe(obj)}")


def _describe(obj) -> str:
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return f"the built-in {getattr(obj, '__qualname__', obj)!s} (implemented in C, it has no bytecode)"
    if isinstance(obj, type):
        return f"the class {obj.__qualname__} (pass one of its methods instead)"
    if callable(obj):
        return f"a {type(obj).__name__} object with no Python bytecode ({obj!r:.60})"
    return f"a non-callable {type(obj).__name__} ({obj!r:.60})"



# -- decoding ------------------------------------------------------------------

def decode(obj) -> Bytecode:
    """Decode a function or code object into a `Bytecode`.

    Raises TypeError for objects without bytecode and `BytecodeVersionError`
    for bytecode this CPython did not compile.
    """
    code = obj if type(obj) is types.CodeType else code_of(obj)
    if not _SUPPORTED_HERE:
        raise BytecodeVersionError(
            f"bcfront supports CPython 3.11–3.13; this is CPython {PY[0]}.{PY[1]}")
    try:
        return _decode(code)
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        # (a structural problem that `check_structure` names comes as a ValueError too)
        raise _version_error(code, str(exc)) from None


def _positions(code: types.CodeType, n: int) -> list[tuple]:
    positions = list(code.co_positions())
    if len(positions) != n:
        if positions:  # a genuine line table covers every code unit, caches included
            raise ValueError(f"the line table covers {len(positions)} code units, the "
                             f"bytecode has {n} (co_code was replaced)")
        positions = [(None, None, None, None)] * n
    return positions


# The location table's entries each start with a byte whose top bit is set and whose
# low three bits are the entry's length in code units minus one (in what CPython's
# compiler writes, the bytes after it stay below 128): the units covered are a
# byte-translate and a byte sum away, without decoding a position.
_LINE_UNITS = bytes(((b & 7) + 1) if b & 128 else 0 for b in range(256))


def _check_line_table(code: types.CodeType, n: int) -> None:
    """What `_positions` checks, without building the positions."""
    units = code.co_linetable.translate(_LINE_UNITS)
    covered = (adler32(units) & 0xFFFF) - 1 if len(units) <= _SUM_STEP_8 else _byte_sum(units, 8)
    if covered and covered != n:
        # CPython's compiler keeps one-line entries' columns below 128, other assemblers
        # (the `bytecode` library, which builds our continuations) may not: count exactly
        covered = sum(1 for _ in code.co_positions())
    if covered and covered != n:
        raise ValueError(f"the line table covers {covered} code units, the bytecode has {n} "
                         f"(co_code was replaced)")


def _byte_sum(data: bytes, top: int) -> int:
    """sum(data) for bytes that are each at most `top`, in C: the low half of adler32 is 1
    plus the byte sum modulo 65521, exact while the sum stays below 65520, so it runs over
    slices short enough for that (one slice for all but the biggest functions, which the
    callers take inline: ``(adler32(data) & 0xFFFF) - 1`` up to `_SUM_STEP_*` bytes)."""
    step = 65519 // top
    if len(data) <= step:
        return (adler32(data) & 0xFFFF) - 1
    mv = memoryview(data)
    return sum([(adler32(mv[i:i + step]) & 0xFFFF) - 1 for i in range(0, len(data), step)])


# how many bytes of at most 8 (a line-table entry's units), or of at most _MAX_SIZE (an
# instruction's), adler32 sums exactly at one go
_SUM_STEP_8, _SUM_STEP_SIZE = 65519 // 8, 65519 // _MAX_SIZE


def _instructions(code: types.CodeType) -> tuple[Instr, ...]:
    """The `Instr` objects of a code object that `decode` accepted."""
    raw = code.co_code
    positions = _positions(code, len(raw) >> 1)
    out = _decode_columns(code, raw, raw[0::2], positions)
    if out is not None:
        return out
    out = _decode_loop(code, raw, positions)
    if any(ins.start_offset != ins.offset for ins in out):
        out, _ = _fold_prefixes(out, ())
    return tuple(out)


def _decode(code: types.CodeType) -> Bytecode:
    """The checked `Bytecode` of a code object (the three paths below, then
    `check_structure`); the first problem found raises, as `decode` reports it."""
    raw = code.co_code
    if len(raw) & 1:
        raise ValueError("bytecode of odd length")
    n = len(raw) >> 1
    _check_line_table(code, n)
    ops = raw[0::2]
    # co_code zeroes every inline cache unit and no instruction has opcode 0 (CACHE),
    # so the instructions (and EXTENDED_ARG prefixes) are exactly the units with a
    # non-zero opcode byte -- provided their sizes add up to the whole, which is checked
    opbytes = ops.translate(None, b"\0")
    sizes = opbytes.translate(_SIZE)
    if n == ((adler32(sizes) & 0xFFFF) - 1 if len(sizes) <= _SUM_STEP_SIZE
             else _byte_sum(sizes, _MAX_SIZE)) and opbytes:
        if n > len(_EVEN_OFFSETS):
            _even_offsets(n)
        starts = list(compress(_EVEN_OFFSETS, ops))
        # the non-zero units (one iterator, cheaper than compress's two): the units with a
        # non-zero opcode, unless a unit with opcode 0 has a non-zero argument byte
        words = list(filter(None, array("H", raw)))
        if len(words) != len(opbytes):
            words = list(compress(memoryview(raw).cast("H"), ops))
        if _EXTENDED_ARG not in opbytes:
            return _decode_plain(code, raw, ops, opbytes, starts, words)
        bc = _decode_extended(code, raw, ops, opbytes, starts, words)
        if bc is None:
            bc = _decode_prefixed(code, raw, n)
    else:
        bc = _decode_prefixed(code, raw, n)
    return _checked(bc)


def _checked(bc: Bytecode) -> Bytecode:
    """`bc` if `check_structure` finds nothing wrong, else ValueError saying what."""
    problem = check_structure(bc)
    if problem:
        raise ValueError(problem)
    return bc


def _even_offsets(n: int) -> list[int]:
    """At least the offsets of n code units, 0, 2, 4, ...: one list of int objects shared
    by every decoded function (picking from it allocates no ints), grown on demand."""
    have = len(_EVEN_OFFSETS)
    if n > have:
        _EVEN_OFFSETS.extend(range(2 * have, 2 * n, 2))
    return _EVEN_OFFSETS


_EVEN_OFFSETS: list[int] = []


def _ints(n: int) -> list[int]:
    """At least the ints 0..n-1, each `ints[k]` the int k: one list of int objects shared
    by the decoder and every CFG (picking from it allocates no ints), grown on demand."""
    have = len(_INTS)
    if n > have:
        _INTS.extend(range(have, n))
    return _INTS


_INTS: list[int] = []


def _where(opbytes: bytes, flags: bytes):
    """The positions in `opbytes` of the opcodes that `flags` (a translate table) marks 1:
    a translate and a compress over the shared ints, in C (a regex search costs ~40
    machine instructions per byte, and a match object per hit)."""
    n = len(opbytes)
    return compress(_INTS if n <= len(_INTS) else _ints(n), opbytes.translate(flags))


_JUMP_FLAGS = bytes(k in (K_JFWD, K_JBACK) for k in _KIND)
_EXTENDED_ARG_FLAGS = bytes(c == _EXTENDED_ARG for c in range(256))


def _decode_plain(code, raw, ops, opbytes, starts, words) -> Bytecode:
    """The columns of bytecode without EXTENDED_ARG, each mapped in C, checked (most code
    objects: the common case's checks inline, `check_structure` only to say what is wrong)."""
    args = _args_of(words)
    kinds = ops.translate(_KIND_OF)
    if not args_fit(code, kinds, raw[1::2]):
        list(map(_ARGS.__getitem__, words))     # ValueError: the first opcode that does not exist
        check_args(code, map(_UNITS.__getitem__, set(words)))  # raises, saying which
    targets = [None] * len(starts)
    jumps = []
    if K_JFWD in kinds or K_JBACK in kinds:
        for i in _where(opbytes, _JUMP_FLAGS):
            t = targets[i] = starts[i] + _UNITS[words[i]][3]
            jumps.append(t)
    table = parse_exception_table(code) if code.co_exceptiontable else ()
    bc = Bytecode(code, starts, opbytes, args, targets, len(raw), table, PY, words, raw, jumps)
    # `check_structure`'s checks, as they pass on what this CPython compiled: RESUME first
    # (or after the prologue), 3.11's caches still zero, every jump and table entry on
    # an instruction
    if opbytes[0] != _RESUME and not resumes(opbytes) \
            or _PY311 and code._co_code_adaptive != raw \
            or (jumps or table) and not lands(raw, len(raw), jumps, table):
        return _checked(bc)
    return bc


_PY311 = PY == (3, 11)


def _args_of(words: list[int]) -> list:
    """The args of these code units as dis reports them (None for an opcode without one,
    for EXTENDED_ARG, and for an opcode that does not exist: `args_fit` refuses those), by
    one itemgetter over the unit-indexed table (in C; it returns a tuple for two or more)."""
    return list(itemgetter(*words)(_ARG_OF_UNIT)) if len(words) > 1 else [_ARG_OF_UNIT[words[0]]]


def _decode_extended(code, raw, ops, opbytes, starts, words) -> Bytecode | None:
    """The columns of bytecode with EXTENDED_ARG prefixes (big functions), folding each
    run of prefixes into the instruction after it; the result is the careful walk's
    (`_decode_prefixed`), which the caller runs instead where this returns None: on
    anything unusual, so that the walk raises its own error."""
    # the walk steps from each instruction to the unit after its caches: it meets
    # the non-zero units only if each one starts where the previous one's caches end
    steps = list(accumulate(opbytes.translate(_SIZE2), initial=0))
    steps.pop()
    if steps != starts:
        return None
    try:
        args = _args_of(words)          # None for the prefixes
        # `Bytecode.units`: the code unit, or (opcode, arg) for a prefixed instruction
        units = words.copy()
        folded: dict[int, tuple] = {}   # position of a prefixed instruction -> _UNITS entry
        prefixes: dict[int, int] = {}   # offset of a prefix -> the instruction's offset
        i, arg = None, 0                # the run of prefixes at hand: its first, its bits
        for p in _where(opbytes, _EXTENDED_ARG_FLAGS):  # each prefix, in order
            if i is None:
                i = p
            arg = arg << 8 | raw[starts[p] + 1]
            j = p + 1
            if opbytes[j] != _EXTENDED_ARG:             # IndexError: prefixes at the end
                arg = arg << 8 | raw[starts[j] + 1]     # the run ends: fold it into j
                info = folded[j] = _UNITS[(opbytes[j], arg)]    # ValueError: no such opcode
                arg = args[j] = info[0][2]
                units[j] = (opbytes[j], arg)
                prefixes.update(dict.fromkeys(starts[i:j], starts[j]))
                i, arg = None, 0
        kinds = ops.translate(_KIND_OF)
        if not args_fit(code, kinds, raw[1::2]):      # the prefixed ones' low bytes,
            return None
        check_args(code, folded.values())             # and their whole arguments
        targets = [None] * len(starts)
        jumps = []
        for i in _where(opbytes, _JUMP_FLAGS):
            t = starts[i] + (folded[i] if i in folded else _UNITS[words[i]])[3]
            t = targets[i] = prefixes.get(t, t)
            jumps.append(t)
        table = _fold_table(parse_exception_table(code), prefixes)
    except (IndexError, ValueError, KeyError, TypeError):
        return None
    keep = opbytes.translate(_NOT_EXTENDED_ARG)
    args = list(compress(args, keep))
    opbytes = opbytes.translate(None, _EXTENDED_ARG_BYTE)
    return Bytecode(code, list(compress(starts, keep)), opbytes, args,
                    list(compress(targets, keep)), len(raw), table, PY, list(compress(units, keep)),
                    raw, jumps)


_NOT_EXTENDED_ARG = bytes(c != _EXTENDED_ARG for c in range(256))


def _decode_prefixed(code, raw, n) -> Bytecode:
    """The careful path, one instruction at a time, folding EXTENDED_ARG prefixes: a jump
    or table entry aimed at a prefix goes to the instruction it extends."""
    offsets, opcodes, args, targets = [], bytearray(), [], []
    prefixes: dict[int, int] = {}
    checks: set = set()         # the distinct (opcode, arg) summaries, for check_args
    for start, k, info in _prefixed_units(raw, n):
        shared, kind, size, delta = info
        checks.add(info)
        off = 2 * k
        for p in range(2 * start, off, 2):
            prefixes[p] = off
        offsets.append(off)
        opcodes.append(shared[1])
        args.append(shared[2])
        targets.append(None if delta is None else off + delta)
    check_args(code, checks)
    table = parse_exception_table(code)
    if prefixes:
        get = prefixes.get
        targets = [t if t is None else get(t, t) for t in targets]
        table = _fold_table(table, prefixes)
    return Bytecode(code, offsets, bytes(opcodes), args, targets, 2 * n, table, PY)


def _fold_table(table: tuple[ExceptionEntry, ...], prefixes: dict[int, int]):
    """The exception table with entries that start or jump at an EXTENDED_ARG prefix
    moved to the instruction it extends."""
    if not prefixes:
        return table
    get = prefixes.get
    return tuple(ExceptionEntry(get(e.start, e.start), e.end, get(e.target, e.target),
                                e.depth, e.lasti) for e in table)


def _decode_columns(code, raw, ops, positions) -> tuple[Instr, ...] | None:
    """The fast path, column by column with C-level iterators; None if there are EXTENDED_ARGs.

    ``co_code`` zeroes every inline cache unit and no instruction has opcode
    0 (CACHE), so the instructions are exactly the units with a non-zero
    opcode byte -- provided their sizes add up to the whole, which is checked;
    None sends the caller to the careful loop (and its error messages).
    """
    if _EXTENDED_ARG_BYTE in ops:
        return None
    n = len(ops)
    starts = list(compress(range(0, 2 * n, 2), ops))
    opbytes = bytes(compress(ops, ops))
    if sum(opbytes.translate(_SIZE)) != n:
        return None
    words = list(compress(memoryview(raw).cast("H"), ops))
    # argval of a non-jump instruction depends only on its code unit: resolve each
    # distinct unit once (the common kinds inline: this loop is hot)
    argvals = {}
    consts, names, local, table = code.co_consts, code.co_names, code._varname_from_oparg, _UNITS
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
                argvals[w] = _argval(kind, shared[2], consts, names, local)
    except ValueError:
        return None     # an opcode this interpreter does not have: the loop will say where
    vals = list(map(argvals.get, words))
    targets = [None] * len(words)
    for i in _where(opbytes, _JUMP_FLAGS):
        targets[i] = vals[i] = starts[i] + table[words[i]][3]
    nexts = starts[1:]
    nexts.append(2 * n)
    head = zip(starts, starts, nexts, targets, compress(positions, ops), vals)
    return tuple(map(_new, repeat(Instr), map(add, head, map(_SHARED.__getitem__, words))))


def _decode_loop(code, raw, positions) -> list[Instr]:
    """The careful path: one instruction at a time, folding EXTENDED_ARG prefixes."""
    n = len(raw) >> 1
    consts, names, local = code.co_consts, code.co_names, code._varname_from_oparg
    out = []
    for start, k, (shared, kind, size, delta) in _prefixed_units(raw, n):
        off = 2 * k
        if delta is None:
            target, argval = None, _argval(kind, shared[2], consts, names, local)
        else:
            target = argval = off + delta
        out.append(_new(Instr, (off, 2 * start, 2 * (k + size), target, positions[k], argval) + shared))
    return out


def _prefixed_units(raw, n: int):
    """(first unit of its EXTENDED_ARG prefixes, its own unit, its `_UNITS` entry) for each
    instruction of `raw`, in order; the careful walk both slow paths share."""
    k = 0
    while k < n:
        start = k
        info = _UNITS[(raw[2 * k], raw[2 * k + 1])]
        arg = 0
        while info is None:    # EXTENDED_ARG: accumulate into the next instruction's arg
            arg = arg << 8 | raw[2 * k + 1]
            k += 1
            if k >= n:
                raise ValueError("EXTENDED_ARG at the end of the bytecode")
            info = _UNITS[(raw[2 * k], arg << 8 | raw[2 * k + 1])]
        yield start, k, info
        k += info[2]
    if k != n:
        raise ValueError("the last instruction's inline caches run past the end")


def _fold_prefixes(out: list[Instr], table: tuple[ExceptionEntry, ...]):
    """Redirect jumps, next offsets and table entries aimed at EXTENDED_ARG prefixes."""
    prefixes: dict[int, int] = {}
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
    table = tuple(ExceptionEntry(prefixes.get(e.start, e.start), e.end,
                                 prefixes.get(e.target, e.target), e.depth, e.lasti)
                  for e in table)
    return fixed, table


def parse_exception_table(code: types.CodeType) -> tuple[ExceptionEntry, ...]:
    """Decode `co_exceptiontable` (varint-encoded, in code units) with exclusive ends."""
    data = code.co_exceptiontable
    if not data:
        return ()
    if data[-1] & 64:   # the last number goes on past the end
        raise IndexError("index out of range")
    # each byte's six bits, then each byte with bit 6 set (more follows) shifted into the
    # next one, and dropped: the numbers' values, with Python work per extra byte only
    vals = list(data.translate(_LOW6))
    for i in compress(range(len(data)), data.translate(_MORE)):
        vals[i + 1] |= vals[i] << 6
    vals = list(compress(vals, data.translate(_LAST)))
    if len(vals) % 4:
        raise ValueError("truncated exception table")
    rows = iter(vals)   # zip'ed with itself: the rows' four numbers
    return tuple([_new(ExceptionEntry, (start * 2, (start + size) * 2, target * 2,
                                        depth_lasti >> 1, bool(depth_lasti & 1)))
                  for start, size, target, depth_lasti in zip(rows, rows, rows, rows)])


# The table's numbers: six bits per byte, big end first, bit 6 set on every byte but the
# last (bit 7 marks an entry's first number: not needed here).
_LOW6 = bytes(b & 63 for b in range(256))
_MORE = bytes(b >> 6 & 1 for b in range(256))
_LAST = bytes(1 - (b >> 6 & 1) for b in range(256))


# -- foreign bytecode ----------------------------------------------------------

def _version_error(code: types.CodeType, problem: str) -> BytecodeVersionError:
    here = f"{PY[0]}.{PY[1]}"
    guesses = guess_version(code)
    if guesses:
        other = " or ".join(f"CPython {g}" for g in guesses)
        what = f"it looks like bytecode compiled by {other}"
    else:
        what = "it matches none of the opcode tables of CPython 3.11, 3.12 and 3.13"
    return BytecodeVersionError(
        f"{code.co_name!r} ({code.co_filename}:{code.co_firstlineno}) was not compiled by this "
        f"CPython {here}: {problem}; {what}.  Analyze it with the CPython that compiled it.")
