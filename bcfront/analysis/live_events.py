"""What each instruction reads and writes of the local, cell and free variables.

The definition liveness and SSA share, in two forms: as names (`instruction_events`,
one rule per opcode in `_EVENTS`, which the reference passes read) and as (gen, kill)
bit masks by code unit (`MASKS`, `BY_UNIT`, `gen_kill`), which `liveness.Liveness`
folds.  Variable i is bit i of a Python int.

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
"""

from __future__ import annotations

from itertools import compress
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

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
    Masks: TypeAlias = tuple[int, int]  # (gen, kill)
    _T = TypeVar("_T")

INTROSPECTION = frozenset({"locals", "vars", "dir", "eval", "exec", "super"})


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
    return [("r", "*")] if ins.argval in INTROSPECTION else []


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


def powers(n: int) -> list[int]:
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
_PAIRS: dict[str | None, Callable[[int, int], Masks]] = {
    "LOAD_FAST_LOAD_FAST": lambda hi, lo: (hi | lo, 0),
    "STORE_FAST_STORE_FAST": lambda hi, lo: (0, hi | lo),
    "STORE_FAST_LOAD_FAST": lambda hi, lo: (lo & ~hi, hi),
}
# The `_EVENTS` whose masks depend on more than the code unit (the parameters, the
# free variables, the global's name): computed per instruction from the rules.
_PER_CODE = ("MAKE_CELL", "COPY_FREE_VARS", "LOAD_GLOBAL", "LOAD_NAME")


def _event_flags() -> tuple[bytes, bytes]:
    """opcode byte -> 1 if its masks come from `MASKS`, 2 if they depend on the code,
    0 if it touches no variable (for bytes.translate).  The second table leaves out
    the global loads: events only when the code names an introspection builtin."""
    every = bytes(0 if n not in _EVENTS else 2 if n in _PER_CODE else 1 for n in OPNAME)
    fast = bytes(0 if n in ("LOAD_GLOBAL", "LOAD_NAME") else f for n, f in zip(OPNAME, every))
    return every, fast


FLAGS, FLAGS_NO_GLOBALS = _event_flags()
SECOND = bytes(f == 2 for f in range(256))  # flag 2 -> 1, others -> 0


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


class _MaskTable(dict["UnitKey", "Masks"]):
    """Code unit -> its `_unit_masks`, filled on first use: a function's masks are then
    one C-level map over its units (`Liveness` checks that the code numbers its
    variables as `variables`)."""

    def __missing__(self, key: UnitKey) -> Masks:
        masks = _unit_masks(key)
        if len(self) < 100_000:
            self[key] = masks
        return masks


MASKS = _MaskTable()


def _masks_by_unit() -> tuple[Masks | None, ...]:
    """`_unit_masks` of every int code unit (a 16-bit word of co_code) whose opcode is
    a `_SHAPE` or `_PAIRS` one, None for every other: indexing picks a column faster
    than a dict, and ``filter(None, ...)`` keeps just the events.  A tuple of ints
    and None, which the garbage collector stops tracking (a list would be walked,
    all 65536 slots, by every full collection)."""
    out: list[Masks | None] = [None] * 65536
    for op, name in enumerate(OPNAME):
        if name in _SHAPE or name in _PAIRS:
            for arg in range(256):
                key = op << 8 | arg if BIG_ENDIAN else arg << 8 | op
                out[key] = _unit_masks(key)
    return tuple(out)


BY_UNIT = _masks_by_unit()


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


def numbered_alike(code: CodeType, variables: tuple[str, ...]) -> bool:
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


def pick(table: SupportsGetItem[Any, _T], keys: tuple[Any, ...]) -> tuple[_T, ...]:
    """``tuple(table[k] for k in keys)``, in one C call (itemgetter) from two keys on:
    a tuple `keys` is passed to it as is, and its tuple result is kept (no copies)."""
    if len(keys) > 1:
        return itemgetter(*keys)(table)  # type: ignore[no-any-return]  # (typeshed: Any)
    return tuple([table[k] for k in keys])


def fold(masks: Sequence[Masks]) -> tuple[int, int]:
    """(gen, kill) of a sequence of events' (gen, kill): kill is everything they write."""
    g = k = 0
    for gm, km in reversed(masks):
        g = gm | (g & ~km)
        k |= km
    return g, k


def fold_plain(units: list[UnitKey], flags: bytes) -> tuple[int, int] | tuple[None, None]:
    """`fold` of a plain code object's events (the units `flags` marks), in one loop
    over them: forward, a read counts unless an earlier event wrote the variable
    (the same masks as `fold`'s backward composition, without a list to reverse);
    (None, None) if a unit is not an int (EXTENDED_ARG)."""
    g = k = 0
    try:
        for u in compress(units, flags):
            gm, km = BY_UNIT[u]  # type: ignore[index, misc]  # (tuple key, None: TypeError)
            g |= gm & ~k
            k |= km
    except TypeError:
        return None, None
    return g, k
