"""SSA form: invariants on every corpus code object, hand-checked shapes, and a
dynamic reaching-definition oracle (the local a read sees at run time was written
by one of the definitions its SSA value can stand for)."""

from __future__ import annotations

import dis
import re
import sys

import pytest
from corpus import CORPUS, all_code_objects
from dataflow_cases import RUNNABLE
from dataflow_oracles import JUMPS, check_ssa, events, instructions, normal_successors, trace

from bcfront.analysis import analyze

PY = sys.version_info[:2]


def _all_codes():
    for name, fn in CORPUS.items():
        for code in all_code_objects(fn):
            yield pytest.param(code, id=f"{name}:{code.co_qualname}")


@pytest.mark.parametrize("code", list(_all_codes()))
def test_invariants(code):
    check_ssa(analyze(code))


def _leaves(v, seen=None) -> set:
    """The definitions (entry, or an instruction offset) a value may stand for."""
    out, work, seen = set(), [v], set()
    while work:
        x = work.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if x.kind in ("phi", "catch"):
            work.extend(x.args)
        elif x.kind in ("param", "undef") and x.offset is None:
            out.add("entry")
        else:
            out.add(x.offset)
    return out


def _fresh(n):
    return None if n is None else int(str(n))  # an equal int, another object


@pytest.mark.parametrize("name", ["huge_function", "many_exception_handlers"])
def test_renaming_compares_blocks_by_value(name):
    # The renaming walk restores a dominator's exit state only when the block it
    # enters does not directly follow that dominator; block starts that are equal but
    # different int objects (offsets above 256) must not make it restore a state it
    # never saved.  Same SSA as with the CFG's own (shared) int objects.
    from bcfront.analysis.ssa import SSA

    code = next(iter(all_code_objects(CORPUS[name])))
    fa = analyze(code)
    idom = {_fresh(b): _fresh(d) for b, d in fa.idom.items()}
    assert any(b > 256 for b in idom)
    ssa = SSA(fa.cfg, idom, fa.dominance_frontier, fa.liveness, fa.stack)
    assert str(ssa) == str(fa.ssa)


@pytest.mark.parametrize("code", list(_all_codes()))
def test_one_successor_blocks_dominate_at_most_the_next_in_rpo(code):
    # What the renaming walk relies on to keep exit states only of blocks with several
    # successors: in reverse post-order a block with one successor is directly followed
    # by every block it immediately dominates.  Dominators from networkx.
    nx = pytest.importorskip("networkx")
    cfg = analyze(code).cfg
    g = nx.DiGraph()
    g.add_nodes_from(cfg.rpo)
    g.add_edges_from((e.src, e.dst) for e in cfg.edges if e.src in g and e.dst in g)
    idom = nx.immediate_dominators(g, cfg.entry)
    pos = {b: k for k, b in enumerate(cfg.rpo)}
    for b, d in idom.items():
        if b != d and len(cfg.blocks[d].succs) == 1:
            assert pos[b] == pos[d] + 1, (d, b)


# -- shapes ---------------------------------------------------------------------------


def add(a, b):
    c = a + b
    return c


def test_printer_one_line_per_instruction():
    fa = analyze(add)
    text = str(fa.ssa)
    assert text.startswith("entry: a.0 = param  b.0 = param  c.0 = undef")
    assert re.search(r"\bv\d+ = BINARY_OP\(\+\)\(a\.0, b\.0\)  # line \d+$", text, re.M), text
    assert re.search(r"\bc\.1 = STORE_FAST\(c\)\(v\d+\)", text), text
    n_instr = len(fa.bytecode.instructions)
    assert sum(bool(re.match(r"\s+\d+ ", ln)) for ln in text.splitlines()) == n_instr


def test_parameters_are_defined_at_entry():
    fa = analyze(add)
    ssa = fa.ssa
    assert [(v.name, v.kind, v.block) for v in ssa.entry] == [
        ("a.0", "param", 0),
        ("b.0", "param", 0),
        ("c.0", "undef", 0),
    ]
    assert ssa.value("a.0") is ssa.entry[0]


