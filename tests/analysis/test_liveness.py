"""Liveness against its path definition (brute force) and against executions.

Oracles (see dataflow_oracles): `brute_live_before` searches the instruction
graph built from `dis` path by path; `trace` records what CPython actually
executes, and every local read later in the run must be live at each point.
"""

from __future__ import annotations

import dis
import sys

import pytest
from corpus import CORPUS, all_code_objects
from dataflow_cases import RUNNABLE
from dataflow_oracles import (
    brute_live_before,
    events,
    exception_entries,
    instructions,
    normal_successors,
    trace,
)

import bcfront
from bcfront.analysis import analyze

PY = sys.version_info[:2]
handler_reads = RUNNABLE["handler_reads"][0]
shadowing = RUNNABLE["shadowing"][0]
swap = RUNNABLE["swap"][0]


def _small_codes():
    for name, fn in CORPUS.items():
        for code in all_code_objects(fn):
            if len(code.co_code) < 1200:
                yield pytest.param(code, id=f"{name}:{code.co_qualname}")


def _handler_of(code):
    entries = exception_entries(code)
    ins = instructions(code)

    def h(off):
        for e in entries:
            if e.start <= off < e.end:
                t = e.target
                while t not in ins:
                    t += 2
                return t
        return None

    return h


@pytest.mark.parametrize("code", list(_small_codes()))
def test_matches_path_definition(code):
    """live_before equals the path definition everywhere; live_after is the union over
    the normal successors, plus what the handler needs for a protected instruction."""
    fa = analyze(code)
    brute = brute_live_before(code)
    succ = normal_successors(code)
    handler = _handler_of(code)
    for ins in fa.bytecode.instructions:
        assert fa.liveness.live_before(ins.offset) == brute[ins.offset], ins
        after = set().union(*(brute[s] for s in succ[ins.offset]))
        h = handler(ins.offset)
        if h is not None:
            after |= brute[h]
        assert fa.liveness.live_after(ins.offset) == after, ins


def test_block_sets_match_first_instruction_and_successors():
    fa = analyze(CORPUS["try_in_loop"])
    lv = fa.liveness
    for b, blk in fa.cfg.blocks.items():
        assert lv.live_in(b) == lv.live_before(b)
        assert lv.live_out(b) == set().union(*(lv.live_in(s) for s in blk.succs))


# -- hand-reasoned cases --------------------------------------------------------------


def _first(fa, opname, argval=None):
    for ins in fa.bytecode.instructions:
        if ins.opname == opname and (argval is None or argval in _names(ins.argval)):
            return ins.offset
    raise LookupError(opname)


def _names(argval):
    return argval if isinstance(argval, tuple) else (argval,)


def straight(a, b):
    c = a + b
    d = c * 2
    return d


def test_straight_line():
    fa = analyze(straight)
    lv = fa.liveness
    assert lv.live_in(fa.cfg.entry) == {"a", "b"}
    assert lv.live_after(_first(fa, "BINARY_OP")) == set()  # before the store of c
    store_c = next(
        i for i in fa.bytecode.instructions if i.opname.startswith("STORE_FAST") and "c" in _names(i.argval)
    )
    assert lv.live_after(store_c.offset) >= {"c"} or store_c.opname == "STORE_FAST_LOAD_FAST"
    assert "a" not in lv.live_after(store_c.offset)


def test_handler_variables_live_throughout_protected_block():
    fa = analyze(handler_reads)
    lv = fa.liveness
    protected = [b for b, blk in fa.cfg.blocks.items() if blk.handler is not None and blk.handler.depth == 0]
    assert protected
    for b in protected:
        for ins in fa.cfg.blocks[b].instructions:
            # y is read only by the handler; x is live even right after `x = g()`
            assert {"y", "x"} <= lv.live_before(ins.offset), ins


def deletes(a):
    b = a
    del b
    return a


def test_delete_fast_reads_and_kills():
    fa = analyze(deletes)
    off = _first(fa, "DELETE_FAST", "b")
    assert "b" in fa.liveness.live_before(off)  # del fails if b is unbound
    assert "b" not in fa.liveness.live_after(off)


def closure_maker(a, n):
    def inner():
        return a + n

    n = n + 1
    return inner


def test_cells_stay_live_until_last_reference():
    fa = analyze(closure_maker)
    lv = fa.liveness
    assert lv.kinds["a"] == "cell" and lv.kinds["n"] == "cell"
    # the cell parameters are read by MAKE_CELL at entry
    assert {"a", "n"} <= lv.live_in(fa.cfg.entry)
    # `n = n + 1` stores into the cell the closure shares: n stays live up to there
    store_n = _first(fa, "STORE_DEREF", "n")
    assert "n" in lv.live_before(store_n)
    assert "n" not in lv.live_after(store_n)
    inner = fa.nested()[0]
    assert inner.liveness.kinds["a"] == "free"
    ret = _first(inner, "RETURN_VALUE")
    assert not inner.liveness.live_before(ret)


