"""Differential test: every fast pass against its plain reference (`analysis.reference`).

Default run: the corpus's code objects of up to 300 blocks and every 4th code
object of every 40th standard-library file (450-650 in all, deterministic).  ``-m slow``:
every code object of the standard library.  For each code object the CFG,
dominators (both implementations: the CFG fast path and the generic one),
post-dominators, dominance frontiers, natural loops, liveness, stack depths and
the SSA of the locals (phi placement, phi arguments, the values each load reads,
the values each instruction defines) must equal the reference's.
"""

from __future__ import annotations

import pytest
from corpus import stdlib_code_objects
from differential import check_each, differential_sample, named

from bcfront.analysis import FunctionAnalysis
from bcfront.analysis.dominance import immediate_dominators
from bcfront.analysis.reference import cfg as ref_cfg
from bcfront.analysis.reference import dominance as ref_dom
from bcfront.analysis.reference import liveness as ref_live
from bcfront.analysis.reference import loops as ref_loops
from bcfront.analysis.reference import ssa as ref_ssa
from bcfront.analysis.reference import stack as ref_stack
from bcfront.analysis.stack import StackDepthError

MAX_CORPUS_BLOCKS = 300  # the reference dominators are quadratic


def check_cfg(fa: FunctionAnalysis, ref: ref_cfg.RefCFG) -> None:
    cfg = fa.cfg
    assert list(cfg.blocks) == list(ref.blocks)
    for b, blk in cfg.blocks.items():
        rb = ref.blocks[b]
        assert (blk.first, blk.stop, blk.handler) == (rb.first, rb.stop, rb.handler), b
        assert list(zip(blk.succs, cfg.out_kinds[b])) == rb.succs, b
        assert blk.preds == rb.preds, b
        assert blk.reachable == (b in ref.reachable), b
    assert cfg.exit_preds == ref.exit_preds
    assert cfg.rpo == ref.rpo
    assert cfg.entry == ref.entry


def check_dominance(fa: FunctionAnalysis, ref: ref_cfg.RefCFG) -> None:
    cfg = fa.cfg
    want = ref_dom.cfg_idom(ref)
    assert fa.idom == want
    generic = immediate_dominators(cfg.entry, cfg.successors, cfg.predecessors)
    assert generic == want
    assert fa.dominance_frontier == ref_dom.cfg_frontiers(ref)
    assert fa.post_idom == ref_dom.cfg_post_idom(ref)


def check_loops(fa: FunctionAnalysis, ref: ref_cfg.RefCFG) -> None:
    got = {
        lp.header: ref_loops.RefLoop(
            lp.header, lp.body, lp.back_edges, lp.exits, lp.parent, lp.depth, lp.children
        )
        for lp in fa.loops
    }
    assert got == ref_loops.natural_loops(ref)


def check_liveness(fa: FunctionAnalysis, ref: ref_cfg.RefCFG) -> None:
    code, instrs = fa.code, fa.bytecode.instructions
    live_in, live_out = ref_live.liveness(ref, instrs, code)
    lv = fa.liveness
    assert {b: set(lv.live_in(b)) for b in fa.cfg.blocks} == live_in
    assert {b: set(lv.live_out(b)) for b in fa.cfg.blocks} == live_out
    before = ref_live.live_before(ref, instrs, code, live_in, live_out)
    assert [set(lv.live_before(ins.offset)) for ins in instrs] == before


def check_stack(fa: FunctionAnalysis) -> bool:
    """Whether the depths agree (both raising counts as agreeing: then no SSA)."""
    try:
        want = ref_stack.stack_depths(fa.bytecode)
    except StackDepthError:
        with pytest.raises(StackDepthError):
            _ = fa.stack
        return False
    assert fa.stack.depth == want
    return True


def _key(v) -> tuple:
    """A fast `SSAValue` of a local named as the reference names it."""
    if v.kind in ("param", "undef") and v.offset is None:
        return ("entry", v.var)
    if v.kind in ("store", "undef"):
        return (v.kind, v.offset, v.var)
    if v.kind == "phi":
        return ("phi", v.block, v.var)
    raise AssertionError(f"not a local's value: {v.kind} {v.var}")


def _seen(v) -> frozenset:
    """The values a handler may see along an exception edge (a `catch` merges several)."""
    return frozenset(map(_key, v.args)) if v.kind == "catch" else frozenset({_key(v)})


def check_ssa(fa: FunctionAnalysis, ref: ref_cfg.RefCFG) -> None:
    want = ref_ssa.build_ssa(
        ref,
        ref_dom.cfg_idom(ref),
        ref_dom.cfg_frontiers(ref),
        ref_live.liveness(ref, fa.bytecode.instructions, fa.code)[0],
        fa.bytecode.instructions,
        fa.code,
    )
    ssa = fa.ssa
    phis = {b: {v.var for v in vs if isinstance(v.var, str)} for b, vs in ssa.phis.items()}
    assert {b: xs for b, xs in phis.items() if xs} == want.phis
    for b, vs in ssa.phis.items():
        for v in vs:
            if isinstance(v.var, str):
                got = [
                    (edge, _seen(a) if edge[1] == "exception" else _key(a))
                    for edge, a in zip(v.edges, v.args)
                ]
                assert got == want.phi_args[b, v.var], (b, v.var)
    for op in ssa.ops.values():
        ins = op.instr
        defs = [_key(v) for v in op.defs if isinstance(v.var, str)]
        assert defs == want.defs.get(ins.offset, []), ins
        if ins.opname in ref_ssa.LOCAL_READS:
            reads = [_key(v) for v in op.uses if isinstance(v.var, str)]
            assert reads == want.reads.get(ins.offset, []), ins


def check(code) -> None:
    fa = FunctionAnalysis(code)
    ref = ref_cfg.build_cfg(fa.bytecode)
    check_cfg(fa, ref)
    if not fa.cfg.blocks:
        return
    check_dominance(fa, ref)
    check_loops(fa, ref)
    check_liveness(fa, ref)
    if check_stack(fa):
        check_ssa(fa, ref)


def test_fast_passes_equal_the_references():
    sample = differential_sample(MAX_CORPUS_BLOCKS)
    assert len(sample) > 400
    check_each(sample, check)


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_fast_passes_equal_the_references_on_all_of_stdlib():
    check_each(((named(c), c) for c in stdlib_code_objects()), check)