@pytest.mark.parametrize("nlocals", [3, 256, 257, 300])
def test_every_local_of_a_wide_function_gets_its_entry_value(nlocals):
    # the entry's value ids come from a fixed table up to 256 locals, built past it
    names = [f"v{k}" for k in range(nlocals)]
    src = f"def wide({', '.join(names[:2])}, *, {names[2]}):\n"
    src += "".join(f"    {n} = {k}\n" for k, n in enumerate(names[3:]))
    src += f"    return {' + '.join(names)}\n"
    ns = {}
    exec(compile(src, "<wide>", "exec"), ns)
    code = ns["wide"].__code__
    ssa = analyze(code).ssa
    nargs = code.co_argcount + code.co_kwonlyargcount
    assert [(v.var, v.kind) for v in ssa.entry] == [
        (n, "param" if k < nargs else "undef") for k, n in enumerate(code.co_varnames)
    ]
    assert len({v.id for v in ssa.entry}) == nlocals
    # each read of a local in the return finds the parameter or the store before it
    params = set(code.co_varnames[:nargs])
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_FAST", "LOAD_FAST_LOAD_FAST"):
            read = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            uses = ssa.ops[ins.offset].uses
            assert [(v.var, v.kind) for v in uses] == [(n, "param" if n in params else "store") for n in read]


def _paired(a, b):
    a = b * 2
    print()
    return a + b


@pytest.mark.skipif(sys.version_info < (3, 13), reason="LOAD_FAST_LOAD_FAST is 3.13's")
def test_a_paired_load_pushes_the_reaching_values_of_both_locals():
    code = _paired.__code__
    ssa = analyze(code).ssa
    ins = [i for i in dis.get_instructions(code) if i.opname == "LOAD_FAST_LOAD_FAST"]
    assert [i.argval for i in ins] == [("a", "b")]
    op = ssa.ops[ins[0].offset]
    # what dis says it reads, in its order: the store of a, then b's parameter value
    assert [(v.var, v.kind) for v in op.uses] == [("a", "store"), ("b", "param")]
    assert op.uses[0] is next(v for v in ssa.values if v.var == "a" and v.kind == "store")
    assert op.defs == () and op.results == op.uses
    add = next(i for i in dis.get_instructions(code) if i.offset > ins[0].offset)
    assert add.opname == "BINARY_OP" and ssa.ops[add.offset].uses == op.uses


def _pair_store(x, y):
    p, q = x + 1, y * 2
    return p - q


@pytest.mark.skipif(sys.version_info < (3, 13), reason="STORE_FAST_STORE_FAST is 3.13's")
def test_a_paired_store_gives_each_local_the_value_its_expression_pushed():
    code = _pair_store.__code__
    ssa = analyze(code).ssa
    by_op = {i.argrepr: i for i in dis.get_instructions(code) if i.opname == "BINARY_OP"}
    (store,) = [i for i in dis.get_instructions(code) if i.opname == "STORE_FAST_STORE_FAST"]
    plus, times = (ssa.ops[by_op[r].offset].defs[0] for r in ("+", "*"))
    op = ssa.ops[store.offset]
    # p = x + 1 and q = y * 2, whichever of the two the instruction stores first
    stored = {v.var: v for v in op.defs}
    assert sorted(stored) == ["p", "q"] and all(v.kind == "store" for v in op.defs)
    assert stored["p"].args == (plus,) and stored["q"].args == (times,)
    assert set(op.uses) == {plus, times} and op.results == ()
    # the paired load after it reads those two stores
    (load,) = [i for i in dis.get_instructions(code) if i.opname == "LOAD_FAST_LOAD_FAST"]
    assert ssa.ops[load.offset].uses == (stored["p"], stored["q"])


def _closure(a):
    b = a + 1

    def inner():
        return a + b

    return inner


