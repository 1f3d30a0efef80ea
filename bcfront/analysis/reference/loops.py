"""Reference natural loops (the dragon book's construction, Aho et al. 9.6.6).

A back edge is an edge u -> h whose target dominates its source.  The natural
loop of a back edge is h plus every block that reaches u without passing
through h (a backward search from u that stops at h); the loops of the back
edges into one header are merged.  One loop nests in another when its body is
inside the other's; its parent is the smallest loop that strictly contains it.

The fast version is `bcfront.analysis.loops` (which also reports irreducible
regions; the reference leaves those out: CPython's compiler emits none).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cfg import RefCFG
from .dominance import dominator_sets


@dataclass(frozen=True)
class RefLoop:
    header: int
    body: frozenset[int]
    back_edges: tuple[tuple[int, int], ...]  # sorted
    exits: tuple[tuple[int, int], ...]  # (inside, outside) edges, sorted
    parent: int | None
    depth: int
    children: tuple[int, ...]  # headers, sorted


def natural_loops(cfg: RefCFG) -> dict[int, RefLoop]:
    """header -> its loop, for the reachable blocks of `cfg`."""
    dom = dominator_sets(cfg.entry, cfg.rpo, lambda n: cfg.blocks[n].preds)
    back: dict[int, set[tuple[int, int]]] = {}
    for u in cfg.rpo:
        for h, _ in cfg.blocks[u].succs:
            if h in dom and h in dom[u]:
                back.setdefault(h, set()).add((u, h))
    bodies: dict[int, set[int]] = {}
    for h, edges in back.items():
        body = {h}
        work = [u for u, _ in edges]
        while work:
            x = work.pop()
            if x in body:
                continue
            body.add(x)
            work.extend(p for p in cfg.blocks[x].preds if p in cfg.reachable)
        bodies[h] = body
    parent: dict[int, int | None] = {}
    for h, body in bodies.items():
        around = [g for g, other in bodies.items() if g != h and body < other]
        parent[h] = min(around, key=lambda g: len(bodies[g])) if around else None
    out = {}
    for h, body in bodies.items():
        depth, p = 1, parent[h]
        while p is not None:
            depth, p = depth + 1, parent[p]
        exits = sorted({(b, s) for b in body for s, _ in cfg.blocks[b].succs if s not in body})
        children = tuple(sorted(g for g in bodies if parent[g] == h))
        out[h] = RefLoop(h, frozenset(body), tuple(sorted(back[h])), tuple(exits), parent[h], depth, children)
    return out