def test_comprehension_variable_restored():
    """On 3.12+ the comprehension is inlined: LOAD_FAST_AND_CLEAR saves the outer y, so
    y is live across the whole comprehension; on 3.11 it lives in a nested code object."""
    fa = analyze(shadowing)
    lv = fa.liveness
    if PY >= (3, 12):
        off = _first(fa, "LOAD_FAST_AND_CLEAR", "y")
        assert "y" in lv.live_before(off)
        for_iter = _first(fa, "FOR_ITER")
        assert "y" not in lv.live_before(for_iter)  # the saved y is on the stack
    else:
        comp = fa.nested()[0]
        assert comp.liveness.live_in(comp.cfg.entry) == {".0"}
    ret = _first(fa, "RETURN_VALUE")
    assert lv.live_before(ret) == set()
    restore = [
        i
        for i in fa.bytecode.instructions
        if i.offset < ret and i.opname.startswith("STORE_FAST") and "y" in _names(i.argval)
    ][-1]
    assert "y" in lv.live_after(restore.offset)


def test_super_instructions_both_halves():
    """`a, b = b, a`: two STORE_FASTs (3.11/3.12) or one STORE_FAST_STORE_FAST (3.13)."""
    fa = analyze(swap)
    lv = fa.liveness
    stores = [i for i in fa.bytecode.instructions if i.opname.startswith("STORE_FAST")]
    assert lv.live_after(stores[-1].offset) == {"a", "b"}
    if len(stores) == 2:
        # after the first store only the variable just stored is live
        assert lv.live_after(stores[0].offset) == set(_names(stores[0].argval))
    else:
        assert stores[0].opname == "STORE_FAST_STORE_FAST"
        assert lv.live_before(stores[0].offset) == set()
    assert lv.live_in(fa.cfg.entry) == {"a", "b"}


def introspects(a, b):
    c = a
    return locals()


def test_frame_introspection_reads_everything():
    fa = analyze(introspects)
    off = _first(fa, "LOAD_GLOBAL", "locals")
    assert fa.liveness.live_before(off) == {"a", "b", "c"}


def dead_code(x):
    return x
    y = x  # noqa: F841  (unreachable)


def test_unreachable_code_does_not_break_anything():
    fa = analyze(dead_code)
    assert fa.liveness.live_in(fa.cfg.entry) == {"x"}


def test_bits_and_names_agree():
    fa = analyze(handler_reads)
    lv = fa.liveness
    for ins in fa.bytecode.instructions:
        assert lv.names(lv.live_before_bits(ins.offset)) == lv.live_before(ins.offset)


def test_iterative_under_low_recursion_limit(shallow_stack):
    fa = analyze(CORPUS["huge_function"])
    fa.cfg
    with shallow_stack():
        lv = fa.liveness
        last = fa.bytecode.instructions[-1].offset
        lv.live_before(last)
    assert "a" in lv.live_in(fa.cfg.entry)


# -- dynamic oracle -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_every_later_read_is_live(name):
    """Along each traced run: a variable read later (before being written) is in
    live_after at every executed instruction."""
    fn, run = RUNNABLE[name]
    code = fn.__code__
    fa = analyze(fn)
    ins = instructions(code)
    offsets = [i.offset for i in fa.bytecode.instructions]
    _, traces = trace(code, run)
    assert traces, "nothing traced"
    checked = 0
    for _frame, seq in traces.items():
        # an EXTENDED_ARG prefix is reported at its own offset: map it to its instruction
        seq = [min(o for o in offsets if o >= off) for off in seq]
        later: set[str] = set()
        for k in range(len(seq) - 1, -1, -1):
            off = seq[k]
            assert later <= fa.liveness.live_after(off), (off, later)
            checked += 1
            for kind, n in reversed(events(ins[off], code)):
                names = set(fa.liveness.variables) if n == "*" else {n}
                if kind == "w":
                    later -= names
                else:
                    later |= names
    assert checked >= 4


def test_facade_forwarding():
    assert bcfront.analyze(straight).liveness.live_in(0) == {"a", "b"}


def test_dis_agrees_on_instruction_offsets():
    # the oracle and the analyzer must talk about the same instructions
    fn = RUNNABLE["raises"][0]
    fa = analyze(fn)
    assert [i.offset for i in fa.bytecode.instructions] == [
        i.offset for i in dis.get_instructions(fn) if i.opname != "EXTENDED_ARG"
    ]
