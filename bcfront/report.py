"""The explain report: plain data shared by capture (which fills it) and the CLI (which renders it).

Everything here is a small frozen dataclass of plain Python values, so a
report can be rendered, compared and serialized without torch.  The JSON
schema (`SCHEMA_VERSION`) is documented in docs/explain-schema.md; bump the
version on any incompatible change.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from .reasons import BreakReason

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class UserFrame:
    """One entry of a user stack (outermost first)."""

    function: str
    filename: str
    lineno: int | None
    source_line: str = ""


@dataclass(frozen=True)
class KernelInfo:
    name: str
    ops: tuple[str, ...]  # the graph ops fused into this kernel
    source: str  # generated kernel source


@dataclass(frozen=True)
class GraphInfo:
    function: str  # qualified name of the captured function (or continuation)
    backend: str
    op_count: int
    code: str  # the graph printed as readable Python
    kernels: tuple[KernelInfo, ...] = ()
    fallback_ops: tuple[str, ...] = ()  # ops left to torch by the backend


@dataclass(frozen=True)
class GraphBreak:
    reason: BreakReason  # short category, e.g. "data-dependent-branch", "unsupported-opcode"
    message: str  # what a person reads
    filename: str | None
    lineno: int | None
    source_line: str = ""
    instruction: str = ""  # e.g. "POP_JUMP_IF_FALSE at offset 42"
    user_stack: tuple[UserFrame, ...] = ()
    count: int = 1  # identical breaks are reported once

    def __post_init__(self) -> None:
        # A plain string is accepted (tools build reports by hand); an unknown one is refused.
        object.__setattr__(self, "reason", BreakReason.of(self.reason))


@dataclass(frozen=True)
class GuardInfo:
    source: str  # e.g. "L['x'].shape[0]"
    kind: str  # e.g. "TENSOR_MATCH", "CONSTANT", "ID_MATCH", "TYPE_MATCH", "GLOBAL_STATE"
    expr: str  # readable check, e.g. "L['x'].shape[0] == 8"
    first_use: UserFrame | None = None  # where the guarded value was first used


@dataclass(frozen=True)
class Recompile:
    function: str
    guard: str  # the failing guard's expr
    source: str
    expected: str
    actual: str
    reason: str  # sentence for a person
    first_use: UserFrame | None = None


@dataclass(frozen=True)
class SideEffect:
    kind: str  # "setattr", "list.append", "global", "setitem", "input-mutation", ...
    target: str  # a source expression, e.g. "L['self'].count"
    filename: str | None = None
    lineno: int | None = None


@dataclass(frozen=True)
class FunctionReport:
    """Everything known about one captured function."""

    function: str
    filename: str | None
    lineno: int | None
    graphs: tuple[GraphInfo, ...] = ()
    graph_breaks: tuple[GraphBreak, ...] = ()
    guards: tuple[GuardInfo, ...] = ()
    recompiles: tuple[Recompile, ...] = ()
    side_effects: tuple[SideEffect, ...] = ()
    calls: int = 0  # every call, cache hits included
    # Run time of the `timed_calls` made while explain collected (bcfront.timing):
    # compiled_seconds + python_seconds + capture_seconds == total_seconds.
    compiled_seconds: float = 0.0  # inside compiled graphs, its continuations' included
    python_seconds: float = 0.0  # the rest: guards, breaks, continuations' Python
    notes: tuple[str, ...] = ()  # e.g. "torch.relu is a C function: ran natively"
    warnings: tuple[str, ...] = ()  # e.g. recompile storms
    timed_calls: int = 0
    total_seconds: float = 0.0  # wall time of the timed calls
    capture_seconds: float = 0.0  # ... spent capturing (tracing, compiling): neither side


@dataclass(frozen=True)
class Report:
    """What `bcfront.explain` returns; aggregates every captured function that ran."""

    functions: tuple[FunctionReport, ...] = ()

    @property
    def graphs(self) -> list[GraphInfo]:
        return [g for f in self.functions for g in f.graphs]

    @property
    def graph_breaks(self) -> list[GraphBreak]:
        return [b for f in self.functions for b in f.graph_breaks]

    @property
    def guards(self) -> list[GuardInfo]:
        return [g for f in self.functions for g in f.guards]

    @property
    def recompiles(self) -> list[Recompile]:
        return [r for f in self.functions for r in f.recompiles]

    @property
    def side_effects(self) -> list[SideEffect]:
        return [s for f in self.functions for s in f.side_effects]

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "functions": [asdict(f) for f in self.functions]}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)
