"""The stack phase's per-code-unit column (`_EffectTable.by_unit`, prefilled at
import for the opcodes whose rule ignores the arg) against `dis`.

Oracle: ``dis.stack_effect`` of the unit's opcode and arg on the fall-through side,
with the stack module's documented departures left out (3.11's PRECALL and CALL,
RETURN_GENERATOR), and the unit read as CPython lays it out in co_code.
"""

from __future__ import annotations

import dis
import sys

import pytest

from bcfront.analysis.stack_effects import _EffectTable

PY = sys.version_info[:2]
DEPARTS = {"RETURN_GENERATOR"} | ({"PRECALL", "CALL"} if PY == (3, 11) else set())


def _unit(op: int, arg: int) -> int:
    """The 16-bit word of co_code holding `op` and `arg`, as `Bytecode.units` keys it."""
    return int.from_bytes(bytes([op, arg]), sys.byteorder)


def _filled():
    table = _EffectTable(PY)  # fresh: only what the prefill put there
    for op in range(256):
        name = dis.opname[op]
        if name.startswith("<") or name in DEPARTS:
            continue
        for arg in (0, 1, 2, 7, 255):
            eff = table.by_unit[_unit(op, arg)]
            if eff is not None:
                yield op, arg, eff


def test_prefilled_columns_cover_the_constant_rules():
    # LOAD_FAST, STORE_FAST, POP_TOP and BINARY_OP are one Effect whatever the arg
    ops = {op for op, *_ in _filled()}
    assert {dis.opmap[n] for n in ("LOAD_FAST", "STORE_FAST", "POP_TOP", "BINARY_OP")} <= ops


@pytest.mark.parametrize("op,arg,eff", list(_filled()))
def test_unit_columns_match_dis(op, arg, eff):
    try:
        want = dis.stack_effect(op, arg if op >= dis.HAVE_ARGUMENT else None, jump=False)
    except ValueError:
        pytest.skip(f"dis has no stack effect for {dis.opname[op]}")
    assert eff.net == len(eff.fall) - eff.pops == want, (dis.opname[op], arg)
