"""Every opcode of this CPython is either handled or ends in a graph break naming it.

Oracle: `dis.opmap` of the running interpreter (3.11, 3.12 or 3.13).
"""

from __future__ import annotations

import dis
import importlib

import pytest

import bcfront
from bcfront.errors import UnsupportedError
from bcfront.frontend.interp.handlers import HANDLERS, UNSUPPORTED, unsupported_opcode

decode = importlib.import_module("bcfront.analysis.decode")
opcodes = importlib.import_module("bcfront.analysis.opcodes")


def _ops(name):
    """The normalized ops (`Instr.op`) the decode layer gives this opcode name."""
    op = opcodes.BRANCH_RENAME.get(name, "JUMP" if name in opcodes.UNCONDITIONAL else name)
    if name == "LOAD_ATTR" and decode.PY >= (3, 12):
        return {op, "LOAD_METHOD"}
    return {op}


@pytest.mark.parametrize("name", sorted(dis.opmap))
def test_opcode_is_handled_or_breaks_with_its_name(name):
    handled = all(op in HANDLERS for op in _ops(name))
    if handled:
        assert name not in UNSUPPORTED, f"{name} is both handled and listed unsupported"
        return
    assert name in UNSUPPORTED or name.startswith("INSTRUMENTED_"), f"{name}: no handler, no reason"
    ins = type("I", (), {"opname": name, "op": name, "offset": 0})()
    with pytest.raises(UnsupportedError) as info:
        unsupported_opcode(None, None, ins)
    assert info.value.reason == "unsupported-opcode"
    assert name in info.value.message


def test_coverage_counts():
    names = set(dis.opmap)
    handled = {n for n in names if all(op in HANDLERS for op in _ops(n))}
    # Everything a compiler emits for ordinary functions is handled; the rest is async,
    # class bodies, except*, pseudo and instrumented opcodes.
    for must in (
        "LOAD_FAST",
        "CALL",
        "BINARY_OP",
        "FOR_ITER",
        "RAISE_VARARGS",
        "BEFORE_WITH",
        "MATCH_CLASS",
        "YIELD_VALUE",
        "MAKE_FUNCTION",
        "UNPACK_EX",
        "COMPARE_OP",
    ):
        assert must in handled
    assert len(handled) + len([n for n in names - handled]) == len(names)


def test_unsupported_opcode_in_a_real_function_is_a_break_naming_it(lenient):
    def except_star(x):
        try:
            raise ExceptionGroup("g", [ValueError(1)])
        except* ValueError:
            x += 1
        return x

    cf = bcfront.capture(except_star)
    assert cf(3) == 4
    breaks = [b for e in cf.entries for b in e.breaks]
    assert breaks and "CHECK_EG_MATCH" in breaks[0].message
    assert breaks[0].reason == "unsupported-opcode"
