"""Lowering: a functional aten graph becomes a `LoweredProgram` of loop-level nodes.

Each fx node's value is a `TV`: one scalar expression per element, over index
variables ``i0..`` of its shape.  Pointwise ops and views only build bigger
expressions (nothing is materialized); a value becomes a buffer (`realize`)
when a reduction, an extern call, a graph output or an input mutation needs
it.  Rules live in per-family modules (`rules_pointwise`, `rules_views`,
`rules_reduce`, `rules_gather`) registered in `rule_table.RULES` keyed by aten
overload or packet; an op without a rule, or whose rule raises `Unsupported`,
becomes an `Extern`.
"""

from __future__ import annotations

import operator
from dataclasses import replace

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from . import index as ix
from .ir import (
    FLOAT_DTYPES,
    INT_DTYPES,
    Arena,
    Compute,
    Extern,
    Layout,
    LoweredProgram,
    TensorRef,
    contiguous_strides,
    ivars,
    numel,
    ranges_of,
)
from .rule_table import RULES, TV, Unsupported, dense_strides_ok, dtype_name, sizes_of
from .symsize import SizeExpr, holes, same_sizes

SUPPORTED_DTYPES = FLOAT_DTYPES + INT_DTYPES + ("bool",)
# Pointwise values with more work than this are materialized rather than
# recomputed by each of several consumers.
INLINE_MAX_LOADS = 6
INLINE_MAX_OPS = 40


def layout_of(t: torch.Tensor) -> Layout:
    return Layout(sizes_of(t.shape), sizes_of(t.stride()), dtype_name(t.dtype))


