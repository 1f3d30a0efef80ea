"""Functionalization: the graph non-eager backends get is pure, and callers still see eager's state.

The captured graph has reference semantics (``v = x[1:]; v.add_(1)`` changes
``x``); the eager backend replays it as is.  For every other backend
`functionalize(graph, example_inputs)` returns a `Plan`:

* ``plan.graph`` — a pure graph: every in-place op becomes its functional
  variant (``add_`` -> ``add``, ``copy_`` -> ``copy``, ``x.out=`` -> the
  plain overload, ``native_batch_norm`` -> ``_native_batch_norm_legit_functional``)
  and its result is scattered back into the storage root along the view
  chain it was written through (``slice_scatter``, ``select_scatter``,
  ``diagonal_scatter``, inverse permutes and reshapes, ``as_strided_scatter``
  on a synthetic base); a view read after its storage changed is
  regenerated from the root's current value.
* ``plan.emit`` — what the region runs around the compiled graph: the
  synthetic base of inputs that share one storage (a tensor and its view),
  then the graph call, then the new values of mutated inputs copied back in
  program order (each under the grad mode of its last write), then every
  output that is an input, a view of an input or a view of another output
  rebuilt as that view of the real tensor — so ``out is x`` and "mutating a
  returned view changes the input" hold exactly as in eager.

The eager backend takes the plan too when a run-time error in the middle of
the graph could be seen by a handler (`write_back_last`): everything is then
computed before the first write to an input, so such an error leaves no trace
and the region reruns the function natively (`region_errors`).

The bookkeeping rides on `alias_facts.Observation`: each tensor's storage root
and aten view chain.  Anything it cannot express (metadata-changing in-place
ops such as ``t_``, a write through ``unfold``, a ``resize`` of an ``out=``
tensor) raises `FunctionalizeError`; the caller then keeps the graph on the
eager backend, so the answer is never wrong.  (`backends.compile_functional`
compiles the pure graph and wraps its emit with the plan.)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import torch

from ..errors import UnsupportedError
from .alias_facts import (
    Observation,
    Prov,
    Root,
    Step,
    bind,
    node_mutates_by_name,
    number_input_value,
    observe,
    opaque_effect,
    schema_info,
    tensors_in,
    writes_grad,
)
from .functional_plan import Plan
from .graph import Graph, Node, map_nodes
from .inverses import BASE, VIEW_INVERSES, FunctionalizeError, functional_variant, packet

if TYPE_CHECKING:
    from .alias_facts import AtenCall, NodeTrace
    from .graph import InputSource, Loc, NodeState

aten = torch.ops.aten


# In-place ops that are the identity whenever they dispatch nothing: dropout outside training
# returns its input as is.  Other in-place names that dispatch nothing (``requires_grad_``) change
# state no trace sees, so only these are taken as reads.
_IDLE_INPLACE = frozenset({"dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_"})


def _idle_inplace(tr: NodeTrace, env: dict[Node, object]) -> bool:
    """`tr` is a call of an `_IDLE_INPLACE` op that dispatched nothing and returned an argument."""
    n = tr.node
    name = n.target if n.op == "method" else getattr(n.target, "__name__", "")
    if name not in _IDLE_INPLACE or tr.calls or "out" in n.kwargs:
        return False
    args = [env.get(m) for m in _nodes((n.args, n.kwargs))]
    return isinstance(tr.value, torch.Tensor) and any(tr.value is t for t in tensors_in(args))


# -- the builder ------------------------------------------------------------------------------------


class _Builder:
    """Walks the observed nodes, emitting the pure graph (see module docstring).

    State: `cur[root]`, the graph node holding a storage root's current value;
    `ver[root]`, how many writes it has seen; `mat[(fake, version)]`, the graph
    node holding a tensor as of that version.
    """

    def __init__(self, obs: Observation, example_inputs: Iterable[torch.Tensor]) -> None:
        self.obs = obs
        self.g = Graph(obs.graph.name)
        self.g.reserve(obs.graph._names)
        self.cur: dict[int, Node] = {}
        self.ver: dict[int, int] = {}
        self.mat: dict[tuple[int, int], Node] = {}
        self.fake: dict[Node, Any] = {}  # graph node -> its fake value
        self.node_of: dict[Node, Node] = {}
        self.base_name: dict[int, str] = {}  # shared root -> region name of its base
        self.written: list[Root] = []
        self.last_state: dict[int, NodeState | None] = {}
        # storage allocated inside one node -> (root, prefix)
        self.rerooted: dict[int, tuple[Root, tuple[Step, ...]]] = {}
        self.examples: list[torch.Tensor | int | float] = []  # a number for a symbolic one
        self.symbolic_numbers: list[Node] = []  # inputs that are symbolic numbers (`number_input_value`)
        # random ops and the user's own ops (an unused one may still raise at run time, as
        # in eager: an index out of range): kept even when unused
        self.impure: set[Node] = set()
        self.plan = Plan(self.g, self.examples, observation=obs)
        self._inputs(list(example_inputs))

    # -- inputs -----------------------------------------------------------------------------
    def _inputs(self, reals: list[torch.Tensor]) -> None:
        obs = self.obs
        written = {v for c in obs.analysis.written for v in c.inputs}
        for gi, members in enumerate(obs.shared_groups):
            if not any(m.name in written for m in members):
                continue
            if not obs.shared_ok[gi]:
                raise FunctionalizeError("inputs sharing storage with different dtypes are written")
            root = obs.prov[id(obs.env[members[0]])].root
            name = self._declare_base(root, gi)
            size = cast(int, root.value)  # a shared root's value: the elements it spans
            src = _BaseSource(members[0].target, size)
            n = Node(len(self.g.inputs), "input", src, meta=root.fake, name=name)
            self.g.inputs.append(n)
            first = reals[[m for m in obs.graph.inputs if number_input_value(m) is None].index(members[0])]
            self.examples.append(torch.as_strided(first, (size,), (1,), 0))
            self._set_root(root, n)
        tensors = iter(reals)
        for n in obs.graph.inputs:
            number = number_input_value(n)
            if number is not None:  # a symbolic number: an input of the pure graph, as it was
                new = Node(len(self.g.inputs), "input", n.target, meta=n.meta, name=n.name)
                self.g.inputs.append(new)
                self.examples.append(number)
                self.fake[new] = number
                self.node_of[n] = new
                self.symbolic_numbers.append(n)
                continue
            real = next(tensors)
            f = obs.env[n]
            root = obs.prov[id(f)].root
            if root.kind == "shared" and id(root) in self.cur:
                continue  # read through the synthetic base
            new = Node(len(self.g.inputs), "input", n.target, meta=f, name=n.name)
            self.g.inputs.append(new)
            self.examples.append(real)
            self.fake[new] = f
            self.mat[(id(f), 0)] = new
            if root.kind == "input":
                self._set_root(root, new)

    def _declare_base(self, root: Root, gi: int) -> str:
        name = self.base_name.get(id(root))
        if name is None:
            name = self.base_name[id(root)] = self.g._unique(f"base{gi}")
            first = self.obs.shared_groups[gi][0].name
            self.plan.bases.append((name, first, cast(int, root.value)))
        return name

    def _set_root(self, root: Root, node: Node) -> None:
        self.cur[id(root)] = node
        self.ver.setdefault(id(root), 0)
        self.fake.setdefault(node, root.fake)

    # -- emitting ---------------------------------------------------------------------------
    def add(
        self,
        op: str,
        target: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        state: NodeState | None,
        loc: Loc | None,
        meta: Any = None,
    ) -> Node:
        """Append a node; its example value comes from a fake run unless given."""
        if meta is None:
            look: Callable[[Any], Any] = lambda a: map_nodes(a, self.fake.__getitem__)  # noqa: E731
            fargs, fkw = look(args), look(kwargs)
            fn: Callable[..., Any]
            if op == "call":
                fn = target
            elif op == "method":
                fn = lambda *a, **k: getattr(a[0], target)(*a[1:], **k)  # noqa: E731
            else:
                fn = lambda a: getattr(a, target)  # noqa: E731
            with (state or self.obs._entry_state).context(), self.obs.mode:
                meta = fn(*fargs, **fkw)
        n = self.g.add(op, target, args, kwargs, meta=meta, loc=loc, state=state)
        self.fake[n] = meta
        if _seeded(target):
            self.impure.add(n)
        return n

    def item(self, node: Node, i: int, state: NodeState | None, loc: Loc | None) -> Node:
        return self.add("call", operator.getitem, (node, i), {}, state, loc, meta=self.fake[node][i])

    def chain(
        self, root: Root, chain: tuple[Step, ...], state: NodeState | None, loc: Loc | None
    ) -> list[Node]:
        """The root's current value, then each view of `chain` applied in turn."""
        nodes = [self._root_value(root, state, loc)]
        for k, step in enumerate(chain):
            if packet(step.func) == "as_strided" and not (k == 0 and self._strided_ok(root, nodes[0])):
                raise FunctionalizeError("an as_strided view of a value whose layout changed")
            out = self.add("call", step.func, (nodes[-1], *step.args), dict(step.kwargs), state, loc)
            nodes.append(out if step.index is None else self.item(out, step.index, state, loc))
        return nodes

    def _check_strided(
        self, root: Root, chain: tuple[Step, ...], state: NodeState | None, loc: Loc | None
    ) -> None:
        """An as_strided step's inverse (as_strided_scatter on the value below it) is exact
        only first in the chain, on a root laid out as it was: its geometry is absolute in
        the storage, not relative to a view (``x.diagonal().as_strided((2,), (1,))`` is
        ``x``'s first two elements)."""
        for k, step in enumerate(chain):
            if packet(step.func) == "as_strided" and not (
                k == 0 and self._strided_ok(root, self._root_value(root, state, loc))
            ):
                raise FunctionalizeError("a write through an as_strided view of a view")

    def _strided_ok(self, root: Root, node: Node) -> bool:
        """as_strided offsets are absolute: valid on a value laid out like the root was."""
        now, then = self.fake[node], root.fake
        return bool(
            now.is_contiguous()
            and then.is_contiguous()
            and now.storage_offset() == 0
            and then.storage_offset() == 0
        )

    def _root_value(self, root: Root, state: NodeState | None, loc: Loc | None) -> Node:
        node = self.cur.get(id(root))
        if node is not None:
            return node
        if root.kind == "const":
            c = cast(torch.Tensor, root.value)  # a const root's value: the real constant
            node = self.add(
                "call", torch.tensor, (c.tolist(),), {"dtype": c.dtype, "device": c.device}, state, loc
            )
            self._set_root(root, node)
            return node
        raise FunctionalizeError(f"no value for storage root {root.label}")

    # -- reading ----------------------------------------------------------------------------
    def prov(self, t: torch.Tensor) -> Prov | None:
        """The provenance of fake `t`, expressed from a root this graph has a value for."""
        p = self.obs.prov.get(id(t))
        if p is not None and p.chain:
            p = Prov(p.root, _from_last_absolute(p.chain))
        if p is None or id(p.root) not in self.rerooted:
            return p
        new_root, prefix = self.rerooted[id(p.root)]
        if p.chain is not None and p.chain[: len(prefix)] == prefix:
            return Prov(new_root, p.chain[len(prefix) :])
        return Prov(p.root, None)  # another view of that storage: no way to rebuild it

    def get(self, t: torch.Tensor, state: NodeState | None, loc: Loc | None) -> Node:
        """The graph value of fake `t` as of now (regenerated when its storage was written)."""
        p = self.prov(t)
        if p is None:
            raise FunctionalizeError("a tensor of unknown origin")
        key = (id(t), self.ver.get(id(p.root), 0))
        hit = self.mat.get(key)
        if hit is None:
            if p.chain is None:
                raise FunctionalizeError("a view with an unknown view chain is read after a write")
            hit = self.mat[key] = self.chain(p.root, p.chain, state, loc)[-1]
        return hit

    def read_arg(self, m: Node, state: NodeState | None, loc: Loc | None) -> Node:
        v = self.obs.env[m]
        if isinstance(v, torch.Tensor):
            return self.get(v, state, loc)
        hit = self.node_of.get(m)
        if hit is None:
            raise FunctionalizeError(f"{m.name} has no functional value")
        return hit

    # -- nodes ------------------------------------------------------------------------------
    def node(self, tr: NodeTrace) -> None:
        n = tr.node
        if tr.inplace_view:
            raise FunctionalizeError(f"{n.name} changes a tensor's metadata in place")
        if tr.writes:
            self._mutating(tr)
            return
        if node_mutates_by_name(n):
            if _idle_inplace(tr, self.obs.env):
                # ``torch.dropout_(x, p, False)``: returned its argument untouched
                self.node_of[n] = self.get(cast(torch.Tensor, tr.value), n.state, n.loc)
                return
            raise FunctionalizeError(f"{n.name} mutates state functionalization cannot see")
        if isinstance(self.obs.env[n], torch.Tensor) and any(
            isinstance(c.func, torch._ops.OpOverload) and packet(c.func) == "as_strided" for c in tr.calls
        ):
            # as_strided addresses its input's storage, which a functional value is not:
            # take the view from the storage root's current value instead
            self.node_of[n] = self.get(self.obs.env[n], n.state, n.loc)
            return
        read: Callable[[Any], Any] = lambda a: map_nodes(  # noqa: E731
            a, lambda m: self.read_arg(m, n.state, n.loc)
        )
        args, kwargs = read(n.args), read(n.kwargs)
        same = all(
            self.fake.get(a) is self.obs.env[m]
            for a, m in zip(_nodes((args, kwargs)), _nodes((n.args, n.kwargs)))
        )
        value = self.obs.env[n]
        new = self.add(n.op, n.target, args, kwargs, n.state, n.loc, meta=value if same else None)
        self.impure.add(new)
        self.node_of[n] = new
        if isinstance(value, torch.Tensor):
            self._bind(value, new, n)

    def _bind(self, t: torch.Tensor, node: Node, n: Node) -> None:
        """Graph `node` holds fake `t` now; storage first seen here gets `node` as its value."""
        p = self.prov(t)
        assert p is not None  # every tensor a node makes has a provenance
        root = p.root
        if id(root) not in self.cur and root.kind in ("fresh", "const") and p.chain is not None:
            if p.chain != ():
                # A view of storage allocated inside one node (``x.t().reshape(-1)`` copies,
                # then views the copy): nothing outside can name that storage, so this view
                # becomes its root, and whatever else views the storage through it follows.
                new_root = Root("fresh", n.name, t, n)
                self.rerooted[id(root)] = (new_root, p.chain)
                root = new_root
            self._set_root(root, node)
        self.mat[(id(t), self.ver.get(id(root), 0))] = node

    def _mutating(self, tr: NodeTrace) -> None:
        n = tr.node
        for c in tr.calls:
            if not isinstance(c.func, torch._ops.OpOverload):
                continue
            if not c.writes and not tensors_in(c.out):
                continue  # prim.device and friends: results are constants
            if c.writes:
                self._functional_write(c, n)
            else:
                args, kwargs = self._call_args(c, n)
                out = self.add("call", c.func, args, kwargs, n.state, n.loc)
                self.impure.add(out)
                self._bind_outputs(c.out, out, n)

    def _call_args(
        self, c: AtenCall, n: Node, drop: Sequence[str] = ()
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        def conv(x: Any) -> Any:
            if isinstance(x, torch.Tensor):
                return self.get(x, n.state, n.loc)
            if isinstance(x, (list, tuple)):
                return type(x)(conv(i) for i in x)
            return x

        return conv(tuple(c.args)), {k: conv(v) for k, v in c.kwargs.items() if k not in drop}

    def _bind_outputs(self, out: Any, node: Node, n: Node, skip: Sequence[torch.Tensor] = ()) -> None:
        if isinstance(out, torch.Tensor):
            self._bind(out, node, n)
        elif isinstance(out, (list, tuple)):
            for i, t in enumerate(out):
                if isinstance(t, torch.Tensor) and not any(t is s for s in skip):
                    self._bind(t, self.item(node, i, n.state, n.loc), n)

    def _functional_write(self, c: AtenCall, n: Node) -> None:
        func = cast(torch._ops.OpOverload, c.func)  # `_mutating` passes aten calls only
        fop, kind = functional_variant(func)
        args, kwargs = self._call_args(c, n, drop=("out",) if kind == "out" else ())
        res = self.add("call", fop, args, kwargs, n.state, n.loc)
        self.impure.add(res)
        if kind in ("out", "inplace"):
            (w,) = c.writes
            self._write(w, self._cast(res, w, n), n)
            return
        # "extra": the op's own results, then the new values of the written arguments in order
        specs, rets = schema_info(func)
        written = [
            v
            for _, v in bind(specs, c.args, c.kwargs)
            if isinstance(v, torch.Tensor) and any(v is w for w in c.writes)
        ]
        for j, w in enumerate(written):
            self._write(w, self._cast(self.item(res, len(rets) + j, n.state, n.loc), w, n), n)
        self._bind_outputs(c.out, res, n, skip=written)

    def _cast(self, node: Node, like: torch.Tensor, n: Node) -> Node:
        f = self.fake[node]
        if tuple(f.shape) != tuple(like.shape):
            raise FunctionalizeError(f"{n.name}: the in-place result has another shape")
        if f.dtype != like.dtype:
            if not torch.can_cast(f.dtype, like.dtype):
                # the real in-place kernel raises here (long.mul_(1.5)); a cast would hide it
                raise FunctionalizeError(f"{n.name}: result type {f.dtype} can't be cast to {like.dtype}")
            node = self.add("call", aten._to_copy.default, (node,), {"dtype": like.dtype}, n.state, n.loc)
        return node

    def _write(self, w: torch.Tensor, value: Node, n: Node) -> None:
        """Scatter `value`, the new contents of fake `w`, back into its storage root."""
        p = self.prov(w)
        if p is None or p.chain is None:
            raise FunctionalizeError(f"{n.name} writes through a view functionalization cannot invert")
        root = p.root
        state, loc = n.state, n.loc
        try:
            self._check_strided(root, p.chain, state, loc)
            bases = self.chain(root, p.chain[:-1], state, loc)
            val = value
            for step, base in zip(reversed(p.chain), reversed(bases)):
                val = self._scatter(step, base, val, state, loc)
        except FunctionalizeError:
            # No inverse along the chain (a write through expand(...)[0], unfold, ...): when
            # the root is laid out densely from offset 0, the view's own geometry is exact.
            cur = self._root_value(root, state, loc)
            if not self._strided_ok(root, cur) or torch._debug_has_internal_overlap(w) != 0:
                raise  # (a fill through an expanded view writes one cell many times)
            val = self.add(
                "call",
                aten.as_strided_scatter.default,
                (cur, value, tuple(w.shape), tuple(w.stride()), w.storage_offset()),
                {},
                state,
                loc,
            )
        self.cur[id(root)] = val
        self.ver[id(root)] = self.ver.get(id(root), 0) + 1
        self.mat[(id(w), self.ver[id(root)])] = value
        if root.kind in ("input", "shared"):
            if all(r is not root for r in self.written):
                self.written.append(root)
            self.last_state[id(root)] = state

    def _scatter(self, step: Step, base: Node, src: Node, state: NodeState | None, loc: Loc | None) -> Node:
        inv = VIEW_INVERSES.get(packet(step.func))
        if inv is None:
            raise FunctionalizeError(f"cannot write through the view op {step.func}")
        op, args, kwargs = inv(self.fake[base], src, step)
        if op is None:
            return src
        args = tuple(base if a is BASE else a for a in args)
        return self.add("call", op, args, kwargs, state, loc)

    # -- the end ----------------------------------------------------------------------------
    def finish(self) -> Plan:
        obs, plan = self.obs, self.plan
        outs: list[Node] = []
        for root in self.written:
            # (an input root's node is that input)
            name = cast(Node, root.node).name if root.kind == "input" else self.base_name[id(root)]
            plan.writebacks.append((name, len(outs), self.last_state[id(root)]))
            outs.append(self.cur[id(root)])
        input_of = {id(obs.env[n]): n.name for n in obs.graph.inputs if number_input_value(n) is None}
        for o in obs.graph.outputs:
            t = obs.env[o]
            if not isinstance(t, torch.Tensor):
                # a tensor's size (``ids.shape[1]``): read from that tensor's functional value
                step = _metadata_step(o)
                src = o.args[0] if step is not None else None
                if (
                    step is None
                    or not isinstance(src, Node)
                    or not isinstance(obs.env.get(src), torch.Tensor)
                ):
                    plan.outputs[o.name] = self._number_output(o, outs)
                    continue
                kind, base, chain = self._tensor_output(src, obs.env[src], outs, input_of, o)
                plan.outputs[o.name] = (kind, base, (*chain, step))
                continue
            if id(t) in input_of:  # the input object itself (``return x.add_(1)``)
                plan.outputs[o.name] = ("input", input_of[id(t)], ())
                continue
            input_of[id(t)] = o.name  # a later output that is this very tensor is this name
            plan.outputs[o.name] = self._tensor_output(o, t, outs, input_of, o)
        self.g.outputs = outs
        self._dead_code()
        return plan

    def _number_output(self, o: Node, outs: list[Node]) -> tuple[str, Any, tuple[Step, ...]]:
        """A graph output that is a number the graph computes or takes (``cur_len + 1`` of a
        symbolic int input): the pure graph's node for it, returned as it is."""
        node = self.node_of.get(o)
        if node is None or isinstance(self.obs.env[o], torch.Tensor):
            raise FunctionalizeError(f"output {o.name} is not a tensor")
        idx = next((i for i, x in enumerate(outs) if x is node), None)
        if idx is None:
            idx = len(outs)
            outs.append(node)
        return ("graph", idx, ())

    def _tensor_output(
        self, o: Node, t: torch.Tensor, outs: list[Node], input_of: dict[int, str], at: Node
    ) -> tuple[str, Any, tuple[Step, ...]]:
        """How the region gets original node `o`'s tensor `t` after the functional graph:
        ("input", name, view chain) or ("graph", output index, view chain); `at`: the
        output whose state and place any new node takes."""
        obs = self.obs
        if id(t) in input_of and at is not o:  # a size read of an input or of an earlier output
            return ("input", input_of[id(t)], ())
        p = self.prov(t)
        assert p is not None  # an output tensor has a provenance
        if p.chain is None:
            raise FunctionalizeError(f"output {o.name} aliases storage along an unknown chain")
        root = p.root
        if root.kind == "input":
            return ("input", cast(Node, root.node).name, p.chain)
        if root.kind == "shared":
            gi = next(i for i, m in enumerate(obs.shared_groups) if obs.prov[id(obs.env[m[0]])].root is root)
            # rebase on the input the chain starts from, so ``out._base`` is that input
            member = next(
                (m for m in obs.shared_groups[gi] if obs.prov[id(obs.env[m])].chain == p.chain[:1]), None
            )
            if member is not None:
                return ("input", member.name, p.chain[1:])
            return ("input", self._declare_base(root, gi), p.chain)
        node = self._laid_out_like(self._root_value(root, at.state, at.loc), root.fake, at)
        self.cur[id(root)] = node
        idx = next((i for i, x in enumerate(outs) if x is node), None)
        if idx is None:
            idx = len(outs)
            outs.append(node)
        return ("graph", idx, p.chain)

    def _laid_out_like(self, node: Node, like: torch.Tensor, o: Node) -> Node:
        """`node` with the strides eager gave the root (in place writes keep them; the
        functional ops that replace them choose their own), so returned views match too."""
        f = self.fake[node]
        if _strides(f) == _strides(like) or f.shape != like.shape:
            return node
        empty = self.add(
            "call",
            aten.empty_strided.default,
            (tuple(like.shape), tuple(like.stride())),
            {"dtype": like.dtype, "device": like.device},
            o.state,
            o.loc,
        )
        return self.add("call", aten.copy.default, (empty, node), {}, o.state, o.loc)

    def _dead_code(self) -> None:
        """Drop nodes no output needs (views regenerated in the region leave some), keeping
        random ops and the user's own ops."""
        live = set(self.g.outputs) | self.impure
        for n in reversed(self.g.body):
            if n in live:
                live.update(_nodes((n.args, n.kwargs)))
        self.g.body = [n for n in self.g.body if n in live]


# a tensor's metadata as the graph's ``method`` node reads it -> the aten op reading it
_METADATA = {
    "size": (aten.sym_size.int, 1),
    "stride": (aten.sym_stride.int, 1),
    "numel": (aten.sym_numel.default, 0),
    "storage_offset": (aten.sym_storage_offset.default, 0),
    "dim": (aten.dim.default, 0),
}


def _metadata_step(o: Node) -> Step | None:
    """``t.size(i)`` / ``t.stride(i)`` / ``t.numel()`` / ``t.storage_offset()`` / ``t.dim()``
    as a last step after `t`'s own chain (None: no such read)."""
    if o.op != "method" or o.kwargs or not isinstance(o.target, str) or o.target not in _METADATA:
        return None
    op, nargs = _METADATA[o.target]
    args = tuple(o.args[1:])
    if len(args) != nargs or not all(type(a) is int for a in args):
        return None
    return Step(op, args)


def _from_last_absolute(chain: tuple[Step, ...]) -> tuple[Step, ...]:
    """A view chain from its last as_strided step with an explicit storage offset: that step
    addresses the storage from its start, whatever views came before it."""
    for k in range(len(chain) - 1, -1, -1):
        step = chain[k]
        if packet(step.func) == "as_strided" and (
            (len(step.args) > 2 and step.args[2] is not None)
            or dict(step.kwargs).get("storage_offset") is not None
        ):
            return chain[k:]
    return chain


def _strides(t: torch.Tensor) -> tuple[int, ...]:
    """Strides of the dimensions longer than one (the others mean nothing)."""
    return tuple(st for sz, st in zip(t.shape, t.stride()) if sz != 1) if t.numel() > 1 else ()


def _seeded(func: object) -> bool:
    return torch.Tag.nondeterministic_seeded in getattr(func, "tags", ())


class _BaseSource:
    """Where a synthetic base comes from: the storage under an input, from its start."""

    def __init__(self, first: InputSource, size: int) -> None:
        self.first, self.size = first, size

    def readable(self) -> str:
        return f"as_strided({self.first.readable()}, ({self.size},), (1,), 0)"


def _nodes(a: Any) -> list[Node]:
    out: list[Node] = []
    map_nodes(a, out.append)
    return out


def functionalize(graph: Graph, example_inputs: Sequence[torch.Tensor]) -> Plan:
    """The pure graph and region plan for `graph` (raises `FunctionalizeError`)."""
    for n in graph.body:
        if writes_grad(n):  # its writes to .grad are no value a pure graph returns
            e = FunctionalizeError("backward() or a .grad assignment writes .grad outside the graph")
            e.node = n
            raise e
        if opaque_effect(n):  # a user's autograd.Function, an optimizer step
            who = getattr(n.target, "__self__", n.target)  # a Function's class, or the step
            e = FunctionalizeError(f"{getattr(who, '__qualname__', who)}: runs Python no pure graph holds")
            e.node = n
            raise e
    try:
        obs = observe(graph, example_inputs)
        b = _Builder(obs, example_inputs)
        for tr in obs.traces:
            try:
                b.node(tr)
            except FunctionalizeError as e:
                e.node = tr.node  # where the graph could end instead (`region_errors`)
                raise
        plan = b.finish()
        if plan.writebacks and any(_unpinned(n) for n in b.symbolic_numbers):
            # the functional writes are aten calls made on this example's numbers (the index of
            # ``x[:, n] = v``, the ``s`` of ``x.add_(s)``): the pure graph would hold them as constants
            raise FunctionalizeError("writes to inputs in a graph with symbolic number inputs")
        plan.shield = bool(plan.writebacks) and _autograd_may_record(graph, example_inputs)
        return plan
    except FunctionalizeError:
        raise
    except (UnsupportedError, Exception) as e:
        # Whatever goes wrong here, the eager graph is still right: say why and keep it.
        raise FunctionalizeError(f"{type(e).__name__}: {e}") from e


def _unpinned(n: Node) -> bool:
    """A symbolic int or float input whose value no guard has pinned."""
    if isinstance(n.meta, torch.SymFloat):
        return n.meta.node.maybe_as_float() is None
    return isinstance(n.meta, torch.SymInt) and n.meta.node.maybe_as_int() is None


def _autograd_may_record(graph: Graph, example_inputs: Iterable[torch.Tensor]) -> bool:
    """Some input requires grad and some node runs with grad mode on (both are guarded)."""
    if not any(getattr(t, "requires_grad", False) for t in example_inputs):
        return False
    entry = torch.is_grad_enabled()
    return any((n.state.grad if n.state is not None else entry) for n in graph.body)
