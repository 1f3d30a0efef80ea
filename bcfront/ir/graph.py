"""The graph IR: SSA nodes over tensor proxies, a printer and a reference evaluator.

A `Graph` is a list of `Node`s in execution order.  Each node is one of

* ``input``   — a graph input; ``target`` is its `Source` (where it comes from);
* ``call``    — ``target(*args, **kwargs)`` for a callable ``target``;
* ``method``  — ``args[0].<target>(*args[1:], **kwargs)`` (tensor methods);
* ``getattr`` — ``args[0].<target>`` (tensor properties such as ``.T``).

Arguments are nested tuples/lists/dicts/slices of Nodes and plain constants.
Every node carries ``meta`` (the example value: a fake tensor, or a tuple of
them), ``loc`` (the user source line it came from) and ``state`` (the ambient
torch state it runs under: grad mode and autocast; None means "as at entry").
Nodes are never reordered or removed: random and in-place ops keep eager's
order, which is what makes the eager backend reproduce eager exactly.

`Graph.format()` prints the graph as readable Python; `evaluate` is the
reference evaluator (about thirty lines) that tests use as an oracle for the
backends.

Types: a node's target, arguments and example value hold user objects and
tensors, so they are `Any` (named `Target`, `Arg` and `Meta` below); this
module stays torch-free, and the torch state is the `NodeState` protocol.
"""

from __future__ import annotations

import ast
import keyword
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

INFIX = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
    operator.eq: "==",
    operator.ne: "!=",
}
PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
# The comment line a functionalized graph's emitted code puts before its write-back
# (`functional_plan.Plan.wrap_emit`); `frontend.regions.region_errors` finds it there.
# Here, not in `functionalize`, because reading it must not import torch.
WRITEBACK_MARK = "# write the new values back into the inputs"

# input: its Source; call: the callable (any user object); method/getattr: the attribute name
Target: TypeAlias = Any
# a nested tuple/list/dict/slice of Nodes and plain constants (user values)
Arg: TypeAlias = Any
# a node's example value: a fake tensor, a tuple of them, a constant, None
Meta: TypeAlias = Any
# spells a non-literal constant in printed or generated code
ConstName: TypeAlias = Callable[[Any], str]


class NodeState(Protocol):
    """The ambient torch state a node runs under (`fake.TorchState`; torch-free here)."""

    @property
    def grad(self) -> bool: ...

    def describe(self) -> str: ...

    def context(self) -> AbstractContextManager[None]: ...