def test_closure_cells_are_pushed_as_new_values_and_make_cell_reads_a_cell_parameter():
    code = _closure.__code__
    ssa = analyze(code).ssa
    ins = list(dis.get_instructions(code))
    # the loads that push the cells for the closure tuple (LOAD_CLOSURE; 3.13: LOAD_FAST)
    build = next(i for i in ins if i.opname == "BUILD_TUPLE")
    pushes = [
        i
        for i in ins
        if i.opname in ("LOAD_CLOSURE", "LOAD_FAST") and i.argval in ("a", "b") and i.offset < build.offset
    ]
    assert [i.argval for i in pushes] == ["a", "b"]
    cells = ssa.ops[build.offset].uses
    assert [(v.kind, v.offset) for v in cells] == [("op", i.offset) for i in pushes]
    assert [ssa.ops[i.offset].defs for i in pushes] == [(v,) for v in cells]
    # MAKE_CELL a wraps the parameter a (its entry value); MAKE_CELL b wraps nothing yet
    make = {i.argval: ssa.ops[i.offset] for i in ins if i.opname == "MAKE_CELL"}
    (param,) = [v for v in ssa.entry if v.var == "a"]
    assert param.kind == "param"
    assert make["a"].uses == (param,) and make["b"].uses == ()
    assert make["a"].defs == make["b"].defs == ()


def ternary(c, a, b):
    r = g(
        (a if c else b),
        c,
    )
    return r


g = print


def test_conditional_expression_merges_on_the_stack():
    fa = analyze(ternary)
    ssa = fa.ssa
    stack_phis = [v for vs in ssa.phis.values() for v in vs if isinstance(v.var, int)]
    assert len(stack_phis) == 1
    phi = stack_phis[0]
    assert {a.name for a in phi.args} == {"a.0", "b.0"}
    user = next(u for u in phi.uses if getattr(u, "instr", None) is not None)
    assert user.instr.opname == "CALL"


def loop(xs):
    t = 0
    for x in xs:
        t = t + x
    return t


def test_for_loop_iterator_crosses_blocks():
    fa = analyze(loop)
    ssa = fa.ssa
    get_iter = next(op for op in ssa.ops.values() if op.instr.opname == "GET_ITER")
    it = get_iter.defs[0]
    for_iter = next(op for op in ssa.ops.values() if op.instr.opname == "FOR_ITER")
    assert it in for_iter.uses and for_iter.block != get_iter.block
    # the iterator stays in its slot across the loop: it is on the header's entry stack
    assert ssa.stack_in[for_iter.block][-1] is it
    # t is merged at the loop header from `t = 0` and `t = t + x`
    assert [v.var for v in ssa.phis[for_iter.block]] == ["t"]
    stores = {
        op.offset for op in ssa.ops.values() if any(d.var == "t" and d.kind == "store" for d in op.defs)
    }
    assert len(stores) == 2
    assert _leaves(ssa.phis[for_iter.block][0]) == stores


def comp(xs, k):
    y = 1
    return [y * k for y in xs if y], y


@pytest.mark.skipif(PY < (3, 12), reason="comprehensions are inlined from 3.12")
def test_inlined_comprehension_stack_values():
    fa = analyze(comp)
    ssa = fa.ssa
    build = next(op for op in ssa.ops.values() if op.instr.opname == "BUILD_LIST")
    lst = build.defs[0]
    appends = [op for op in ssa.ops.values() if op.instr.opname == "LIST_APPEND"]
    assert appends and all(lst in op.uses and op.block != build.block for op in appends)
    # the outer y, saved on the stack by LOAD_FAST_AND_CLEAR, is what gets restored
    clear = next(op for op in ssa.ops.values() if op.instr.opname == "LOAD_FAST_AND_CLEAR")
    saved = clear.results[0]
    assert saved.name == "y.1"
    restores = [
        op
        for op in ssa.ops.values()
        if op.instr.opname == "STORE_FAST" and op.instr.argval == "y" and op.uses[0] is saved
    ]
    assert restores, str(ssa)
    assert any(op.block != clear.block for op in restores)
    check_ssa(fa)


