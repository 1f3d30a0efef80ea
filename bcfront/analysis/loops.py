"""Natural loops, their nesting, and irreducible regions.

Definitions (over the blocks reachable from the entry, along every edge kind,
exception edges included):

* A *back edge* is an edge u → h whose target h dominates its source u.
* The *natural loop* of header h is h together with every block that can
  reach a back-edge source u → h without passing through h; the loops of all
  back edges into one header are merged into one `Loop`.
* Two natural loops are either disjoint or nested (a textbook theorem that
  holds for any graph); `parent` is the innermost loop strictly containing
  this one, `depth` counts enclosing loops (1 for an outermost loop), and
  `loop_of(b)` is the innermost loop containing block b.
* A *retreating edge* goes from a block to one of its ancestors in the
  depth-first spanning tree, i.e. to a block not after it in reverse
  post-order.  Every back edge is retreating; a retreating edge that is not
  a back edge proves the graph *irreducible*.  Such edges are not turned
  into loops; each is reported in an `IrreducibleRegion`: with d the nearest
  common dominator of its two ends, the region is the strongly connected
  component containing both ends among the blocks d strictly dominates.  It
  is entered from outside at two or more blocks (`entries`).

CPython's compiler emits reducible graphs; irreducible ones come from
hand-made bytecode and from the tests' random graphs.  Everything here is
iterative.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any

from .cfg import CFG
from .dominance import CFGDominance, cfg_dominance, immediate_dominators, reverse_postorder

if TYPE_CHECKING:
    from typing import Protocol, TypeAlias, TypeVar

    class _Ordered(Hashable, Protocol):
        """A graph node: hashable and orderable (the results are sorted)."""

        def __lt__(self, other: Any, /) -> bool: ...

    _N = TypeVar("_N", bound=_Ordered)
    _Edges: TypeAlias = tuple[tuple[_N, _N], ...]
    # a loop before nesting: (body, back edges, exits)
    _Parts: TypeAlias = tuple[frozenset[_N], _Edges[_N], _Edges[_N]]

Node = Hashable


@dataclass(frozen=True, slots=True)
class Loop:
    """A natural loop (all back edges into one header merged)."""

    header: Node
    body: frozenset[Node]  # blocks of the loop, header included
    back_edges: tuple[tuple[Node, Node], ...]  # ((latch, header), ...) sorted
    exits: tuple[tuple[Node, Node], ...]  # ((src in body, dst outside), ...) sorted, any edge kind
    parent: Node | None  # header of the innermost enclosing loop
    depth: int  # 1 for an outermost loop
    children: tuple[Node, ...] = ()  # headers of the loops directly nested in this one

    @property
    def latches(self) -> tuple[Node, ...]:
        return tuple(u for u, _ in self.back_edges)

    @property
    def exit_blocks(self) -> frozenset[Node]:
        """Blocks outside the loop that an edge from inside reaches."""
        return frozenset(d for _, d in self.exits)

    def __contains__(self, block: object) -> bool:
        return block in self.body


@dataclass(frozen=True, slots=True)
class IrreducibleRegion:
    """A multiple-entry cycle region (see the module docstring for the definition)."""

    blocks: frozenset[Node]
    entries: tuple[Node, ...]  # blocks of the region with a predecessor outside it
    # the non-back retreating edges ((src, dst), ...) inside it
    retreating_edges: tuple[tuple[Node, Node], ...]


@dataclass(slots=True)
class LoopForest:
    """The natural loops of a graph (parents before children, siblings by header) and
    its irreducible regions."""

    loops: list[Loop]
    irreducible: list[IrreducibleRegion]
    # (keys: the graph's nodes, of whatever type it has: ints for a CFG)
    _by_header: dict[Any, Loop] = field(default_factory=dict, repr=False)  # header -> loop
    _innermost: dict[Any, Any] = field(default_factory=dict, repr=False)  # block -> header

    def __iter__(self) -> Iterator[Loop]:
        return iter(self.loops)

    def __len__(self) -> int:
        return len(self.loops)

    @property
    def reducible(self) -> bool:
        return not self.irreducible

    @property
    def roots(self) -> list[Loop]:
        """The outermost loops."""
        return [lp for lp in self.loops if lp.parent is None]

    def loop(self, header: Node) -> Loop:
        """The loop with this header (KeyError if there is none)."""
        return self._by_header[header]

    def loop_of(self, block: Node) -> Loop | None:
        """The innermost loop containing `block`, or None."""
        h = self._innermost.get(block)
        return None if h is None else self._by_header[h]

    def children(self, loop: Loop) -> list[Loop]:
        return [self._by_header[h] for h in loop.children]

    def parent(self, loop: Loop) -> Loop | None:
        return None if loop.parent is None else self._by_header[loop.parent]


def find_loops(cfg: CFG, dom: CFGDominance | None = None) -> LoopForest:
    """Natural loops and irreducible regions of `cfg` (`dom`: its `cfg_dominance`,
    computed if not given)."""
    if cfg.single_block or not cfg.blocks:
        return _no_loops()
    if dom is None:
        dom = cfg_dominance(cfg)
    # Retreating edges p -> i (p >= i in reverse post-order), which dominance found:
    # most functions have none, and then there is nothing else to do.
    retreating = dom.retreating
    if not retreating:
        return _no_loops()
    # (the walks up the idom chains below stop before the entry, whose idom is None)
    idom: Mapping[int, int] = dom.idom  # type: ignore[assignment]
    # The rest works on the blocks, with their RPO numbers from a dict (no renumbered
    # predecessor lists): the retreating edges come as RPO number pairs; the bodies
    # are searched through the predecessors (those outside the order, unreachable,
    # are skipped when popped).
    order = cfg.rpo
    blocks = cfg.blocks
    pos = dom.rpo_number
    back: dict[int, list[int]] = {}
    odd: list[tuple[int, int]] = []  # retreating edges that are not back edges
    for p, i in retreating:
        x = order[p]  # does i dominate p?  walk up p's idom chain
        while pos[x] > i:
            x = idom[x]
        if pos[x] == i:
            back.setdefault(i, []).append(p)
        else:
            odd.append((order[p], order[i]))
    loops: dict[int, _Parts[int]] = {}
    for i, latches in back.items():  # bodies by backward search from the latches
        h = order[i]
        body = {h}
        work = list(map(order.__getitem__, latches))
        while work:
            x = work.pop()
            if x not in body and x in pos:  # (a predecessor outside the order: unreachable)
                body.add(x)
                work.extend(blocks[x].preds)
        members = frozenset(body)
        edges = (
            ((order[latches[0]], h),)
            if len(latches) == 1
            else tuple(sorted({(order[u], h) for u in latches}))
        )
        exits = {(b, s) for b in members for s in blocks[b].succs if s not in members}
        loops[h] = (members, edges, tuple(sorted(exits)))
    forest = _nest(loops)
    if odd:
        forest.irreducible = _regions(odd, order, pos, cfg.successors, cfg.predecessors, idom)
    return forest


def _no_loops() -> LoopForest:
    """An empty forest (most code objects), its slots set directly: cheaper than the
    dataclass's __init__, and its lookup tables are one shared empty dict (read-only)."""
    forest = _new(LoopForest)
    forest.loops = []
    forest.irreducible = []
    forest._by_header = forest._innermost = _NOTHING
    return forest


