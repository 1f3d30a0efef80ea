"""Reference dominators, post-dominators and dominance frontiers, from the definitions.

Algorithm: the textbook iterative dataflow over dominator *sets* (Aho, Sethi,
Ullman; Cooper and Torczon, "Engineering a Compiler", 9.2.1):

    Dom(root) = {root};  Dom(n) = {n} ∪ ⋂ Dom(p) over the predecessors p of n

iterated until nothing changes, starting from "every node" for n != root.  The
immediate dominator of n is its strict dominator that every other strict
dominator of n dominates: the one with the largest dominator set.  The
dominance frontier of d is, by definition, the set of nodes n with an edge
p -> n such that d dominates p but does not strictly dominate n.
Post-dominance is dominance on the reversed graph, rooted at the virtual exit.

Quadratic in the number of blocks; the fast versions are `bcfront.analysis.dominance`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from ..cfg import EXIT
from .cfg import RefCFG

N = TypeVar("N", bound=Hashable)  # a graph's nodes


def dominator_sets(root: N, nodes: Sequence[N], preds: Callable[[N], Iterable[N]]) -> dict[N, set[N]]:
    """Dom(n) for every node of `nodes` (those reachable from `root`, root first)."""
    everything = set(nodes)
    dom = {n: set(everything) for n in nodes}
    dom[root] = {root}
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if n == root:
                continue
            new = set(everything)
            for p in preds(n):
                if p in dom:
                    new &= dom[p]
            new.add(n)
            if new != dom[n]:
                dom[n] = new
                changed = True
    return dom


def immediate_dominators(dom: dict[N, set[N]]) -> dict[N, N | None]:
    """idom(n): the strict dominator of n with the most dominators (the root: None)."""
    idom: dict[N, N | None] = {}
    for n, ds in dom.items():
        strict = ds - {n}
        idom[n] = max(strict, key=lambda d: len(dom[d])) if strict else None
    return idom


def frontiers(dom: dict[N, set[N]], edges: Iterable[tuple[N, N]]) -> dict[N, set[N]]:
    """DF(d) = {n : some edge p -> n with d in Dom(p) and d not strictly dominating n}."""
    df: dict[N, set[N]] = {n: set() for n in dom}
    for p, n in edges:
        if p not in dom or n not in dom:
            continue
        for d in dom[p]:
            if d == n or d not in dom[n]:
                df[d].add(n)
    return df


def cfg_idom(cfg: RefCFG) -> dict[int, int | None]:
    """Immediate dominators of the reachable blocks."""
    dom = dominator_sets(cfg.entry, cfg.rpo, lambda n: cfg.blocks[n].preds)
    return immediate_dominators(dom)


def cfg_frontiers(cfg: RefCFG) -> dict[int, set[int]]:
    """Dominance frontier of every reachable block."""
    dom = dominator_sets(cfg.entry, cfg.rpo, lambda n: cfg.blocks[n].preds)
    edges = [(b, s) for b in cfg.rpo for s, _ in cfg.blocks[b].succs]
    return frontiers(dom, edges)


def cfg_post_idom(cfg: RefCFG) -> dict[int, int | None]:
    """Immediate post-dominators, rooted at the virtual exit `EXIT`; the blocks that
    cannot reach the exit are absent (they have no post-dominator)."""
    # the reversed graph: a node's predecessors are its successors in the CFG, and the
    # exit for the blocks that lead to it
    rsuccs: dict[int, list[int]] = {EXIT: list(cfg.exit_preds)}
    rpreds: dict[int, list[int]] = {b: [s for s, _ in blk.succs] for b, blk in cfg.blocks.items()}
    rpreds[EXIT] = []
    for b in cfg.exit_preds:
        rpreds[b].append(EXIT)
    for b, blk in cfg.blocks.items():
        for s, _ in blk.succs:
            rsuccs.setdefault(s, []).append(b)
    order = [EXIT]  # the nodes that reach the exit, by a search
    seen = {EXIT}
    for n in order:
        for m in rsuccs.get(n, ()):
            if m not in seen:
                seen.add(m)
                order.append(m)
    dom = dominator_sets(EXIT, order, lambda n: rpreds[n])
    return immediate_dominators(dom)
