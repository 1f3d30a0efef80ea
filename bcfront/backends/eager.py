"""The eager backend: the graph becomes straight-line torch calls in the region function.

No FX and no interpreter on the fast path: each node is one Python statement
calling the very function (or Tensor method) the user called, in the original
order, so results, aliasing and RNG consumption are exactly eager's.  Nodes
recorded under a different grad/autocast state than the entry's run inside a
``with`` block restoring it.
"""
from __future__ import annotations

from ..frontend.graph import is_identifier, node_expr
from . import CompiledGraph


def emit_graph(graph, ns, lines: list[str], indent: str = "    ", folded=None) -> None:
    const = ns.const
    folded = folded or {}
    names = {n: ns.const(v, f"const_{n.name}") for n, v in folded.items()}
    name_of = (lambda n: names.get(n, n.name)) if names else None
    current = None
    inner = indent
    for n in graph.body:
        if n in names:
            continue
        if n.state != current:
            current = n.state
            if current is None:
                inner = indent
            else:
                lines.append(f"{indent}with {_state_cm(current, ns)}:")
                inner = indent + "    "
        lines.append(f"{inner}{n.name} = {_node_code(n, const, name_of)}")


def _state_cm(state, ns) -> str:
    """A context manager expression entering `state` (grad mode alone: torch.set_grad_enabled)."""
    if not state.autocast and not state.inference:
        import torch
        return f"{ns.const(torch.set_grad_enabled, 'set_grad_enabled_cm')}({state.grad!r})"
    return f"{ns.const(state, 'state')}.context()"


def _node_code(n, const, name_of=None) -> str:
    if n.op in ("method", "getattr") and not is_identifier(n.target):
        raise ValueError(f"tensor attribute name {n.target!r} is not an identifier")
    return node_expr(n, const, name_of)


def compile_graph(graph) -> CompiledGraph:
    """Straight-line code; input-independent subgraphs are computed once (`fold_constants`)."""
    from ..frontend.passes import fold_constants
    folded = fold_constants(graph) if graph.body else {}

    def emit(graph, ns, lines, indent="    "):
        emit_graph(graph, ns, lines, indent, folded)
    out = CompiledGraph("eager", emit)
    if folded:
        out.notes.append(f"{len(folded)} input-independent op(s) computed once at capture")
    return out
