"""This interpreter's opcode tables, for the decoder (`bcfront.analysis.decode`).

Per-opcode arrays indexed by the opcode byte, built once from `dis`: names,
inline cache counts, how `dis` turns the raw argument into ``argval`` (the
`K_*` kinds), the normalized operation ``op`` (see the version table in
`decode`), memoized stack effects, the per-code-unit summary `UNITS` that
the fast decoder maps whole columns through, and the ``argrepr`` rules.
Nothing here depends on a particular code object.

The ``argrepr`` rules take an `Instr` typed ``Any``: which of its fields hold what
(``arg`` an int, ``argval`` a name, a constant, a pair) depends on the opcode.
"""

from __future__ import annotations

import dis
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, cast

from .cpython import dis_table

# An ``argrepr`` rule: an `Instr` (see the module docstring) -> dis's argrepr
ArgRepr: TypeAlias = Callable[[Any], str]

PY = sys.version_info[:2]
SUPPORTED = ((3, 11), (3, 12), (3, 13))

UNCONDITIONAL = frozenset(
    {
        "JUMP_FORWARD",
        "JUMP_BACKWARD",
        "JUMP_BACKWARD_NO_INTERRUPT",
        "JUMP",
        "JUMP_NO_INTERRUPT",
    }
)
BRANCH_RENAME = {
    f"POP_JUMP_{d}_IF_{c}": f"POP_JUMP_IF_{c}"
    for d in ("FORWARD", "BACKWARD")
    for c in ("FALSE", "TRUE", "NONE", "NOT_NONE")
}
CONDITIONAL = frozenset(
    {
        "POP_JUMP_IF_FALSE",
        "POP_JUMP_IF_TRUE",
        "POP_JUMP_IF_NONE",
        "POP_JUMP_IF_NOT_NONE",
        "JUMP_IF_TRUE_OR_POP",
        "JUMP_IF_FALSE_OR_POP",
        "FOR_ITER",
        "SEND",
    }
)
# Instructions after which control never falls through to the next one.
TERMINATORS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})


# -- this interpreter's tables ----------------------------------------------
# Per-opcode arrays, indexed by the opcode byte.  KIND says how dis turns
# the raw arg into argval; the decoder dispatches on it.

(
    K_NOARG,
    K_INT,
    K_CONST,
    K_NAME,
    K_NAME1,
    K_NAME2,
    K_LOCAL,
    K_PAIR,
    K_JFWD,
    K_JBACK,
    K_CMP,
    K_FORMAT,
    K_CONVERT,
    K_UNKNOWN,
) = range(14)


def _host_tables() -> tuple[list[str | None], list[int], list[int]]:
    names: list[str | None] = [None] * 256  # None: not an opcode that can appear in co_code
    caches = [0] * 256
    for name, code in dis.opmap.items():
        if (
            code < 256
            and not name.startswith("INSTRUMENTED_")
            and name not in ("CACHE", "RESERVED", "ENTER_EXECUTOR")
        ):
            names[code] = name
    entries = dis_table("_inline_cache_entries")  # list before 3.13, dict keyed by name in 3.13
    for code in range(256):
        name = dis.opname[code]
        caches[code] = entries.get(name, 0) if isinstance(entries, dict) else entries[code]
    has_arg = getattr(dis, "hasarg", range(dis.HAVE_ARGUMENT, 256))
    kind = [K_INT if c in has_arg else K_NOARG for c in range(256)]
    groups = [
        (dis.hasconst, K_CONST),
        (dis.hasname, K_NAME),
        (dis.haslocal, K_LOCAL),
        (dis.hasfree, K_LOCAL),
        (dis.hascompare, K_CMP),
        (dis.hasjrel, K_JFWD),
    ]
    for ops, k in groups:
        for c in ops:
            if c < 256:
                kind[c] = k
    special = {
        "LOAD_GLOBAL": K_NAME1,
        "LOAD_SUPER_ATTR": K_NAME2,
        "FORMAT_VALUE": K_FORMAT,
        "CONVERT_VALUE": K_CONVERT,
        "LOAD_FAST_LOAD_FAST": K_PAIR,
        "STORE_FAST_LOAD_FAST": K_PAIR,
        "STORE_FAST_STORE_FAST": K_PAIR,
    }
    if PY >= (3, 12):
        special["LOAD_ATTR"] = K_NAME1
    else:
        special["KW_NAMES"] = K_UNKNOWN  # 3.11's dis resolves only LOAD_CONST's constant
    for name, k in special.items():
        if name in dis.opmap:
            kind[dis.opmap[name]] = k
    for c in dis.hasjrel:
        if c < 256 and "JUMP_BACKWARD" in dis.opname[c]:
            kind[c] = K_JBACK
    return names, caches, kind