def test_nested_comprehension_on_311_takes_iterator_parameter():
    fa = analyze(comp)
    if PY >= (3, 12):
        assert not fa.nested()
        return
    inner = fa.nested()[0]
    assert inner.ssa.entry[0].name == ".0.0" and inner.ssa.entry[0].kind == "param"


def try_finally(f):
    x = 1
    try:
        x = f()
        x = f(x)
        f()
    except KeyError as e:
        return x, e
    finally:
        x = None
    return x


def test_handler_entry_defines_exception_and_lasti():
    fa = analyze(try_finally)
    ssa = fa.ssa
    handlers = {b: vs for b, vs in ssa.handler_values.items()}
    assert handlers
    kinds = [[v.kind for v in vs] for vs in handlers.values()]
    assert ["exc"] in kinds  # except: depth d, just the exception
    assert ["lasti", "exc"] in kinds  # cleanup handlers push lasti first
    for b, vs in handlers.items():
        entry = fa.cfg.blocks[[p for p in fa.cfg.blocks[b].preds][0]].handler
        assert [v.var for v in vs] == list(range(entry.depth, entry.handler_depth))


def test_handler_sees_every_value_of_the_protected_block():
    fa = analyze(try_finally)
    ssa = fa.ssa
    stores = {
        op.defs[0].name: op.offset
        for op in ssa.ops.values()
        if op.defs and op.defs[0].var == "x" and op.defs[0].kind == "store"
    }
    # the except clause returns x: whatever value it reads, any of x = 1, f(), f(x)
    ret = next(op for op in ssa.ops.values() if op.instr.opname == "BUILD_TUPLE")
    x_val = ret.uses[0]
    assert _leaves(x_val) == {stores["x.1"], stores["x.2"], stores["x.3"]}, str(ssa)


def test_def_use_chains_are_symmetric():
    for fn in (try_finally, loop, ternary, comp, CORPUS["match_statement"]):
        ssa = analyze(fn).ssa
        for v in ssa.values:
            for u in v.uses:
                assert v in (u.uses if hasattr(u, "instr") else u.args)
        for op in ssa.ops.values():
            for v in op.uses:
                assert op in v.uses
        for vs in ssa.phis.values():
            for phi in vs:
                for a in phi.args:
                    assert phi in a.uses


def test_stack_before_replays_to_the_recorded_depth():
    fa = analyze(CORPUS["with_statements"])
    for ins in fa.bytecode.instructions:
        if fa.cfg.block_of(ins.offset).reachable:
            assert len(fa.ssa.stack_before(ins.offset)) == fa.stack.depth_before(ins.offset)


def test_cells_are_not_renamed():
    fa = analyze(CORPUS["closures"])
    ssa = fa.ssa
    assert not [v for v in ssa.values if v.var == "a" and v.kind == "store"]
    assert [v.kind for v in ssa.entry if v.var == "a"] == ["param"]  # wrapped by MAKE_CELL


def test_under_low_recursion_limit(shallow_stack):
    fa = analyze(CORPUS["huge_function"])
    fa.cfg, fa.idom, fa.dominance_frontier, fa.liveness, fa.stack
    with shallow_stack():
        ssa = fa.ssa
        str(ssa)
    assert len(ssa.values) > 1000


# -- dynamic oracle -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_reaching_definitions_match_execution(name):
    """At every executed read of a local, the value CPython reads was written by the
    instruction (or entry) that the SSA value used there may stand for."""
    fn, run = RUNNABLE[name]
    code = fn.__code__
    fa = analyze(fn)
    ssa = fa.ssa
    ins = instructions(code)
    succ = normal_successors(code)
    offsets = [i.offset for i in fa.bytecode.instructions]
    local = {n for n, k in fa.liveness.kinds.items() if k == "local"}
    _, traces = trace(code, run)
    checked = 0
    for seq in traces.values():
        seq = [min(o for o in offsets if o >= off) for off in seq]
        writer = {n: "entry" for n in local}
        prev = None
        for off in seq:
            if prev is not None and off in succ[prev]:  # prev completed normally
                for kind, n in events(ins[prev], code):
                    if kind == "w" and n in writer:
                        writer[n] = prev
            op = ssa.ops[off]
            reads = [n for kind, n in events(ins[off], code) if kind == "r" and n in local]
            if ins[off].opname == "STORE_FAST_LOAD_FAST" and reads:
                stored, loaded = ins[off].argval
                if stored == loaded:
                    reads = []  # reads its own store: not a use
            for n in reads:
                vals = [v for v in op.uses if v.var == n]
                assert vals, (off, n)
                assert writer[n] in _leaves(vals[0]), (off, n, writer[n], vals[0].name)
                checked += 1
            prev = off
    assert checked >= 2


