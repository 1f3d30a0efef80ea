"""Differential test: the analyzer's C kernels (`bcfront/_canalysis.c`, through
`bcfront.analysis.ckernels`) against their pure-Python references.

Over the differential sample (`differential.differential_sample`: the corpus and a
deterministic slice of the standard library), each code object's SSA construction is run
twice -- with ``rename_inline`` in C and with its reference
(`bcfront.analysis.ssa_inline.rename_inline`) -- and the two integer SSA forms must be
equal field by field, types included; likewise the stack depths with ``block_depths`` in C
and with its reference (`bcfront.analysis.stack.block_depths`), and the blocks' reverse
post-orders (from the entry, and from the exit) with ``block_rpo`` in C and with its
reference (`bcfront.analysis.cfg.block_rpo`), and each CFG (every block's fields, the
edges' kinds, the exit's predecessors) with ``make_blocks`` in C and with its reference
(`bcfront.analysis.cfg.make_blocks`).  The kernels' error paths
(a pop below the bottom, an index out of range, a value of the wrong type) must fail as the
references do, and a kernel run many times must not grow the process's memory.  With
``-m slow`` the whole standard library is compared.  Skipped (not failed) only where
BCFRONT_PURE_PYTHON asks for no C paths; a missing build fails.
"""

from __future__ import annotations

import gc
import os
import resource
import subprocess
import sys
import types

import pytest
from corpus import stdlib_code_objects
from differential import check_each, differential_sample, named

from bcfront.analysis import FunctionAnalysis, cfg, ssa_build, ssa_inline, stack
from bcfront.analysis.cfg import EXIT
from bcfront.analysis.ckernels import KERNELS
from bcfront.analysis.stack_effects import LOAD_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL, STORE_LOCAL_PAIR, Effect

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("BCFRONT_PURE_PYTHON")), reason="BCFRONT_PURE_PYTHON is set: no C paths"
)

FORM_FIELDS = (
    "recs", "lead", "nops", "flat", "special", "stores", "phis", "phi_edges",
    "handler_values", "catches", "entry", "order", "starts", "op_starts", "stack_in",
)  # fmt: skip


@pytest.fixture(autouse=True)
def _built():
    if KERNELS is None:  # a missing build must not pass as skips
        pytest.fail("bcfront._canalysis is not built: reinstall with a C compiler (pip install -e .)")


def typed(x: object) -> object:
    """`x` with the type of every container and scalar in it spelled out (so that a list
    for a tuple, or a bool for an int, makes two results differ)."""
    if isinstance(x, dict | types.MappingProxyType):
        return (type(x).__name__, [(typed(k), typed(v)) for k, v in x.items()])
    if isinstance(x, list | tuple | range):
        return (type(x).__name__, [typed(v) for v in x])
    return (type(x).__name__, x)


def ssa_form(code: types.CodeType, rename) -> dict:
    """The integer SSA form of `code`, built with `rename` as the inline renaming."""
    saved = ssa_build.RENAME_INLINE
    ssa_build.RENAME_INLINE = rename
    try:
        form = FunctionAnalysis(code).ssa.form
    finally:
        ssa_build.RENAME_INLINE = saved
    return {f: typed(getattr(form, f)) for f in FORM_FIELDS}


def stack_info(code: types.CodeType, depths) -> tuple:
    """`code`'s stack depths, block entry depths and lowest slots, with `depths` as the
    per-block kernel."""
    saved = stack.BLOCK_DEPTHS
    stack.BLOCK_DEPTHS = depths
    try:
        st = FunctionAnalysis(code).stack
    finally:
        stack.BLOCK_DEPTHS = saved
    return typed(st.depth), typed(st.depth_in), typed(st.block_low), st.max_depth


def orders(code: types.CodeType, rpo) -> tuple:
    """`code`'s blocks in reverse post-order from the entry and from the exit (the
    post-dominators' order), with `rpo` as the kernel."""
    saved = cfg.BLOCK_RPO
    cfg.BLOCK_RPO = rpo
    try:
        fa = FunctionAnalysis(code)
        g = fa.cfg
        post = rpo(g.blocks, EXIT, g.exit_preds, False)
        return typed(g.rpo), [type(g.blocks[b]).__name__ for b in g.blocks], typed(post), fa.post_idom
    finally:
        cfg.BLOCK_RPO = saved


