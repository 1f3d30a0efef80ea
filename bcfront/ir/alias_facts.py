"""Alias facts of a captured graph, read off the aten ops its nodes dispatch.

`observe(graph, example_inputs)` runs the graph once more on fresh fake
tensors (made from the real example inputs by one converter, so inputs that
share storage share it here too) under a dispatch mode that records every
aten call each node makes.  Each call's schema says which outputs alias which
arguments (``Tensor(a)``) and which arguments it writes (``Tensor(a!)``); the
dispatcher has already chosen the overload, so Tensor methods, torch
functions, ``x[1:, 0]`` and ``x[:, 0] = v`` all resolve to the aten ops they
really are (``slice``, ``select``, ``copy_``...), with no hand list.

From those calls every tensor gets a *provenance*: the storage root it lives
in (a graph input, a synthetic base for inputs sharing storage, or the op
output that allocated it) and the chain of aten view ops leading from the root
to it.  The chain is what functionalization replays and inverts; the roots
give the torch-free `bcfront.analysis.alias.AliasAnalysis` its facts.  As a
safety net the fake storages are compared too: a tensor sharing storage with
a root its schema facts do not explain keeps the root, with an unknown chain.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._python_dispatch import TorchDispatchMode

from ..analysis.alias import AliasAnalysis, OpFacts
from .fake import int_hint
from .graph import Graph, Node, map_nodes

if TYPE_CHECKING:
    from torch._ops import OpOverload

    from .fake import TorchState

aten = torch.ops.aten


# -- provenance ---------------------------------------------------------------------------------


class Root:
    """A storage root: ``input`` (a graph input), ``shared`` (synthetic base of inputs
    sharing one storage), ``fresh`` (allocated by an op), ``const`` (a constant
    tensor made inside an op, e.g. the value in ``x[i] = 0.5``).  `node` is the graph
    node that made it; `value` the real constant (``const``) or the number of elements
    the synthetic base spans (``shared``)."""

    __slots__ = ("kind", "label", "fake", "node", "value")

    def __init__(
        self,
        kind: str,
        label: str,
        fake: torch.Tensor,
        node: Node | None = None,
        value: torch.Tensor | int | torch.SymInt | None = None,
    ) -> None:
        self.kind, self.label, self.fake, self.node, self.value = kind, label, fake, node, value

    def __repr__(self) -> str:
        return f"<root {self.kind} {self.label}>"


@dataclass(frozen=True, slots=True)
class Step:
    """One view op: ``func(base, *args, **kwargs)``, then ``[index]`` for multi-output views."""

    func: OpOverload
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    index: int | None = None

    def apply(self, base: torch.Tensor) -> Any:
        out = self.func(base, *self.args, **dict(self.kwargs))
        return out if self.index is None else out[self.index]


@dataclass(frozen=True, slots=True)
class Prov:
    root: Root
    chain: tuple[Step, ...] | None  # Steps from the root; None: aliases, chain unknown


@dataclass
class AtenCall:
    func: object  # an aten OpOverload, or another dispatched callable
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    out: Any
    writes: tuple[torch.Tensor, ...]  # fakes written in place


@dataclass
class NodeTrace:
    node: Node
    value: object  # the node's fake output (tensor, tuple, None, ...)
    calls: list[AtenCall] = field(default_factory=list)
    resized: bool = False  # a mutable call changed an argument's layout

    @property
    def writes(self) -> bool:
        return any(c.writes for c in self.calls)

    @property
    def inplace_view(self) -> bool:
        """Some call changes a tensor's metadata in place (``t_``, ``unsqueeze_``, ``resize_``)."""
        return self.resized or any(
            torch.Tag.inplace_view in getattr(c.func, "tags", ()) or _packet_name(c.func) in _METADATA_WRITERS
            for c in self.calls
        )


_METADATA_WRITERS = frozenset({"set_", "resize_", "resize_as_", "_resize_output_"})


def _packet_name(func: object) -> str:
    packet = getattr(func, "overloadpacket", None)
    return getattr(packet, "__name__", "") if packet is not None else ""


# -- schemas ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ArgSpec:
    name: str
    kwarg_only: bool
    sets: frozenset[str]
    write: bool