_new = object.__new__
_NOTHING: dict[Any, Any] = {}


def natural_loops(
    entry: Node,
    succs: Callable[[Node], Iterable[Node]],
    preds: Callable[[Node], Iterable[Node]],
    idom: Mapping[Node, Node | None] | None = None,
) -> LoopForest:
    """`find_loops` for any graph given as a root and successor/predecessor callables
    (nodes must be hashable and mutually orderable)."""
    if idom is None:
        idom = immediate_dominators(entry, succs, preds)
    # (Hashable cannot say "orderable"; the idom walk stops before the root's None)
    return _find(reverse_postorder(entry, succs), succs, preds, idom)  # type: ignore[type-var]


def _find(
    order: Sequence[_N],
    succs: Callable[[_N], Iterable[_N]],
    preds: Callable[[_N], Iterable[_N]],
    idom: Mapping[_N, _N],
) -> LoopForest:
    num = {n: i for i, n in enumerate(order)}
    back: dict[_N, list[tuple[_N, _N]]] = {}
    odd: list[tuple[_N, _N]] = []  # retreating edges that are not back edges
    for u in order:
        nu = num[u]
        for v in succs(u):
            nv = num.get(v)
            if nv is None or nv > nu:
                continue  # tree, forward or cross edge
            x = u  # does v dominate u?  walk up u's idom chain
            while num[x] > nv:
                x = idom[x]
            if x == v:
                back.setdefault(v, []).append((u, v))
            else:
                odd.append((u, v))
    loops = _natural(back, succs, preds, num)
    forest = _nest(loops)
    forest.irreducible = _regions(odd, order, num, succs, preds, idom)
    return forest