class Lowering:
    """State of one lowering: the arena, buffers, and the node list."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        self.arena = Arena()
        self.layouts: dict[str, Layout] = {}
        self.nodes: list = []
        self.inputs: list = []
        self.constants: dict = {}
        self.copy_backs: list = []
        self.device = None
        self._count = 0
        self.node_order: dict[str, int] = {}
        self.node_ops: dict[str, str] = {}
        self._reductions: dict = {}

    # ------------------------------------------------------------ names
    def new_name(self, prefix: str = "buf") -> str:
        self._count += 1
        return f"{prefix}{self._count - 1}"

    # ------------------------------------------------------------ values
    def load_buffer(self, name: str, layout: Layout) -> TV:
        self.layouts[name] = layout
        off = layout.offset(ivars(len(layout.shape)))
        expr = self.arena.load(name, off, layout.dtype)
        return TV(layout.shape, layout.dtype, expr, TensorRef(name), layout.stride)

    def broadcast(self, tv: TV, shape) -> int:
        """`tv`'s expression re-indexed by the variables of `shape` (numpy rules)."""
        shape = tuple(shape)
        if same_sizes(tv.shape, shape):
            return tv.expr
        lead = len(shape) - tv.ndim
        if lead < 0:
            raise Unsupported(f"cannot broadcast {tv.shape} to {shape}")
        mapping = {}
        for j, size in enumerate(tv.shape):
            if size == shape[lead + j]:
                mapping[f"i{j}"] = ix.var(f"i{lead + j}")
            elif size == 1:
                mapping[f"i{j}"] = ix.ZERO
            else:
                raise Unsupported(f"cannot broadcast {tv.shape} to {shape}")
        return self.arena.substitute([tv.expr], mapping, ranges_of(shape))[0]

    def value(self, a, shape, dtype: str) -> int:
        """Tensor or Python scalar `a` as an expression of `shape`, cast to `dtype`."""
        if isinstance(a, TV):
            return self.arena.cast(self.broadcast(a, shape), dtype)
        if isinstance(a, (bool, int, float, SizeExpr)):
            return self.arena.const(a, dtype)
        raise Unsupported(f"operand of type {type(a).__name__}")

    def make(self, shape, dtype: str, expr: int, *sources, ref=None) -> TV:
        origins = frozenset().union(*(s.origins for s in sources if isinstance(s, TV)))
        return TV(tuple(shape), dtype, expr, ref, None, origins)

    def view(self, tv: TV, shape, mapping: dict, step=None) -> TV:
        """A view: old variable name -> Affine over the new shape's variables."""
        shape = tuple(shape)
        expr = self.arena.substitute([tv.expr], mapping, ranges_of(shape))[0]
        ref = None
        if tv.ref is not None and step is not None:
            ref = TensorRef(tv.ref.base, tv.ref.steps + (step,))
        return TV(shape, tv.dtype, expr, ref, None, tv.origins)

    # ------------------------------------------------------------ buffers
    def compute(
        self,
        sizes,
        body: int,
        layout: Layout,
        reduced=(),
        reduction=None,
        origins=frozenset(),
        scan: bool = False,
    ) -> str:
        if reduced:
            # the same reduction of the same values (softmax and log_softmax of one
            # tensor both take its max) is computed once
            key = (tuple(sizes), body, tuple(reduced), reduction, layout, scan)
            if key in self._reductions:
                return self._reductions[key]
        name = self.new_name()
        if reduced:
            self._reductions[key] = name
        self.layouts[name] = layout
        order = sorted(origins, key=lambda n: self.node_order.get(n, 0))
        ops = tuple(dict.fromkeys(self.node_ops[n] for n in order if n in self.node_ops))
        store = None
        if not reduced:
            sizes, body, store = self._memory_order(sizes, body, layout)
        self.nodes.append(
            Compute(name, layout, tuple(sizes), body, tuple(reduced), reduction, ops, store, scan)
        )
        return name

    def _memory_order(self, sizes, body, layout):
        """Iterate a pointwise buffer in the order its elements lie in memory, so a
        transposed output is written in coalesced runs and shares the iteration
        of the kernel that computes its inputs."""
        nd = len(sizes)
        big = [p for p in range(nd) if sizes[p] != 1]
        order = sorted(big, key=lambda p: -layout.stride[p])
        if order == big:
            return sizes, body, None
        perm = order + [p for p in range(nd) if sizes[p] == 1]
        # new variable k iterates old dimension perm[k]
        mapping = {f"i{p}": ix.var(f"i{k}") for k, p in enumerate(perm)}
        new_sizes = tuple(sizes[p] for p in perm)
        body = self.arena.substitute([body], mapping, ranges_of(new_sizes))[0]
        store = ix.strided(ivars(nd), [layout.stride[p] for p in perm])
        return new_sizes, body, store

    def realize(self, tv: TV, stride=None) -> TV:
        """Materialize `tv` into a buffer (eager strides when known and dense)."""
        if tv.ref is not None and not tv.ref.steps:
            return tv
        stride = stride or tv.hint
        if stride is None or not dense_strides_ok(tv.shape, stride) or numel(tv.shape) == 0:
            stride = contiguous_strides(tv.shape)
        layout = Layout(tv.shape, tuple(stride), tv.dtype)
        body = self.arena.cast(tv.expr, tv.dtype)
        name = self.compute(tv.shape, body, layout, origins=tv.origins)
        return self.load_buffer(name, layout)

    def ref(self, tv: TV) -> TensorRef:
        return tv.ref if tv.ref is not None else self.realize(tv).ref

    def maybe_realize_shared(self, tv: TV, users: int) -> TV:
        """Materialize a value that several consumers would otherwise recompute
        when recomputing it is expensive."""
        if users < 2 or tv.ref is not None:
            return tv
        roots = [tv.expr]
        reads = self.arena.loads(roots)
        loads = {(n.attr[0], n.attr[1]) for n in reads}
        if len(loads) > INLINE_MAX_LOADS or self.arena.count_ops(roots) > INLINE_MAX_OPS:
            return self.realize(tv)
        if any(n.op == "gather" for n in reads):
            # a gather is a chain of dependent loads plus an index check: read it
            # once, not once per consumer
            return self.realize(tv)
        return tv

    # ------------------------------------------------------------ externs
    def extern(self, node: torch.fx.Node, args, kwargs):
        flat, spec = tree_flatten((args, kwargs))
        pos, refs = [], []
        for i, a in enumerate(flat):
            if isinstance(a, TV):
                pos.append(i)
                refs.append(self.ref(a))
                flat[i] = None
        out_flat, out_spec = tree_flatten(node.meta.get("val"))
        outputs: list = []
        results: list = []  # buffers, sizes and Python scalars, unflattened as the op returns them
        for o in out_flat:
            if isinstance(o, torch.Tensor):
                name = self.new_name()
                layout = layout_of(o)
                outputs.append((name, layout))
                tv = self.load_buffer(name, layout)
                results.append(replace(tv, origins=frozenset()))
            elif o is None or isinstance(o, (bool, int, float, torch.SymInt)):
                results.append(sizes_of([o])[0] if isinstance(o, torch.SymInt) else o)
            else:
                raise NotImplementedError(f"{node.target} returns {type(o).__name__}")
        call = _extern_call(node.target, flat, spec, pos, [lay for _, lay in outputs])
        self.nodes.append(
            Extern(tuple(outputs), tuple(refs), call, _op_name(node.target), node.format_node() or "")
        )
        return tree_unflatten(results, out_spec)


