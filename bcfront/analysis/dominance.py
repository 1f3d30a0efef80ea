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

One algorithm, two implementations, on purpose:

* the generic functions (`immediate_dominators`, `dominance_frontier`) take a
  root and successor/predecessor callables, for any graph (the tests feed them
  random graphs; `loops.natural_loops` uses them): the algorithm as the paper
  writes it, on RPO numbers;
* the ``cfg_*`` functions are the fast path the facade runs on a `CFG`: the same
  algorithm on the blocks themselves (`_chk`), which skips single-predecessor
  blocks, stops after one pass on acyclic graphs, and hands what it found on the
  way (a `CFGDominance`) to frontiers, post-dominators and loops.

The reference, written to be read, is `bcfront.analysis.reference.dominance`
(the textbook dataflow over dominator sets);
``tests/analysis/test_reference.py`` checks both implementations against it.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Hashable, Iterable, Mapping, Sequence
from itertools import count, islice, repeat
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from . import cfg as cfg_module
from .cfg import CFG, EXIT, Block

Node = Hashable
N = TypeVar("N", bound=Hashable)  # a graph's nodes, where the result keeps their type


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


def _pred_numbers(order: Sequence[Node], preds: Callable[[Node], Iterable[Node]]) -> list[list[int]]:
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


def immediate_dominators(
    entry: Node, succs: Callable[[Node], Iterable[Node]], preds: Callable[[Node], Iterable[Node]]
) -> dict[Node, Node | None]:
    """idom of every node reachable from `entry`; the entry maps to None."""
    order = reverse_postorder(entry, succs)
    doms = idom_numbers(_pred_numbers(order, preds))
    out: dict[Node, Node | None] = dict(zip(order, map(order.__getitem__, doms)))
    out[entry] = None
    return out


def dominance_frontier(
    idom: Mapping[Node, Node | None], preds: Callable[[Node], Iterable[Node]]
) -> dict[Node, set[Node]]:
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


def dominator_tree(idom: Mapping[N, N | None]) -> dict[N, list[N]]:
    """Children of each node in the dominator tree, in key order of `idom`."""
    tree: dict[N, list[N]] = {n: [] for n in idom}
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


def _chk(
    order: list[int],
    blocks: dict[int, Block],
    forward: bool,
    exits: Container[int],
    partial: bool,
    retreating: list[tuple[int, int]] | None,
) -> tuple[dict[int, int | None], list[tuple[int, int, list[int]]], dict[int, int]]:
    """Cooper–Harvey–Kennedy on the blocks themselves: `order` is a reverse post-order
    of the graph (root first), a block's predecessors are its `preds` (`forward`) or
    its `succs` (the reversed graph, rooted at the virtual exit), and the blocks in
    `exits` have the root among them too (post-dominance).  `partial`: predecessors
    may lie outside the order.  Retreating edges (as RPO number pairs) go to
    `retreating` when it is a list.

    Returns the idom of each node (the root maps to None), in `order`; the joins:
    (node, RPO number, predecessors in the order) for each node with several; and the
    RPO numbers (a dict).  The
    fingers compare RPO numbers, looked up from a dict: cheaper than renumbering
    every predecessor list, and a node with one predecessor (most of them) has it
    for idom without more work."""
    root = order[0]
    out: dict[int, Any] = {root: None}  # (int | None: only the root maps to None)
    pos = dict(zip(order, count()))
    joins: list[tuple[int, int, list[int]]] = []
    cyclic = False
    for blk in map(blocks.__getitem__, islice(order, 1, None)):
        b = blk.start
        if b in exits:
            out[b] = root
            continue
        ps = blk.preds if forward else blk.succs
        if len(ps) == 1:  # the predecessor precedes b in RPO (its DFS parent)
            out[b] = ps[0]
        else:
            if partial:
                ps = [p for p in ps if p in pos]
            i = pos[b]
            joins.append((b, i, ps))
            # the first pass, in RPO: a predecessor at or after b is the source of a
            # retreating edge, not processed yet; every other one has its idom, and so
            # do the nodes up its idom chain (all before it)
            new = None
            pn = 0
            for p in ps:
                pp = pos[p]
                if pp >= i:
                    cyclic = True
                    if retreating is not None:
                        retreating.append((pp, i))
                    continue
                if new is None:
                    new, pn = p, pp
                elif pp != pn:
                    new, pn = _intersect(new, pn, p, pp, out, pos)
            out[b] = new
    # Without a retreating edge the first pass is already the fixpoint (acyclic graphs:
    # most functions); else the joins iterate (their predecessors all have idoms now).
    while cyclic:
        cyclic = False
        for b, _i, ps in joins:
            it = iter(ps)
            new = next(it)
            pn = pos[new]
            for p in it:
                pp = pos[p]
                if pp != pn:
                    new, pn = _intersect(new, pn, p, pp, out, pos)
            if out[b] != new:
                out[b] = new
                cyclic = True
    return out, joins, pos


def _intersect(a: int, an: int, b: int, bn: int, out: dict[int, Any], pos: dict[int, int]) -> tuple[int, int]:
    """The nearest common dominator of `a` and `b` (RPO numbers `an`, `bn`), and its
    RPO number: walk the later finger up the tree until the two meet."""
    while an != bn:
        while bn > an:
            b = out[b]
            bn = pos[b]
        while an > bn:
            a = out[a]
            an = pos[a]
    return a, an


