"""Fused check ops: a peephole pass over a check program (`check_program`).

Most of a cached call's checks are a read and a test of it -- ``type(x) is int`` (PARAM,
ASSERT_TYPE), ``___dict['heapq'] is ___module`` (CONST, ITEM, ASSERT_IS) -- and in
`_cchecks.c`'s loop each op costs a dispatch, and a value passed between two ops a push, a
pop and a reference count.  `fuse` replaces each such run of ops by one op that does the
same operations in the same order (the same reads, caches, comparisons and errors) without
the stack between them: `FUSED` lists the runs.  A run is fused only where no jump lands
inside it and its arguments fit the op's fields (`FIELD_BITS` each, packed into the one
argument; `_cchecks.c`'s FIELD_A/B/C read them back).

The unfused program is the reference: `check_program.FUSE_OPS = False` makes it, and
tests/frontend/test_check_fusion.py runs both on the same random checks against Python.
"""

from __future__ import annotations

import sys

FIELD_BITS = 20
_FIELD_LIMIT = 1 << FIELD_BITS
# a fused op's fields must fit the C argument (a long long): three fields need 60 bits
_ROOM = sys.maxsize >= (1 << 62)

# a run of ops -> the op doing all of them (its fields: the run's arguments, in order)
FUSED: dict[tuple[str, ...], str] = {
    # ``type(x) is int and x == 4``: one parameter's type, then its value
    ("PARAM", "ASSERT_TYPE", "PARAM", "ASSERT_EQ"): "PARAM_TYPE_EQ",
    ("CONST", "ITEM", "ASSERT_IS"): "CONST_ITEM_IS",
    ("CONST", "MODULE_ATTR", "ASSERT_IS"): "CONST_MODULE_ATTR_IS",  # ``___module.f is ___f``
    ("CONST", "ITEM", "ASSERT_TYPE"): "CONST_ITEM_TYPE",
    ("CONST", "ITEM", "ASSERT_EQ"): "CONST_ITEM_EQ",
    ("LOCAL", "ITEM", "ASSERT_IS"): "LOCAL_ITEM_IS",
    ("LOCAL", "ITEM", "ASSERT_TYPE"): "LOCAL_ITEM_TYPE",
    ("LOCAL", "ITEM", "ASSERT_EQ"): "LOCAL_ITEM_EQ",
    ("PARAM", "ASSERT_TYPE"): "PARAM_TYPE",
    ("PARAM", "ASSERT_IS"): "PARAM_IS",
    ("PARAM", "ASSERT_EQ"): "PARAM_EQ",
    ("PARAM", "ASSERT_LEN"): "PARAM_LEN",
    ("ITEM", "ASSERT_TYPE"): "ITEM_TYPE",
    ("ITEM", "ASSERT_IS"): "ITEM_IS",
    ("ITEM", "ASSERT_EQ"): "ITEM_EQ",
    ("MODULE_ATTR", "ASSERT_IS"): "MODULE_ATTR_IS",
    ("CONST", "ITEM"): "CONST_ITEM",
    ("LOCAL", "ITEM"): "LOCAL_ITEM",
    ("CONST", "ASSERT_NOT_IN"): "CONST_NOT_IN",
    ("CONST", "ATTR"): "CONST_ATTR",
    ("PARAM", "ITEM"): "PARAM_ITEM",
    ("DUP", "STORE"): "KEEP",  # a read kept for the checks after (`check_shortcuts.REUSE_READS`)
    ("LOCAL", "ASSERT_TYPE"): "LOCAL_TYPE",
    ("LOCAL", "ASSERT_LEN"): "LOCAL_LEN",
    ("PARAM", "ASSERT_ITEMS"): "PARAM_ITEMS",  # a list argument's items by value
    ("PARAM", "ASSERT_ITEMS_TYPE"): "PARAM_ITEMS_TYPE",
    # a ``*args`` item's type, then its value; its count (a C function's Python root)
    ("STAR_ITEM", "ASSERT_TYPE", "STAR_ITEM", "ASSERT_EQ"): "STAR_ITEM_TYPE_EQ",
    ("STAR_LEN", "ASSERT_EQ"): "STAR_LEN_EQ",
    ("STAR_ITEM", "ASSERT_TYPE"): "STAR_ITEM_TYPE",
    ("STAR_ITEM", "ASSERT_IS"): "STAR_ITEM_IS",
    ("STAR_ITEM", "ASSERT_EQ"): "STAR_ITEM_EQ",
}
# a fused op not every argument of whose run is a field: (two positions whose arguments must
# be equal -- one position twice where none must --, the positions that are its fields)
REPEATS: dict[str, tuple[tuple[int, int], tuple[int, ...]]] = {
    "PARAM_TYPE_EQ": ((0, 2), (0, 1, 3)),
    "STAR_ITEM_TYPE_EQ": ((0, 2), (0, 1, 3)),
    "KEEP": ((0, 0), (1,)),  # (DUP's argument is none)
}
_LONGEST = max(map(len, FUSED))
# how many fields each fused op's argument holds
FIELDS = {name: len(REPEATS[name][1]) if name in REPEATS else len(run) for run, name in FUSED.items()}
JUMPS = frozenset(
    {"JUMP", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE"}
)
# a jump whose target is one field of its argument: (how many fields, which one)
TARGET_FIELDS = {"DICTS_SAME": (2, 1)}


def target(op: str, arg: int) -> int | None:
    """Where the op `op` with argument `arg` may jump, or None: it does not."""
    if op in JUMPS:
        return arg
    if op in TARGET_FIELDS:
        n, k = TARGET_FIELDS[op]
        return unpack(arg, n)[k]
    return None


def retarget(op: str, arg: int, to: int) -> int:
    """The argument `arg` of the jump `op` pointed at `to`."""
    if op in TARGET_FIELDS:
        n, k = TARGET_FIELDS[op]
        fields = unpack(arg, n)
        fields[k] = to
        return pack(fields)
    return to


def pack(fields) -> int:
    """One argument holding `fields` (each < 2**FIELD_BITS), the first in the low bits."""
    arg = 0
    for i, f in enumerate(fields):
        arg |= f << (i * FIELD_BITS)
    return arg


def unpack(arg: int, n: int) -> list[int]:
    """The `n` fields `pack` put in `arg`."""
    return [(arg >> (i * FIELD_BITS)) & (_FIELD_LIMIT - 1) for i in range(n)]


def fuse(code: list[list[int]], ops: tuple[str, ...]) -> list[list[int]]:
    """`code` ((op, arg) pairs, op numbered as in `ops`) with each run in `FUSED` made one
    op, longest runs first, left to right; jumps re-pointed to where their ops went."""
    if not _ROOM:
        return code
    number = {name: i for i, name in enumerate(ops)}
    names = [ops[op] for op, _ in code]
    landed = {target(name, arg) for (_, arg), name in zip(code, names)} - {None}
    out: list[list[int]] = []
    moved: dict[int, int] = {}  # old index -> new index (of the op its run became)
    i = 0
    while i < len(code):
        for width in range(min(_LONGEST, len(code) - i), 1, -1):
            fused = FUSED.get(tuple(names[i : i + width]))
            args = [arg for _, arg in code[i : i + width]]
            if fused in REPEATS:
                (a, b), fields = REPEATS[fused]
                args = [args[k] for k in fields] if args[a] == args[b] else [-1]
            if (
                fused is not None
                and not any(j in landed for j in range(i + 1, i + width))
                and all(0 <= a < _FIELD_LIMIT for a in args)
            ):
                for j in range(i, i + width):
                    moved[j] = len(out)
                out.append([number[fused], pack(args)])
                i += width
                break
        else:
            moved[i] = len(out)
            out.append(list(code[i]))
            i += 1
    for pair in out:
        to = target(ops[pair[0]], pair[1])
        if to is not None:
            pair[1] = retarget(ops[pair[0]], pair[1], moved[to])
    return out
