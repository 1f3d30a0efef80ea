"""Natural loops, nesting and irreducible regions against brute-force definitions
(dominators by node removal, loop bodies by backward search avoiding the header,
irreducibility as a cycle left after removing back edges), on the corpus,
hand-made irreducible bytecode, random graphs and the standard library."""

from __future__ import annotations

import networkx as nx
import pytest
from corpus import CORPUS, corpus_code_objects, irreducible_code, stdlib_code_objects
from graph_oracles import brute_dominators, graphs, preds_of, reach
from hypothesis import given, settings

from bcfront.analysis.cfg import build_cfg
from bcfront.analysis.decode import decode
from bcfront.analysis.dominance import cfg_dominance, cfg_dominance_frontier, cfg_post_idom
from bcfront.analysis.loops import Loop, find_loops, natural_loops

CORPUS_CODES = corpus_code_objects()


# -- the oracle ----------------------------------------------------------------


class _Dominators:
    """dom[n] for big graphs: `d in dom[n]` by dominator-tree intervals built from
    networkx's idom (node removal is quadratic)."""

    def __init__(self, succ: dict, entry):
        g = nx.DiGraph()
        g.add_nodes_from(succ)
        g.add_edges_from((u, v) for u, vs in succ.items() for v in vs)
        idom = dict(nx.immediate_dominators(g, entry))
        idom.pop(entry, None)
        kids: dict = {}
        for n, d in idom.items():
            kids.setdefault(d, []).append(n)
        self.pre, self.post, clock = {}, {}, 0
        work = [(entry, False)]
        while work:
            n, done = work.pop()
            if done:
                self.post[n] = clock
            else:
                self.pre[n] = clock
                clock += 1
                work.append((n, True))
                work.extend((k, False) for k in kids.get(n, ()))

    def __contains__(self, n) -> bool:
        return n in self.pre

    def __iter__(self):
        return iter(self.pre)

    def __getitem__(self, n):
        outer = self

        class _Set:
            def __contains__(self, d) -> bool:
                return outer.pre[d] <= outer.pre[n] and outer.post[n] <= outer.post[d]

        return _Set()


def brute_loops(succ: dict, entry, dom: dict | None = None) -> dict:
    """Everything find_loops reports, from the definitions."""
    nodes = reach(succ, entry)
    dom = dom if dom is not None else brute_dominators(succ, entry)
    all_preds = preds_of(succ)
    pred = {n: [p for p in all_preds[n] if p in nodes] for n in nodes}
    back = {(u, v) for u in nodes for v in succ[u] if v in dom[u]}
    headers = sorted({h for _, h in back})
    body = {}
    for h in headers:
        b = {h}
        for u, hh in back:
            if hh == h:
                b |= reach(pred, u, removed=h)
        body[h] = frozenset(b)
    exits = {
        h: tuple(sorted({(x, s) for x in body[h] for s in succ[x] if s not in body[h]})) for h in headers
    }
    # loops containing each block; parent = smallest strict superset, depth = supersets
    holding: dict = {n: [] for n in nodes}
    for h in headers:
        for n in body[h]:
            holding[n].append(h)
    parent, depth = {}, {}
    for h in headers:
        outer = [g for g in holding[h] if g != h and body[h] < body[g]]
        parent[h] = min(outer, key=lambda g: len(body[g])) if outer else None
        depth[h] = 1 + len(outer)
    innermost = {n: min(hs, key=lambda h: len(body[h])) if hs else None for n, hs in holding.items()}
    forward = nx.DiGraph()
    forward.add_nodes_from(nodes)
    forward.add_edges_from((u, v) for u in nodes for v in succ[u] if (u, v) not in back)
    return {
        "back": back,
        "body": body,
        "exits": exits,
        "parent": parent,
        "depth": depth,
        "innermost": innermost,
        "irreducible": not nx.is_directed_acyclic_graph(forward),
        "dom": dom,
        "pred": pred,
    }


def check_forest(forest, succ: dict, entry, dom: dict | None = None) -> None:
    want = brute_loops(succ, entry, dom)
    assert sorted(lp.header for lp in forest.loops) == sorted(want["body"])
    for lp in forest.loops:
        h = lp.header
        assert isinstance(lp, Loop)
        assert lp.body == want["body"][h]
        assert set(lp.back_edges) == {e for e in want["back"] if e[1] == h}
        assert lp.exits == want["exits"][h]
        assert lp.parent == want["parent"][h]
        assert lp.depth == want["depth"][h]
        assert set(lp.children) == {g for g, p in want["parent"].items() if p == h}
        assert forest.loop(h) is lp
    # parents before children
    seen = set()
    for lp in forest.loops:
        assert lp.parent is None or lp.parent in seen
        seen.add(lp.header)
    for n, h in want["innermost"].items():
        got = forest.loop_of(n)
        assert (got.header if got else None) == h
    assert bool(forest.irreducible) == want["irreducible"]
    check_regions(forest, succ, want)


