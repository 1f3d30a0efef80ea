"""What each instruction does to the operand stack: `Effect` and the per-opcode rules.

Stack slots are numbered from 0 at the bottom.  Every instruction is described
by an `Effect`: it pops `pops` slots (its inputs, numbered 0 = deepest popped,
``pops - 1`` = top of stack), reads the inputs listed in `uses`, and pushes a
tuple of outputs, each either one of the `news` values it defines (``k >= 0``)
or an input moved back unchanged (``~j`` = input ``j``).  A branch may push
different outputs on its two sides (`fall` and `jump`): 3.11's FOR_ITER pops
the iterator only when the loop ends.  So SWAP and COPY define nothing (they
move values), FOR_ITER keeps its iterator in place and defines the next item,
``LIST_APPEND i`` reads the list i slots below the item and leaves it where it
is.  `local` marks the instructions on fast locals (a load pushes the local's
value, not a new one), for the SSA builder, which renames locals and slots in
one pass over this column.

Counts come from the per-opcode rules below (checked against
``dis.stack_effect`` by the tests), with two deliberate departures from
CPython's compile-time accounting, each one closer to what the interpreter
does: 3.11's PRECALL moves nothing (its arguments stay on the stack until
CALL pops them, so PRECALL + CALL together match); RETURN_GENERATOR pushes
one value on 3.11/3.12 as on 3.13 (the value the first ``send()`` delivers,
popped by the next POP_TOP).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TypeAlias

from .bytecode import Bytecode, Instr
from .opcodes import BIG_ENDIAN, HAS_ARG, OPNAME, PY, UnitKey


@dataclass(frozen=True, slots=True)
class Effect:
    """What one instruction does to the operand stack (see the module docstring)."""

    pops: int
    fall: tuple[int, ...]  # outputs, bottom first, when execution falls through
    jump: tuple[int, ...]  # outputs when the jump is taken (== fall for non-branches)
    uses: tuple[int, ...]  # popped inputs the instruction reads (0 = deepest)
    news: int  # values it defines
    local: int = 0  # how it touches a fast local (`NO_LOCAL`, `LOCAL_LOAD`, ...)
    # derived, for the SSA builder's inner loop:
    plain: bool = field(init=False)  # reads all inputs, pushes new values 0..news-1
    simple: bool = field(init=False)  # plain and touches no fast local
    moves: bool = field(init=False)  # not plain and touches no fast local
    reads_all: bool = field(init=False)  # uses == all inputs, in order
    new_pos: tuple[int, ...] = field(init=False)  # output position of each new value
    moved: tuple[int, ...] = field(init=False)  # fall outputs whose slot content changes
    net: int = field(init=False)  # depth change on the fall-through
    # the fall outputs picked from the inputs followed by the new values (``pops + k``
    # for new value k, j for input j), in C: ``fall_pick(inputs + news)``
    fall_pick: object = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        fall = self.fall
        plain = fall == tuple(range(self.news)) and self.jump == fall and self.uses == tuple(range(self.pops))
        pos = tuple(
            fall.index(k) if k in fall else self.jump.index(k) if k in self.jump else 0
            for k in range(self.news)
        )
        moved = tuple(j for j, o in enumerate(fall) if o >= 0 or ~o != j)
        object.__setattr__(self, "plain", plain)
        object.__setattr__(self, "simple", plain and not self.local)
        object.__setattr__(self, "moves", not plain and not self.local)
        object.__setattr__(self, "reads_all", self.uses == tuple(range(self.pops)))
        object.__setattr__(self, "new_pos", pos)
        object.__setattr__(self, "moved", moved)
        object.__setattr__(self, "net", len(fall) - self.pops)
        picks = [self.pops + o if o >= 0 else ~o for o in fall]
        # (itemgetter returns a tuple for two or more keys; a slice keeps one or none a list)
        object.__setattr__(
            self,
            "fall_pick",
            itemgetter(*picks)
            if len(picks) > 1
            else itemgetter(slice(picks[0], picks[0] + 1) if picks else slice(0)),
        )

    def outs(self, edge_kind: str) -> tuple[int, ...]:
        return self.jump if edge_kind in ("jump", "branch") else self.fall


def _fx(pops: int, pushes: int, local: int = 0) -> Effect:
    """Pops `pops` inputs and reads them all; pushes `pushes` new values."""
    new = tuple(range(pushes))
    return Effect(pops, new, new, tuple(range(pops)), pushes, local)


def _keep(pops: int, news: int) -> Effect:
    """Reads its `pops` inputs, leaves them in place and pushes `news` new values above."""
    outs = tuple(~j for j in range(pops)) + tuple(range(news))
    return Effect(pops, outs, outs, tuple(range(pops)), news)


def _swap(n: int) -> Effect:
    outs = (~(n - 1),) + tuple(~j for j in range(1, n - 1)) + (~0,)
    return Effect(n, outs, outs, (), 0)


def _copy(n: int) -> Effect:
    outs = tuple(~j for j in range(n)) + (~0,)
    return Effect(n, outs, outs, (), 0)


def _append(i: int) -> Effect:
    """LIST_APPEND/SET_ADD/LIST_EXTEND/...(i): pop the item, read the container i down."""
    outs = tuple(~j for j in range(i))
    return Effect(i + 1, outs, outs, (0, i), 0)


def _map_add(i: int) -> Effect:
    outs = tuple(~j for j in range(i))
    return Effect(i + 2, outs, outs, (0, i, i + 1), 0)


def _make_function_311(flags: int) -> Effect:
    return _fx(1 + bin(flags & 0xF).count("1"), 1)


def _format_value(flags: int) -> Effect:
    return _fx(1 + ((flags & 4) == 4), 1)


def _unpack_ex(arg: int) -> Effect:
    return _fx(1, 1 + (arg & 0xFF) + (arg >> 8))


def _branch(pops: int, fall: tuple[int, ...], jump: tuple[int, ...]) -> Effect:
    """A branch that reads its inputs and pushes different outputs on its two sides."""
    return Effect(
        pops, fall, jump, tuple(range(pops)), max((o + 1 for o in fall + jump if o >= 0), default=0)
    )


# `Effect.local`: the SSA builder renames fast locals and stack slots together, and its
# inner loop tells the instructions on fast locals apart by this field of the column it
# walks anyway.  A load pushes the local's value (no new one), a store pops into it.
NO_LOCAL, LOCAL_LOAD, LOCAL_STORE, LOCAL_OTHER = range(4)
LOAD_LOCAL = _fx(0, 1, LOCAL_LOAD)  # LOAD_FAST, LOAD_FAST_CHECK
STORE_LOCAL = _fx(1, 0, LOCAL_STORE)  # STORE_FAST
LOAD_LOCAL_PAIR = _fx(0, 2, LOCAL_OTHER)  # 3.13's LOAD_FAST_LOAD_FAST (arg: two nibbles)
STORE_LOCAL_PAIR = _fx(2, 0, LOCAL_OTHER)  # 3.13's STORE_FAST_STORE_FAST (likewise)
WRAP_CELL = _fx(0, 0, LOCAL_OTHER)  # MAKE_CELL

_ZERO = _fx(0, 0)
_PUSH = _fx(0, 1)
_POP = _fx(1, 0)
_UNARY = _fx(1, 1)
_BINARY = _fx(2, 1)

# A rule is an Effect or a function of the instruction's arg returning one.
Rule: TypeAlias = "Effect | Callable[[int], Effect]"
_COMMON: dict[str, Rule] = {
    **dict.fromkeys(
        [
            "NOP",
            "RESUME",
            "CACHE",
            "EXTENDED_ARG",
            "COPY_FREE_VARS",
            "DELETE_DEREF",
            "DELETE_GLOBAL",
            "DELETE_NAME",
            "SETUP_ANNOTATIONS",
            "KW_NAMES",
            "JUMP_FORWARD",
            "JUMP_BACKWARD",
            "JUMP_BACKWARD_NO_INTERRUPT",
            "RETURN_CONST",
            "ENTER_EXECUTOR",
            "RESERVED",
            "PRECALL",
        ],
        _ZERO,
    ),
    **dict.fromkeys(
        [
            "LOAD_CONST",
            "LOAD_DEREF",
            "LOAD_CLOSURE",
            "LOAD_CLASSDEREF",
            "LOAD_NAME",
            "LOAD_BUILD_CLASS",
            "LOAD_ASSERTION_ERROR",
            "LOAD_LOCALS",
            "PUSH_NULL",
            "RETURN_GENERATOR",
        ],
        _PUSH,
    ),
    **dict.fromkeys(
        [
            "STORE_DEREF",
            "STORE_GLOBAL",
            "STORE_NAME",
            "POP_TOP",
            "POP_EXCEPT",
            "RETURN_VALUE",
            "DELETE_ATTR",
            "IMPORT_STAR",
            "PRINT_EXPR",
            "EXIT_INIT_CHECK",
            "INTERPRETER_EXIT",
        ],
        _POP,
    ),
    **dict.fromkeys(
        [
            "UNARY_NEGATIVE",
            "UNARY_POSITIVE",
            "UNARY_NOT",
            "UNARY_INVERT",
            "GET_ITER",
            "GET_YIELD_FROM_ITER",
            "GET_AITER",
            "GET_AWAITABLE",
            "TO_BOOL",
            "CALL_INTRINSIC_1",
            "FORMAT_SIMPLE",
            "CONVERT_VALUE",
            "LIST_TO_TUPLE",
            "ASYNC_GEN_WRAP",
            "YIELD_VALUE",
            "LOAD_FROM_DICT_OR_DEREF",
            "LOAD_FROM_DICT_OR_GLOBALS",
        ],
        _UNARY,
    ),
    **dict.fromkeys(
        [
            "BINARY_OP",
            "BINARY_SUBSCR",
            "COMPARE_OP",
            "IS_OP",
            "CONTAINS_OP",
            "CALL_INTRINSIC_2",
            "IMPORT_NAME",
            "FORMAT_WITH_SPEC",
            "PREP_RERAISE_STAR",
        ],
        _BINARY,
    ),
    **dict.fromkeys(
        [
            "POP_JUMP_IF_FALSE",
            "POP_JUMP_IF_TRUE",
            "POP_JUMP_IF_NONE",
            "POP_JUMP_IF_NOT_NONE",
            "POP_JUMP_FORWARD_IF_FALSE",
            "POP_JUMP_FORWARD_IF_TRUE",
            "POP_JUMP_FORWARD_IF_NONE",
            "POP_JUMP_FORWARD_IF_NOT_NONE",
            "POP_JUMP_BACKWARD_IF_FALSE",
            "POP_JUMP_BACKWARD_IF_TRUE",
            "POP_JUMP_BACKWARD_IF_NONE",
            "POP_JUMP_BACKWARD_IF_NOT_NONE",
        ],
        _POP,
    ),
    "LOAD_FAST": LOAD_LOCAL,
    "LOAD_FAST_CHECK": LOAD_LOCAL,
    "STORE_FAST": STORE_LOCAL,
    "LOAD_FAST_AND_CLEAR": _fx(0, 1, LOCAL_OTHER),
    "DELETE_FAST": _fx(0, 0, LOCAL_OTHER),
    "MAKE_CELL": WRAP_CELL,
    "LOAD_FAST_LOAD_FAST": LOAD_LOCAL_PAIR,
    "STORE_FAST_LOAD_FAST": _fx(1, 1, LOCAL_OTHER),
    "STORE_FAST_STORE_FAST": STORE_LOCAL_PAIR,
    "STORE_ATTR": _fx(2, 0),
    "DELETE_SUBSCR": _fx(2, 0),
    "END_ASYNC_FOR": _fx(2, 0),
    "STORE_SUBSCR": _fx(3, 0),
    "STORE_SLICE": _fx(4, 0),
    "BINARY_SLICE": _fx(3, 1),
    "MATCH_CLASS": _fx(3, 1),
    "CLEANUP_THROW": _fx(3, 2),
    "BEFORE_WITH": _fx(1, 2),
    "BEFORE_ASYNC_WITH": _fx(1, 2),
    "CHECK_EG_MATCH": _fx(2, 2),
    "LOAD_METHOD": _fx(1, 2),
    "GET_LEN": _keep(1, 1),
    "MATCH_MAPPING": _keep(1, 1),
    "MATCH_SEQUENCE": _keep(1, 1),
    "GET_ANEXT": _keep(1, 1),
    "IMPORT_FROM": _keep(1, 1),
    "MATCH_KEYS": _keep(2, 1),
    "CHECK_EXC_MATCH": Effect(2, (~0, 0), (~0, 0), (0, 1), 1),
    "PUSH_EXC_INFO": Effect(1, (0, ~0), (0, ~0), (0,), 1),
    "WITH_EXCEPT_START": _keep(4, 1),
    "END_SEND": Effect(2, (~1,), (~1,), (0, 1), 0),
    "SET_FUNCTION_ATTRIBUTE": Effect(2, (~1,), (~1,), (0, 1), 0),
    "LOAD_GLOBAL": lambda a: _fx(0, 1 + (a & 1)),
    "LOAD_SUPER_ATTR": lambda a: _fx(3, 1 + (a & 1)),
    "COPY": _copy,
    "SWAP": _swap,
    "LIST_APPEND": _append,
    "SET_ADD": _append,
    "LIST_EXTEND": _append,
    "SET_UPDATE": _append,
    "DICT_UPDATE": _append,
    "DICT_MERGE": _append,
    "MAP_ADD": _map_add,
    "BUILD_TUPLE": lambda a: _fx(a, 1),
    "BUILD_LIST": lambda a: _fx(a, 1),
    "BUILD_SET": lambda a: _fx(a, 1),
    "BUILD_STRING": lambda a: _fx(a, 1),
    "BUILD_SLICE": lambda a: _fx(a, 1),
    "BUILD_MAP": lambda a: _fx(2 * a, 1),
    "BUILD_CONST_KEY_MAP": lambda a: _fx(a + 1, 1),
    "UNPACK_SEQUENCE": lambda a: _fx(1, a),
    "UNPACK_EX": _unpack_ex,
    "CALL": lambda a: _fx(a + 2, 1),
    "CALL_KW": lambda a: _fx(a + 3, 1),
    "CALL_FUNCTION_EX": lambda a: _fx(3 + (a & 1), 1),
    "RAISE_VARARGS": lambda a: _fx(a, 0),
    "RERAISE": lambda a: Effect(
        1 + a, tuple(~j for j in range(a)), tuple(~j for j in range(a)), tuple(range(1 + a)), 0
    ),
    "FORMAT_VALUE": _format_value,
    "MAKE_FUNCTION": _make_function_311,
    # 3.12+: FOR_ITER keeps the iterator on both sides; the exhausted side pushes a
    # dummy that END_FOR pops (CPython's compile-time model, see decode).
    "FOR_ITER": _keep(1, 1),
    "SEND": Effect(2, (~0, 0), (~0, 0), (0, 1), 1),
    "END_FOR": _fx(2, 0),
}

_BY_VERSION: dict[tuple[int, int], dict[str, Rule]] = {
    (3, 11): {
        **_COMMON,
        "LOAD_ATTR": _UNARY,
        # The exhausted iterator is popped on the jump; SEND's jump leaves only the result.
        "FOR_ITER": _branch(1, (~0, 0), ()),
        "SEND": Effect(2, (~0, 0), (0,), (0, 1), 1),
        "JUMP_IF_TRUE_OR_POP": _branch(1, (), (~0,)),
        "JUMP_IF_FALSE_OR_POP": _branch(1, (), (~0,)),
    },
    (3, 12): {
        **_COMMON,
        "LOAD_ATTR": lambda a: _fx(1, 1 + (a & 1)),
    },
    (3, 13): {
        **_COMMON,
        "LOAD_ATTR": lambda a: _fx(1, 1 + (a & 1)),
        "END_FOR": _POP,
        "MAKE_FUNCTION": _UNARY,
    },
}


class _EffectTable(dict[UnitKey, "Effect | None"]):
    """(opcode, arg) -> Effect for one CPython version, filled on first use.  A key
    may also be a raw code unit (`Bytecode.units`: an int, for an instruction
    without EXTENDED_ARG), which hashes faster than a pair."""

    def __init__(self, version: tuple[int, int]) -> None:
        super().__init__()
        self.rules = _BY_VERSION[version]
        self.unruled: set[int] = set()  # opcodes without a rule (none known)
        # the int keys again, as a list indexed by the code unit (None until met):
        # indexing a list is the cheapest lookup there is
        self.by_unit: list[Effect | None] = [None] * (65536 if version == PY else 0)
        if self.by_unit:
            self._prefill()

    def _prefill(self) -> None:
        """`by_unit`'s entries for every opcode whose rule is one Effect whatever the arg
        (one slice assignment each: the units of an opcode are 256 apart, or adjacent)."""
        for op, name in enumerate(OPNAME):
            eff = self.rules.get(name)  # type: ignore[arg-type]  # (None: no opcode, no rule)
            if eff.__class__ is Effect:
                keys = slice(op << 8, op + 1 << 8) if BIG_ENDIAN else slice(op, 65536, 256)
                self.by_unit[keys] = [eff] * 256

    def __missing__(self, key: UnitKey) -> Effect | None:
        arg: int | None
        if key.__class__ is int:
            op, arg = (key >> 8, key & 255) if BIG_ENDIAN else (key & 255, key >> 8)
            if not HAS_ARG[op]:
                arg = None
        else:
            op, arg = key  # type: ignore[misc]  # (opcode, arg), not an int
        name = OPNAME[op]
        rule = self.rules.get(name)  # type: ignore[arg-type]  # (None: no opcode, no rule)
        if rule is None:
            eff = None  # no rule: the caller falls back on the instruction
            self.unruled.add(op)
        else:
            eff = rule if rule.__class__ is Effect else rule(arg or 0)  # type: ignore[operator]  # a function
        if len(self) < 100_000:
            self[key] = eff
            if key.__class__ is int and eff is not None and self.by_unit:
                self.by_unit[key] = eff
        return eff

    def column(self, bc: Bytecode) -> list[Effect]:
        """The effects of `bc`'s instructions (filling `by_unit` in)."""
        effects = list(map(self.__getitem__, bc.units))
        if self.unruled and not self.unruled.isdisjoint(bc.opcodes):
            effects = [e if e is not None else _fallback(ins) for e, ins in zip(effects, bc.instructions)]
        return effects  # type: ignore[return-value]  # (None only for the unruled, replaced above)