def cfg_of(code: types.CodeType, make) -> tuple:
    """`code`'s CFG, every field of every block included, with `make` as the kernel that
    makes the blocks."""
    saved = cfg.MAKE_BLOCKS
    cfg.MAKE_BLOCKS = make
    try:
        g = FunctionAnalysis(code).cfg
    finally:
        cfg.MAKE_BLOCKS = saved
    fields = ("start", "handler", "succs", "preds", "index", "first", "stop")
    blocks = [
        (type(blk).__name__, [typed(getattr(blk, f)) for f in fields], blk._bytecode is g.bytecode)
        for blk in g.blocks.values()
    ]
    return typed(list(g.blocks)), blocks, typed(g.out_kinds), typed(g.exit_preds), typed(g.rpo), g.entry


def check_kernels(code: types.CodeType) -> None:
    assert cfg_of(code, KERNELS.make_blocks) == cfg_of(code, cfg.make_blocks)
    assert ssa_form(code, KERNELS.rename_inline) == ssa_form(code, ssa_inline.rename_inline)
    assert stack_info(code, KERNELS.block_depths) == stack_info(code, stack.block_depths)
    assert orders(code, KERNELS.block_rpo) == orders(code, cfg.block_rpo)


def test_the_analyzer_uses_the_kernels():
    assert ssa_build.RENAME_INLINE == KERNELS.rename_inline
    assert stack.BLOCK_DEPTHS == KERNELS.block_depths
    assert cfg.BLOCK_RPO == KERNELS.block_rpo
    assert cfg.MAKE_BLOCKS == KERNELS.make_blocks


def test_pure_python_asked_for_runs_the_references():
    """BCFRONT_PURE_PYTHON=1: no kernel is loaded, every pass runs its reference."""
    probe = (
        "from bcfront.analysis import cfg, ssa_build, ssa_inline, stack\n"
        "from bcfront.analysis.ckernels import KERNELS\n"
        "assert KERNELS is None\n"
        "assert ssa_build.RENAME_INLINE is ssa_inline.rename_inline\n"
        "assert stack.BLOCK_DEPTHS is stack.block_depths\n"
        "assert cfg.BLOCK_RPO is cfg.block_rpo and cfg.MAKE_BLOCKS is cfg.make_blocks\n"
        "import sys; assert 'bcfront._canalysis' not in sys.modules\n"
    )
    env = {**os.environ, "BCFRONT_PURE_PYTHON": "1"}
    subprocess.run([sys.executable, "-c", probe], env=env, check=True)


def test_kernels_equal_their_references():
    check_each(differential_sample(), check_kernels)


@pytest.mark.slow
def test_kernels_equal_their_references_on_all_of_stdlib():
    check_each(((named(c), c) for c in stdlib_code_objects()), check_kernels)


def test_kernels_meet_every_kind_the_renaming_tells_apart():
    """The sample reaches each branch of the kernels: stores renamed inline and handed
    on (tracked blocks), loads, and on 3.13 the paired loads and stores."""
    seen = set()
    for _, code in differential_sample():
        fa = FunctionAnalysis(code)
        seen.update(type(v).__name__ for v in fa.ssa.form.special.values())
        seen.add("store") if fa.ssa.form.stores else None
    assert {"int", "tuple", "store"} <= seen


# -- the error paths: as the references fail ------------------------------------------


def both(call):
    """`call(kernel)` for the C kernel and the reference: each result or exception type."""
    out = []
    for impl in ("c", "py"):
        try:
            out.append(("ok", call(impl)))
        except Exception as exc:  # noqa: BLE001 - compared below
            out.append(("raised", type(exc)))
    return out


def depths_of(impl: str, effs, lo, hi, d):
    depth: list[int] = []
    fn = KERNELS.block_depths if impl == "c" else stack.block_depths
    return fn(effs, lo, hi, d, depth), depth