class CFGDominance(NamedTuple):
    """What the dominator pass over a CFG finds, beside the immediate dominators, that
    frontiers, loops and post-dominators reuse (the facade computes it once and passes
    it along; `cfg_dominance` makes one).  Positions are RPO numbers: a block's index
    in `cfg.rpo`.  (A NamedTuple: immutable, and cheap to make for every code object.)"""

    idom: dict[int, int | None]  # reachable block -> its idom (the entry: None)
    rpo_number: Mapping[int, int]  # reachable block -> its position in `cfg.rpo`
    root_preds: Sequence[int]  # the entry's reachable predecessors
    # the reachable blocks with several predecessors: (block, RPO number, predecessors)
    joins: Sequence[tuple[int, int, list[int]]]
    # retreating edges (p, i) by RPO numbers (p >= i), by i then in predecessor order:
    # empty iff the reachable graph is acyclic
    retreating: Sequence[tuple[int, int]]


_new = tuple.__new__
_FIRST = MappingProxyType({0: 0})  # a one-block CFG's RPO numbers (its entry is offset 0)


def cfg_dominance(cfg: CFG) -> CFGDominance:
    """Immediate dominators of the reachable blocks, with the joins and retreating
    edges found on the way (Cooper–Harvey–Kennedy on the blocks, `_chk`)."""
    if cfg.single_block:  # one block, no edge (most code objects): no retreating edge
        # (tuple.__new__: a NamedTuple's own __new__ is a Python function, slower)
        entry = cfg.entry
        first = _FIRST if entry == 0 else MappingProxyType({entry: 0})
        return _new(CFGDominance, ({entry: None}, first, (), (), ()))
    blocks = cfg.blocks
    if not blocks:
        return CFGDominance({}, {}, (), (), ())
    order = cfg.rpo
    partial = len(order) < len(blocks)
    root_preds = blocks[order[0]].preds
    if partial:
        root_preds = [p for p in root_preds if blocks[p].reachable]
    retreating: list[tuple[int, int]] = []  # for loops and post-dominators
    if root_preds:  # every edge into the root retreats
        pos = dict(zip(order, count()))
        retreating.extend(zip(map(pos.__getitem__, root_preds), repeat(0)))
    out, joins, pos = _chk(order, blocks, True, (), partial, retreating)
    return _new(CFGDominance, (out, pos, root_preds, joins, retreating))


def cfg_idom(cfg: CFG) -> dict[int, int | None]:
    """Immediate dominators of the reachable blocks; the entry maps to None."""
    return cfg_dominance(cfg).idom


def cfg_dominance_frontier(cfg: CFG, dom: CFGDominance | None = None) -> dict[int, set[int]]:
    """Dominance frontier of every reachable block (Cooper–Harvey–Kennedy's runner
    formulation; a block with one predecessor has it for idom: only joins have runners).
    `dom`: the CFG's `cfg_dominance`, computed if not given."""
    if cfg.single_block:
        return {cfg.entry: set()}
    if dom is None:
        dom = cfg_dominance(cfg)
    idom = dom.idom
    if not idom:
        return {}
    order = cfg.rpo
    df: dict[int, set[int]] = {b: set() for b in order}
    # The root is a join of the (implicit) way in and its back edges: every dominator
    # of a predecessor has it in its frontier, the root included.
    root = order[0]
    up: Mapping[int, int] = idom  # type: ignore[assignment]  # (only the root maps to None: no runner gets there)
    for r in dom.root_preds:
        df[r].add(root)
        while r != root:
            r = up[r]
            df[r].add(root)
    for b, _, ps in dom.joins:
        stop = idom[b]
        for r in ps:
            while r != stop:
                df[r].add(b)
                r = up[r]
    return df


def cfg_post_idom(cfg: CFG, dom: CFGDominance | None = None) -> dict[int, int | None]:
    """Immediate post-dominators, rooted at the virtual exit `EXIT` (-1).

    Blocks that cannot reach the exit (infinite loops) are absent.  The
    reversed graph's successors are the CFG's predecessors and vice versa;
    blocks in `exit_preds` are the exit's (reversed) successors.  `dom`: the CFG's
    `cfg_dominance` (for its retreating edges), computed if not given.
    """
    if cfg.single_block:  # one block, which leads to the exit
        return {EXIT: None, cfg.entry: EXIT}
    blocks = cfg.blocks
    if not blocks:
        return {}
    if dom is None:
        dom = cfg_dominance(cfg)
    if len(cfg.rpo) == len(blocks) and not dom.retreating:
        # Acyclic with every block reachable (most functions): the forward post-order,
        # after the exit, already has every block after its successors and after its
        # post-dominators, which is all the algorithm needs of its order; no DFS of
        # the reversed graph.  Every block reaches the exit.
        order = cfg.rpo[::-1]
        order.insert(0, EXIT)
        partial = False
    else:
        order = cfg_module.BLOCK_RPO(blocks, EXIT, cfg.exit_preds, False)
        partial = len(order) <= len(blocks)  # some blocks cannot reach the exit
    # the reversed graph: a block's predecessors are its successors, and the exit for
    # the blocks that lead to it
    return _chk(order, blocks, False, set(cfg.exit_preds), partial, None)[0]
