"""`CompiledGraph`: what every backend returns for one graph.

A leaf of `backends`, so the backend modules (`eager`, `fx`) and the registry
in `backends/__init__.py` that picks among them all import it from below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ir.functional_plan import Emit, Plan


@dataclass
class CompiledGraph:
    backend: str
    emit: Emit  # emit(graph, ns, lines, indent) -> None
    kernels: tuple = ()
    fallback_ops: tuple = ()
    notes: list = field(default_factory=list)
    plan: Plan | None = None  # set when the graph was functionalized (`compile_functional`)