OPNAME, CACHES, KIND = _host_tables()
# 3.13 lists the opcodes with an argument (WITH_EXCEPT_START, 44 == HAVE_ARGUMENT, has none).
HAS_ARG = [c in dis.hasarg if hasattr(dis, "hasarg") else c >= dis.HAVE_ARGUMENT for c in range(256)]
EXTENDED_ARG = dis.EXTENDED_ARG
RESUME = dis.opmap["RESUME"]
CMP_SHIFT = {(3, 11): 0, (3, 12): 4}.get(PY, 5)
_FORMAT_CONVERTERS = (None, str, repr, ascii)
_INT_OVERFLOW = 2**31
OP = [None if n is None else BRANCH_RENAME.get(n, "JUMP" if n in UNCONDITIONAL else n) for n in OPNAME]
_IS_JUMP = [k in (K_JFWD, K_JBACK) for k in KIND]
# 1 for the jump opcodes, by opcode byte (a translate table for `columns.positions_flagged`)
JUMP_FLAGS = bytes(_IS_JUMP)
_LOAD_ATTR = dis.opmap["LOAD_ATTR"] if PY >= (3, 12) else -1
_STACK_EFFECTS: dict[tuple[int, int | None], tuple[int, int | None]] = {}


def _stack_effects(op: int, arg: int | None) -> tuple[int, int | None]:
    """(fall-through, taken-jump) stack effects, memoized: most (op, arg) pairs repeat."""
    key = (op, arg)
    eff = _STACK_EFFECTS.get(key)
    if eff is None:
        fall = dis.stack_effect(op, arg, jump=False)  # ValueError on nonsense; decode reports it
        if OPNAME[op] == "RETURN_GENERATOR":
            fall = 1  # see the version table: the resumed frame holds the sent value
        eff = (fall, dis.stack_effect(op, arg, jump=True)) if _IS_JUMP[op] else (fall, None)
        if len(_STACK_EFFECTS) < 100_000:
            _STACK_EFFECTS[key] = eff
    return eff


# A `UNITS` value: (the shared tail of an `Instr`, kind, code units incl. caches, jump
# displacement from the instruction's offset or None)
UnitInfo: TypeAlias = tuple[tuple[Any, ...], int, int, "int | None"]
# a plain code unit, or (opcode, arg) (arg None for an opcode without one)
UnitKey: TypeAlias = int | tuple[int, int | None]