# (argument specs, alias sets of each return)
SchemaInfo: TypeAlias = tuple[tuple[_ArgSpec, ...], tuple[frozenset[str], ...]]
_SCHEMAS: dict[OpOverload, SchemaInfo] = {}
_LIST_RETURN = re.compile(r"Tensor\((\w+)\)\[\]")


def schema_info(func: OpOverload) -> SchemaInfo:
    """(argument specs, alias sets of each return) of an aten OpOverload, cached."""
    hit = _SCHEMAS.get(func)
    if hit is None:
        s = func._schema
        args = tuple(
            _ArgSpec(
                a.name,
                a.kwarg_only,
                frozenset(a.alias_info.before_set) if a.alias_info else frozenset(),
                bool(a.alias_info and a.alias_info.is_write),
            )
            for a in s.arguments
        )
        rets = []
        for r in s.returns:
            info = r.alias_info
            sets = frozenset(info.before_set) if info is not None else frozenset()
            if info is not None and not sets:  # Tensor(a)[]: the letter is on the element
                m = _LIST_RETURN.search(str(s).split(") -> ", 1)[-1])
                sets = frozenset({m.group(1)}) if m else frozenset()
            rets.append(sets)
        hit = _SCHEMAS[func] = (args, tuple(rets))
    return hit


# Ops that write arguments their schema does not annotate (torch special-cases the same one in
# torch._decomp._should_decompose_because_unsafe_op): op -> names of the arguments written.
UNANNOTATED_WRITES: dict[OpOverload, Callable[[dict[str, Any]], tuple[str, ...]]] = {
    aten.native_batch_norm.default: lambda a: ("running_mean", "running_var") if a.get("training") else (),
}
# Names of the user-level calls that reach those ops (``F.batch_norm``, ``torch.instance_norm``):
# a graph without in-place ops by name still writes when it has one of these.
HIDDEN_WRITERS = ("batch_norm", "instance_norm")


def may_write(graph: Graph) -> bool:
    """Cheap pre-check: could some node of `graph` write a tensor (by name, or a hidden writer)?"""
    for n in graph.body:
        if node_mutates_by_name(n) or writes_grad(n) or opaque_effect(n):
            return True
        name = n.target if n.op == "method" else getattr(n.target, "__name__", "")
        if isinstance(name, str) and any(h in name for h in HIDDEN_WRITERS):
            return True
    return False


def bind(
    specs: Sequence[_ArgSpec], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> list[tuple[_ArgSpec, Any]]:
    """(spec, value) for each schema argument the call passed."""
    out = []
    for i, spec in enumerate(specs):
        if i < len(args) and not spec.kwarg_only:
            out.append((spec, args[i]))
        elif spec.name in kwargs:
            out.append((spec, kwargs[spec.name]))
    return out


def tensors_in(x: object) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for i in x for t in tensors_in(i)]
    return []


def storage_key(t: torch.Tensor) -> int | None:
    try:
        key: int = t.untyped_storage()._cdata
        return key
    except Exception:  # noqa: BLE001 - sparse, nested or otherwise storage-less tensors
        return None