def _op_name(target) -> str:
    packet = getattr(target, "overloadpacket", None)
    return str(packet) if packet is not None else getattr(target, "__name__", str(target))


def _extern_call(op, flat, spec, pos, layouts):
    """The torch call of an extern.  Symbolic sizes in its arguments or output layouts
    are `call.sizes`: the wrapper passes their values as ``sizes=``."""
    sized, fill = holes([list(flat), [(lay.shape, lay.stride) for lay in layouts]])

    def call(*tensors, sizes=()):
        template, expect = fill(sizes) if sized else (flat, expected)
        f = list(template)
        for p, t in zip(pos, tensors):
            f[p] = t
        a, kw = tree_unflatten(f, spec)
        out, _ = tree_flatten(op(*a, **kw))
        outs = [o for o in out if isinstance(o, torch.Tensor)]
        for k, (o, (shape, stride)) in enumerate(zip(outs, expect)):
            if tuple(o.stride()) != stride and numel(shape) > 1:
                fixed = torch.empty_strided(shape, stride, dtype=o.dtype, device=o.device)
                outs[k] = fixed.copy_(o)
        return outs

    expected = [(lay.shape, lay.stride) for lay in layouts]
    call.sizes = sized
    return call


def _is_inplace(target) -> bool:
    schema = getattr(target, "_schema", None)
    return (
        schema is not None
        and schema.name.endswith("_")
        and schema.arguments
        and schema.arguments[0].alias_info is not None
        and schema.arguments[0].alias_info.is_write
    )


def _functional_variant(target):
    packet = getattr(torch.ops.aten, target._schema.name.split("::")[-1][:-1], None)
    functional = getattr(packet, target._overloadname, None) if packet is not None else None
    return functional or OutOfPlace(target)


class OutOfPlace:
    """An in-place op whose functional overload is named otherwise (``bernoulli_.float``,
    left by a decomposition after functionalization), run by torch on a copy of its input."""

    def __init__(self, op):
        self.op, self.overloadpacket = op, op.overloadpacket

    def __call__(self, x, *args, **kwargs):
        return self.op(x.clone(), *args, **kwargs)


