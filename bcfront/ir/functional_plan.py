"""A functionalization plan: the pure graph and what the region runs around it.

`functionalize.functionalize` builds a `Plan`; `backends.compile_functional`
compiles ``plan.graph`` and wraps the backend's emit with `Plan.wrap_emit`: the
synthetic bases of inputs sharing a storage, the graph call, the write-back of
mutated inputs (after `graph.WRITEBACK_MARK`, in program order, each under the
grad mode of its last write) and the outputs rebuilt as views of real tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import torch

from .graph import WRITEBACK_MARK, Graph, format_arg

if TYPE_CHECKING:
    from ..analysis.alias import AliasAnalysis
    from .alias_facts import Observation, Step
    from .graph import NodeState


class EmitNamespace(Protocol):
    """The names generated region code may use (`frontend.model.namespace.Namespace`)."""

    def const(self, obj: object, hint: str | None = None) -> str: ...

    def fresh(self, hint: str = "v") -> str: ...


class Emit(Protocol):
    """A backend's `CompiledGraph.emit`: appends the region's statements for `graph` to `lines`."""

    def __call__(
        self, graph: Graph, ns: EmitNamespace, lines: list[str], indent: str = "    ", /
    ) -> None: ...


@dataclass
class Plan:
    """A pure graph plus what the region does around it (see module docstring)."""

    graph: Graph
    example_inputs: list[torch.Tensor | int | float]  # a number for a symbolic number input
    # (name, first input's name, elements)
    bases: list[tuple[str, str, int]] = field(default_factory=list)
    # (target name, graph output index, state)
    writebacks: list[tuple[str, int, NodeState | None]] = field(default_factory=list)
    # original output name -> (base expr kind, base, chain): ("input", input name, chain) or
    # ("graph", graph output index, chain)
    outputs: dict[str, tuple[str, Any, tuple[Step, ...]]] = field(default_factory=dict)
    observation: Observation | None = None
    # Autograd may record: the graph reads each written input through a clone, so the tensors
    # its ops save for backward are not the ones the write-back overwrites (eager's in-place
    # ops save what they need themselves; a later copy_ would fail the version check).
    shield: bool = False

    @property
    def analysis(self) -> AliasAnalysis:
        assert self.observation is not None  # a plan from `functionalize` has one
        return self.observation.analysis

    @property
    def mutated_inputs(self) -> list[str]:
        return [w[0] for w in self.writebacks]

    def wrap_emit(self, inner: Emit) -> Emit:
        """An `emit(graph, ns, lines, indent)` for the region around the inner one."""

        def emit(_graph: Graph, ns: EmitNamespace, lines: list[str], indent: str = "    ") -> None:
            for name, first, size in self.bases:
                lines.append(
                    f"{indent}{name} = {ns.const(torch.as_strided, 'as_strided')}"
                    f"({first}, ({size},), (1,), 0)"
                )
            held: dict[str, str] = {}
            if self.shield:
                pad = indent
                if not torch.is_grad_enabled():  # the clone must record (see `shield`)
                    lines.append(f"{indent}with {ns.const(torch.enable_grad, 'enable_grad')}():")
                    pad = indent + "    "
                for target, _, _ in self.writebacks:
                    held[target] = ns.fresh(f"{target}_real")
                    lines.append(f"{pad}{held[target]}, {target} = {target}, {target}.clone()")
            inner(self.graph, ns, lines, indent)
            outs = self.graph.outputs
            if self.writebacks:
                lines.append(f"{indent}{WRITEBACK_MARK}")
            for target, real in held.items():
                lines.append(f"{indent}{target} = {real}")
            for target, idx, state in self.writebacks:
                pad = indent
                if state is not None:
                    lines.append(f"{indent}with {ns.const(state, 'state')}.context():")
                    pad = indent + "    "
                lines.append(f"{pad}{target}.copy_({outs[idx].name})")
            for name, (kind, base, chain) in self.outputs.items():
                expr = outs[base].name if kind == "graph" else base
                for step in chain:
                    args = ", ".join(
                        [expr]
                        + [format_arg(a, ns.const) for a in step.args]
                        + [f"{k}={format_arg(v, ns.const)}" for k, v in step.kwargs]
                    )
                    expr = f"{ns.const(step.func, _op_hint(step.func))}({args})"
                    if step.index is not None:
                        expr = f"{expr}[{step.index}]"
                lines.append(f"{indent}{name} = {expr}")

        return emit


def _op_hint(func: object) -> str:
    return "aten_" + str(func).replace("aten.", "").replace(".", "_")