def check_regions(forest, succ: dict, want: dict) -> None:
    dom, pred = want["dom"], want["pred"]
    for region in forest.irreducible:
        blocks = region.blocks
        sub = nx.DiGraph()
        sub.add_nodes_from(blocks)
        sub.add_edges_from((u, v) for u in blocks for v in succ[u] if v in blocks)
        assert nx.is_strongly_connected(sub)
        assert list(region.entries) == sorted(b for b in blocks if any(p not in blocks for p in pred[b]))
        assert len(region.entries) >= 2
        for u, v in region.retreating_edges:
            assert v in succ[u] and v not in dom[u]  # not a back edge
            common = dom[u] & dom[v]  # nearest common dominator
            d = max(common, key=lambda x: len(dom[x]))
            inside = {x for x in dom if d in dom[x] and x != d}
            g = nx.DiGraph()
            g.add_nodes_from(inside)
            g.add_edges_from((x, y) for x in inside for y in succ[x] if y in inside)
            scc = next(c for c in nx.strongly_connected_components(g) if v in c)
            assert u in scc and blocks == scc


def cfg_succ(cfg) -> dict:
    return {s: list(b.succs) for s, b in cfg.blocks.items()}


# -- CFGs ----------------------------------------------------------------------


@pytest.mark.parametrize("name,code", CORPUS_CODES, ids=[n for n, _ in CORPUS_CODES])
def test_corpus(name, code, shallow_stack):
    cfg = build_cfg(code)
    dom = cfg_dominance(cfg)
    with shallow_stack():
        forest = find_loops(cfg, dom)
    succ = cfg_succ(cfg)
    dom = brute_dominators(succ, cfg.entry) if len(cfg.blocks) <= 150 else _Dominators(succ, cfg.entry)
    check_forest(forest, succ, cfg.entry, dom)
    assert not forest.irreducible  # CPython's compiler emits reducible graphs


def test_loops_of_known_shapes():
    forest = find_loops(build_cfg(CORPUS["nested_loops"]))
    assert max(lp.depth for lp in forest.loops) >= 3
    assert len(forest.roots) == 1
    forest = find_loops(build_cfg(CORPUS["while_true"]))
    assert len(forest.loops) == 1 and forest.loops[0].exits == ()
    assert find_loops(build_cfg(CORPUS["straight_line"])).loops == []
    cfg = build_cfg(CORPUS["for_else"])
    forest = find_loops(cfg)
    ret_blocks = [s for s, b in cfg.blocks.items() if b.last.op in ("RETURN_VALUE", "RETURN_CONST")]
    assert ret_blocks and all(forest.loop_of(b) is None for b in ret_blocks)
    assert len(forest.loops) == 1 and forest.loops[0].exit_blocks


def test_irreducible_bytecode_is_reported_not_looped():
    code = irreducible_code()
    cfg = build_cfg(code)
    forest = find_loops(cfg, cfg_dominance(cfg))
    assert forest.loops == [] and not forest.reducible
    (region,) = forest.irreducible
    # entry -> A (fall-through) and entry -> B (branch): both are ways into the A/B/C cycle
    entry_succs = set(cfg.blocks[cfg.entry].succs)
    assert set(region.entries) == entry_succs and len(region.blocks) == 3
    check_forest(forest, cfg_succ(cfg), cfg.entry)
    # the rest of the pipeline copes with it too
    cfg_dominance_frontier(cfg)
    cfg_post_idom(cfg)


def test_facade_exposes_the_forest():
    import bcfront

    fa = bcfront.analyze(CORPUS["nested_loops"])
    assert fa.loops is not None and len(fa.loops.loops) >= 3


# -- random graphs -------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_random_graphs(graph):
    succ, entry = graph
    pred = preds_of(succ)
    forest = natural_loops(entry, succ.__getitem__, pred.__getitem__)
    check_forest(forest, succ, entry)


# -- the standard library --------------------------------------------------------


def pipeline(code) -> None:
    """decode + CFG + dominance + loops, as the facade runs them."""
    cfg = build_cfg(decode(code))
    dom = cfg_dominance(cfg)
    cfg_dominance_frontier(cfg, dom)
    cfg_post_idom(cfg, dom)
    forest = find_loops(cfg, dom)
    assert not forest.irreducible, code


def test_stdlib_sample_pipeline(shallow_stack):
    codes = stdlib_code_objects(every=25)
    assert len(codes) > 2000
    with shallow_stack():
        for code in codes:
            pipeline(code)


def test_stdlib_sample_loops_against_brute_force():
    for code in stdlib_code_objects(every=70):
        cfg = build_cfg(code)
        if len(cfg.blocks) <= 60:
            check_forest(find_loops(cfg), cfg_succ(cfg), cfg.entry)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # every code object of the standard library: minutes
def test_all_of_stdlib_pipeline(shallow_stack):
    codes = stdlib_code_objects()
    with shallow_stack():
        for code in codes:
            pipeline(code)
