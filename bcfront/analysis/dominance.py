"""Dominators, post-dominators and dominance frontiers of a `CFG` (or any graph).

Definitions: block d dominates n iff every path from the entry to n passes
through d; the immediate dominator idom(n) is the unique strict dominator of n
dominated by every other strict dominator of n.  Post-dominance is the same on
the reversed graph rooted at the virtual exit.  The dominance frontier of d is
the set of blocks n such that d dominates a predecessor of n but does not
strictly dominate n.  Only nodes reachable from the root have dominators.

Algorithm: Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm"
(iterative over reverse post-order), on integer RPO numbers so that the
"intersect" walk compares ints; frontiers with the same paper's runner
formulation.  Nothing here recurses, so 10,000-block functions are fine under
any recursion limit.

The generic functions take a root and successor/predecessor callables, so the
tests can feed them random graphs; the ``cfg_*`` adapters run them on a CFG.
"""
from __future__ import annotations

from typing import Callable, Hashable, Iterable, Mapping, Sequence

from .cfg import CFG, EXIT

Node = Hashable


def reverse_postorder(entry: Node, succs: Callable[[Node], Iterable[Node]]) -> list[Node]:
    """Nodes reachable from `entry` in reverse post-order (iterative DFS, successors in order)."""
    seen = {entry}
    order: list[Node] = []
    stack = [(entry, iter(succs(entry)))]
    push, pop, post = stack.append, stack.pop, order.append
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                push((s, iter(succs(s))))
                break
        else:
            pop()
            post(node)
    order.reverse()
    return order


def _pred_numbers(order: Sequence[Node], preds: Callable[[Node], Iterable[Node]]
                  ) -> list[list[int]]:
    """For each node (by RPO number), the RPO numbers of its reachable predecessors."""
    index = {n: i for i, n in enumerate(order)}
    get = index.get
    return [[j for j in map(get, preds(n)) if j is not None] for n in order]


def idom_numbers(preds: Sequence[Sequence[int]]) -> list[int]:
    """Cooper–Harvey–Kennedy on RPO numbers: node 0 is the root, `preds[i]` lists
    the RPO numbers of i's predecessors.  Returns idom numbers (the root maps to 0)."""
    n = len(preds)
    doms = [-1] * n
    if not n:
        return doms
    doms[0] = 0
    changed = True
    while changed:
        changed = False
        for i in range(1, n):
            new = -1
            for p in preds[i]:
                if doms[p] < 0:
                    continue
                if new < 0:
                    new = p
                    continue
                a = p
                while a != new:  # intersect: walk the higher-numbered finger up the tree
                    while a > new:
                        a = doms[a]
                    while new > a:
                        new = doms[new]
            if doms[i] != new:
                doms[i] = new
                changed = True
    return doms


def frontier_numbers(preds: Sequence[Sequence[int]], doms: Sequence[int]) -> list[set[int]]:
    """Dominance frontiers on RPO numbers (the runner formulation)."""
    df: list[set[int]] = [set() for _ in preds]
    for i, ps in enumerate(preds):
        if i == 0:
            # The root is a join of the (implicit) way in and its back edges: every
            # dominator of a predecessor has it in its frontier, the root included.
            for r in ps:
                df[r].add(0)
                while r:
                    r = doms[r]
                    df[r].add(0)
            continue
        if len(ps) < 2:
            continue  # a single predecessor is the idom: nothing to add
        stop = doms[i]
        for r in ps:
            while r != stop:
                df[r].add(i)
                r = doms[r]
    return df


def immediate_dominators(entry: Node, succs: Callable[[Node], Iterable[Node]],
                         preds: Callable[[Node], Iterable[Node]]) -> dict[Node, Node | None]:
    """idom of every node reachable from `entry`; the entry maps to None."""
    order = reverse_postorder(entry, succs)
    doms = idom_numbers(_pred_numbers(order, preds))
    out: dict[Node, Node | None] = dict(zip(order, map(order.__getitem__, doms)))
    out[entry] = None
    return out


def dominance_frontier(idom: Mapping[Node, Node | None],
                       preds: Callable[[Node], Iterable[Node]]) -> dict[Node, set[Node]]:
    """DF of every node in `idom` (Cooper–Harvey–Kennedy's runner formulation)."""
    df: dict[Node, set[Node]] = {n: set() for n in idom}
    for n in idom:
        ps = [p for p in preds(n) if p in idom]
        if len(ps) < 2 and idom[n] is not None:  # the root is a join whenever it has preds
            continue
        stop = idom[n]
        for runner in ps:
            while runner is not None and runner != stop:
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
    """Whether a dominates b (reflexive).  False if either is unreachable.  O(depth of b)."""
    if a not in idom or b not in idom:
        return False
    while b is not None:
        if b == a:
            return True
        b = idom[b]
    return False


# -- CFG adapters ------------------------------------------------------------

def _cfg_numbers(cfg: CFG) -> tuple[list[int], list[list[int]]]:
    """Reverse post-order and each block's reachable predecessors by RPO number (cached
    on the CFG: dominators and frontiers both start from them)."""
    hit = cfg.__dict__.get("_rpo_preds")
    if hit is None:
        order = cfg.rpo
        blocks = cfg.blocks
        hit = cfg._rpo_preds = (order, _pred_numbers(order, lambda n: blocks[n].preds))
    return hit


def cfg_idom(cfg: CFG) -> dict[int, int | None]:
    """Immediate dominators of the reachable blocks; the entry maps to None."""
    if not cfg.blocks:
        return {}
    order, preds = _cfg_numbers(cfg)
    doms = idom_numbers(preds)
    out: dict[int, int | None] = dict(zip(order, map(order.__getitem__, doms)))
    out[cfg.entry] = None
    return out


def cfg_dominance_frontier(cfg: CFG, idom: Mapping[int, int | None]) -> dict[int, set[int]]:
    """Dominance frontier of every reachable block."""
    if not idom:
        return {}
    order, preds = _cfg_numbers(cfg)
    index = dict(zip(order, range(len(order))))
    doms = [index[idom[n]] if idom[n] is not None else 0 for n in order]
    df = frontier_numbers(preds, doms)
    return {order[i]: {order[j] for j in s} for i, s in enumerate(df)}


def cfg_post_idom(cfg: CFG) -> dict[int, int | None]:
    """Immediate post-dominators, rooted at the virtual exit `EXIT` (-1).

    Blocks that cannot reach the exit (infinite loops) are absent.  The
    reversed graph's successors are the CFG's predecessors and vice versa;
    blocks in `exit_preds` are the exit's (reversed) successors.
    """
    if not cfg.blocks:
        return {}
    blocks = cfg.blocks
    exits = set(cfg.exit_preds)
    # the reversed graph as dicts, so that the generic code calls C-level lookups
    rsuccs = {n: blk.preds for n, blk in blocks.items()}
    rsuccs[EXIT] = cfg.exit_preds
    rpreds = {n: (blk.succs + [EXIT] if n in exits else blk.succs) for n, blk in blocks.items()}
    rpreds[EXIT] = ()
    return immediate_dominators(EXIT, rsuccs.__getitem__, rpreds.__getitem__)
