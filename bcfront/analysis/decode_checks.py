"""What `decode` verifies before it accepts a code object's bytecode.

Two kinds of check, both cheap on what CPython's own compiler writes and exact
about what is wrong otherwise:

* every instruction's argument resolves in this code object's tables
  (`args_fit` over whole byte strings in C; `check_args` raises saying which
  does not, as `dis` would);
* the structure only this interpreter's compiler produces (`check_structure`:
  a RESUME after the prologue, 3.11's zeroed inline caches, jump targets and
  exception-table entries on instructions).  A failure is reported by `decode`
  as a `BytecodeVersionError`.
"""

from __future__ import annotations

import dis
import re
import types
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .cpython import adaptive_code, varname_from_oparg
from .opcodes import (
    CACHES,
    CMP_SHIFT,
    EXTENDED_ARG,
    JUMP_OPS,
    K_BAD,
    K_CONST,
    K_INT,
    K_LOCAL,
    K_NAME,
    K_NAME1,
    K_NAME2,
    K_PAIR,
    KIND,
    LOW_NIBBLE,
    OPNAME,
    PY,
    RESUME,
    UnitInfo,
    resolve_argval,
)
from .versions import PROLOGUE as _PROLOGUE

if TYPE_CHECKING:
    from .bytecode import Bytecode, ExceptionEntry


# -- arguments ------------------------------------------------------------------


def args_fit(code: types.CodeType, kinds: bytes, argbytes: bytes) -> bool:
    """Whether the argval of every instruction resolves in this code object (what
    `check_args` checks, without saying which fails), for bytecode whose arguments
    are bytes (no EXTENDED_ARG).

    `kinds` and `argbytes` are the `KIND_OF` kinds of the opcode bytes and the argument
    bytes of every code unit (a cache unit has opcode 0, whose kind takes no argument).
    An argument fits if it is below its kind's limit (the length of the table it
    indexes, scaled by the kind's shift), that is if it plus the kind's room (256 minus
    the limit) stays below 256: the rooms of all units are one translate of their
    kinds, and `_overflows` adds them to the arguments in C, whatever the length of the
    code.
    """
    if K_BAD in kinds:  # an opcode this interpreter does not have
        return False
    # (`_fast_locals`' first case inline: every name is a local)
    nl = _fast_locals(code) if code.co_cellvars or code.co_freevars else code.co_nlocals
    nc, nn = len(code.co_consts), len(code.co_names)
    # a room of 256 does not fit in a byte: an empty table fails any use of it
    if not (nc and nn and nl) and (
        (not nc and K_CONST in kinds)
        or (not nl and (K_LOCAL in kinds or K_PAIR in kinds))
        or (not nn and (K_NAME in kinds or K_NAME1 in kinds or K_NAME2 in kinds))
    ):
        return False
    rooms = _ROOMS.get((nc, nn, nl))
    if rooms is None:
        rooms = _rooms(nc, nn, nl)
    if _overflows(argbytes, kinds.translate(rooms)):
        return False
    if nl < 16 and _PAIRS and K_PAIR in kinds:  # a pair's second local is its low nibble
        return not _overflows(argbytes.translate(LOW_NIBBLE), kinds.translate(_PAIR_ROOMS[nl]))
    return True


def _room(limit: int) -> int:
    """256 minus the limit, 0 (unchecked) where every byte is below it or it is 0 (an
    empty table, checked apart)."""
    return 256 - limit if 0 < limit < 256 else 0


