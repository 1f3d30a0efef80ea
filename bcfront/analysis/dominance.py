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
    # Only the first pass meets unprocessed predecessors, along retreating edges;
    # without one, the first pass is already the fixpoint, which spares acyclic
    # graphs (most functions) the confirming second pass.
    cyclic = False
    while True:
        changed = False
        for i in range(1, n):
            new = -1
            for p in preds[i]:
                if doms[p] < 0:
                    cyclic = True
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
        if not (changed and cyclic):
            return doms


def frontier_numbers(preds: Sequence[Sequence[int]], doms: Sequence[int],
                     names: Sequence[Node] | None = None) -> list[set]:
    """Dominance frontiers on RPO numbers (the runner formulation); the sets hold
    `names[i]` for node i (its number when `names` is None)."""
    if names is None:
        names = range(len(preds))
    df: list[set] = [set() for _ in preds]
    for i, ps in enumerate(preds):
        if i == 0:
            # The root is a join of the (implicit) way in and its back edges: every
            # dominator of a predecessor has it in its frontier, the root included.
            root = names[0]
            for r in ps:
                df[r].add(root)
                while r:
                    r = doms[r]
                    df[r].add(root)
            continue
        if len(ps) < 2:
            continue  # a single predecessor is the idom: nothing to add
        stop = doms[i]
        name = names[i]
        for r in ps:
            while r != stop:
                df[r].add(name)
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
    on the CFG: dominators, frontiers and loops all start from them)."""
    hit = cfg.__dict__.get("_rpo_preds")
    if hit is None:
        order = cfg.rpo
        hit = cfg._rpo_preds = (order, _numbered_preds(order, cfg.blocks))
    return hit


def _numbered_preds(order: list, blocks: dict) -> list[list[int]]:
    """For each block of `order`, the positions in `order` of its predecessors there."""
    get = dict(zip(order, range(len(order)))).get
    out = []
    for n in order:
        ns = list(map(get, blocks[n].preds))
        if None in ns:    # a predecessor outside the order (rare: unreachable code)
            ns = [j for j in ns if j is not None]
        out.append(ns)
    return out


def _lone_block(cfg: CFG) -> int | None:
    """The entry, if it is the only block and no edge leads back to it (most code
    objects): its dominance questions have fixed answers."""
    blocks = cfg.blocks
    if len(blocks) == 1 and not blocks[cfg.entry].preds:
        return cfg.entry
    return None


def _cfg_doms(cfg: CFG, idom: Mapping) -> list[int]:
    """Idom RPO numbers matching `idom` (cached by `cfg_idom`, else derived from it)."""
    hit = cfg.__dict__.get("_rpo_doms")
    if hit is not None and hit[0] is idom:
        return hit[1]
    order = _cfg_numbers(cfg)[0]
    index = dict(zip(order, range(len(order))))
    return [index[idom[n]] if idom[n] is not None else 0 for n in order]


def cfg_idom(cfg: CFG) -> dict[int, int | None]:
    """Immediate dominators of the reachable blocks; the entry maps to None."""
    if not cfg.blocks:
        return {}
    lone = _lone_block(cfg)
    if lone is not None:
        out = {lone: None}
        cfg._rpo_doms = (out, [0])
        return out
    order, preds = _cfg_numbers(cfg)
    doms = idom_numbers(preds)
    out: dict[int, int | None] = dict(zip(order, map(order.__getitem__, doms)))
    out[cfg.entry] = None
    cfg._rpo_doms = (out, doms)   # for frontiers and loops
    return out


def cfg_dominance_frontier(cfg: CFG, idom: Mapping[int, int | None]) -> dict[int, set[int]]:
    """Dominance frontier of every reachable block."""
    if not idom:
        return {}
    lone = _lone_block(cfg)
    if lone is not None:
        return {lone: set()}
    order, preds = _cfg_numbers(cfg)
    return dict(zip(order, frontier_numbers(preds, _cfg_doms(cfg, idom), order)))


def cfg_retreating(cfg: CFG) -> list[tuple[int, int]]:
    """Retreating edges (p, i) of the reachable graph by RPO numbers (p >= i): empty iff
    it is acyclic.  Cached on the CFG (loops and post-dominators both ask)."""
    hit = cfg.__dict__.get("_rpo_retreating")
    if hit is None:
        if _lone_block(cfg) is not None:
            return []
        preds = _cfg_numbers(cfg)[1]
        hit = cfg._rpo_retreating = [(p, i) for i, ps in enumerate(preds) for p in ps if p >= i]
    return hit


def cfg_post_idom(cfg: CFG) -> dict[int, int | None]:
    """Immediate post-dominators, rooted at the virtual exit `EXIT` (-1).

    Blocks that cannot reach the exit (infinite loops) are absent.  The
    reversed graph's successors are the CFG's predecessors and vice versa;
    blocks in `exit_preds` are the exit's (reversed) successors.
    """
    blocks = cfg.blocks
    if not blocks:
        return {}
    lone = _lone_block(cfg)
    if lone is not None:
        return {EXIT: None, lone: EXIT} if cfg.exit_preds else {EXIT: None}
    if len(cfg.rpo) == len(blocks) and not cfg_retreating(cfg):
        # Acyclic with every block reachable (most functions): the forward post-order,
        # after the exit, already has every block after its successors and after its
        # post-dominators, which is all the algorithm needs of its order; no DFS of
        # the reversed graph.
        order = cfg.rpo[::-1]
        order.insert(0, EXIT)
    else:
        order = _reversed_rpo(blocks, cfg.exit_preds)
    index = dict(zip(order, range(len(order))))
    get = index.get
    preds = [[]]                    # the exit has no (reversed) predecessor
    for n in order[1:]:
        ps = list(map(get, blocks[n].succs))
        if None in ps:              # a successor that cannot reach the exit
            ps = [j for j in ps if j is not None]
        preds.append(ps)
    for n in cfg.exit_preds:        # the edges into the exit, reversed
        preds[index[n]].append(0)
    doms = idom_numbers(preds)
    out: dict[int, int | None] = {}
    for n, d in zip(order, doms):
        if d >= 0:                  # -1: cannot reach the exit (only in the acyclic order)
            out[n] = order[d]
    out[EXIT] = None
    return out


def _reversed_rpo(blocks: dict, exit_preds: list[int]) -> list[int]:
    """`reverse_postorder` of the reversed CFG from `EXIT` (predecessors in order),
    without the callables."""
    seen = {EXIT}
    order: list[int] = []
    stack = [(EXIT, iter(exit_preds))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(blocks[s].preds)))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order
