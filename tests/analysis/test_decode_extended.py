"""The EXTENDED_ARG column path of `decode` (big functions), against dis and co_code."""

from __future__ import annotations

import dis
import sys

import pytest
from corpus import CORPUS, stdlib_code_objects

from bcfront.analysis.decode import BytecodeVersionError, decode

HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"
_LITTLE = sys.byteorder == "little"


def _dis_rows(code):
    """(offset, opcode, arg, prefixed) of each instruction as dis reports it, with its
    EXTENDED_ARG prefixes folded (dis lists them as rows of their own)."""
    rows, prefixed = [], False
    for r in dis.get_instructions(code):
        if r.opname == "EXTENDED_ARG":
            prefixed = True
            continue
        rows.append((r.offset, r.opcode, r.arg, prefixed))
        prefixed = False
    return rows


def _word(raw: bytes, offset: int) -> int:
    """The 16-bit code unit at `offset`, as the machine reads it."""
    lo, hi = (raw[offset], raw[offset + 1]) if _LITTLE else (raw[offset + 1], raw[offset])
    return lo | hi << 8


def _extended_codes():
    """The corpus's big functions and the prefixed code objects of every 25th stdlib file."""
    codes = [getattr(CORPUS[n], "__code__", CORPUS[n]) for n in ("far_jumps", "many_constants")]
    return codes + [c for c in stdlib_code_objects(every=25) if dis.EXTENDED_ARG in c.co_code[0::2]]


@pytest.mark.parametrize("code", _extended_codes(), ids=lambda c: c.co_qualname)
def test_columns_of_prefixed_code_match_dis(code):
    bc = decode(code)
    rows = _dis_rows(code)
    assert any(p for *_, p in rows)
    assert bc.offsets == [off for off, *_ in rows]
    assert list(bc.opcodes) == [op for _, op, _, _ in rows]
    assert list(bc.args) == [arg for _, _, arg, _ in rows]
    # `units`: the raw code unit of a plain instruction, (opcode, arg) of a prefixed one
    raw = code.co_code
    assert bc.units == [(op, arg) if p else _word(raw, off) for off, op, arg, p in rows]
    # jump targets as dis says, one aimed at a prefix moved to the instruction it extends
    instrs = list(dis.get_instructions(code))
    moved, waiting = {}, []
    for r in instrs:
        if r.opname == "EXTENDED_ARG":
            waiting.append(r.offset)
        else:
            moved.update(dict.fromkeys(waiting, r.offset))
            waiting = []
    want = [moved.get(r.argval, r.argval) for r in instrs if r.opcode in dis.hasjrel]
    assert [t for t in bc.targets if t is not None] == want


def test_prefixes_at_the_end_are_a_version_error():
    code = CORPUS["far_jumps"]
    code = getattr(code, "__code__", code)
    raw = bytearray(code.co_code)
    raw[-2:] = bytes([dis.EXTENDED_ARG, 1])  # the last instruction becomes a prefix
    with pytest.raises(BytecodeVersionError, match=f"CPython {HERE}: EXTENDED_ARG at the end"):
        decode(code.replace(co_code=bytes(raw)))
