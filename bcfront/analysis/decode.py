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

This module holds the decoder; the instruction model (`Instr`,
`ExceptionEntry`, `Bytecode`, and the building of `Instr` objects) lives in
`bcfront.analysis.bytecode`, this interpreter's per-opcode tables and the
``argrepr`` rules in `bcfront.analysis.opcodes`.
"""

from __future__ import annotations

import types
from array import array
from collections.abc import Callable
from itertools import accumulate, compress
from operator import itemgetter
from typing import cast

from ..errors import BcfrontError

# (the model is re-exported: callers import `Bytecode`, `Instr` and friends from here)
from .bytecode import Bytecode, ExceptionEntry, Instr, parse_exception_table, prefixed_units  # noqa: F401
from .columns import byte_sum, positions_flagged
from .cpython import adaptive_code
from .decode_checks import args_fit, check_args, check_structure, lands, resumes
from .opcodes import (
    ARG_OF_UNIT,
    ARGS,
    EXTENDED_ARG,
    EXTENDED_ARG_BYTE,
    JUMP_FLAGS,
    K_JBACK,
    K_JFWD,
    KIND_OF,
    MAX_SIZE,
    PY,
    RESUME,
    SIZE,
    SIZE2,
    SUPPORTED,
    UNITS,
    UnitInfo,
    UnitKey,
)
from .versions import guess_version

_SUPPORTED_HERE = PY in SUPPORTED


class BytecodeVersionError(BcfrontError, ValueError):
    """A code object that was not compiled by the running CPython."""


# -- what the caller passed --------------------------------------------------


def code_of(obj: object) -> types.CodeType:
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


def _describe(obj: object) -> str:
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return f"the built-in {getattr(obj, '__qualname__', obj)!s} (implemented in C, it has no bytecode)"
    if isinstance(obj, type):
        return f"the class {obj.__qualname__} (pass one of its methods instead)"
    if callable(obj):
        return f"a {type(obj).__name__} object with no Python bytecode ({obj!r:.60})"
    return f"a non-callable {type(obj).__name__} ({obj!r:.60})"


# -- decoding ------------------------------------------------------------------


def decode(obj: object) -> Bytecode:
    """Decode a function or code object into a `Bytecode`.

    Raises TypeError for objects without bytecode and `BytecodeVersionError`
    for bytecode this CPython did not compile.
    """
    code = obj if type(obj) is types.CodeType else code_of(obj)
    if not _SUPPORTED_HERE:
        raise BytecodeVersionError(f"bcfront supports CPython 3.11–3.13; this is CPython {PY[0]}.{PY[1]}")
    try:
        return _decode(code)
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        # (a structural problem that `check_structure` names comes as a ValueError too)
        raise _version_error(code, str(exc)) from None


# The location table's entries each start with a byte whose top bit is set and whose
# low three bits are the entry's length in code units minus one (in what CPython's
# compiler writes, the bytes after it stay below 128): the units covered are a
# byte-translate and a byte sum away, without decoding a position.
_LINE_UNITS = bytes(((b & 7) + 1) if b & 128 else 0 for b in range(256))


def _check_line_table(code: types.CodeType, n: int) -> None:
    """What `_positions` checks, without building the positions."""
    units = code.co_linetable.translate(_LINE_UNITS)
    covered = byte_sum(units, 8)
    if covered and covered != n:
        # CPython's compiler keeps one-line entries' columns below 128, other assemblers
        # (the `bytecode` library, which builds our continuations) may not: count exactly
        covered = sum(1 for _ in code.co_positions())
    if covered and covered != n:
        raise ValueError(
            f"the line table covers {covered} code units, the bytecode has {n} (co_code was replaced)"
        )


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
    sizes = opbytes.translate(SIZE)
    if n == byte_sum(sizes, MAX_SIZE) and opbytes:
        if n > len(_EVEN_OFFSETS):
            _even_offsets(n)
        starts = list(compress(_EVEN_OFFSETS, ops))
        # the non-zero units (one iterator, cheaper than compress's two): the units with a
        # non-zero opcode, unless a unit with opcode 0 has a non-zero argument byte
        words = list(filter(None, array("H", raw)))
        if len(words) != len(opbytes):
            words = list(compress(memoryview(raw).cast("H"), ops))
        if EXTENDED_ARG not in opbytes:
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


_EXTENDED_ARG_FLAGS = bytes(c == EXTENDED_ARG for c in range(256))


def _decode_plain(
    code: types.CodeType, raw: bytes, ops: bytes, opbytes: bytes, starts: list[int], words: list[int]
) -> Bytecode:
    """The columns of bytecode without EXTENDED_ARG, each mapped in C, checked (most code
    objects: the common case's checks inline, `check_structure` only to say what is wrong)."""
    args = _args_of(words)
    kinds = ops.translate(KIND_OF)
    if not args_fit(code, kinds, raw[1::2]):
        list(map(ARGS.__getitem__, words))  # ValueError: the first opcode that does not exist
        # raises, saying which (no EXTENDED_ARG here: no unit maps to None)
        check_args(code, map(cast("Callable[[int], UnitInfo]", UNITS.__getitem__), set(words)))
    targets: list[int | None] = [None] * len(starts)
    jumps: list[int] = []
    if K_JFWD in kinds or K_JBACK in kinds:
        for i in positions_flagged(opbytes, JUMP_FLAGS):
            t = targets[i] = starts[i] + UNITS[words[i]][3]  # type: ignore[index,operator]  # a jump: its delta is an int
            jumps.append(t)
    table = parse_exception_table(code) if code.co_exceptiontable else ()
    units: list[UnitKey] = words  # type: ignore[assignment]  # (a list[int] the Bytecode only reads; no cast call)
    bc = Bytecode(code, starts, opbytes, args, targets, len(raw), table, PY, units, raw, jumps)
    # `check_structure`'s checks, as they pass on what this CPython compiled: RESUME first
    # (or after the prologue), 3.11's caches still zero, every jump and table entry on
    # an instruction
    if (
        (opbytes[0] != RESUME and not resumes(opbytes))
        or (_PY311 and adaptive_code(code) != raw)
        or ((jumps or table) and not lands(raw, len(raw), jumps, table))
    ):
        return _checked(bc)
    return bc


_PY311 = PY == (3, 11)


def _args_of(words: list[int]) -> list[int | None]:
    """The args of these code units as dis reports them (None for an opcode without one,
    for EXTENDED_ARG, and for an opcode that does not exist: `args_fit` refuses those), by
    one itemgetter over the unit-indexed table (in C; it returns a tuple for two or more)."""
    return list(itemgetter(*words)(ARG_OF_UNIT)) if len(words) > 1 else [ARG_OF_UNIT[words[0]]]


def _decode_extended(
    code: types.CodeType, raw: bytes, ops: bytes, opbytes: bytes, starts: list[int], words: list[int]
) -> Bytecode | None:
    """The columns of bytecode with EXTENDED_ARG prefixes (big functions), folding each
    run of prefixes into the instruction after it; the result is the careful walk's
    (`_decode_prefixed`), which the caller runs instead where this returns None: on
    anything unusual, so that the walk raises its own error."""
    # the walk steps from each instruction to the unit after its caches: it meets
    # the non-zero units only if each one starts where the previous one's caches end
    steps = list(accumulate(opbytes.translate(SIZE2), initial=0))
    steps.pop()
    if steps != starts:
        return None
    try:
        args = _args_of(words)  # None for the prefixes
        # `Bytecode.units`: the code unit, or (opcode, arg) for a prefixed instruction
        units = cast("list[UnitKey]", words.copy())
        folded: dict[int, UnitInfo] = {}  # position of a prefixed instruction -> UNITS entry
        prefixes: dict[int, int] = {}  # offset of a prefix -> the instruction's offset
        info: UnitInfo
        i, arg = None, 0  # the run of prefixes at hand: its first, its bits
        for p in positions_flagged(opbytes, _EXTENDED_ARG_FLAGS):  # each prefix, in order
            if i is None:
                i = p
            arg = arg << 8 | raw[starts[p] + 1]
            j = p + 1
            if opbytes[j] != EXTENDED_ARG:  # IndexError: prefixes at the end
                arg = arg << 8 | raw[starts[j] + 1]  # the run ends: fold it into j
                info = folded[j] = UNITS[(opbytes[j], arg)]  # type: ignore[assignment]  # not EXTENDED_ARG: not None
                # (ValueError above: no such opcode)
                arg = args[j] = info[0][2]
                units[j] = (opbytes[j], arg)
                prefixes.update(dict.fromkeys(starts[i:j], starts[j]))
                i, arg = None, 0
        kinds = ops.translate(KIND_OF)
        if not args_fit(code, kinds, raw[1::2]):  # the prefixed ones' low bytes,
            return None
        check_args(code, folded.values())  # and their whole arguments
        targets: list[int | None] = [None] * len(starts)
        jumps: list[int] = []
        for i in positions_flagged(opbytes, JUMP_FLAGS):
            t = starts[i] + (folded[i] if i in folded else UNITS[words[i]])[3]  # type: ignore[index,operator]  # a jump's delta
            t = targets[i] = prefixes.get(t, t)
            jumps.append(t)
        table = _fold_table(parse_exception_table(code), prefixes)
    except (IndexError, ValueError, KeyError, TypeError):
        return None
    keep = opbytes.translate(_NOT_EXTENDED_ARG)
    args = list(compress(args, keep))
    opbytes = opbytes.translate(None, EXTENDED_ARG_BYTE)
    return Bytecode(
        code,
        list(compress(starts, keep)),
        opbytes,
        args,
        list(compress(targets, keep)),
        len(raw),
        table,
        PY,
        list(compress(units, keep)),
        raw,
        jumps,
    )


_NOT_EXTENDED_ARG = bytes(c != EXTENDED_ARG for c in range(256))


def _decode_prefixed(code: types.CodeType, raw: bytes, n: int) -> Bytecode:
    """The careful path, one instruction at a time, folding EXTENDED_ARG prefixes: a jump
    or table entry aimed at a prefix goes to the instruction it extends."""
    offsets, opcodes, args, targets = [], bytearray(), [], []
    prefixes: dict[int, int] = {}
    checks: set[UnitInfo] = set()  # the distinct (opcode, arg) summaries, for check_args
    for start, k, info in prefixed_units(raw, n):
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


def _fold_table(table: tuple[ExceptionEntry, ...], prefixes: dict[int, int]) -> tuple[ExceptionEntry, ...]:
    """The exception table with entries that start or jump at an EXTENDED_ARG prefix
    moved to the instruction it extends."""
    if not prefixes:
        return table
    get = prefixes.get
    return tuple(
        ExceptionEntry(get(e.start, e.start), e.end, get(e.target, e.target), e.depth, e.lasti) for e in table
    )


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
        f"CPython {here}: {problem}; {what}.  Analyze it with the CPython that compiled it."
    )