class InputSource(Protocol):
    """What an input node's target is: a `Source`, or anything that spells itself."""

    def readable(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Loc:
    """Where a node came from in user code."""

    filename: str
    lineno: int | None
    function: str
    line: str = ""

    def __str__(self) -> str:
        short = self.filename.rsplit("/", 1)[-1]
        text = f"{short}:{self.lineno} in {self.function}"
        return f"{text}: {self.line}" if self.line else text


class Node:
    __slots__ = ("index", "op", "target", "args", "kwargs", "meta", "loc", "state", "name", "mutates")

    def __init__(
        self,
        index: int,
        op: str,
        target: Target,
        args: tuple[Arg, ...] = (),
        kwargs: dict[str, Arg] | None = None,
        meta: Meta = None,
        loc: Loc | None = None,
        state: NodeState | None = None,
        name: str | None = None,
        mutates: bool = False,
    ) -> None:
        self.index = index
        self.op = op
        self.target = target
        self.args = args
        self.kwargs = kwargs or {}
        self.meta = meta
        self.loc = loc
        self.state = state
        self.name = name or f"t{index}"
        self.mutates = mutates  # writes to (a view of) its first argument or out=

    def __repr__(self) -> str:
        return f"%{self.name}"


def map_nodes(arg: Arg, fn: Callable[[Node], Any]) -> Arg:
    """Rebuild a nested argument structure with `fn` applied to each Node."""
    if isinstance(arg, Node):
        return fn(arg)
    t = type(arg)
    if t is tuple or t is list:
        return t(map_nodes(a, fn) for a in arg)
    if t is dict:
        return {k: map_nodes(v, fn) for k, v in arg.items()}
    if t is slice:
        return slice(map_nodes(arg.start, fn), map_nodes(arg.stop, fn), map_nodes(arg.step, fn))
    return arg


def iter_nodes(arg: Arg) -> list[Node]:
    """The Nodes inside a nested argument structure, in order."""
    out: list[Node] = []
    map_nodes(arg, out.append)
    return out


def is_identifier(name: object) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


_NOT_WORD = re.compile(r"[^0-9A-Za-z_]+")
_UNDERSCORES = re.compile(r"__+")


def sanitize(text: str) -> str:
    """A Python identifier made from arbitrary text (for readable generated names)."""
    out = _UNDERSCORES.sub("_", _NOT_WORD.sub("_", text)).strip("_") or "v"
    return out if not out[0].isdigit() else "v" + out


class Graph:
    """An SSA graph: input nodes first, then body nodes in execution order."""

    def __init__(self, name: str = "graph"):
        self.name = name
        self.inputs: list[Node] = []
        self.body: list[Node] = []
        self.outputs: list[Node] = []
        self._names: set[str] = set()
        # activation-checkpointed runs of body nodes (`backends.checkpoints.Region`)
        self.checkpoints: list[Any] = []

    def reserve(self, names: Iterable[str]) -> None:
        """Names node variables must not take (the captured function's own locals)."""
        self._names.update(names)

    @property
    def nodes(self) -> list[Node]:
        return self.inputs + self.body

    def _unique(self, base: str) -> str:
        name, i = base, 1
        while name in self._names or keyword.iskeyword(name):
            name, i = f"{base}_{i}", i + 1
        self._names.add(name)
        return name

    def add_input(self, source: InputSource, meta: Meta) -> Node:
        name = self._unique(sanitize(source.readable()))
        n = Node(len(self.inputs) + len(self.body), "input", source, meta=meta, name=name)
        self.inputs.append(n)
        return n

    def add(
        self,
        op: str,
        target: Target,
        args: Iterable[Arg] = (),
        kwargs: Mapping[str, Arg] | None = None,
        meta: Meta = None,
        loc: Loc | None = None,
        state: NodeState | None = None,
        mutates: bool = False,
    ) -> Node:
        index = len(self.inputs) + len(self.body)
        n = Node(
            index,
            op,
            target,
            tuple(args),
            dict(kwargs or {}),
            meta,
            loc,
            state,
            name=self._unique(f"t{index}"),
            mutates=mutates,
        )
        self.body.append(n)
        return n

    def truncate(self, n_body: int) -> None:
        """Drop body nodes added after a checkpoint (used when an inlined call is rolled back)."""
        for n in self.body[n_body:]:
            self._names.discard(n.name)
        del self.body[n_body:]

    @property
    def op_count(self) -> int:
        return len(self.body)

    # -- printing -------------------------------------------------------------
    def format(self, const_name: ConstName | None = None) -> str:
        """The graph as readable Python (one statement per node, source lines as comments)."""
        const_name = const_name or readable_const
        params = ", ".join(f"{n.name}: {describe_meta(n.meta)!r}" for n in self.inputs)
        lines = [f"def {sanitize(self.name)}({params}):"]
        for n in self.inputs:
            lines.append(f"    # {n.name} = {n.target.readable()}")
        last_loc = last_state = None
        for n in self.body:
            if n.state != last_state:
                lines.append(f"    # -- {n.state.describe() if n.state else 'entry state'} --")
                last_state = n.state
            if n.loc is not None and n.loc != last_loc:
                lines.append(f"    # {n.loc}")
                last_loc = n.loc
            lines.append(f"    {n.name} = {node_expr(n, const_name)}  # {describe_meta(n.meta)}")
        outs = ", ".join(o.name for o in self.outputs)
        lines.append(f"    return ({outs}{',' if len(self.outputs) == 1 else ''})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def format_arg(arg: Arg, const_name: ConstName, name_of: Callable[[Node], str] | None = None) -> str:
    """Python source for a nested argument; `const_name(value)` spells non-literals and
    `name_of(node)` (default: its name) spells nodes."""
    if isinstance(arg, Node):
        return arg.name if name_of is None else name_of(arg)
    t = type(arg)
    if t is tuple:
        inner = ", ".join(format_arg(a, const_name, name_of) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if t is list:
        return "[" + ", ".join(format_arg(a, const_name, name_of) for a in arg) + "]"
    if t is dict and all(type(k) is str for k in arg):
        return "{" + ", ".join(f"{k!r}: {format_arg(v, const_name, name_of)}" for k, v in arg.items()) + "}"
    if t is slice:
        parts = (
            format_arg(arg.start, const_name, name_of),
            format_arg(arg.stop, const_name, name_of),
            format_arg(arg.step, const_name, name_of),
        )
        return f"slice({', '.join(parts)})"
    if is_literal(arg):
        return repr(arg)
    return const_name(arg)


def is_literal(value: object) -> bool:
    """True when repr(value) is a Python literal evaluating to an equal value."""
    t = type(value)
    if value is None or value is Ellipsis or t in (bool, int, str, bytes):
        return True
    if t is float or t is complex:
        text = repr(value)
        if "nan" in text or "inf" in text:
            return False
        return t is float or _same_signed_parts(value, ast.literal_eval(text))
    return False


def _same_signed_parts(a: Any, b: Any) -> bool:
    """Whether `b` (a complex's repr read back) has `a`'s parts with their signs: ``-1j``
    reads back as ``-(1j)``, whose real part is -0.0, and ``(-0-1j)`` as +0.0."""
    return all(
        x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
        for x, y in ((a.real, b.real), (a.imag, b.imag))
    )


def readable_const(value: object) -> str:
    """A readable spelling of a non-literal constant (for printing, not execution)."""
    mod = type(value).__module__
    if mod == "torch" and type(value).__name__ == "dtype":
        return str(value)  # torch.float32
    if mod == "torch" and type(value).__name__ in ("device", "layout", "memory_format"):
        return f"torch.{type(value).__name__}({str(value)!r})"
    if mod == "torch._ops" and type(value).__name__ == "OpOverload":
        return f"torch.ops.{value}"  # torch.ops.aten.slice_scatter.default
    name = qualified_name(value)
    return name if name else f"<{type(value).__name__}>"


def qualified_name(fn: object) -> str | None:
    """`module.qualname` for functions and classes, spelled the way users import them."""
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(qual, str):
        return None
    mod = getattr(fn, "__module__", None)
    if isinstance(fn, type) and mod == "builtins":
        return qual
    if not isinstance(mod, str):
        owner = getattr(fn, "__self__", None)
        if owner is not None and type(owner).__name__ == "module":
            mod = owner.__name__
    if mod == "torch._C._VariableFunctions" or mod == "torch._VariableFunctionsClass":
        mod = "torch"
    if qual.startswith("_VariableFunctionsClass."):
        qual = qual.split(".", 1)[1]
    return f"{mod}.{qual}" if mod and mod != "builtins" else qual


def node_expr(n: Node, const_name: ConstName, name_of: Callable[[Node], str] | None = None) -> str:
    """The right-hand side of a node as Python source."""
    fa: Callable[[Arg], str] = lambda a: format_arg(a, const_name, name_of)  # noqa: E731
    if n.op == "getattr":
        return f"{fa(n.args[0])}.{n.target}"
    kw = [f"{k}={fa(v)}" for k, v in n.kwargs.items()]
    if n.op == "method":
        args = ", ".join([fa(a) for a in n.args[1:]] + kw)
        return f"{fa(n.args[0])}.{n.target}({args})"
    if n.op == "call":
        if n.target is operator.getitem and not kw:
            return f"{fa(n.args[0])}[{format_index(n.args[1], const_name, name_of)}]"
        if n.target in INFIX and len(n.args) == 2 and not kw:
            return f"{fa(n.args[0])} {INFIX[n.target]} {fa(n.args[1])}"
        if n.target in PREFIX and len(n.args) == 1 and not kw:
            return f"{PREFIX[n.target]}{fa(n.args[0])}"
        args = ", ".join([fa(a) for a in n.args] + kw)
        return f"{const_name(n.target)}({args})"
    raise ValueError(f"cannot print node op {n.op!r}")


def format_index(idx: Arg, const_name: ConstName, name_of: Callable[[Node], str] | None = None) -> str:
    """An index expression as it would appear inside brackets."""
    if type(idx) is tuple and idx:
        return ", ".join(format_index(i, const_name, name_of) for i in idx) + ("," if len(idx) == 1 else "")
    if type(idx) is slice:
        parts = [
            "" if p is None else format_arg(p, const_name, name_of) for p in (idx.start, idx.stop, idx.step)
        ]
        return f"{parts[0]}:{parts[1]}" + (f":{parts[2]}" if idx.step is not None else "")
    if idx is Ellipsis:
        return "..."
    return format_arg(idx, const_name, name_of)


def describe_meta(meta: Meta) -> str:
    """Short dtype/shape description of an example value, e.g. ``f32[8, 64]``."""
    if meta is None:
        return "?"
    shape = getattr(meta, "shape", None)
    dtype = getattr(meta, "dtype", None)
    if shape is not None and dtype is not None:
        d = str(dtype).replace("torch.", "")
        d = {
            "float32": "f32",
            "float64": "f64",
            "float16": "f16",
            "bfloat16": "bf16",
            "int64": "i64",
            "int32": "i32",
            "bool": "b8",
        }.get(d, d)
        dev = getattr(meta, "device", None)
        where = f"@{dev}" if dev is not None and str(dev) != "cpu" else ""
        return f"{d}[{', '.join(str(s) for s in shape)}]{where}"
    if isinstance(meta, (tuple, list)):
        return "(" + ", ".join(describe_meta(m) for m in meta) + ")"
    return type(meta).__name__


# -- reference evaluator -----------------------------------------------------------


def run_node(n: Node, env: dict[Node, Any]) -> Any:
    """Execute one node given the values of the nodes it reads."""
    look: Callable[[Arg], Arg] = lambda a: map_nodes(a, env.__getitem__)  # noqa: E731
    args, kwargs = look(n.args), look(n.kwargs)
    if n.op == "call":
        return n.target(*args, **kwargs)
    if n.op == "method":
        return getattr(args[0], n.target)(*args[1:], **kwargs)
    if n.op == "getattr":
        return getattr(args[0], n.target)
    raise ValueError(f"cannot evaluate node op {n.op!r}")


def evaluate(graph: Graph, inputs: Iterable[Any]) -> list[Any]:
    """Run `graph` on real `inputs` (one per input node), node by node, under each node's state."""
    env = dict(zip(graph.inputs, inputs))
    for n in graph.body:
        if n.state is not None:
            with n.state.context():
                env[n] = run_node(n, env)
        else:
            env[n] = run_node(n, env)
    return [env[o] for o in graph.outputs]