# (the ignores: TorchDispatchMode's __init_subclass__ and __init__ are unannotated in torch)
class _Recorder(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Records every aten call made under it, then lets the next mode (fake) run it."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.calls: list[tuple[OpOverload, tuple[Any, ...], dict[str, Any], Any, bool]] = []

    def __torch_dispatch__(
        self,
        func: OpOverload,
        types: Sequence[type],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        before = _layouts(args, kwargs) if func._schema.is_mutable else None
        out = func(*args, **kwargs)
        # a mutable op that changed an argument's layout (``out=`` resized, ``t_``) is a
        # metadata write, which no functional rewrite of its data can express
        resized = before is not None and before != _layouts(args, kwargs)
        self.calls.append((func, args, kwargs, out, resized))
        return out


def _layouts(
    args: Sequence[Any], kwargs: Mapping[str, Any]
) -> list[tuple[tuple[int, ...], tuple[int, ...], int | torch.SymInt]]:
    return [
        (tuple(t.shape), t.stride(), t.storage_offset())
        for t in tensors_in(list(args) + list(kwargs.values()))
    ]


# -- the observation ----------------------------------------------------------------------------


def _extent(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))


class Observation:
    """Provenance of every tensor of one fake re-execution of a graph (see module docstring)."""

    def __init__(self, graph: Graph, example_inputs: Iterable[torch.Tensor]) -> None:
        from torch._subclasses.fake_tensor import FakeTensorMode

        self.graph = graph
        self.mode = FakeTensorMode(allow_non_fake_inputs=True)
        self.prov: dict[int, Prov] = {}
        self.keep: list[torch.Tensor] = []
        self.env: dict[Node, Any] = {}  # Node -> fake value
        self.traces: list[NodeTrace] = []
        self.shared_groups: list[list[Node]] = []  # inputs sharing one storage
        self.shared_ok: dict[int, bool] = {}  # group index -> one dtype, synthetic base valid
        self.inconsistent: list[Node] = []  # storage sharing the schemas did not explain
        self._storage_root: dict[int | None, Root] = {}
        self._claimed: set[int] = set()  # roots that took over a node's internal storage
        self._inputs(list(example_inputs))
        for n in graph.body:
            self._run(n)

    # -- setup ----------------------------------------------------------------------------
    def _inputs(self, reals: list[torch.Tensor]) -> None:
        tensors = iter(self.mode.from_tensor(t, static_shapes=True) for t in reals)
        by_storage: dict[int | None, list[tuple[Node, FakeTensor]]] = {}
        for n in self.graph.inputs:
            number = number_input_value(n)
            if number is not None:  # a symbolic int input: its value in this example, no storage
                self.env[n] = number
                continue
            f = next(tensors)
            self.env[n] = f
            by_storage.setdefault(storage_key(f), []).append((n, f))
        for key, members in by_storage.items():
            if len(members) == 1 or key is None:
                for n, f in members:
                    root = Root("input", n.name, f, n)
                    self._set(f, Prov(root, ()))
                    self._storage_root.setdefault(key, root)
                continue
            self._shared(key, members)

    def _shared(self, key: int | None, members: list[tuple[Node, FakeTensor]]) -> None:
        gi = len(self.shared_groups)
        self.shared_groups.append([n for n, _ in members])
        fakes = [f for _, f in members]
        # The base spans the storage from its start, so as_strided offsets stay absolute.
        hi = max(f.storage_offset() + _extent(f) for f in fakes)
        ok = len({f.dtype for f in fakes}) == 1
        with self.mode:
            base = torch.as_strided(fakes[0], (hi,), (1,), 0)
        self.shared_ok[gi] = ok
        root = Root("shared", f"base{gi}", base, value=hi)
        self._set(base, Prov(root, ()))
        self._storage_root[key] = root
        for f in fakes:
            step = Step(aten.as_strided.default, (tuple(f.shape), tuple(f.stride()), f.storage_offset()))
            self._set(f, Prov(root, (step,) if ok else None))

    def _set(self, t: torch.Tensor, p: Prov) -> None:
        self.prov[id(t)] = p
        self.keep.append(t)

    def _fresh(self, t: torch.Tensor, label: str, node: Node) -> Prov:
        root = Root("fresh", label, t, node)
        p = Prov(root, ())
        self._set(t, p)
        self._storage_root.setdefault(storage_key(t), root)
        return p

    def prov_of(self, t: torch.Tensor, node: Node | None = None) -> Prov:
        """Provenance of a fake met as an argument (constants made inside an op get a root)."""
        p = self.prov.get(id(t))
        if p is None:
            # a real tensor made inside an op (``x[i] = 0.5`` lifts tensor(0.5)), or a fake
            # that carries the constant it was made from
            value = t if not isinstance(t, FakeTensor) else getattr(t, "constant", None)
            root = Root("fresh" if value is None else "const", f"c{len(self.keep)}", t, node, value)
            p = Prov(root, ())
            self._set(t, p)
        return p

    # -- running ----------------------------------------------------------------------------
    def _run(self, n: Node) -> None:
        rec = _Recorder()
        look: Callable[[Any], Any] = lambda a: map_nodes(a, self.env.__getitem__)  # noqa: E731
        args, kwargs = look(n.args), look(n.kwargs)
        fn: Callable[..., Any]
        if n.op == "call":
            fn = n.target
        elif n.op == "method":
            fn = lambda *a, **k: getattr(a[0], n.target)(*a[1:], **k)  # noqa: E731
        else:
            fn = lambda a: getattr(a, n.target)  # noqa: E731
        state = n.state or self._entry_state
        with state.context(), self.mode, rec:
            value = fn(*args, **kwargs)
        self.env[n] = value
        trace = NodeTrace(n, value)
        for k, (func, cargs, ckw, out, resized) in enumerate(rec.calls):
            trace.calls.append(self._call(n, k, func, cargs, ckw, out))
            trace.resized = trace.resized or resized
        for i, t in enumerate(
            tensors_in(value)
            if isinstance(value, (tuple, list))
            else ([value] if isinstance(value, torch.Tensor) else [])
        ):
            if id(t) not in self.prov:
                self._fresh(t, f"{n.name}.{i}", n)
            self._check_storage(n, t)
        self.traces.append(trace)

    @cached_property
    def _entry_state(self) -> TorchState:
        from .fake import TorchState

        return TorchState.current()

    def _call(
        self, n: Node, k: int, func: object, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any
    ) -> AtenCall:
        if not isinstance(func, torch._ops.OpOverload):
            return AtenCall(func, args, kwargs, out, ())
        specs, rets = schema_info(func)
        bound = bind(specs, args, kwargs)
        for _, v in bound:
            for t in tensors_in(v):
                self.prov_of(t, n)
        hidden = UNANNOTATED_WRITES.get(func)
        extra = hidden({spec.name: v for spec, v in bound}) if hidden else ()
        writes = tuple(t for spec, v in bound if spec.write or spec.name in extra for t in tensors_in(v))
        outs = out if len(rets) > 1 else (out,)
        for ri, (sets, rv) in enumerate(zip(rets, outs)):
            is_list = isinstance(rv, (list, tuple))
            for li, t in enumerate(rv if is_list else (rv,)):
                if not isinstance(t, torch.Tensor) or id(t) in self.prov:
                    continue  # in-place results are their argument (same object)
                src = (
                    [(spec, v) for spec, v in bound if spec.sets & sets and isinstance(v, torch.Tensor)]
                    if sets
                    else []
                )
                if not src:
                    self._fresh(t, f"{n.name}.{k}.{ri}.{li}", n)
                    continue
                base = self.prov_of(src[0][1], n)
                index = li if is_list else (ri if len(rets) > 1 else None)
                replayable = (
                    base.chain is not None
                    and args
                    and args[0] is src[0][1]
                    and not tensors_in(args[1:])
                    and not tensors_in(list(kwargs.values()))
                )
                step = Step(func, tuple(args[1:]), tuple(kwargs.items()), index)
                if func.overloadpacket is aten.as_strided and index is None:
                    # its default storage offset is its input's: spell the absolute one out
                    step = Step(func, (tuple(t.shape), tuple(t.stride()), t.storage_offset()))
                chain = base.chain + (step,) if replayable and base.chain is not None else None
                self._set(t, Prov(base.root, chain))
        return AtenCall(func, args, kwargs, out, writes)

    def _check_storage(self, n: Node, t: torch.Tensor) -> None:
        key = storage_key(t)
        if key is None:
            return
        p = self.prov[id(t)]
        owner = self._storage_root.get(key)
        if owner is None:
            self._storage_root[key] = p.root
        elif owner is not p.root:
            if owner.node is n and owner.kind == "fresh" and id(owner) not in self._claimed:
                # Storage allocated inside this very node and exposed by an op without an
                # alias annotation (``reshape`` = ``clone`` + ``_unsafe_view``): the output owns it.
                self._claimed.add(id(p.root))
                self._storage_root[key] = p.root
                return
            self.inconsistent.append(n)
            self.prov[id(t)] = Prov(owner, None)

    # -- facts for the torch-free analysis ----------------------------------------------------
    def leaves(self, n: Node) -> list[tuple[str, torch.Tensor]]:
        """(value id, fake) of each tensor the node produces."""
        v = self.env[n]
        if isinstance(v, torch.Tensor):
            return [(n.name, v)]
        if isinstance(v, (tuple, list)):
            return [(f"{n.name}[{i}]", t) for i, t in enumerate(v) if isinstance(t, torch.Tensor)]
        return []

    def value_ids(self, a: Any) -> list[str]:
        """Value ids a (nested) node argument reads."""
        out: list[str] = []
        for m in _nodes_in(a):
            out.extend(vid for vid, _ in self.leaves(m))
        return out

    @cached_property
    def facts(self) -> tuple[list[str], list[OpFacts], list[list[str]]]:
        """(input ids, per-node facts, shared input groups) for `AliasAnalysis`."""
        root_value: dict[int, str] = {}
        inputs = []
        for n in self.graph.inputs:
            if not isinstance(self.env[n], torch.Tensor):
                continue  # a symbolic int input: no storage
            inputs.append(n.name)
            root_value.setdefault(id(self.prov[id(self.env[n])].root), n.name)
        ops = []
        for tr in self.traces:
            n = tr.node
            reads = self.value_ids((n.args, n.kwargs))
            writes = []
            for c in tr.calls:
                for t in c.writes:
                    rv = root_value.get(id(self.prov_of(t).root))
                    if rv is not None and rv not in writes:
                        writes.append(rv)
            outputs = []
            for vid, t in self.leaves(n):
                root = self.prov[id(t)].root
                rv = root_value.setdefault(id(root), vid)
                outputs.append((vid, (rv,) if rv != vid else ()))
            ops.append(OpFacts(n.name, tuple(reads), tuple(writes), tuple(outputs)))
        groups = [[n.name for n in g] for g in self.shared_groups]
        return inputs, ops, groups

    @cached_property
    def analysis(self) -> AliasAnalysis:
        inputs, ops, groups = self.facts
        return AliasAnalysis(inputs, ops, groups)


def _nodes_in(a: Any) -> list[Node]:
    out: list[Node] = []
    map_nodes(a, out.append)
    return out


def number_input_value(n: Node) -> int | float | None:
    """A graph input that is a symbolic number rather than a tensor (``n`` of ``x[:, n] = v``
    under dynamic shapes, a float argument ``s`` of ``x * s``): the value it has in the
    example the graph was traced on, which the examples (tensors only) do not hold; None
    for a tensor input."""
    meta = n.meta
    if isinstance(meta, torch.SymFloat):
        hint = meta.node.maybe_as_float()
        return float(meta.node.hint) if hint is None else hint
    if not isinstance(meta, torch.SymInt):
        return meta if type(meta) in (int, float) else None
    value = int_hint(meta)
    if value is None:  # an unbacked symbol: never a graph input's
        raise TypeError(f"symbolic int input {n.name} has no value in its example")
    return value


def observe(graph: Graph, example_inputs: Iterable[torch.Tensor]) -> Observation:
    return Observation(graph, example_inputs)


def writes_grad(n: Node) -> bool:
    """The node runs autograd's backward or assigns ``t.grad``: it writes leaves' ``.grad``
    (no schema says so)."""
    return n.op == "call" and (
        n.target is torch.autograd.backward or (n.target is setattr and n.args[1:2] == ("grad",))
    )


def opaque_effect(n: Node) -> bool:
    """The node runs Python no pure graph can hold: a user's ``torch.autograd.Function.apply``
    (the autograd node it builds is the real Function's), or a target that says so
    (``bcfront_opaque_effect``: an optimizer step, which writes the parameters in place)."""
    if n.op != "call":
        return False
    if getattr(n.target, "bcfront_opaque_effect", False) is True:
        return True
    func = getattr(n.target, "__func__", None)
    return func is not None and func is getattr(torch.autograd.Function.apply, "__func__", None)


def node_mutates_by_name(n: Node) -> bool:
    """The frontend's own reading of a node as mutating (``add_``, ``x += y``, ``x[i] = v``, ``out=``)."""
    if "out" in n.kwargs:
        return True
    if n.op == "method":
        name = n.target
    elif n.op == "call":
        if n.target in _WRITING_OPERATORS:
            return True
        if getattr(n.target, "__module__", None) in ("_operator", "operator"):
            return False  # and_, or_, not_, is_: the _ dodges a keyword; the writers are above
        name = getattr(n.target, "__name__", "")
    else:
        return False
    return isinstance(name, str) and name.endswith("_") and not name.endswith("__")


# Python's in-place operators (``x += y`` on a tensor writes x); torch_calls models them.
INPLACE_OPERATORS = (
    operator.iadd,
    operator.isub,
    operator.imul,
    operator.itruediv,
    operator.ifloordiv,
    operator.imod,
    operator.ipow,
    operator.iand,
    operator.ior,
    operator.ixor,
    operator.ilshift,
    operator.irshift,
    operator.imatmul,
)
_WRITING_OPERATORS = frozenset({operator.setitem, *INPLACE_OPERATORS})
