"""Dominators, frontiers and post-dominators against networkx and against the
brute-force definition, on the corpus, a standard-library sample and random
graphs (irreducible ones included)."""

from __future__ import annotations

import networkx as nx
import pytest
from corpus import CORPUS, corpus_code_objects, dead_code, stdlib_code_objects
from graph_oracles import (
    brute_dominators,
    brute_frontier,
    brute_idom,
    graphs,
    nx_idom,
    nx_of,
    preds_of,
    reach,
)
from hypothesis import given, settings

from bcfront.analysis.cfg import EXIT, build_cfg
from bcfront.analysis.dominance import (
    cfg_dominance,
    cfg_dominance_frontier,
    cfg_idom,
    cfg_post_idom,
    dominance_frontier,
    dominates,
    dominator_tree,
    immediate_dominators,
    reverse_postorder,
)

CORPUS_CODES = corpus_code_objects()


def cfg_succ(cfg) -> dict:
    return {s: list(b.succs) for s, b in cfg.blocks.items()}


def reversed_with_exit(cfg) -> dict:
    """The reversed CFG plus the virtual exit (which the exit predecessors lead to)."""
    rev = {s: [] for s in cfg.blocks}
    rev[EXIT] = list(cfg.exit_preds)
    for e in cfg.edges:
        rev[e.dst].append(e.src)
    return rev


# -- CFGs ----------------------------------------------------------------------


def check_cfg(cfg, brute: bool) -> None:
    succ = cfg_succ(cfg)
    idom = cfg_idom(cfg)
    g = nx_of(succ)
    assert idom.pop(cfg.entry) is None
    assert idom == nx_idom(g, cfg.entry)
    idom[cfg.entry] = None
    df = cfg_dominance_frontier(cfg)
    assert df == {k: set(v) for k, v in nx.dominance_frontiers(g, cfg.entry).items()}
    rev = reversed_with_exit(cfg)
    post = cfg_post_idom(cfg)
    assert post.pop(EXIT) is None
    assert post == nx_idom(nx_of(rev), EXIT)
    if brute:
        dom = brute_dominators(succ, cfg.entry)
        assert {n: d for n, d in idom.items() if d is not None} == brute_idom(dom, cfg.entry)
        assert df == brute_frontier(succ, dom)
        pdom = brute_dominators(rev, EXIT)
        assert post == brute_idom(pdom, EXIT)
        for a in dom:
            for b in dom:
                assert dominates(idom, a, b) == (a in dom[b])


@pytest.mark.parametrize("name,code", CORPUS_CODES, ids=[n for n, _ in CORPUS_CODES])
def test_corpus(name, code, shallow_stack):
    cfg = build_cfg(code)
    with shallow_stack():
        cfg_idom(cfg)
        cfg_dominance_frontier(cfg)
        cfg_post_idom(cfg)
    check_cfg(cfg, brute=len(cfg.blocks) <= 150)


def test_stdlib_sample_against_networkx():
    for code in stdlib_code_objects(every=50):
        cfg = build_cfg(code)
        check_cfg(cfg, brute=len(cfg.blocks) <= 25)


def test_infinite_loop_has_no_post_dominator():
    cfg = build_cfg(CORPUS["while_true"])
    post = cfg_post_idom(cfg)
    loop_blocks = [s for s in cfg.blocks if s not in reach(reversed_with_exit(cfg), EXIT)]
    assert loop_blocks and not any(b in post for b in loop_blocks)


def test_unreachable_blocks_have_no_dominators():
    cfg = build_cfg(dead_code())
    idom = cfg_idom(cfg)
    assert 6 not in idom and not dominates(idom, 0, 6) and not dominates(idom, 6, 6)
    assert 6 not in cfg_dominance_frontier(cfg)


def test_dominator_tree_matches_idom():
    cfg = build_cfg(CORPUS["nested_loops"])
    idom = cfg_idom(cfg)
    tree = dominator_tree(idom)
    assert sorted(c for cs in tree.values() for c in cs) == sorted(n for n in idom if idom[n] is not None)
    for parent, kids in tree.items():
        assert all(idom[k] == parent for k in kids)


