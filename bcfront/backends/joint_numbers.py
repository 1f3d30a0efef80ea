"""Symbolic ints and floats crossing the segments of a joint graph (`backends/joint.py`).

A changing int or size is a SymInt of the capture's ShapeEnv, a changing float (a learning
rate, a loss scale) a SymFloat.  A segment takes and returns them as TorchDynamo hands its
graphs to AOT autograd: SymInts as they are; each SymFloat input as a 0-d float64 tensor
whose ``item()`` is the float (`tensorify_floats`), which AOT autograd's
``tensorify_python_scalars`` pass turns into tensor arithmetic (Inductor's partitioner
saves no SymFloat for the backward: a float the backward needs must reach it as a
tensor).  The examples are the capture's own fake tensors and symbols, so what AOT
autograd or the compiler guard on lands in the capture's guards.

`check_values` refuses what no segment can pass (the caller keeps the usual path, with
the reason in a note); `float_scope` keeps torch's process-wide tensorify state to this
segment's floats and turns the pass's "restart with this float specialized" into a
refusal that names the float.
"""

from __future__ import annotations

import operator
from contextlib import contextmanager

import torch

from ..ir.graph import map_nodes

NUMBERS = (torch.Tensor, torch.SymInt, torch.SymFloat)


def check_values(sub) -> None:
    """Tensors, SymInts and SymFloats pass between segments (what TorchDynamo hands AOT
    autograd); anything else (a SymBool, a container) keeps the graph off the joint path."""
    bad = [n for n in (*sub.inputs, *sub.outputs) if not isinstance(n.meta, NUMBERS)]
    if bad:
        names = ", ".join(f"{n.name}: {type(n.meta).__name__}" for n in bad[:3])
        raise NotImplementedError(
            f"a segment passes values that are not tensors, SymInts or SymFloats ({names})"
        )


def tensorify_floats(gm, examples: list) -> tuple[int, ...]:
    """Each SymFloat input of `gm` as a 0-d float64 tensor input whose ``item()`` is the
    float: its example a fake tensor whose ``item()`` is the capture's own SymFloat, so the
    symbol and its guards stay the capture's.  Edits `gm` and `examples` in place; returns
    the positions whose runtime value the caller wraps with `as_float64`."""
    where = tuple(i for i, e in enumerate(examples) if isinstance(e, torch.SymFloat))
    if not where:
        return ()
    fake_mode = _fake_mode(examples)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    first_op = placeholders[-1].next
    for i in where:
        sym, ph = examples[i], placeholders[i]
        with fake_mode:
            example = torch.empty((), dtype=torch.float64)
        example.item_memo = sym  # type: ignore[attr-defined]  # a FakeTensor's
        examples[i] = example
        with gm.graph.inserting_before(first_op):
            item = gm.graph.call_method("item", (ph,))
        ph.replace_all_uses_with(item, delete_user_cb=lambda user, item=item: user is not item)
        item.meta["example_value"] = item.meta["val"] = sym
        ph.meta["example_value"] = ph.meta["val"] = example
    gm.recompile()
    return where


def as_float64(x) -> torch.Tensor:
    """A SymFloat input's runtime value as the segment takes it (`tensorify_floats`)."""
    return torch.tensor(x, dtype=torch.float64)


def _fake_mode(examples: list):
    from torch._guards import detect_fake_mode
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = detect_fake_mode([e for e in examples if isinstance(e, torch.Tensor)])
    if mode is None:  # numbers only: a fake mode over their ShapeEnv
        mode = FakeTensorMode(shape_env=_shape_env(examples))
    return mode


def _shape_env(examples: list):
    for e in examples:
        if isinstance(e, (torch.SymInt, torch.SymFloat)):
            return e.node.shape_env
        mode = getattr(e, "fake_mode", None)
        if mode is not None and mode.shape_env is not None:
            return mode.shape_env
    return None


@contextmanager
def float_scope(examples: list, keep: tuple[int, ...] = ()):
    """Around AOT autograd on one segment (`examples` as `tensorify_floats` left them).
    Its tensorify pass asks TorchDynamo to restart (``TensorifyScalarRestartAnalysis``) for
    every float symbol of the ShapeEnv the graph did not turn into tensor arithmetic, and
    remembers it in a process-wide set: the floats of the inputs at positions `keep`
    (tensorified: one the pass cannot convert raises that restart) are left to it, every
    other float of the capture (other segments', or this one's passed as SymFloats) is
    marked as handled for the call; the set is restored after."""
    from torch._dynamo.symbolic_convert import TensorifyState
    from torch.utils._sympy.symbol import SymT, symbol_is_type

    env = _shape_env(examples)
    own = {str(s) for i in keep for s in examples[i].item_memo.node.expr.free_symbols}
    others = set()
    if env is not None:
        others = {str(s) for s in env.backed_var_to_val if symbol_is_type(s, SymT.FLOAT)} - own
    saved = set(TensorifyState.force_specializations)
    TensorifyState.force_specializations.update(others)
    try:
        yield
    finally:
        TensorifyState.force_specializations.clear()
        TensorifyState.force_specializations.update(saved)


def pinned_floats(examples: list, floats: tuple[int, ...]) -> list[int]:
    """The positions among `floats` whose symbol compiling pinned to this call's value (a
    float the tensorify pass left a Python number for an op that takes one, ``clamp(max=
    scale)``, is guarded to its value): correct, the guard is the capture's, but each new
    value compiles again, which the report must say."""
    out = []
    for i in floats:
        sym = examples[i].item_memo
        env = sym.node.shape_env
        if env is not None and env.replace(sym.node.expr).is_number:
            out.append(i)
    return out


