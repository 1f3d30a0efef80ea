"""Stack depths per instruction against a walk of `dis`'s instruction graph, and the
errors for bytecode whose depths do not add up.

Oracle: `dis_depths` propagates ``dis.stack_effect`` instruction by instruction
along `instruction_graph` (normal successors, and the exception table's depth
plus lasti plus the exception at each handler), with the two documented
departures of the stack module (3.11's PRECALL moves nothing, CALL pops its
arguments; RETURN_GENERATOR pushes one value).
"""

from __future__ import annotations

import dis
import sys

import pytest
from corpus import CORPUS, all_code_objects, stdlib_code_objects
from dataflow_oracles import exception_entries, instruction_graph

from bcfront.analysis import analyze
from bcfront.analysis.stack import StackDepthError

PY = sys.version_info[:2]


def _effect(i, jump: bool, precall: int) -> int:
    if i.opname == "RETURN_GENERATOR":
        return 1
    if PY == (3, 11) and i.opname == "PRECALL":
        return 0
    arg = i.arg if i.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(i.opcode, arg, jump=jump) + (precall if i.opname == "CALL" else 0)


def dis_depths(code) -> dict[int, int]:
    """offset -> stack depth before the instruction, for the reachable instructions."""
    ins, succ, handler = instruction_graph(code)
    entries = {}
    for e in exception_entries(code):
        t = e.target
        while t not in ins:
            t += 2
        entries[t] = e.depth + e.lasti + 1
    before = dict(zip(list(ins)[1:], ins.values()))  # the instruction before each
    first = next(iter(ins))
    depth = {first: 0}
    work = [first]
    while work:
        o = work.pop()
        i = ins[o]
        p = before.get(o)
        # 3.11: CALL pops the arguments that the PRECALL before it left in place
        precall = (
            dis.stack_effect(p.opcode, p.arg)
            if (PY == (3, 11) and i.opname == "CALL" and p is not None and p.opname == "PRECALL")
            else 0
        )
        # a conditional's successors are [next, target]: the second is the jump
        nexts = [(s, depth[o] + _effect(i, k == 1, precall)) for k, s in enumerate(succ[o])]
        if handler[o] is not None:
            nexts.append((handler[o], entries[handler[o]]))
        for s, d in nexts:
            if s not in depth:
                depth[s] = d
                work.append(s)
            assert depth[s] == d, (code.co_qualname, o, s, depth[s], d)
    return depth


def _codes():
    for name, fn in CORPUS.items():
        for code in all_code_objects(fn):
            yield pytest.param(code, id=f"{name}:{code.co_qualname}")
    for k, code in enumerate(stdlib_code_objects()[::2000]):
        yield pytest.param(code, id=f"stdlib#{k}:{code.co_qualname}")


@pytest.mark.parametrize("code", list(_codes()))
def test_depth_of_every_instruction_matches_dis(code):
    fa = analyze(code)
    st = fa.stack
    want = dis_depths(code)
    got = dict(zip(fa.bytecode.offsets, st.depth))
    assert {o: d for o, d in got.items() if d >= 0} == {o: d for o, d in want.items() if o in got}
    assert st.max_depth == max(want.values())
    assert st.depth_in == {b: want[b] for b in fa.cfg.blocks if b in want}
    # the lowest slot each block pops: dis's depths less each instruction's pops
    offsets = fa.bytecode.offsets
    assert st.block_low == {
        b: min(want[offsets[i]] - st.effects[i].pops for i in range(blk.first, blk.stop))
        for b, blk in fa.cfg.blocks.items()
        if b in want
    }


# -- bytecode whose depths do not add up ------------------------------------------------


def _with_nop(fn, pred):
    """`fn`'s code with the first instruction that satisfies `pred` replaced by NOP
    (an instruction without inline caches, so the layout is unchanged)."""
    code = fn.__code__
    raw = bytearray(code.co_code)
    ins = list(dis.get_instructions(code))
    for i, nxt in zip(ins, ins[1:]):
        if pred(i):
            assert nxt.offset == i.offset + 2  # no inline caches to leave behind
            raw[i.offset] = dis.opmap["NOP"]
            raw[i.offset + 1] = 0
            return code.replace(co_code=bytes(raw))
    raise AssertionError("no such instruction")


def _returns(x):
    return x


def _merges(a):
    x = 12345 if a else 67890
    return x


def test_pop_below_the_bottom_is_an_error():
    code = _with_nop(_returns, lambda i: i.opname == "LOAD_FAST")
    ret = next(i for i in dis.get_instructions(code) if i.opname == "RETURN_VALUE")
    with pytest.raises(StackDepthError, match=f"offset {ret.offset} pops 1 values from a stack of depth 0"):
        analyze(code).stack


def test_paths_that_disagree_are_an_error():
    # without the second constant, one side reaches the store one value short (which
    # side the walk meets first decides between the two messages)
    code = _with_nop(_merges, lambda i: i.opname == "LOAD_CONST" and i.argval == 67890)
    with pytest.raises(
        StackDepthError, match="is entered with stack depth|pops 1 values from a stack of depth 0"
    ):
        analyze(code).stack


def test_one_block_loop_onto_itself():
    def spin():
        while True:
            pass

    fa = analyze(spin)
    assert fa.stack.max_depth == 0
    assert all(d == 0 for d in fa.stack.depth)


def test_effects_mark_the_instructions_on_fast_locals_as_dis_lists_them():
    """`Effect.local` (what the SSA builder's loop dispatches on) is set exactly for the
    opcodes `dis.haslocal` lists, plus MAKE_CELL (it turns a fast local into a cell);
    only LOAD_FAST/LOAD_FAST_CHECK count as plain loads, only STORE_FAST as a store."""
    from bcfront.analysis.stack_effects import _TABLES, LOCAL_LOAD, LOCAL_STORE, NO_LOCAL

    rules = _TABLES[PY].rules
    for name, op in dis.opmap.items():
        if op >= 256 or name not in rules:
            continue
        eff = rules[name] if not callable(rules[name]) else rules[name](1)
        on_local = op in dis.haslocal or name == "MAKE_CELL"
        assert (eff.local != NO_LOCAL) == on_local, name
        assert (eff.local == LOCAL_LOAD) == (name in ("LOAD_FAST", "LOAD_FAST_CHECK")), name
        assert (eff.local == LOCAL_STORE) == (name == "STORE_FAST"), name
        # the loop's two derived flags split the other instructions by `plain`
        assert eff.simple == (eff.plain and not on_local), name
        assert eff.moves == (not eff.plain and not on_local), name


def test_ssa_handlers_cover_exactly_the_marked_instructions():
    """The SSA builder's per-opcode handlers (`LOCAL_OPS`, for the instructions its loop
    does not inline) exist for exactly the opcodes the stack rules mark as on a fast
    local: the two tables name the same opcodes, or an instruction would be renamed as
    a plain one (or a plain one handed to a handler)."""
    from bcfront.analysis.ssa_locals import LOCAL_OPS
    from bcfront.analysis.stack_effects import _TABLES, NO_LOCAL

    rules = _TABLES[PY].rules
    for name, op in dis.opmap.items():
        if op >= 256 or name not in rules:
            continue
        eff = rules[name] if not callable(rules[name]) else rules[name](1)
        assert (LOCAL_OPS[op] is not None) == (eff.local != NO_LOCAL), name
