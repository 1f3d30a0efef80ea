"""Dominators, post-dominators and dominance frontiers of a `CFG`.

Definitions: block d dominates n iff every path from the entry to n passes
through d; the immediate dominator idom(n) is the unique strict dominator of n
dominated by every other strict dominator of n.  Post-dominance is the same on
the reversed graph rooted at the virtual exit.  The dominance frontier of d is
the set of blocks n such that d dominates a predecessor of n but does not
strictly dominate n.

Algorithm: Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm"
(iterative over reverse post-order).  Nothing here recurses on the graph, so
10,000-block functions are fine under any recursion limit.
"""
from __future__ import annotations

from typing import Callable, Hashable, Iterable, Mapping

from .cfg import CFG, EXIT

Node = Hashable


def reverse_postorder(entry: Node, succs: Callable[[Node], Iterable[Node]]) -> list[Node]:
    """Nodes reachable from `entry` in reverse post-order (iterative DFS)."""
    seen = {entry}
    order: list[Node] = []
    stack = [(entry, iter(succs(entry)))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succs(s))))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def immediate_dominators(entry: Node, succs: Callable[[Node], Iterable[Node]],
                         preds: Callable[[Node], Iterable[Node]]) -> dict[Node, Node | None]:
    """idom of every node reachable from `entry`; the entry maps to None."""
    rpo = reverse_postorder(entry, succs)
    index = {n: i for i, n in enumerate(rpo)}
    idom: dict[Node, Node] = {entry: entry}
    changed = True
    while changed:
        changed = False
        for n in rpo[1:]:
            new = None
            for p in preds(n):
                if p not in idom:
                    continue
                if new is None:
                    new = p
                    continue
                a, b = p, new
                while a != b:  # intersect: walk up the tree by RPO index
                    while index[a] > index[b]:
                        a = idom[a]
                    while index[b] > index[a]:
                        b = idom[b]
                new = a
            if new is not None and idom.get(n) != new:
                idom[n] = new
                changed = True
    out: dict[Node, Node | None] = dict(idom)
    out[entry] = None
    return out


def dominance_frontier(idom: Mapping[Node, Node | None],
                       preds: Callable[[Node], Iterable[Node]]) -> dict[Node, set[Node]]:
    """DF of every node in `idom` (Cooper–Harvey–Kennedy's runner formulation)."""
    df: dict[Node, set[Node]] = {n: set() for n in idom}
    for n in idom:
        ps = [p for p in preds(n) if p in idom]
        if len(ps) < 2:
            continue
        for p in ps:
            runner = p
            while runner is not None and runner != idom[n]:
                df[runner].add(n)
                runner = idom[runner]
    return df


def dominator_tree(idom: Mapping[Node, Node | None]) -> dict[Node, list[Node]]:
    """Children of each node in the dominator tree, in key order of `idom`."""
    tree: dict[Node, list[Node]] = {n: [] for n in idom}
    for n, d in idom.items():
        if d is not None:
            tree[d].append(n)
    return tree


def dominates(idom: Mapping[Node, Node | None], a: Node, b: Node) -> bool:
    """Whether a dominates b (reflexive).  False if either is unreachable."""
    if a not in idom or b not in idom:
        return False
    while b is not None:
        if b == a:
            return True
        b = idom[b]
    return False


# -- CFG adapters ------------------------------------------------------------

def cfg_idom(cfg: CFG) -> dict[int, int | None]:
    if not cfg.blocks:
        return {}
    return immediate_dominators(cfg.entry, cfg.successors, cfg.predecessors)


def cfg_dominance_frontier(cfg: CFG, idom: Mapping[int, int | None]) -> dict[int, set[int]]:
    return dominance_frontier(idom, cfg.predecessors)


def _reverse_adjacency(cfg: CFG):
    exits = set(cfg.exit_preds)

    def rsuccs(n):  # successors in the reversed graph = predecessors
        if n == EXIT:
            return cfg.exit_preds
        return cfg.blocks[n].preds

    def rpreds(n):
        if n == EXIT:
            return ()
        out = list(cfg.blocks[n].succs)
        if n in exits:
            out.append(EXIT)
        return out
    return rsuccs, rpreds


def cfg_post_idom(cfg: CFG) -> dict[int, int | None]:
    """Immediate post-dominators, rooted at the virtual exit `EXIT` (-1).

    Blocks that cannot reach the exit (infinite loops) are absent.
    """
    if not cfg.blocks:
        return {}
    rsuccs, rpreds = _reverse_adjacency(cfg)
    return immediate_dominators(EXIT, rsuccs, rpreds)