# The translate table of rooms by kind, in `opcodes.K_*` order, in pieces indexed by a
# table's length (256: that or more): K_NOARG, K_INT and K_CONST; K_NAME, K_NAME1 and
# K_NAME2 (shifted by 0, 1, 2); K_LOCAL and K_PAIR (its high nibble); then the jumps (no
# table), a comparison's index below len(dis.cmp_op), K_FORMAT (always fits), a
# conversion below 4 and K_UNKNOWN, and padding (the kinds are below 14).
_CONST_ROOMS = [bytes((0, 0, _room(n))) for n in range(257)]
_NAME_ROOMS = [bytes((_room(n), _room(2 * n), _room(4 * n))) for n in range(257)]
_LOCAL_ROOMS = [bytes((_room(n), _room(16 * n))) for n in range(257)]
_OTHER_ROOMS = bytes((0, 0, _room(len(dis.cmp_op) << CMP_SHIFT), 0, _room(4), 0)) + bytes(242)
# fewer than 16 locals -> the rooms of a pair's low nibble (the other kinds: none)
_PAIR_ROOMS = [None] + [bytes(256 - nl if k == K_PAIR else 0 for k in range(256)) for nl in range(1, 17)]


def _rooms(nc: int, nn: int, nl: int) -> bytes:
    """The translate table of rooms by kind for tables of these lengths (constants,
    names, fast locals), kept in `_ROOMS` (a few thousand distinct lengths in practice;
    bounded all the same)."""
    rooms = (
        _CONST_ROOMS[nc if nc < 256 else 256]
        + _NAME_ROOMS[nn if nn < 256 else 256]
        + _LOCAL_ROOMS[nl if nl < 256 else 256]
        + _OTHER_ROOMS
    )
    if len(_ROOMS) < 50_000:
        _ROOMS[nc, nn, nl] = rooms
    return rooms


_ROOMS: dict[tuple[int, int, int], bytes] = {}


def _overflows(a: bytes, b: bytes) -> bool:
    """Whether a[i] + b[i] >= 256 for some i (two equal-length byte strings), in C: read as
    two big integers of 8-bit lanes, their sum carries out of a lane exactly where that
    happens (a lane at 255 only passes on a carry that some lane below started), and
    the carries into each bit are the bits where the sum differs from the xor.  (Read
    big-endian, `int.from_bytes`' default and its cheapest call: the lanes' order does
    not matter, the carries land on bits 8, 16, ... either way.)"""
    x, y = _from_bytes(a), _from_bytes(b)
    lanes = _LANE_STARTS if len(a) <= 8192 else _lane_starts(len(a))
    return ((x + y) ^ x ^ y) & lanes != 0


def _lane_starts(n: int) -> int:
    """Bits 8, 16, 24, ... up to n lanes: where a carry out of a lane lands."""
    return int.from_bytes(bytes(1) + b"\1" * n, "little")


_LANE_STARTS = _lane_starts(8192)
_from_bytes = int.from_bytes
_PAIRS = K_PAIR in KIND  # this CPython has LOAD_FAST_LOAD_FAST and the like (3.13)


def _fast_locals(code: types.CodeType) -> int:
    """How many names the fast-locals table (locals, then cells and free variables) has at
    least, which Python does not expose: a count refuted by asking for its last name
    gives way to a smaller one.  Too low a count only sends `args_fit`'s caller to
    the exact check."""
    cells, free = code.co_cellvars, code.co_freevars
    if not (cells or free):  # every name is a local: co_nlocals counts them all
        return code.co_nlocals
    n = code.co_nlocals + len(cells) + len(free)
    if cells and not _has_local(code, n - 1):  # a local that is also a cell counts once
        n -= len(set(cells).intersection(code.co_varnames))
    return n if n == 0 or _has_local(code, n - 1) else code.co_nlocals


def _has_local(code: types.CodeType, k: int) -> bool:
    try:
        varname_from_oparg(code)(k)
    except IndexError:
        return False
    return True


def check_args(code: types.CodeType, infos: Iterable[UnitInfo]) -> None:
    """Resolve the argval of each distinct non-jump (opcode, arg): an argument out of
    range for this code object's tables raises (IndexError), as dis would."""
    consts, names, local = code.co_consts, code.co_names, varname_from_oparg(code)
    for shared, kind, _, delta in infos:
        if delta is None and kind > K_INT:
            resolve_argval(kind, shared[2], consts, names, local)


# -- structure --------------------------------------------------------------------


