"""Graph passes used by backends.

`fold_constants(graph)`: nodes computed only from constants (factories such
as ``torch.ones(t, t)``, ``torch.arange(t)``, and pure ops on them), computed
once when the entry is built and reused by every call.  A node is *not*
folded when it is random or uninitialized (its value must differ per call or
is meaningless), requires grad, is written in place later (a mutated
constant would leak between calls; the writer's first argument and all of
its constant ancestors are excluded, covering views), or reaches the outside
(a graph output, or an ancestor it may alias); nor is anything computed from a
node left out.  Folding runs the real ops
with the reference evaluator, under each node's recorded torch state.

`sink_waits(graph)`: each collective's wait moved down to the value's first use.
"""

from __future__ import annotations

from typing import Any

from .graph import Graph, Node, iter_nodes, run_node

_NONDETERMINISTIC = (
    "rand",
    "normal",
    "bernoulli",
    "multinomial",
    "dropout",
    "uniform",
    "exponential",
    "geometric",
    "cauchy",
    "poisson",
    "empty",
    "rng",
    "seed",
    "randperm",
)


def target_name(n: Node) -> str:
    """The name of the node's target (a function's ``__name__``, or the string itself)."""
    t = n.target
    return t if isinstance(t, str) else (getattr(t, "__name__", "") or "")


def is_nondeterministic(n: Node) -> bool:
    """Random draws and uninitialized memory: a different value on every run."""
    name = target_name(n).lower()
    return any(k in name for k in _NONDETERMINISTIC)


def is_collective(n: Node) -> bool:
    """A functional c10d collective or its wait (`semantics.collectives`): it communicates,
    so it runs on every call, never folded."""
    return getattr(n.target, "namespace", None) == "_c10d_functional"


def sink_waits(graph: Graph) -> None:
    """Move each ``wait_tensor`` of a collective down to just before the first node that
    reads it (the end when only outputs do): the communication overlaps the work between."""
    waits = [n for n in graph.body if is_collective(n) and target_name(n).startswith("wait_tensor")]
    for w in waits:
        body = graph.body
        i = body.index(w)
        users = (k for k in range(i + 1, len(body)) if w in iter_nodes((body[k].args, body[k].kwargs)))
        j = next(users, len(body))
        body.insert(j - 1, body.pop(i))


def fold_constants(graph: Graph) -> dict[Node, Any]:
    """{node: real value} for the nodes that can be computed once."""
    foldable: dict[Node, list[Node]] = {}
    for n in graph.body:
        if n.op not in ("call", "method", "getattr") or n.mutates:
            continue
        if is_nondeterministic(n) or is_collective(n):
            continue
        deps = iter_nodes((n.args, n.kwargs))
        if all(d in foldable for d in deps) and getattr(n.meta, "requires_grad", False) is False:
            foldable[n] = deps
    if not foldable:
        return {}

    def drop(n: Node) -> None:
        work = [n]
        while work:
            m = work.pop()
            if m in foldable:
                work.extend(foldable.pop(m))

    for n in graph.body:
        if n.mutates:
            first = iter_nodes(n.args[:1]) + iter_nodes(n.kwargs.get("out"))
            for a in first:
                drop(a)
    for o in graph.outputs:
        drop(o)
    if not foldable:
        return {}
    env: dict[Node, Any] = {}
    out: dict[Node, Any] = {}
    for n in graph.body:
        if n not in foldable or any(d not in env for d in foldable[n]):
            continue  # (an ancestor was dropped, or failed below: this one runs per call too)
        try:
            if n.state is not None:
                with n.state.context():
                    env[n] = run_node(n, env)
            else:
                env[n] = run_node(n, env)
        except Exception:  # noqa: BLE001 - leave it to run per call, where it fails or succeeds as eager does
            continue
        out[n] = env[n]
    return out
