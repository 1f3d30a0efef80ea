"""Tensor alias analysis on a captured graph: which values share storage, who writes it.

Definitions.  A *value* is one tensor an op of the graph produces or the graph
receives (any hashable id).  Two values *may alias* when they may share
storage — one is a view of the other, both view a third, or the same tensor
is reached twice.  The *storage classes* are the equivalence classes of the
smallest relation that

* relates each output of an op to every value its op says it aliases
  (``x.view(...)``, ``x[1:]``, ``x.t()``, an in-place op's result and ``x``);
* relates graph inputs the caller passed sharing one storage (a tensor and
  its view; the frontend observes this on the example inputs and guards it).

Every other output is fresh storage, and distinct inputs are assumed not to
overlap — the assumption the frontend guards.  An op *writes* a class when it
mutates (in place) a value of that class.

The analysis is flow-insensitive over classes and exact for the facts it is
given; the facts come from the frontend (`bcfront.ir.alias_facts`),
which derives them from the alias annotations of the aten ops each graph node
dispatches (``Tensor(a)`` / ``Tensor(a!)`` in the op schemas), so this module
needs no torch and no per-op table.

On top of the classes: the inputs whose storage the graph mutates (in order of
first write) and the memory dependencies between ops — read-after-write,
write-after-read and write-after-write on one class — that any reordering or
fusion must respect.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True, slots=True)
class OpFacts:
    """What one op does to storage.

    `outputs` pairs each tensor the op produces with the values whose storage
    it shares (empty: fresh storage).  `writes` lists the values the op
    mutates in place; `reads` the values it reads.
    """

    op: Hashable
    reads: tuple[Hashable, ...] = ()
    writes: tuple[Hashable, ...] = ()
    outputs: tuple[tuple[Hashable, tuple[Hashable, ...]], ...] = ()  # ((value, (aliased value, ...)), ...)


@dataclass(frozen=True, slots=True)
class StorageClass:
    """One class of values sharing storage; `root` is its first defined member."""

    index: int
    members: tuple[Hashable, ...]
    root: Hashable
    inputs: tuple[Hashable, ...]  # graph inputs among the members
    written_by: tuple[Hashable, ...]  # ops writing the class, in order

    @property
    def is_input(self) -> bool:
        return bool(self.inputs)

    @property
    def is_written(self) -> bool:
        return bool(self.written_by)


class _UnionFind:
    """Disjoint sets with path halving (iterative)."""

    __slots__ = ("parent",)

    def __init__(self) -> None:
        self.parent: dict[Hashable, Hashable] = {}

    def add(self, x: Hashable) -> None:
        self.parent.setdefault(x, x)

    def find(self, x: Hashable) -> Hashable:
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: Hashable, b: Hashable) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


@dataclass
class AliasAnalysis:
    """Storage classes, writes and memory dependencies of one graph (see module docstring).

    `inputs` are the graph inputs in order, `ops` the facts of every op in
    execution order, `shared_inputs` groups of inputs known to share storage.
    """

    inputs: Sequence[Hashable]
    ops: Sequence[OpFacts]
    shared_inputs: Iterable[Iterable[Hashable]] = ()  # tuples of tuples after __post_init__
    _order: dict[Hashable, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.inputs = tuple(self.inputs)
        self.ops = tuple(self.ops)
        self.shared_inputs = tuple(tuple(g) for g in self.shared_inputs)

    # -- classes ------------------------------------------------------------------------
    @cached_property
    def _uf(self) -> _UnionFind:
        uf = _UnionFind()
        order = self._order
        for v in self.inputs:
            uf.add(v)
            order.setdefault(v, len(order))
        shared: tuple[tuple[Hashable, ...], ...] = self.shared_inputs  # type: ignore[assignment]  # (__post_init__)
        for group in shared:
            for v in group:
                uf.add(v)
                order.setdefault(v, len(order))
            for v in group[1:]:
                uf.union(group[0], v)
        for f in self.ops:
            for v in (*f.reads, *f.writes):
                uf.add(v)  # a value never defined: its own class
                order.setdefault(v, len(order))
            for v, aliases in f.outputs:
                uf.add(v)
                order.setdefault(v, len(order))
                for a in aliases:
                    uf.add(a)
                    order.setdefault(a, len(order))
                    uf.union(a, v)
        return uf

    @cached_property
    def classes(self) -> tuple[StorageClass, ...]:
        """The storage classes, ordered by their root's first appearance."""
        uf, order = self._uf, self._order
        groups: dict[Hashable, list[Hashable]] = {}
        for v in sorted(uf.parent, key=order.__getitem__):
            groups.setdefault(uf.find(v), []).append(v)
        inputs = set(self.inputs)
        writers: dict[Hashable, list[Hashable]] = {}
        for f in self.ops:
            for rep in dict.fromkeys(uf.find(v) for v in f.writes):
                writers.setdefault(rep, []).append(f.op)
        out: list[StorageClass] = []
        for i, (rep, members) in enumerate(groups.items()):
            out.append(
                StorageClass(
                    i,
                    tuple(members),
                    members[0],
                    tuple(m for m in members if m in inputs),
                    tuple(writers.get(rep, ())),
                )
            )
        return tuple(out)

    @cached_property
    def _class_index(self) -> dict[Hashable, int]:
        return {v: c.index for c in self.classes for v in c.members}

    def class_of(self, value: Hashable) -> StorageClass:
        """The storage class of `value` (KeyError for a value no fact mentions)."""
        return self.classes[self._class_index[value]]

    def may_alias(self, a: Hashable, b: Hashable) -> bool:
        """True when `a` and `b` may share storage."""
        idx = self._class_index
        return a == b or (a in idx and b in idx and idx[a] == idx[b])

    def root(self, value: Hashable) -> Hashable:
        """The first-defined member of `value`'s class (an input, or the op output that allocated it)."""
        return self.class_of(value).root

    # -- writes --------------------------------------------------------------------------
    @cached_property
    def _op_classes(self) -> dict[Hashable, tuple[frozenset[int], frozenset[int]]]:
        """op -> (classes read, classes written)."""
        idx = self._class_index
        out: dict[Hashable, tuple[frozenset[int], frozenset[int]]] = {}
        for f in self.ops:
            reads = frozenset(idx[v] for v in f.reads)
            writes = frozenset(idx[v] for v in f.writes)
            out[f.op] = (reads, writes)
        return out

    def writes_of(self, op: Hashable) -> frozenset[int]:
        """Indices of the classes `op` writes."""
        return self._op_classes[op][1]

    @cached_property
    def written(self) -> tuple[StorageClass, ...]:
        """Classes some op writes, in order of first write."""
        seen: dict[int, StorageClass] = {}
        for f in self.ops:
            for c in sorted(self._op_classes[f.op][1]):
                seen.setdefault(c, self.classes[c])
        return tuple(seen.values())

    @cached_property
    def mutated_inputs(self) -> tuple[Hashable, ...]:
        """Graph inputs whose storage the graph writes, in order of first write."""
        out: list[Hashable] = []
        for c in self.written:
            out.extend(v for v in self.inputs if v in c.inputs and v not in out)
        return tuple(out)

    @cached_property
    def has_writes(self) -> bool:
        return bool(self.written)

    # -- ordering ------------------------------------------------------------------------
    @cached_property
    def dependencies(self) -> dict[Hashable, frozenset[Hashable]]:
        """op -> ops it must stay after because of storage (RAW, WAR, WAW on one class).

        Dataflow edges (an op reading another's output) are not repeated here;
        together they are exactly the constraints a scheduler must keep.
        """
        last_write: dict[int, Hashable] = {}
        reads_since: dict[int, list[Hashable]] = {}
        deps: dict[Hashable, frozenset[Hashable]] = {}
        for f in self.ops:
            reads, writes = self._op_classes[f.op]
            mine: set[Hashable] = set()
            for c in reads | writes:
                if c in last_write:
                    mine.add(last_write[c])
            for c in writes:
                mine.update(reads_since.get(c, ()))
            mine.discard(f.op)
            deps[f.op] = frozenset(mine)
            for c in reads:
                reads_since.setdefault(c, []).append(f.op)
            for c in writes:
                last_write[c] = f.op
                reads_since[c] = []
        return deps

    def conflicts(self, a: Hashable, b: Hashable) -> bool:
        """True when ops `a` and `b` touch one class and at least one of them writes it."""
        ra, wa = self._op_classes[a]
        rb, wb = self._op_classes[b]
        return bool(wa & (rb | wb) or wb & ra)

    # -- reporting -----------------------------------------------------------------------
    def to_text(self) -> str:
        lines: list[str] = []
        for c in self.classes:
            tag = " input" if c.is_input else ""
            w = f" written by {', '.join(map(str, c.written_by))}" if c.written_by else ""
            lines.append(f"class {c.index}{tag}: {', '.join(map(str, c.members))}{w}")
        return "\n".join(lines)