def test_block_depths_underflow_and_bounds_as_the_reference():
    pop2 = Effect(2, (), (), (0, 1), 0)
    push1 = Effect(0, (0,), (0,), (), 1)
    effs = [push1, push1, pop2, pop2]
    for lo, hi, d in [(0, 3, 0), (0, 4, 0), (0, 4, 2), (2, 4, 5), (1, 99, 0), (3, 2, 0), (0, 0, 7)]:
        c, py = both(lambda impl, lo=lo, hi=hi, d=d: depths_of(impl, effs, lo, hi, d))
        assert c == py, (lo, hi, d)
    c, py = both(lambda impl: depths_of(impl, [push1, "not an effect"], 0, 2, 0))
    assert c[0] == py[0] == "raised"


def context(nloc: int = 2, depth: int = 4, args=None):
    return (
        [None] * depth, list(range(-1, -nloc - 1, -1)), [], [], {}, {},
        args if args is not None else [0] * 8, list(range(0, 16, 2)), list(range(nloc)),
        tuple(f"x{k}" for k in range(nloc)),
    )  # fmt: skip


def test_rename_inline_state_and_errors_as_the_reference():
    cases = [
        ([LOAD_LOCAL, LOAD_LOCAL, STORE_LOCAL, STORE_LOCAL], [0, 1, 0, 1], 0, False),
        ([LOAD_LOCAL, STORE_LOCAL], [1, 0], 0, True),  # tracked: stops at the store
        ([LOAD_LOCAL, LOAD_LOCAL], [0, 5], 0, False),  # arg past var_of: IndexError
        ([STORE_LOCAL], [0], 0, False),  # a pop from slot -1... as Python reads stk[-1]
        ([LOAD_LOCAL] * 6, [0] * 6, 0, False),  # a push past the stack's slots
        ([LOAD_LOCAL, "x"], [0, 0], 0, False),  # not an Effect
    ]
    for effs, args, d, tracking in cases:
        results = []
        for fn in (KERNELS.rename_inline, ssa_inline.rename_inline):
            ctx = context(args=args)
            try:
                out = ("ok", fn(ctx, effs, 0, len(effs), d, 10, 3, tracking), typed(ctx))
            except (IndexError, TypeError, AttributeError) as exc:
                out = ("raised", type(exc).__name__)
            results.append(out)
        c, py = results
        if c[0] == "raised" and py[0] == "raised":
            continue  # (the message and the exception type may differ: a wrong input)
        if effs == [STORE_LOCAL]:  # Python reads stk[-1]; C refuses a negative slot
            assert c[0] == "raised"
            continue
        assert c == py, (effs, args)


def context_manager_code() -> types.CodeType:
    def f(x):
        try:
            with open(x) as fh:
                return fh.read()
        except OSError:
            return None

    return f.__code__


def test_kernels_do_not_leak():
    """100k runs of each kernel, on every branch and on an error path: the process's
    peak resident size stays flat (a reference leaked per run would add megabytes)."""
    binary = Effect(2, (0,), (0,), (0, 1), 1)
    effs = [LOAD_LOCAL, LOAD_LOCAL, binary, STORE_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL_PAIR, LOAD_LOCAL]
    args = [0, 1, 0, 1, 0x01, 0x10, 7]  # (the last one's arg is past var_of: IndexError)

    blocks = FunctionAnalysis(test_kernels_do_not_leak.__code__).cfg.blocks
    first = min(blocks)
    # (a code object with a handler: make_blocks walks the exception table too)
    bc = FunctionAnalysis(context_manager_code()).bytecode

    def run(n: int) -> None:
        for k in range(n):
            ctx = context(args=args)
            assert KERNELS.rename_inline(ctx, effs, 0, 6, 0, 300 + k, 1000 + k, False) == (6, 0, 301 + k)
            with pytest.raises(IndexError):
                KERNELS.rename_inline(ctx, effs, 0, 7, 0, 300 + k, 1000 + k, False)
            assert KERNELS.block_depths(effs, 0, 6, 0, []) == (0, 0)
            assert KERNELS.block_rpo(blocks, first, blocks[first].succs, True)
            with pytest.raises(AttributeError):  # (a block that is not a Block)
                KERNELS.block_rpo({1: 1}, 0, [1], True)
            assert len(cfg.CFG(bc).blocks) > 3

    run(10000)  # (warm up: caches, free lists)
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run(100000)
    gc.collect()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 2048, f"peak RSS grew by {after - before} KiB"
