"""Opcode handler tables, keyed by `Instr.op` (the decode layer's normalized name).

Each family module exports ``HANDLERS: dict[str, handler]`` where a handler is
``handler(tx, frame, instr) -> None | signal``.  `UNSUPPORTED` lists, with a
reason, the opcodes that deliberately end in a graph break (async code, class
scopes, ``except*``, instrumentation and pseudo-instructions that never
appear in a code object).  Every opcode of `dis.opmap` on 3.11-3.13 is in
exactly one of the two (tests/frontend/test_opcodes.py enumerates them).
"""

from __future__ import annotations

from ....errors import UnsupportedError
from ....reasons import BreakReason
from . import build, calls, control, exceptions, load_store, operators

HANDLERS: dict = {}
for _mod in (load_store, calls, control, build, exceptions, operators):
    for _op, _fn in _mod.HANDLERS.items():
        assert _op not in HANDLERS, f"opcode {_op} handled twice"
        HANDLERS[_op] = _fn

_ASYNC = "async code (coroutines, async generators, async with/for) is not captured"
_CLASS = "annotation scopes (type parameters) are not captured"
_PSEUDO = "a pseudo-instruction or cache entry that never appears in a code object"
_INSTRUMENTED = "an instrumented opcode (sys.monitoring) that dis never reports"

UNSUPPORTED: dict[str, str] = {
    "GET_AWAITABLE": _ASYNC,
    "GET_AITER": _ASYNC,
    "GET_ANEXT": _ASYNC,
    "END_ASYNC_FOR": _ASYNC,
    "BEFORE_ASYNC_WITH": _ASYNC,
    "ASYNC_GEN_WRAP": _ASYNC,
    "LOAD_FROM_DICT_OR_GLOBALS": _CLASS,
    "IMPORT_STAR": "`from module import *`",
    "PRINT_EXPR": "interactive-mode expression printing",
    "CHECK_EG_MATCH": "exception groups (except*)",
    "PREP_RERAISE_STAR": "exception groups (except*)",
    "CLEANUP_THROW": "generator.throw() inside `yield from`",
    "CACHE": _PSEUDO,
    "EXTENDED_ARG": _PSEUDO,
    "RESERVED": _PSEUDO,
    "SETUP_FINALLY": _PSEUDO,
    "SETUP_CLEANUP": _PSEUDO,
    "SETUP_WITH": _PSEUDO,
    "POP_BLOCK": _PSEUDO,
    "LOAD_SUPER_METHOD": _PSEUDO,
    "LOAD_ZERO_SUPER_METHOD": _PSEUDO,
    "LOAD_ZERO_SUPER_ATTR": _PSEUDO,
    "INTERPRETER_EXIT": "the interpreter's internal exit instruction",
    "ENTER_EXECUTOR": "a JIT executor entry that dis never reports",
    "EXIT_INIT_CHECK": "an internal check of CPython's __init__ shim frames",
}


def unsupported_opcode(tx, frame, ins):
    why = UNSUPPORTED.get(ins.opname)
    if why is None and ins.opname.startswith("INSTRUMENTED_"):
        why = _INSTRUMENTED
    raise UnsupportedError(
        BreakReason.UNSUPPORTED_OPCODE, f"opcode {ins.opname} is not supported" + (f": {why}" if why else "")
    )
