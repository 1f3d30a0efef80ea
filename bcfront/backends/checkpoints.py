"""Activation-checkpointed runs of graph nodes, kept as ``torch.utils.checkpoint`` calls.

`semantics.checkpoint_calls` traces ``checkpoint(fn, *args, use_reentrant=False)`` by
inlining `fn`, and records the body nodes that run made as a `Region` on the graph
(``graph.checkpoints``).  A backend outlines each region: its nodes go into a function of
their own, which the region code calls through ``torch.utils.checkpoint.checkpoint`` with
the keywords the user gave, so autograd saves none of their activations and the backward
recomputes them, under the random state the forward saw, exactly as eager does.

`outlined(graph)` says which regions a backend can outline (`Outlined`: the nodes, what
they read from before, what is read of them after); a region is not outlined, and a note
says its activations are kept, when its nodes are no longer one contiguous run of the
body, or when one of them is a lasting random draw (a seeding, a draw from a generator
passed in), whose statement the region's error guard must see at its top level, or when it
was called in another torch state than the graph's entry (``no_grad``, autocast) and a node
inside runs in the entry's (the call runs in the caller's state: the node would not).  A
region inside another is left to the outer one: the outer recomputation remakes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir.graph import Graph, Node, iter_nodes
from ..ir.passes import is_nondeterministic, target_name


@dataclass(eq=False)
class Region:
    """The body nodes one ``checkpoint`` call's `fn` made, in order, with checkpoint's own
    keywords (constants: ``use_reentrant`` and the others the user gave) and where it was."""

    nodes: list
    kwargs: dict = field(default_factory=dict)
    where: str = "?"
    state: Any = None  # the torch state it was called in (a node's `state`: None, the entry's)
    given: list = field(default_factory=list)  # the nodes of the tensors checkpoint was given


@dataclass(eq=False)
class Outlined:
    region: Region
    nodes: list  # the region's nodes, in the body's order
    inputs: list  # nodes outside it that they read, in order of first use
    outputs: list  # its nodes read after it, or by the region's code (graph outputs)

    def subgraph(self, name: str, skip=()) -> Graph:
        """A graph of the region's nodes alone (`skip`: inputs spelled otherwise, constants)."""
        sub = Graph(name)
        sub.inputs = [n for n in self.inputs if n not in skip]
        sub.body = list(self.nodes)
        sub.outputs = list(self.outputs)
        return sub

    def closed_over(self, skip=()) -> list:
        """The inputs that are none of the tensors checkpoint was given (nor in `skip`): eager
        reads them from `fn`'s closure, its bound module, its keyword arguments."""
        given = set(self.region.given)
        return [n for n in self.inputs if n not in given and n not in skip]


def kept_note(region: Region, why: str) -> str:
    return (
        f"torch.utils.checkpoint.checkpoint at {region.where}: its activations are kept for "
        f"backward, not recomputed there ({why})"
    )


def _lasting_draw(n: Node) -> bool:
    name = target_name(n).lower()
    return is_nondeterministic(n) and (
        "seed" in name or "rng" in name or n.kwargs.get("generator") is not None
    )


def outlined(graph, notes: list | None = None) -> list[Outlined]:
    """The regions of `graph` a backend outlines, in body order (see the module doc); a
    note in `notes` for each one it cannot."""
    regions = getattr(graph, "checkpoints", None) or ()
    if not regions:
        return []
    position = {n: i for i, n in enumerate(graph.body)}
    spans = []
    for r in regions:
        # (none there: rolled back, or it made nothing; some: unused ones dropped at the end
        # of the body, `ir.int_arith.drop_unused_int_arith`)
        at = [i for i in (position.get(n) for n in r.nodes) if i is not None]
        if not at:
            continue
        if at != list(range(at[0], at[0] + len(at))):
            if notes is not None:
                notes.append(kept_note(r, "its nodes are no longer one run of the graph"))
            continue
        spans.append((at[0], at[-1] + 1, r))
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[Outlined] = []
    end = -1
    for start, stop, r in spans:
        if start < end:
            continue  # inside an outer region: its recomputation remakes these too
        nodes = graph.body[start:stop]
        why = None
        if any(_lasting_draw(n) for n in nodes):
            why = "a seeding or a draw from a given generator inside"
        elif r.state is not None and any(n.state is None for n in nodes):
            why = "its function goes back to the state the graph was entered in"
        if why is not None:
            if notes is not None:
                notes.append(kept_note(r, why))
            continue
        end = stop
        inside = set(nodes)
        read = dict.fromkeys(iter_nodes([(n.args, n.kwargs) for n in nodes]))
        inputs = [a for a in read if a not in inside]
        later: set = set(graph.outputs)  # (and the tensors a call is given: it names them)
        later.update(n for other in regions for n in other.given)
        for n in graph.body[stop:]:
            later.update(iter_nodes((n.args, n.kwargs)))
        out.append(Outlined(r, nodes, inputs, [n for n in nodes if n in later]))
    return out


def checkpoint_function():
    """torch's ``checkpoint`` (imported here: this module loads without torch)."""
    from torch.utils.checkpoint import checkpoint

    return checkpoint
