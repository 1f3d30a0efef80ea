"""Version-neutral decoding of CPython 3.11–3.13 bytecode.

This is the only module that knows how CPython versions spell things
differently; everything above it (CFG, analyses, the symbolic interpreter)
reads `Instr.op` and the normalized fields.  Each `Instr` keeps `offset`,
`opname`, `opcode`, `arg` and `argval` exactly as `dis` reports them.

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
global load pushing NULL                LOAD_GLOBAL, arg & 1   same                   same
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
intrinsics                              dedicated opcodes      CALL_INTRINSIC_1/2     CALL_INTRINSIC_1/2
slicing                                 BUILD_SLICE+BINARY_    BINARY_SLICE,          same as 3.12
                                        SUBSCR                 STORE_SLICE
======================================  =====================  =====================  =====================

Jump targets follow `dis` (so block leaders agree with it); stack effects come
from `dis.stack_effect` and therefore agree with CPython's compiler, which
makes the 3.12/3.13 ``FOR_ITER``/``END_FOR`` modelling consistent.

EXTENDED_ARG prefixes are folded into the instruction they extend: a jump or
exception-table entry aimed at the prefix is redirected to the instruction
itself, whose `start_offset` remembers where the prefix began.  Inline cache
entries are skipped (`dis` already hides them).  Exception-table entries are
decoded from `co_exceptiontable` directly, with exclusive ends.
"""
from __future__ import annotations

import dis
import sys
import types
from dataclasses import dataclass

PY = sys.version_info[:2]
SUPPORTED = ((3, 11), (3, 12), (3, 13))

_UNCONDITIONAL = frozenset({
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT",
})
_BRANCH_RENAME = {
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}
_CONDITIONAL = frozenset({
    "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
    "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "FOR_ITER", "SEND",
})
# Instructions after which control never falls through to the next one.
_TERMINATORS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})


class BytecodeVersionError(ValueError):
    """A code object that was not compiled by the running CPython."""


@dataclass(frozen=True, slots=True)
class ExceptionEntry:
    """One `co_exceptiontable` row: instructions in [start, end) jump to target."""
    start: int
    end: int        # exclusive
    target: int
    depth: int      # stack depth to unwind to before pushing the exception
    lasti: bool     # whether the offset of the raising instruction is pushed too

    def covers(self, offset: int) -> bool:
        return self.start <= offset < self.end


@dataclass(frozen=True, slots=True)
class Instr:
    """One decoded instruction (EXTENDED_ARG folded, caches skipped)."""
    offset: int                 # as dis reports it
    start_offset: int           # first EXTENDED_ARG prefix, else == offset
    opname: str                 # as dis reports it
    opcode: int
    arg: int | None
    argval: object
    argrepr: str
    op: str                     # normalized meaning, see the module table
    jump_target: int | None     # offset control may jump to (dis's target)
    lineno: int | None
    end_lineno: int | None
    col: int | None
    end_col: int | None
    stack_effect: int           # on fall-through
    jump_stack_effect: int | None  # when the jump is taken
    next_offset: int            # offset of the following instruction (caches skipped)

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
        return not (self.is_jump or self.is_terminator)

    @property
    def push_null(self) -> bool:
        """LOAD_GLOBAL/LOAD_ATTR variants that also push NULL (or self)."""
        if self.opname == "LOAD_GLOBAL":
            return bool(self.arg & 1)
        return self.op == "LOAD_METHOD"

    def __repr__(self) -> str:
        arg = f" {self.argrepr}" if self.argrepr else ""
        return f"<{self.offset} {self.opname}{arg}>"


@dataclass(frozen=True, slots=True)
class Bytecode:
    """A decoded code object: instructions in offset order plus its exception table."""
    code: types.CodeType
    instructions: tuple[Instr, ...]
    exception_table: tuple[ExceptionEntry, ...]
    version: tuple[int, int]

    def at(self, offset: int) -> Instr:
        return self.instructions[self.index_of(offset)]

    def index_of(self, offset: int) -> int:
        idx = _offset_index(self)
        try:
            return idx[offset]
        except KeyError:
            raise KeyError(f"no instruction at offset {offset}") from None

    def handler_for(self, offset: int) -> ExceptionEntry | None:
        """The innermost exception-table entry covering `offset` (the one CPython uses)."""
        for e in self.exception_table:
            if e.covers(offset):
                return e
        return None


_INDEX_CACHE: dict[int, dict[int, int]] = {}


def _offset_index(bc: Bytecode) -> dict[int, int]:
    key = id(bc)
    idx = _INDEX_CACHE.get(key)
    if idx is None or len(idx) != len(bc.instructions):
        idx = {ins.offset: i for i, ins in enumerate(bc.instructions)}
        if len(_INDEX_CACHE) > 256:
            _INDEX_CACHE.clear()
        _INDEX_CACHE[key] = idx
    return idx


def code_of(obj) -> types.CodeType:
    """The code object behind a function, method, or code object; TypeError otherwise."""
    if isinstance(obj, types.CodeType):
        return obj
    seen = 0
    while seen < 16:
        seen += 1
        if isinstance(obj, (types.FunctionType, types.LambdaType)):
            return obj.__code__
        if isinstance(obj, types.MethodType):
            obj = obj.__func__
            continue
        if hasattr(obj, "__wrapped__") and not isinstance(obj, type):
            obj = obj.__wrapped__
            continue
        break
    kind = _describe(obj)
    raise TypeError(f"bcfront.analyze needs a Python function or code object, got {kind}")