def check_structure(bc: Bytecode) -> str | None:
    """Structural checks that this interpreter's own compiler always satisfies."""
    ops, offsets = bc.opcodes, bc.offsets
    if not ops:
        return "empty bytecode"
    if ops[0] != RESUME:  # else the prologue's opcodes, then RESUME
        k = _prologue_end(ops)
        if k == len(ops):
            return "no RESUME instruction"
        if ops[k] != RESUME:
            return f"no RESUME after the prologue (found {OPNAME[ops[k]]} at offset {offsets[k]})"
    if PY == (3, 11):
        problem = _check_caches_311(bc)
        if problem:
            return problem
    jumps = bc.jumps
    if not bc.exception_table and not (JUMP_OPS.search(ops) if jumps is None else jumps):
        return None  # no jump and no table entry: nothing else can point anywhere
    if bc.raw is not None and lands(bc.raw, bc.end, jumps or (), bc.exception_table):
        return None
    starts = set(offsets)
    targets = set(bc.targets)
    targets.discard(None)
    if not targets <= starts:
        k = next(k for k, t in enumerate(bc.targets) if t is not None and t not in starts)
        return f"{OPNAME[ops[k]]} at offset {offsets[k]} jumps to {bc.targets[k]}, not an instruction"
    end = bc.end
    for e in bc.exception_table:
        if e.start not in starts or e.target not in starts or not (e.start < e.end <= end):
            return f"exception-table entry {e} does not fit the instructions"
    return None


def resumes(ops: bytes) -> bool:
    """Whether RESUME follows the prologue's opcodes (`check_structure`'s first check, on
    bytecode that does not start with RESUME)."""
    k = _prologue_end(ops)
    return k < len(ops) and ops[k] == RESUME


def _prologue_end(ops: bytes) -> int:
    """Where the run of prologue opcodes at the start of `ops` ends."""
    run = _PROLOGUE_RUN.match(ops)
    return 0 if run is None else run.end()


def lands(raw: bytes, end: int, jumps: Iterable[int], table: Iterable[ExceptionEntry]) -> bool:
    """Whether every jump target (`jumps`) and exception-table entry of column-decoded
    bytecode is an instruction (an entry's end: up to the end), tested on co_code (`raw`,
    where an instruction is a unit whose opcode is neither 0 nor EXTENDED_ARG) rather than
    against a set of all the offsets; `check_structure` says what is wrong where it is not."""
    for t in jumps:
        if not 0 <= t < end or raw[t] in _NOT_AN_INSTRUCTION:
            return False
    # (each entry unpacked: a NamedTuple field's descriptor is a slower, generic lookup)
    for start, stop, target, _, _ in table:
        if (
            not (0 <= start < stop <= end and target < end)
            or target < 0
            or raw[start] in _NOT_AN_INSTRUCTION
            or raw[target] in _NOT_AN_INSTRUCTION
        ):
            return False
    return True


_NOT_AN_INSTRUCTION = (0, EXTENDED_ARG)


# A run of opcodes that may precede RESUME (`versions.PROLOGUE`), matched in C.
_PROLOGUE_RUN = re.compile(
    b"[" + b"".join(re.escape(bytes([c])) for c, name in enumerate(OPNAME) if name in _PROLOGUE) + b"]*"
)


def _check_caches_311(bc: Bytecode) -> str | None:
    # 3.11 quickens a code object only after it has run a while, rewriting
    # every instruction that has caches; until then the compiler's zeros are
    # still in them (and the adaptive bytes equal co_code).  Non-zero "caches"
    # under unquickened opcodes are another version's instructions read with
    # 3.11's cache layout.
    adaptive = adaptive_code(bc.code)
    if adaptive == bc.code.co_code:
        return None
    for off, op in zip(bc.offsets, bc.opcodes):
        n = CACHES[op]
        if n and adaptive[off] == op and any(adaptive[off + 2 : off + 2 + 2 * n]):
            return f"the inline caches of {OPNAME[op]} at offset {off} hold instructions"
    return None