class _UnitInfo(dict[UnitKey, "UnitInfo | None"]):
    """(op byte, arg) -> what every instruction with them shares, computed once per process.

    Keys are the raw 16-bit code unit (``op | arg_byte << 8`` as the machine
    reads it) for plain instructions and ``(op, arg)`` for EXTENDED_ARG-prefixed
    ones.  Values are ``(shared, kind, code units incl. caches, jump
    displacement from the instruction's offset)`` where `shared` is the tail of
    an `Instr`: (opname, opcode, arg, op, stack effect, jump stack effect).
    EXTENDED_ARG maps to None.
    """

    def __missing__(self, key: UnitKey) -> UnitInfo | None:
        arg: int | None
        if isinstance(key, int):
            op, arg = (key >> 8, key & 255) if BIG_ENDIAN else (key & 255, key >> 8)
        else:
            op, arg = key
        name = OPNAME[op]
        if name is None:
            raise ValueError(f"opcode {op} does not exist")
        if not HAS_ARG[op]:
            arg = None
        info = None
        if op != EXTENDED_ARG:
            kind = KIND[op]
            units = 1 + CACHES[op]
            delta = None
            if kind == K_JFWD:
                delta = 2 * (units + cast(int, arg))  # (a jump has an arg)
            elif kind == K_JBACK:
                delta = 2 * (units - cast(int, arg))
            opn = "LOAD_METHOD" if op == _LOAD_ATTR and cast(int, arg) & 1 else OP[op]
            info = ((name, op, arg, opn) + _stack_effects(op, arg), kind, units, delta)
        if isinstance(key, int):  # at most 65536 of these: always kept
            self[key] = info
            if info is not None:
                SHARED[key] = info[0]
        elif len(self) < 200_000:  # (op, extended arg): bounded, in case of odd code
            self[key] = info
        return info


class _UnitArgs(dict[UnitKey, "int | None"]):
    """Plain code unit -> its arg as dis reports it (None for an opcode without one,
    and for EXTENDED_ARG, which the decoder folds into the next instruction), so that
    `decode` maps a whole function's units to their args in C.  A miss asks `UNITS`,
    which raises ValueError for an opcode that does not exist."""

    def __missing__(self, key: UnitKey) -> int | None:
        info = UNITS[key]
        arg = self[key] = None if info is None else info[0][2]
        return arg


UNITS = _UnitInfo()
SHARED: dict[int, tuple[Any, ...]] = {}  # plain code unit -> UNITS[unit][0] (the Instr tail)
ARGS = _UnitArgs()  # plain code unit -> arg
SIZE2 = bytes(2 + 2 * c for c in CACHES)  # bytes per instruction, by opcode byte
_new = tuple.__new__
EXTENDED_ARG_BYTE = bytes([EXTENDED_ARG])
BIG_ENDIAN = sys.byteorder == "big"
SIZE = bytes(1 + c for c in CACHES)  # code units per instruction, by opcode byte
MAX_SIZE = max(SIZE)


def _unit_args() -> list[int | None]:
    """`ARGS` as a list indexed by every 16-bit code unit, for whole columns mapped in C
    (`list.__getitem__` is a plain C method, cheaper than a dict lookup, and than a
    tuple's, which goes through a slot wrapper that packs its argument); units of opcodes that do not exist
    map to None too: `KIND_OF` flags them (K_BAD) and the caller asks `ARGS`, which raises."""
    takes = [HAS_ARG[op] and op != EXTENDED_ARG and OPNAME[op] is not None for op in range(256)]
    if BIG_ENDIAN:  # unit = op << 8 | arg
        return [a if takes[op] else None for op in range(256) for a in range(256)]
    return [a if t else None for a in range(256) for t in takes]  # unit = arg << 8 | op


ARG_OF_UNIT = _unit_args()
JUMP_OPS = re.compile(
    b"[" + b"".join(re.escape(bytes([c])) for c in range(256) if KIND[c] in (K_JFWD, K_JBACK)) + b"]"
)


def resolve_argval(
    kind: int, arg: Any, consts: tuple[Any, ...], names: tuple[str, ...], local: Callable[[int], str]
) -> Any:
    """argval of a non-jump instruction, as dis computes it (`arg`: an int, None for an
    opcode without one: the kind says which)."""
    if kind <= K_INT:
        return arg
    if kind == K_LOCAL:
        return local(arg)
    if kind == K_CONST:
        return consts[arg]
    if kind == K_NAME1:
        return names[arg >> 1]
    if kind == K_NAME:
        return names[arg]
    return _RARE_ARGVAL[kind](arg, names, local)


def _pair(arg: int, names: tuple[str, ...], local: Callable[[int], str]) -> tuple[str, str]:
    return local(arg >> 4), local(arg & 15)


