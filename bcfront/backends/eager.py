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


def emit_graph(graph, ns, lines: list[str], indent: str = "    ") -> None:
    const = ns.const
    current = None
    inner = indent
    for n in graph.body:
        if n.state != current:
            current = n.state
            if current is None:
                inner = indent
            else:
                lines.append(f"{indent}with {ns.const(current, 'state')}.context():")
                inner = indent + "    "
        lines.append(f"{inner}{n.name} = {_node_code(n, const)}")


def _node_code(n, const) -> str:
    if n.op in ("method", "getattr") and not is_identifier(n.target):
        raise ValueError(f"tensor attribute name {n.target!r} is not an identifier")
    return node_expr(n, const)


def compile_graph(graph) -> CompiledGraph:
    return CompiledGraph("eager", emit_graph)
