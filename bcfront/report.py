"""The explain report: plain data shared by capture (which fills it) and the CLI (which renders it).

Everything here is a small frozen dataclass of plain Python values, so a
report can be rendered, compared and serialized without torch.  The JSON
schema (`SCHEMA_VERSION`) is documented in docs/explain-schema.md; bump the
version on any incompatible change.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from .described import DescribedStrEnum
from .reasons import BreakReason

SCHEMA_VERSION = 2


class FallbackKind(DescribedStrEnum):
    """Why (part of) a captured function ran natively; `.meaning` says it in one line."""

    NO_BYTECODE = "no-bytecode", "a C function or class: nothing to capture, it runs natively"
    INTERNAL_ERROR = "internal-error", "bcfront failed while capturing (a bcfront bug): it runs natively"
    SELF_CHECK = "self-check", "a fresh entry failed its own guards (a bcfront bug): the call ran natively"
    RECOMPILE_LIMIT = "recompile-limit", "guards kept failing past the recompile limit: it runs natively"
    LOOP_LIMIT = "loop-limit", "a loop around a break kept recapturing: the rest of the loop runs natively"
    NO_CONTINUATION = (
        "no-continuation",
        "no continuation after a graph break: the function runs natively under the guards so far",
    )
    NESTING_DEPTH = (
        "nesting-depth",
        "a value nested too deep for bcfront's own recursion: the call ran natively",
    )


class NativeFallbackWarning(RuntimeWarning):
    """Warned once per captured function and fallback (kind and place) when it runs natively."""


@dataclass(frozen=True)
class NativeFallback:
    """One way a captured function (or one of its continuations) fell back to running natively."""

    kind: FallbackKind
    message: str  # what a person reads
    filename: str | None = None  # where: the break, the function, ...
    lineno: int | None = None
    function: str = ""  # the captured function (a continuation names itself) it happened in
    count: int = 1  # times it happened (each a native run or a give-up)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", FallbackKind.of(self.kind))


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


# Tensor ops that return a view of their first argument, by their last dotted name.
VIEW_OPS = frozenset(
    [
        "view",
        "view_as",
        "reshape",
        "reshape_as",
        "transpose",
        "swapaxes",
        "swapdims",
        "t",
        "T",
        "mT",
        "H",
        "permute",
        "movedim",
        "expand",
        "expand_as",
        "squeeze",
        "unsqueeze",
        "narrow",
        "select",
        "flatten",
        "unflatten",
        "unfold",
        "split",
        "split_with_sizes",
        "tensor_split",
        "chunk",
        "unbind",
        "as_strided",
        "getitem",
        "__getitem__",
        "diagonal",
        "detach",
        "alias",
        "real",
        "imag",
        "view_as_real",
        "view_as_complex",
    ]
)
NODE_KINDS = ("input", "op", "view", "inplace")


def node_kind(op: str, target: str, mutates: bool) -> str:
    """A graph node's kind for pictures: an input, an in-place write, a view, or another op."""
    if op == "input":
        return "input"
    if mutates:
        return "inplace"
    return "view" if target.rsplit(".", 1)[-1] in VIEW_OPS else "op"


@dataclass(frozen=True)
class GraphNode:
    """One node of a captured graph, as plain data (for pictures of the dataflow)."""

    name: str  # its variable in `GraphInfo.code`
    kind: str  # one of NODE_KINDS (`node_kind`)
    target: str  # what it calls: "torch.matmul", "view" (a method), the input's source
    inputs: tuple[str, ...] = ()  # the names of the nodes it reads, in argument order
    meta: str = ""  # its example value, e.g. "f32[8, 64]"
    output: bool = False  # a graph output
    expr: str = ""  # the right-hand side as in `code`
    filename: str | None = None  # the user line it came from
    lineno: int | None = None
    function: str = ""  # the code object's name there


@dataclass(frozen=True)
class GraphInfo:
    function: str  # qualified name of the captured function (or continuation)
    backend: str
    op_count: int
    code: str  # the graph printed as readable Python
    kernels: tuple[KernelInfo, ...] = ()
    fallback_ops: tuple[str, ...] = ()  # ops left to torch by the backend
    nodes: tuple[GraphNode, ...] = ()  # inputs first, then the body in execution order


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
    call: int | None = None  # the function's call (1-based) that missed and captured again


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
    # Whatever ran natively instead of captured (its continuations' included), with why.
    native_fallbacks: tuple[NativeFallback, ...] = ()
    # Top-level tensor ops of the timed calls (continuations and callees included), counted
    # while explain collected: inside compiled graphs, and outside them (natively).
    ops_in_graphs: int = 0
    ops_native: int = 0

    @property
    def op_share(self) -> str:
        """E.g. "75% of tensor ops in compiled graphs (3 of 4)"; "" when none were counted."""
        total = self.ops_in_graphs + self.ops_native
        if total <= 0:
            return ""
        pct = 100 * self.ops_in_graphs // total if self.ops_native else 100
        return f"{pct}% of tensor ops in compiled graphs ({self.ops_in_graphs} of {total})"

    def text(self) -> str:
        """A few plain lines: graphs, breaks, the op share and every native fallback."""
        n_breaks = sum(b.count for b in self.graph_breaks)
        head = (
            f"{self.function}: {len(self.graphs)} graph(s), {n_breaks} graph break(s), {self.calls} call(s)"
        )
        lines = [head]
        if self.op_share:
            lines.append(f"  {self.op_share}")
        for b in self.graph_breaks:
            lines.append(f"  break [{b.reason}] {_where(b.filename, b.lineno)}: {b.message}")
        for f in self.native_fallbacks:
            times = f" (x{f.count})" if f.count > 1 else ""
            lines.append(f"  ran natively [{f.kind}]{times} {_where(f.filename, f.lineno)}: {f.message}")
        return "\n".join(lines)


def _where(filename: str | None, lineno: int | None) -> str:
    if not filename:
        return "-"
    return f"{filename}:{lineno}" if lineno else filename


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

    @property
    def native_fallbacks(self) -> list[NativeFallback]:
        """Every fallback once (a continuation's shows on its function too)."""
        out: list[NativeFallback] = []
        for f in self.functions:
            out.extend(n for n in f.native_fallbacks if n not in out)
        return out

    def __str__(self) -> str:
        return "\n".join(f.text() for f in self.functions) or "no captured function ran"

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "functions": [asdict(f) for f in self.functions]}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def to_html(self, path=None, title: str = "bcfront explain") -> str:
        """The report as one self-contained HTML page (`bcfront.html`); written to `path` if given."""
        from .html import report_html

        text = report_html(self, title)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text