def _natural(
    back: dict[_N, list[tuple[_N, _N]]],
    succs: Callable[[_N], Iterable[_N]],
    preds: Callable[[_N], Iterable[_N]],
    num: Mapping[_N, int],
) -> dict[_N, _Parts[_N]]:
    """header -> (body, back edges, exits), bodies by backward search from the latches."""
    out: dict[_N, _Parts[_N]] = {}
    for h, edges in back.items():
        body = {h}
        work = [u for u, _ in edges if u != h]
        while work:
            x = work.pop()
            if x in body:
                continue
            body.add(x)
            work.extend(p for p in preds(x) if p not in body and p in num)
        exits = {(b, s) for b in body for s in succs(b) if s not in body}
        out[h] = (frozenset(body), tuple(sorted(set(edges))), tuple(sorted(exits)))
    return out


def _nest(loops: dict[_N, _Parts[_N]]) -> LoopForest:
    """Parents, depths and children of the loops (header -> (body, back edges, exits));
    bigger loops first so parents come before children."""
    if len(loops) == 1:  # (most functions with a loop)
        ((h, (body, edges, exits)),) = loops.items()
        lp = Loop(h, body, edges, exits, None, 1, ())
        return LoopForest([lp], [], {h: lp}, dict(zip(body, repeat(h))))
    innermost: dict[_N, _N] = {}
    parent: dict[_N, _N | None] = {}
    depth: dict[_N, int] = {}
    kids: dict[_N, list[_N]] = {}
    for h in sorted(loops, key=lambda h: -len(loops[h][0])):
        p = innermost.get(h)  # innermost bigger loop containing h, if any
        parent[h] = p
        kids[h] = []
        if p is None:
            depth[h] = 1
        else:
            depth[h] = depth[p] + 1
            kids[p].append(h)
        innermost.update(zip(loops[h][0], repeat(h)))
    by_header: dict[_N, Loop] = {}
    for h, (body, edges, exits) in loops.items():
        by_header[h] = Loop(h, body, edges, exits, parent[h], depth[h], tuple(sorted(kids[h])))
    ordered: list[Loop] = []  # preorder of the loop tree, siblings by header
    work = sorted((h for h in loops if parent[h] is None), reverse=True)
    while work:
        h = work.pop()
        ordered.append(by_header[h])
        work.extend(sorted(kids[h], reverse=True))
    return LoopForest(ordered, [], by_header, innermost)


def _regions(
    odd: list[tuple[_N, _N]],
    order: Sequence[_N],
    num: Mapping[_N, int],
    succs: Callable[[_N], Iterable[_N]],
    preds: Callable[[_N], Iterable[_N]],
    idom: Mapping[_N, _N],
) -> list[IrreducibleRegion]:
    if not odd:
        return []
    enter, leave = _dom_intervals(order, idom)

    def strictly_dominated(d: _N, x: _N) -> bool:
        return enter[d] < enter[x] and leave[x] <= leave[d]

    def search(start: _N, d: _N, step: Callable[[_N], Iterable[_N]]) -> set[_N]:
        seen = {start}
        work = [start]
        while work:
            for y in step(work.pop()):
                if y not in seen and y in num and strictly_dominated(d, y):
                    seen.add(y)
                    work.append(y)
        return seen

    regions: dict[frozenset[_N], list[tuple[_N, _N]]] = {}
    for u, v in odd:
        a, b = num[u], num[v]  # nearest common dominator, by RPO numbers
        while a != b:
            while a > b:
                a = num[idom[order[a]]]
            while b > a:
                b = num[idom[order[b]]]
        d = order[a]
        blocks = frozenset(search(v, d, succs) & search(v, d, preds))
        regions.setdefault(blocks, []).append((u, v))
    out: list[IrreducibleRegion] = []
    for blocks, edges in sorted(regions.items(), key=lambda kv: sorted(kv[0])):
        entries = sorted(b for b in blocks if any(p in num and p not in blocks for p in preds(b)))
        out.append(IrreducibleRegion(blocks, tuple(entries), tuple(sorted(set(edges)))))
    return out


def _dom_intervals(order: Sequence[_N], idom: Mapping[_N, _N | None]) -> tuple[dict[_N, int], dict[_N, int]]:
    """Preorder entry and exit clocks of the dominator tree (iteratively): a dominates b
    iff enter[a] <= enter[b] and leave[b] <= leave[a]."""
    kids: dict[_N, list[_N]] = {n: [] for n in order}
    for n in order:
        d = idom.get(n)
        if d is not None:
            kids[d].append(n)
    enter: dict[_N, int]
    leave: dict[_N, int]
    enter, leave = {}, {}
    clock = 0
    work: list[tuple[_N, bool]] = [(order[0], False)]
    while work:
        n, done = work.pop()
        if done:
            leave[n] = clock
            continue
        enter[n] = clock
        clock += 1
        work.append((n, True))
        work.extend((c, False) for c in kids[n])
    return enter, leave
