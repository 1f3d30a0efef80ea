"""The symbolic frame: a code object's stack, locals and position during the trace.

Locals live in a dict keyed by name; cell and free variables hold a `CellV`
there (CPython 3.11+ keeps cells in the same "fast locals" array, and 3.13's
LOAD_FAST of a cell variable pushes the cell itself).  The block stack is not
modelled: exception handling reads the decoded exception table.

`snap` is the stack as it was before the current instruction; a graph break
at that instruction resumes from exactly that state.
"""

from __future__ import annotations

import os
import types

from ...analysis.bytecode import Bytecode
from ...analysis.decode import decode
from .values import NULL, Value

_DECODED: dict = {}

# the folder of bcfront's own Python files (`regions.hidden_frames` hides them from the user)
OWN_FILES = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def decoded(code: types.CodeType) -> tuple[Bytecode, dict[int, int]]:
    """Decoded bytecode and offset->index map of `code`, cached."""
    hit = _DECODED.get(code)
    if hit is None or hit[0].code is not code:
        bc = decode(code)
        hit = (bc, {ins.offset: i for i, ins in enumerate(bc.instructions)})
        if len(_DECODED) > 4096:
            _DECODED.clear()
        _DECODED[code] = hit
    return hit


class Frame:
    __slots__ = (
        "code",
        "bc",
        "instrs",
        "index",
        "ip",
        "stack",
        "locals",
        "globals",
        "builtins",
        "fn",
        "parent",
        "depth",
        "kw_names",
        "cur",
        "snap",
        "name",
        "generator",
        "self_value",
        "snap_kw",
        "exc_slots",
        "namespace",
    )

    def __init__(self, code, fn_globals, builtins_dict, fn=None, parent=None, locals_=None):
        self.code = code
        self.bc, self.index = decoded(code)
        self.instrs = self.bc.instructions
        self.ip = 0
        self.stack: list[Value] = []
        self.locals: dict[str, Value] = dict(locals_ or {})
        self.globals = fn_globals
        self.builtins = builtins_dict
        self.fn = fn  # the function value being run (for explain)
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.kw_names = None  # KW_NAMES (3.11/3.12) for the next CALL
        self.cur = None  # the instruction being executed
        self.snap: list[Value] = []
        self.snap_kw = None  # kw_names before the current instruction
        self.name = code.co_qualname if hasattr(code, "co_qualname") else code.co_name
        self.generator = None  # the GeneratorV this frame belongs to
        self.self_value = None  # first argument, for zero-argument super()
        # stack indices of the "previous exception" slots PUSH_EXC_INFO pushed and POP_EXCEPT
        # has not popped yet (outermost first): where the frame is inside except/finally
        # blocks, which a continuation must re-enter (see resume.make_resume)
        self.exc_slots: tuple[int, ...] = ()
        # a class body's namespace (STORE_NAME's target, name -> value), kept apart from the
        # locals: a name may be both a class attribute and a cell the methods close over
        self.namespace: dict[str, Value] | None = None

    # -- stack ------------------------------------------------------------------
    def push(self, v: Value) -> None:
        self.stack.append(v)

    def pop(self) -> Value:
        return self.stack.pop()

    def popn(self, n: int) -> list[Value]:
        if n == 0:
            return []
        out = self.stack[-n:]
        del self.stack[-n:]
        return out

    def peek(self, i: int = 1) -> Value:
        return self.stack[-i]

    def jump(self, offset: int) -> None:
        self.ip = self.index[offset]

    def next_instr(self):
        return self.instrs[self.ip] if self.ip < len(self.instrs) else None

    def __repr__(self) -> str:
        at = self.cur.offset if self.cur is not None else "-"
        return f"<Frame {self.name} @{at} stack={len(self.stack)}>"


def push_null_pair(frame: Frame, value: Value, null_first: bool) -> None:
    """Push a callable with its NULL in the order this CPython uses."""
    if null_first:
        frame.push(NULL)
        frame.push(value)
    else:
        frame.push(value)
        frame.push(NULL)


# -- what the interpreter reports about a position ------------------------------------------

# A continuation's code -> {its offset: the original function's offset}, filled by
# `regions.resume.make_resume`; read here so errors name the offset the user's code has.
ORIGINAL_OFFSETS: dict = {}


def original_offset(code, offset: int) -> int:
    m = ORIGINAL_OFFSETS.get(code)
    return m.get(offset, offset) if m else offset


def frame_entry(frame, ins) -> tuple | None:
    """The traceback entry CPython would add for `frame` at `ins`, or None where it adds none
    (a bare ``raise`` or RERAISE re-raising in place); `regions.tracebacks` rebuilds them."""
    if ins.opname == "RERAISE" or (ins.opname == "RAISE_VARARGS" and ins.arg == 0):
        return None
    if frame.code.co_filename.startswith(OWN_FILES):
        # a model of a C function, written in Python (`semantics/json_encoding.py`): natively
        # the C function adds no entry, and a cached raise then has no frame to hide
        return None
    lineno, end_lineno, col, end_col = ins.positions if ins.positions else (None,) * 4
    if not lineno:
        lineno, end_lineno, col, end_col = frame.code.co_firstlineno, None, None, None
    # a continuation's code keeps its function's name and file
    return (frame.code.co_filename, frame.code.co_name, (lineno, end_lineno, col, end_col))