_RARE_ARGVAL: dict[int, Callable[[int, tuple[str, ...], Callable[[int], str]], Any]] = {
    K_NAME2: lambda arg, names, local: names[arg >> 2],
    K_CMP: lambda arg, names, local: dis.cmp_op[arg >> CMP_SHIFT],
    K_FORMAT: lambda arg, names, local: (_FORMAT_CONVERTERS[arg & 3], bool(arg & 4)),
    K_CONVERT: lambda arg, names, local: _FORMAT_CONVERTERS[arg],
    K_UNKNOWN: lambda arg, names, local: dis.UNKNOWN,  # type: ignore[attr-defined]  # 3.11's dis has it, typeshed not
    K_PAIR: _pair,
}


K_BAD = 14  # `KIND_OF` only: an opcode this interpreter does not have (not 0, a cache)
# opcode byte -> kind, a translate table
KIND_OF = bytes(K_BAD if c and OPNAME[c] is None else KIND[c] for c in range(256))
LOW_NIBBLE = bytes(b & 15 for b in range(256))


# -- argrepr -------------------------------------------------------------------


def _null_repr(prefix_3_12: str) -> ArgRepr:
    """LOAD_GLOBAL/LOAD_ATTR: dis puts the NULL marker before the name until 3.13, after it since."""
    if PY >= (3, 13):
        return lambda i: f"{i.argval} + {prefix_3_12}" if i.arg & 1 else i.argval
    return lambda i: f"{prefix_3_12} + {i.argval}" if i.arg & 1 else i.argval


def _flags_repr(flag_names: Sequence[str]) -> ArgRepr:
    return lambda i: ", ".join(s for b, s in enumerate(flag_names) if i.arg & (1 << b))


def _nb_op_repr(i: Any) -> str:
    name: str = dis_table("_nb_ops")[i.arg][1]
    return name


def _cmp_repr(i: Any) -> str:
    return f"bool({i.argval})" if PY >= (3, 13) and i.arg & 16 else i.argval


def _format_repr(i: Any) -> str:
    conv = ("", "str", "repr", "ascii")[i.arg & 3]
    return f"{conv}, with format" if conv and i.arg & 4 else ("with format" if i.arg & 4 else conv)


KIND_REPR: dict[int, ArgRepr] = {
    K_NOARG: lambda i: "",
    K_INT: lambda i: "",
    K_CONST: lambda i: repr(i.argval),
    K_NAME: lambda i: i.argval,
    K_NAME1: lambda i: i.argval,
    K_NAME2: lambda i: i.argval,
    K_LOCAL: lambda i: i.argval,
    K_PAIR: lambda i: ", ".join(i.argval),
    K_JFWD: lambda i: f"to {i.argval}",
    K_JBACK: lambda i: f"to {i.argval}",
    K_CMP: _cmp_repr,
    K_FORMAT: _format_repr,
    K_CONVERT: lambda i: ("", "str", "repr", "ascii")[i.arg],
    K_UNKNOWN: lambda i: "",
}
ARGREPR: dict[str, ArgRepr] = {
    "LOAD_GLOBAL": _null_repr("NULL"),
    "LOAD_ATTR": _null_repr("NULL|self") if PY >= (3, 12) else KIND_REPR[K_NAME],
    "LOAD_SUPER_ATTR": _null_repr("NULL|self"),
    "BINARY_OP": _nb_op_repr,
    "MAKE_FUNCTION": _flags_repr(getattr(dis, "MAKE_FUNCTION_FLAGS", ())),
    "SET_FUNCTION_ATTRIBUTE": _flags_repr(getattr(dis, "FUNCTION_ATTR_FLAGS", ())),
    "CALL_INTRINSIC_1": lambda i: dis_table("_intrinsic_1_descs")[i.arg],
    "CALL_INTRINSIC_2": lambda i: dis_table("_intrinsic_2_descs")[i.arg],
}