_TABLES: dict[tuple[int, int], _EffectTable] = {v: _EffectTable(v) for v in _BY_VERSION}
# (None only on a CPython that `decode` refuses)
PY_TABLE: _EffectTable = _TABLES.get(PY)  # type: ignore[assignment]
BY_UNIT = PY_TABLE.by_unit if PY_TABLE is not None else []


def has_rule(opname: str, version: tuple[int, int]) -> bool:
    return opname in _BY_VERSION[version]


def effect_of(ins: Instr, version: tuple[int, int]) -> Effect:
    """The `Effect` of `ins` under CPython `version` (memoized per opcode and arg)."""
    rule = _BY_VERSION[version].get(ins.opname)
    if rule is None:
        return _fallback(ins)
    if rule.__class__ is Effect:
        return rule
    # (a function of the arg here; the table's entry for a ruled opcode is an Effect)
    return _TABLES[version][ins.opcode, ins.arg] if version == PY else rule(ins.arg or 0)  # type: ignore[return-value,operator]


def _fallback(ins: Instr) -> Effect:
    # An opcode without a rule (none in 3.11-3.13 as far as the tests know): trust
    # the net effect and assume it reads what it consumes and defines what it adds.
    fall = ins.stack_effect
    jump = fall if ins.jump_stack_effect is None else ins.jump_stack_effect
    pops = max(0, -min(fall, jump))
    return Effect(
        pops,
        tuple(range(pops + fall)),
        tuple(range(pops + jump)),
        tuple(range(pops)),
        max(pops + fall, pops + jump),
    )
