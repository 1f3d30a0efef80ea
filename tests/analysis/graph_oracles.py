"""Independent oracles for the graph analyses: brute-force definitions, networkx
adapters, and a hypothesis strategy of random graphs (irreducible ones included).

Graphs are ``{node: [successor, ...]}`` dicts (repeated successors allowed).
"""

from __future__ import annotations

import networkx as nx
from hypothesis import strategies as st


def reach(succ: dict, start, removed=None) -> set:
    """Nodes reachable from `start` without entering `removed`."""
    if start == removed:
        return set()
    seen, work = {start}, [start]
    while work:
        for s in succ.get(work.pop(), ()):
            if s not in seen and s != removed:
                seen.add(s)
                work.append(s)
    return seen


def brute_dominators(succ: dict, entry) -> dict:
    """dom[n] = {d : n is unreachable from the entry once d is removed} (plus n itself)."""
    nodes = reach(succ, entry)
    dom = {n: {n} for n in nodes}
    for d in nodes:
        for n in nodes - reach(succ, entry, removed=d):
            dom[n].add(d)
    return dom


def brute_idom(dom: dict, entry) -> dict:
    """idom(n): the strict dominator of n that every other strict dominator dominates."""
    out = {}
    for n, ds in dom.items():
        if n == entry:
            continue
        strict = ds - {n}
        out[n] = next(d for d in strict if strict <= dom[d])
    return out


def brute_frontier(succ: dict, dom: dict) -> dict:
    """DF(d) = {n : d dominates a predecessor of n and does not strictly dominate n}."""
    df = {d: set() for d in dom}
    for p in dom:
        for n in succ.get(p, ()):
            if n not in dom:
                continue
            for d in dom[p]:
                if not (d in dom[n] and d != n):
                    df[d].add(n)
    return df


def nx_of(succ: dict) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(succ)
    for u, vs in succ.items():
        g.add_edges_from((u, v) for v in vs)
    return g


def nx_idom(g: nx.DiGraph, entry) -> dict:
    d = dict(nx.immediate_dominators(g, entry))
    d.pop(entry, None)  # networkx < 3.6 maps the start to itself, later ones omit it
    return d


@st.composite
def graphs(draw, max_nodes: int = 14):
    """(succ dict, entry): random digraphs with self-loops and repeated edges allowed;
    about a third get a planted two-entry cycle, the smallest irreducible shape."""
    n = draw(st.integers(1, max_nodes))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    if n >= 3 and draw(st.integers(0, 2)) == 0:
        a, b = draw(st.sampled_from([(i, j) for i in range(1, n) for j in range(1, n) if i != j]))
        edges += [(0, a), (0, b), (a, b), (b, a)]
    succ = {i: [] for i in range(n)}
    for u, v in edges:
        succ[u].append(v)
    return succ, 0


def preds_of(succ: dict) -> dict:
    pred = {n: [] for n in succ}
    for u, vs in succ.items():
        for v in vs:
            pred[v].append(u)
    return pred