# -- the stack model under SSA ----------------------------------------------------------

_REAL_OPS = [
    n
    for n, c in dis.opmap.items()
    if c < 256
    and not n.startswith("INSTRUMENTED_")
    and n not in ("CACHE", "RESERVED", "ENTER_EXECUTOR", "EXTENDED_ARG")
]


def test_every_real_opcode_has_a_stack_rule():
    from bcfront.analysis.stack_effects import has_rule

    assert [n for n in _REAL_OPS if not has_rule(n, PY)] == []


# documented departures from CPython's compile-time accounting (see stack.py)
_DEPARTURES = {"RETURN_GENERATOR"} | ({"PRECALL", "CALL"} if PY == (3, 11) else set())


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_stack_rules_agree_with_dis(name):
    from bcfront.analysis.stack_effects import effect_of

    for code in all_code_objects(CORPUS[name]):
        for ins in dis.get_instructions(code):
            if ins.opname in _DEPARTURES or ins.opname == "EXTENDED_ARG":
                continue
            eff = effect_of(ins, PY)
            arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
            assert len(eff.fall) - eff.pops == dis.stack_effect(ins.opcode, arg, jump=False), ins
            if ins.opcode in JUMPS:
                assert len(eff.jump) - eff.pops == dis.stack_effect(ins.opcode, arg, jump=True)
            assert all(0 <= u < eff.pops for u in eff.uses)
            assert all(~o < eff.pops if o < 0 else o < eff.news for o in eff.fall + eff.jump)


def test_precall_and_call_together_match_dis_on_311():
    if PY != (3, 11):
        pytest.skip("3.11 only")
    fa = analyze(add)
    code = compile("f(a, b)", "<c>", "eval")
    ins = [i for i in dis.get_instructions(code) if i.opname in ("PRECALL", "CALL")]
    from bcfront.analysis.stack_effects import effect_of

    ours = sum(len(effect_of(i, PY).fall) - effect_of(i, PY).pops for i in ins)
    assert ours == sum(dis.stack_effect(i.opcode, i.arg) for i in ins) == -3
    assert fa


def appender(xs):
    out = []
    for x in xs:
        out.append(x)
    a, b = xs, out  # noqa: F841 - the subject's dead stores
    return [y for y in out]


def test_slot_reads_and_writes():
    fa = analyze(appender)
    st = fa.stack
    for ins in fa.bytecode.instructions:
        d = st.depth_before(ins.offset)
        if ins.opname == "FOR_ITER":
            assert st.reads(ins.offset) == (d - 1,)  # the iterator
            assert st.writes(ins.offset) == (d,)  # the next item; iterator stays
        elif ins.opname == "LIST_APPEND":
            assert st.reads(ins.offset) == (d - 1 - ins.arg, d - 1)  # the list, the item
            assert st.writes(ins.offset) == ()
        elif ins.opname == "SWAP":
            assert st.reads(ins.offset) == ()
            assert st.writes(ins.offset) == (d - ins.arg, d - 1)
        elif ins.opname == "COPY":
            assert st.writes(ins.offset) == (d,)
        elif ins.opname == "BINARY_OP":
            assert st.reads(ins.offset) == (d - 2, d - 1) and st.writes(ins.offset) == (d - 2,)