def test_one_int_object_per_block():
    # The CFG shares one int object per block start (cfg.py: callers may compare
    # blocks with `is`; the SSA builder no longer does, test_ssa pins that): every
    # block start the CFG and the dominance results hold is the very object that keys
    # `cfg.blocks` (offsets above 256, which CPython does not cache, come from the
    # offsets, jump targets and exception table)
    from bcfront.analysis.loops import find_loops

    codes = [
        CORPUS[n] for n in ("huge_function", "many_exception_handlers", "with_statements", "nested_loops")
    ]
    checked = 0
    for code in codes + stdlib_code_objects(every=200):
        cfg = build_cfg(code)
        key = {s: s for s in cfg.blocks}
        idom = cfg_idom(cfg)
        df = cfg_dominance_frontier(cfg)
        post = cfg_post_idom(cfg)
        loops = find_loops(cfg, cfg_dominance(cfg))
        held = [*cfg.rpo, *cfg.order, *cfg.exit_preds, *cfg.out_kinds, *idom, *df, *post]
        for blk in cfg.blocks.values():
            held += blk.succs + blk.preds
        held += [d for d in [*idom.values(), *post.values()] if d is not None and d != EXIT]
        held += [b for s in df.values() for b in s]
        for lp in loops:
            held += [lp.header, *lp.body, *(x for e in lp.back_edges + lp.exits for x in e)]
        held = [s for s in held if s != EXIT]
        assert all(key[s] is s for s in held), code
        checked += sum(s > 256 for s in held)
    assert checked > 1000  # the cases that matter were met


# -- random graphs -------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_random_graphs_against_networkx_and_brute_force(graph):
    succ, entry = graph
    pred = preds_of(succ)
    idom = immediate_dominators(entry, succ.__getitem__, pred.__getitem__)
    assert idom[entry] is None
    g = nx_of(succ)
    assert {n: d for n, d in idom.items() if n != entry} == nx_idom(g, entry)
    dom = brute_dominators(succ, entry)
    assert {n: d for n, d in idom.items() if n != entry} == brute_idom(dom, entry)
    df = dominance_frontier(idom, pred.__getitem__)
    assert df == {k: set(v) for k, v in nx.dominance_frontiers(g, entry).items()}
    assert df == brute_frontier(succ, dom)
    for a in succ:
        for b in succ:
            assert dominates(idom, a, b) == (b in dom and a in dom[b])


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_reverse_postorder_is_dfs_postorder_reversed(graph):
    succ, entry = graph
    # networkx's DFS visits successors in insertion order, as ours does (first occurrence)
    want = list(nx.dfs_postorder_nodes(nx_of(succ), entry))[::-1]
    assert reverse_postorder(entry, succ.__getitem__) == want


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_random_post_dominators(graph):
    succ, entry = graph
    # post-dominance = dominance on the reversed graph rooted at a virtual exit fed by sinks
    rev = preds_of(succ)
    sinks = [n for n in reach(succ, entry) if not succ[n]]
    rev["exit"] = sinks
    fwd = {n: list(vs) for n, vs in succ.items()}
    for s in sinks:
        fwd[s] = fwd[s] + ["exit"]
    fwd["exit"] = []
    post = immediate_dominators("exit", rev.__getitem__, fwd.__getitem__)
    assert {n: d for n, d in post.items() if n != "exit"} == nx_idom(nx_of(rev), "exit")


def test_long_chain_under_a_low_recursion_limit(shallow_stack):
    n = 20_000
    succ = {i: [i + 1] for i in range(n)}
    succ[n] = [0]  # one loop around everything
    pred = preds_of(succ)
    with shallow_stack():
        idom = immediate_dominators(0, succ.__getitem__, pred.__getitem__)
        df = dominance_frontier(idom, pred.__getitem__)
    assert idom[n] == n - 1 and df[n] == {0}


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_numbered_core_on_random_graphs(graph):
    # the integer core of the generic `immediate_dominators`, fed RPO numbers directly
    from bcfront.analysis.dominance import idom_numbers

    succ, entry = graph
    order = reverse_postorder(entry, succ.__getitem__)
    num = {n: i for i, n in enumerate(order)}
    pred = preds_of(succ)
    preds = [[num[p] for p in pred[n] if p in num] for n in order]
    doms = idom_numbers(preds)
    g = nx_of(succ)
    assert {order[i]: order[d] for i, d in enumerate(doms) if i} == nx_idom(g, entry)


def test_shallow_stack_would_catch_a_recursive_walk(shallow_stack):
    # the fixture the corpus tests run under really stops a recursive DFS of a big CFG
    cfg = build_cfg(CORPUS["huge_function"])

    def dfs(b, seen):
        seen.add(b)
        for s in cfg.blocks[b].succs:
            if s not in seen:
                dfs(s, seen)

    with shallow_stack(), pytest.raises(RecursionError):
        dfs(cfg.entry, set())