def _describe(obj) -> str:
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return f"the built-in {getattr(obj, '__qualname__', obj)!s} (implemented in C, it has no bytecode)"
    if isinstance(obj, type):
        return f"the class {obj.__qualname__} (pass one of its methods instead)"
    if callable(obj):
        return f"a {type(obj).__name__} object with no Python bytecode ({obj!r:.60})"
    return f"a non-callable {type(obj).__name__} ({obj!r:.60})"


def _check_version(code: types.CodeType) -> None:
    # A code object built for another CPython (e.g. unmarshalled from a .pyc
    # of another version via code.replace tricks) cannot be decoded with this
    # interpreter's opcode table.  Such objects show up as invalid opcodes or
    # malformed tables; we detect what we can up front.
    if PY not in SUPPORTED:
        raise BytecodeVersionError(
            f"bcfront supports CPython 3.11–3.13; this is CPython {PY[0]}.{PY[1]}")
    raw = code.co_code
    if len(raw) % 2:
        raise BytecodeVersionError(
            f"{code.co_name}: bytecode of odd length; it was not compiled by CPython {PY[0]}.{PY[1]}")
    for i in range(0, len(raw), 2):
        if dis.opname[raw[i]].startswith("<"):
            guess = guess_version(code)
            other = f"CPython {guess}" if guess else "another CPython version"
            raise BytecodeVersionError(
                f"{code.co_name}: opcode {raw[i]} at offset {i} does not exist in CPython "
                f"{PY[0]}.{PY[1]}; the code object was compiled by {other}")


def guess_version(code: types.CodeType) -> str | None:
    """Best-effort guess, from the magic of its first opcode, of a foreign code object's version."""
    return None


def parse_exception_table(code: types.CodeType) -> tuple[ExceptionEntry, ...]:
    """Decode `co_exceptiontable` (varint-encoded, in code units) with exclusive ends."""
    data = code.co_exceptiontable
    pos = 0
    out = []

    def varint() -> int:
        nonlocal pos
        b = data[pos]
        pos += 1
        val = b & 63
        while b & 64:
            b = data[pos]
            pos += 1
            val = (val << 6) | (b & 63)
        return val

    while pos < len(data):
        start = varint() * 2
        length = varint() * 2
        target = varint() * 2
        dl = varint()
        out.append(ExceptionEntry(start, start + length, target, dl >> 1, bool(dl & 1)))
    return tuple(out)


def _normalize_op(opname: str, arg: int | None) -> str:
    if opname in _UNCONDITIONAL:
        return "JUMP"
    if opname in _BRANCH_RENAME:
        return _BRANCH_RENAME[opname]
    if opname == "LOAD_ATTR" and PY >= (3, 12) and arg is not None and arg & 1:
        return "LOAD_METHOD"
    return opname


def _jump_target(ins: dis.Instruction) -> int | None:
    if ins.opcode in _JUMP_OPCODES:
        return ins.argval if isinstance(ins.argval, int) else None
    return None


if hasattr(dis, "hasjump"):
    _JUMP_OPCODES = frozenset(dis.hasjump)
else:
    _JUMP_OPCODES = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _stack_effects(opcode: int, arg: int | None, is_jump: bool) -> tuple[int, int | None]:
    a = arg if opcode >= dis.HAVE_ARGUMENT else None
    try:
        fall = dis.stack_effect(opcode, a, jump=False)
    except ValueError:
        fall = 0
    if not is_jump:
        return fall, None
    try:
        return fall, dis.stack_effect(opcode, a, jump=True)
    except ValueError:
        return fall, fall


def decode(obj) -> Bytecode:
    """Decode a function or code object into a `Bytecode`."""
    code = code_of(obj)
    _check_version(code)
    raw = list(dis.get_instructions(code))
    # Fold EXTENDED_ARG: remember where each real instruction's prefix started.
    redirect: dict[int, int] = {}
    pending: list[int] = []
    kept: list[tuple[dis.Instruction, int]] = []
    for ins in raw:
        if ins.opname == "EXTENDED_ARG":
            pending.append(ins.offset)
            continue
        start = pending[0] if pending else ins.offset
        for p in pending:
            redirect[p] = ins.offset
        pending.clear()
        kept.append((ins, start))
    out: list[Instr] = []
    for i, (ins, start) in enumerate(kept):
        nxt = kept[i + 1][1] if i + 1 < len(kept) else len(code.co_code)
        target = _jump_target(ins)
        if target is not None:
            target = redirect.get(target, target)
        pos = ins.positions
        fall, jump = _stack_effects(ins.opcode, ins.arg, target is not None)
        out.append(Instr(
            offset=ins.offset, start_offset=start, opname=ins.opname, opcode=ins.opcode,
            arg=ins.arg, argval=ins.argval, argrepr=ins.argrepr,
            op=_normalize_op(ins.opname, ins.arg), jump_target=target,
            lineno=pos.lineno if pos else None, end_lineno=pos.end_lineno if pos else None,
            col=pos.col_offset if pos else None, end_col=pos.end_col_offset if pos else None,
            stack_effect=fall, jump_stack_effect=jump,
            next_offset=redirect.get(nxt, nxt),
        ))
    table = tuple(
        ExceptionEntry(redirect.get(e.start, e.start), e.end, redirect.get(e.target, e.target),
                       e.depth, e.lasti)
        for e in parse_exception_table(code))
    return Bytecode(code, tuple(out), table, PY)