def is_restart(e: BaseException | None) -> bool:
    """The tensorify pass could not make a float of the segment a tensor (`float_scope`)."""
    from torch._dynamo.exc import TensorifyScalarRestartAnalysis

    while e is not None:
        if isinstance(e, TensorifyScalarRestartAnalysis):
            return True
        e = e.__cause__ or e.__context__
    return False


_SIZE_ARITHMETIC = frozenset(
    {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.neg}
)


def recompute_sizes(sub, body, available: set) -> None:
    """A SymInt input of segment `sub` that is an expression of sizes (``n = x.shape[0] //
    2`` computed in an earlier part, ``s0 // 2``) is recomputed inside the segment from the
    tensors it was read off, as TorchDynamo's graphs compute their sizes: Inductor takes
    only bare symbols as int inputs, and AOT autograd then saves the bare symbol for the
    backward.  Only ``size()`` of a tensor no node of the graph (`body`) writes in place,
    and int arithmetic on such sizes, down to values `available` (the graph's inputs, the
    earlier parts' outputs) or already `sub`'s inputs."""
    written = {id(n.args[0]) for n in body if n.mutates and n.args}
    for n in list(sub.inputs):
        if not isinstance(n.meta, torch.SymInt) or _bare(n.meta):
            continue  # a bare symbol: an input as TorchDynamo passes it
        order: list = []
        leaves: list = []
        if not _closure(n, written, available, set(sub.inputs) - {n}, order, leaves):
            continue
        sub.inputs.remove(n)
        sub.inputs.extend(a for a in dict.fromkeys(leaves) if a not in sub.inputs)
        sub.body[:0] = [m for m in order if m not in sub.body]


def _closure(n, written: set, available: set, inputs: set, order: list, leaves: list) -> bool:
    """Whether `n` can be recomputed from `available` values or `inputs`: its nodes (in
    order) into `order`, the values it reads into `leaves`."""
    if n in order:
        return True
    if n.kwargs:
        return False
    if n.op == "method" and n.target == "size":
        tensor = n.args[0]
        if not isinstance(getattr(tensor, "meta", None), torch.Tensor) or id(tensor) in written:
            return False
        if tensor not in inputs and tensor not in available:
            return False
        leaves.append(tensor)
    elif n.op == "call" and n.target in _SIZE_ARITHMETIC and isinstance(n.meta, (torch.SymInt, int)):
        for a in _node_args(n):
            if a in inputs or (a in available and _bare(a.meta)):
                leaves.append(a)
            elif not _closure(a, written, available, inputs, order, leaves):
                return False
    else:
        return False
    order.append(n)
    return True


def _bare(meta) -> bool:
    """A SymInt that is one symbol (``s0``, not ``s0 // 2``)."""
    return isinstance(meta, torch.SymInt) and bool(meta.node.expr.is_Symbol)


def _node_args(n) -> list:
    out: list = []
    map_nodes(n.args, out.append)
    return list(dict.fromkeys(out))


def symbol_inputs(sub, graph_inputs) -> list[tuple]:
    """The size symbols a segment's inputs use, each as a SymInt input of its own, as
    TorchDynamo gives its graphs one placeholder per symbol of its tensors' sizes: Inductor
    reads a symbol only off such an input (a saved activation of size ``s0 // 2`` in the
    backward needs ``s0``).  Each is ``(symbol SymInt, tensor node, "size"/"stride", dim)``:
    the region passes ``tensor.size(dim)``; a tensor from the graph's inputs (live all
    through the region) joins `sub`'s inputs where none of them has the symbol bare."""
    bare = {n.meta.node.expr for n in sub.inputs if _bare(n.meta)}
    used: set = set()
    for n in sub.inputs:
        _symbols(n.meta, used)
    out: list[tuple] = []
    for sym in sorted(used - bare, key=str):
        found = _binding(sym, sub.inputs) or _binding(sym, graph_inputs)
        if found is None:
            continue  # Inductor says why, in the note
        if found[1] not in sub.inputs:
            sub.inputs.append(found[1])
        out.append(found)
    return out


def _binding(sym, nodes) -> tuple | None:
    for n in nodes:
        if isinstance(n.meta, torch.Tensor):
            for kind, dims in (("size", n.meta.shape), ("stride", n.meta.stride())):
                for d, v in enumerate(dims):
                    if isinstance(v, torch.SymInt) and v.node.expr == sym:
                        return v, n, kind, d
    return None


def _symbols(meta, used: set) -> None:
    """The symbols the sizes and strides of `meta` (or the SymInt itself) use, into `used`."""
    if isinstance(meta, torch.Tensor):
        parts = [*meta.shape, *meta.stride()]
    elif isinstance(meta, torch.SymInt):
        parts = [meta]
    else:
        return
    for d in parts:
        if isinstance(d, torch.SymInt):
            used.update(d.node.expr.free_symbols)


def add_symbol_placeholders(gm, examples: list, symbols: list[tuple]) -> None:
    """One placeholder per `symbol_inputs` entry, after `gm`'s own (`examples` extended)."""
    last = [n for n in gm.graph.nodes if n.op == "placeholder"][-1]
    for i, (sym, tensor, kind, d) in enumerate(symbols):
        with gm.graph.inserting_after(last):
            last = gm.graph.placeholder(f"{tensor.name}_{kind}_{d}_{i}")
        last.meta["example_value"] = last.meta["val"] = sym
        examples.append(sym)
    gm.recompile()
