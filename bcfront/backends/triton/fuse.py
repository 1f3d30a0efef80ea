"""Fusion: group `Compute` nodes into kernels, in dependency order.

A kernel iterates one *space*: the non-unit dimensions of a shape, each marked
reduced or kept, named ``k0..``.  A node joins a kernel when

* its iteration maps onto the space: a pointwise node over the full space or
  over the kept dimensions only (an epilogue after the reductions), a
  reduction over exactly the space;
* every buffer it reads from the kernel is read at exactly the element the
  producer computes in that iteration (so the value is in registers) - the
  canonical index expressions make this a structural equality (a gather,
  whose element depends on loaded data, never reads from its own kernel);
* everything else it reads is produced by an earlier step.

A scan (cumsum) is a kernel of its own.

The graph is functional (input mutations are copy-backs after the last step),
so a kernel never crosses a write to storage that another step reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import index as ix
from .ir import Arena, Compute, Extern, LoweredProgram, contiguous_strides, numel


def space_of(node: Compute) -> tuple:
    return tuple((s, p in node.reduced) for p, s in enumerate(node.sizes) if s != 1)


def kept_sizes(space) -> tuple:
    return tuple(s for s, red in space if not red)


def is_reduction_space(space) -> bool:
    return any(red for _, red in space)


@dataclass(slots=True)
class Member:
    """A node placed in a kernel; `level` is 'full' or 'x' (kept dims only)."""

    node: Compute
    level: str
    body: int = -1  # node.body over kernel variables k0..
    store: ix.Affine = ix.ZERO  # output offset over kernel variables


@dataclass(slots=True)
class KernelPlan:
    space: tuple
    members: list = field(default_factory=list)
    stored: set = field(default_factory=set)

    @property
    def names(self) -> set:
        return {m.node.name for m in self.members}

    @property
    def is_reduction(self) -> bool:
        return is_reduction_space(self.space)

    @property
    def ops(self) -> tuple:
        out = {}
        for m in self.members:
            out.update(dict.fromkeys(m.node.origins))
        return tuple(out)


def kvar_ranges(space) -> dict:
    return {f"k{j}": s for j, (s, _) in enumerate(space)}


def _level_for(node: Compute, space) -> str | None:
    """How `node` iterates `space`: 'full', 'x' (kept dims only) or None (it cannot).

    Shapes need not match, only element counts: a node is iterated through the
    row-major flat index of the space (see `place`), so a reshaped value (a
    [2, 6, 16] normalization feeding a [12, 16] matmul input) shares a kernel."""
    full = numel(s for s, _ in space)
    kept = numel(kept_sizes(space))
    if node.reduced:
        ns = space_of(node)
        if ns == space:
            return "full"
        same = numel(s for s, _ in ns) == full and numel(kept_sizes(ns)) == kept
        return "full" if same and is_reduction_space(space) else None
    n = numel(node.sizes)
    if n == full:
        return "full"
    if is_reduction_space(space) and n == kept:
        return "x"
    return None


def _flat_mapping(sizes, positions, flat: ix.Affine, rng) -> dict:
    """Variables i{p} (p in positions, with these sizes) of a row-major unravel of `flat`."""
    parts = ix.unravel(flat, [sizes[p] for p in positions], rng)
    return {f"i{p}": e for p, e in zip(positions, parts)}


def _flat(space, js) -> ix.Affine:
    """Row-major flat index of kernel variables k_j, j in js."""
    return ix.strided([ix.var(f"k{j}") for j in js], contiguous_strides([space[j][0] for j in js]))


def place(arena: Arena, node: Compute, space, level: str) -> Member:
    """Express `node` over the kernel variables ``k0..`` of `space`.

    When the node's non-unit dims are the space's (or its kept dims), each maps
    to its k variable; otherwise the node's index is the unravel of the space's
    row-major flat index (separately for kept and reduced dims of a reduction)."""
    rng = kvar_ranges(space)
    xs = [j for j, (_, red) in enumerate(space) if not red]
    rs = [j for j, (_, red) in enumerate(space) if red]
    big = [p for p, s in enumerate(node.sizes) if s != 1]
    mapping = {f"i{p}": ix.ZERO for p, s in enumerate(node.sizes) if s == 1}
    targets = list(range(len(space))) if level == "full" else xs
    if node.reduced:
        if space_of(node) == space:
            mapping.update({f"i{p}": ix.var(f"k{j}") for p, j in zip(big, targets)})
        else:
            kept = [p for p in big if p not in node.reduced]
            red = [p for p in big if p in node.reduced]
            mapping.update(_flat_mapping(node.sizes, kept, _flat(space, xs), rng))
            mapping.update(_flat_mapping(node.sizes, red, _flat(space, rs), rng))
    elif [node.sizes[p] for p in big] == [space[j][0] for j in targets]:
        mapping.update({f"i{p}": ix.var(f"k{j}") for p, j in zip(big, targets)})
    else:
        mapping.update(_flat_mapping(node.sizes, big, _flat(space, targets), rng))
    body = arena.substitute([node.body], mapping, rng)[0]
    store = ix.substitute(node.store_offset(), mapping, rng)
    return Member(node, level, body, store)


def _reads_ok(arena: Arena, member: Member, plan: KernelPlan) -> bool:
    inside = {m.node.name: m for m in plan.members}
    for ld in arena.loads([member.body]):
        buf, off = ld.attr
        producer = inside.get(buf)
        # a gather reads at a data-dependent element: never one held in registers
        if producer is not None and (ld.op == "gather" or producer.store != off):
            return False
    return True


def fit(arena: Arena, plan: KernelPlan, node: Compute):
    """``(space, members)`` of `plan` with `node` added, or None if it cannot join."""
    if node.scan or any(m.node.scan for m in plan.members):
        return None  # a scan runs alone: its prologue is inlined in its body
    space = plan.space
    if node.reduced and not plan.is_reduction:
        # A pointwise kernel can become a reduction kernel if its members fit.
        new_space = space_of(node)
        levels = [_level_for(m.node, new_space) for m in plan.members]
        if any(lv is None for lv in levels):
            return None
        members = [place(arena, m.node, new_space, lv) for m, lv in zip(plan.members, levels)]
        if not all(_reads_ok(arena, m, KernelPlan(new_space, members[:k])) for k, m in enumerate(members)):
            return None
        space = new_space
    else:
        members = list(plan.members)
    level = _level_for(node, space)
    if level is None:
        return None
    member = place(arena, node, space, level)
    if not _reads_ok(arena, member, KernelPlan(space, members)):
        return None
    return space, members + [member]


def _empty(node: Compute) -> bool:
    return node.layout.numel == 0


# How far back a node may move to join an earlier kernel (bounds compile time).
MAX_LOOKBACK = 16


def schedule(prog: LoweredProgram, fuse: bool = True) -> list:
    """Order the program into steps: `KernelPlan`s and `Extern`s.

    Each node joins the fusible kernel (no earlier than its last producer) that
    already computes most of what it reads, the latest one on ties.
    """
    arena = prog.arena
    steps: list = []
    producer: dict[str, int] = {}
    for node in prog.nodes:
        if isinstance(node, Extern):
            steps.append(node)
            for name, _ in node.outputs:
                producer[name] = len(steps) - 1
            continue
        if _empty(node):
            continue
        reads = node.reads(arena)
        lo = max([producer[b] for b in reads if b in producer], default=0)
        lo = max(lo, len(steps) - MAX_LOOKBACK)
        best = None
        for k in range(len(steps) - 1, lo - 1, -1) if fuse else ():
            st = steps[k]
            if not isinstance(st, KernelPlan):
                continue
            fitted = fit(arena, st, node)
            if fitted is None:
                continue
            score = sum(1 for b in reads if producer.get(b) == k)
            if best is None or score > best[0]:
                best = (score, k, fitted)
        if best is not None:
            _, k, (space, members) = best
            steps[k].space, steps[k].members = space, members
            producer[node.name] = k
        else:
            plan = KernelPlan(space_of(node))
            plan.members.append(place(arena, node, plan.space, "full"))
            steps.append(plan)
            producer[node.name] = len(steps) - 1
    _mark_stored(prog, steps)
    return steps


def _mark_stored(prog: LoweredProgram, steps: list) -> None:
    """A buffer is written to memory iff something outside its kernel reads it."""
    arena = prog.arena
    owner = {}
    for k, st in enumerate(steps):
        if isinstance(st, KernelPlan):
            for m in st.members:
                owner[m.node.name] = k
    needed_outside = set()
    for k, st in enumerate(steps):
        if isinstance(st, Extern):
            needed_outside |= {r.base for r in st.inputs}
            continue
        for m in st.members:
            for buf in m.node.reads(arena):
                if owner.get(buf, k) != k:
                    needed_outside.add(buf)
    for ref in prog.outputs:
        if not isinstance(ref, tuple):
            needed_outside.add(ref.base)
    needed_outside |= {ref.base for _, ref in prog.copy_backs}
    for st in steps:
        if isinstance(st, KernelPlan):
            st.stored = {m.node.name for m in st.members if m.node.name in needed_outside}