def lower_program(gm: torch.fx.GraphModule) -> tuple[LoweredProgram, list]:
    """Lower every node of `gm`; returns the program and the fallback op names."""
    from . import (  # noqa: F401  (register rules)
        rules_conv,
        rules_gather,
        rules_matmul,
        rules_pointwise,
        rules_reduce,
        rules_views,
    )

    low = Lowering(gm)
    env: dict = {}
    placeholders = {}
    users = {n: len(n.users) for n in gm.graph.nodes}
    fallback = []
    outputs = []
    for k, node in enumerate(gm.graph.nodes):
        low.node_order[node.name] = k
        if node.op == "placeholder":
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                name = f"arg{len(low.inputs)}"
                layout = layout_of(val)
                low.inputs.append((name, layout))
                low.device = low.device or val.device
                env[node] = low.load_buffer(name, layout)
                placeholders[node] = name
            else:
                low.inputs.append((f"arg{len(low.inputs)}", None))
                env[node] = sizes_of([val])[0] if isinstance(val, torch.SymInt) else val
            continue
        if node.op == "get_attr":
            t = getattr(gm, node.target)
            name = low.new_name("const")
            low.constants[name] = t
            env[node] = low.load_buffer(name, layout_of(t))
            placeholders[node] = name  # module buffers can be mutated too (running stats)
            continue
        if node.op == "output":
            outputs = list(node.args[0])
            continue
        if isinstance(node.meta.get("val"), torch.SymInt):
            # a size computed in the graph (``x.size(0) * 2``): its expression, whatever
            # ops computed it (a symbolic lowering; a static graph has none)
            env[node] = sizes_of([node.meta["val"]])[0]
            continue
        args = torch.fx.node.map_arg(node.args, lambda n: env[n])
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
        target = node.target
        if target is operator.getitem:
            env[node] = args[0][args[1]]
            continue
        if target is torch.ops.aten.copy_.default and node.args[0] in placeholders:
            dst = placeholders[node.args[0]]
            src = args[1]
            lay = low.layouts[dst]
            tv = low.make(lay.shape, lay.dtype, low.value(src, lay.shape, lay.dtype), src)
            low.copy_backs.append((dst, low.ref(low.realize(tv, lay.stride))))
            env[node] = env[node.args[0]]
            continue
        mutated = None
        if _is_inplace(target):
            mutated, target = node.args[0], _functional_variant(target)
        low.node_ops[node.name] = _op_name(target)
        env[node] = _lower_node(low, node, target, args, kwargs, fallback)
        if isinstance(env[node], TV):
            env[node] = low.maybe_realize_shared(env[node], users[node])
        if mutated is not None:
            if mutated in placeholders:
                dst = placeholders[mutated]
                low.copy_backs.append((dst, low.ref(low.realize(env[node], low.layouts[dst].stride))))
            env[mutated] = env[node]
    outs, computed = [], {n.name for n in low.nodes if isinstance(n, Compute)}
    returned = set()
    for o in outputs:
        v = env[o] if isinstance(o, torch.fx.Node) else o
        if not isinstance(v, TV):
            outs.append(("const", v))
            continue
        ref = low.ref(v)
        if ref.base in computed and not ref.steps and ref.base in returned:
            # eager returns distinct tensors; so must we (a shared reduction, say)
            lay = low.layouts[ref.base]
            copy = TV(lay.shape, lay.dtype, low.load_buffer(ref.base, lay).expr)
            ref = TensorRef(low.compute(lay.shape, copy.expr, lay))
        returned.add(ref.base)
        outs.append(ref)
    prog = LoweredProgram(
        low.arena, low.inputs, low.constants, low.nodes, outs, low.copy_backs, low.layouts, low.device
    )
    return prog, fallback


def _lower_node(low: Lowering, node, target, args, kwargs, fallback):
    fn = RULES.get(target) or RULES.get(getattr(target, "overloadpacket", None))
    val = node.meta.get("val")
    outs = [t for t in tree_flatten(val)[0] if isinstance(t, torch.Tensor)]
    if low.device is None and outs:
        low.device = outs[0].device
    ok_dtypes = all(dtype_name(t.dtype) in SUPPORTED_DTYPES for t in outs)
    ok_dtypes = ok_dtypes and all(
        a.dtype in SUPPORTED_DTYPES for a in tree_flatten((args, kwargs))[0] if isinstance(a, TV)
    )
    if fn is not None and ok_dtypes:
        try:
            result = fn(low, node, *args, **kwargs)
        except Unsupported:
            result = None
        if result is not None:
            return _annotate(result, node)
    fallback.append(_op_name(target))
    return low.extern(node, args, kwargs)


def _annotate(result, node):
    """Attach the eager strides and the origin of `node` to a rule's result."""
    val = node.meta.get("val")
    if isinstance(result, TV):
        hint = sizes_of(val.stride()) if isinstance(val, torch.Tensor) else None
        return replace(result, hint=hint, origins=result.origins | {node.name})
    if isinstance(result, (list, tuple)):
        vals = val if isinstance(val, (list, tuple)) else [None] * len(result)
        out = []
        for r, v in zip(result, vals):
            if isinstance(r, TV):
                hint = sizes_of(v.stride()) if isinstance(v, torch.Tensor) else None
                r = replace(r, hint=hint, origins=r.origins | {node.name})
            out.append(r)
        return type(result)(out)
    return result
