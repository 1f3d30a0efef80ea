"""Rewrite rules for functionalization: functional variants of writing ops, inverses of views.

Two declarative tables, keyed by aten op:

* `functional_variant(op)`: the op computing what an in-place or ``out=`` op
  would write — by aten's own naming (``add_.Tensor`` -> ``add.Tensor``; an
  ``.out`` overload -> the overload of its packet with the same arguments
  minus ``out``), plus `SPECIAL_FUNCTIONAL` for ops whose schema hides a write
  (``native_batch_norm`` -> ``_native_batch_norm_legit_functional``);
* `VIEW_INVERSES[packet]`: given a view op (a `Step`) and the new value of the
  view, the op computing the base's new value (``slice`` -> ``slice_scatter``,
  ``permute`` -> the inverse permute, a reshape -> reshaping back).

A view op missing from the table has no inverse; functionalization then falls
back to ``as_strided_scatter`` when it can, and otherwise gives up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import torch

from .alias_facts import schema_info

if TYPE_CHECKING:
    from torch._ops import OpOverload

    from .alias_facts import Step
    from .graph import Node

aten = torch.ops.aten

# how a functional variant returns what the op wrote (see `functional_variant`)
VariantKind: TypeAlias = Literal["inplace", "out", "extra"]
# (op, args, kwargs) computing a base's new value; op None: the new value itself
Rewrite: TypeAlias = tuple["OpOverload | None", tuple[Any, ...], dict[str, Any]]
# inverse(base meta, new view value, step) -> the rewrite (see `VIEW_INVERSES`)
Inverse: TypeAlias = Callable[[torch.Tensor, "Node", "Step"], Rewrite]


class FunctionalizeError(Exception):
    """The graph uses a mutation functionalization cannot express (it then stays eager).
    ``node``: the graph node it failed at, when it failed at one."""

    node: Node | None = None


def packet(func: OpOverload) -> str:
    name: str = func.overloadpacket.__name__
    return name


def _overload(packet_name: str, overload: str) -> OpOverload | None:
    packet = getattr(aten, packet_name, None)
    return None if packet is None else getattr(packet, overload, None)


def _out_functional(func: OpOverload) -> OpOverload | None:
    """The overload of `func`'s packet taking the same arguments minus ``out=``."""
    specs, _ = schema_info(func)
    want = [s.name for s in specs if not s.write]
    packet = func.overloadpacket
    for name in packet.overloads():
        cand: OpOverload = getattr(packet, name)
        cspecs, _ = schema_info(cand)
        if [s.name for s in cspecs] == want and not any(s.write for s in cspecs):
            return cand
    return None


# op -> functional op whose results are (the op's results..., new values of the written args)
SPECIAL_FUNCTIONAL: dict[OpOverload, OpOverload] = {
    aten.native_batch_norm.default: aten._native_batch_norm_legit_functional.default,
}


def functional_variant(func: OpOverload) -> tuple[OpOverload, VariantKind]:
    """(functional op, kind): kind "inplace" (result is the new value of the one written
    argument), "out" (result is the new value of ``out``) or "extra" (new values follow
    the op's own results)."""
    if func in SPECIAL_FUNCTIONAL:
        return SPECIAL_FUNCTIONAL[func], "extra"
    name = packet(func)
    specs, _ = schema_info(func)
    written = [s for s in specs if s.write]
    if len(written) == 1 and written[0].kwarg_only:
        fop = _out_functional(func)
        if fop is not None:
            return fop, "out"
    if name.endswith("_") and len(written) == 1 and written[0] is specs[0]:
        fop = _overload(name[:-1], func._overloadname)
        if fop is not None:
            return fop, "inplace"
    raise FunctionalizeError(f"no functional variant of {func}")


def _reshape_back(base_meta: torch.Tensor, src: Node, step: Step) -> Rewrite:
    return aten.reshape.default, (src, list(base_meta.shape)), {}


def _split_bounds(base_meta: torch.Tensor, step: Step) -> tuple[int, int, int]:
    given = dict(zip(("split_size", "dim"), step.args)) | dict(step.kwargs)
    sizes = cast("int | list[int]", given.get("split_size", given.get("split_sizes")))
    dim = given.get("dim", 0) % max(base_meta.dim(), 1)
    assert step.index is not None  # split views have several outputs
    if isinstance(sizes, int):
        start = sizes * step.index
        return dim, start, min(start + sizes, base_meta.shape[dim])
    start = sum(sizes[: step.index])
    return dim, start, start + sizes[step.index]


def _split_inverse(base_meta: torch.Tensor, src: Node, step: Step) -> Rewrite:
    dim, start, end = _split_bounds(base_meta, step)
    return aten.slice_scatter.default, (BASE, src, dim, start, end, 1), {}


def _unbind_inverse(base_meta: torch.Tensor, src: Node, step: Step) -> Rewrite:
    dim = step.args[0] if step.args else dict(step.kwargs).get("dim", 0)
    return aten.select_scatter.default, (BASE, src, dim, step.index), {}


def _scatter_like(scatter: OpOverload) -> Inverse:
    def inv(base_meta: torch.Tensor, src: Node, step: Step) -> Rewrite:
        return scatter, (BASE, src, *step.args), dict(step.kwargs)

    return inv


def _permute_inverse(base_meta: torch.Tensor, src: Node, step: Step) -> Rewrite:
    dims = step.args[0] if step.args else dict(step.kwargs)["dims"]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d % len(dims)] = i
    return aten.permute.default, (src, inv), {}


def _identity(base_meta: torch.Tensor, src: Node, step: Step) -> Rewrite:
    return None, (src,), {}


def _expand_inverse(base_meta: torch.Tensor, src: Node, step: Step) -> Rewrite:
    sizes = step.args[0] if step.args else dict(step.kwargs)["size"]
    numel = 1
    for i, s in enumerate(sizes):
        numel *= base_meta.shape[i - len(sizes) + base_meta.dim()] if s == -1 else s
    if numel != base_meta.numel():
        raise FunctionalizeError("a write through an expanded view")
    return _reshape_back(base_meta, src, step)


BASE = object()  # stands for the base in an inverse's arguments

# view op packet -> inverse(base meta, new view value, step) -> (op, args, kwargs) computing
# the base's new value (op None: the new value itself).  Reshape-like views invert by
# reshaping back: they keep the logical (row-major) order of elements.
VIEW_INVERSES: dict[str, Inverse] = {
    "slice": _scatter_like(aten.slice_scatter.default),
    "select": _scatter_like(aten.select_scatter.default),
    "diagonal": _scatter_like(aten.diagonal_scatter.default),
    "as_strided": _scatter_like(aten.as_strided_scatter.default),
    "view": _reshape_back,
    "_unsafe_view": _reshape_back,
    "reshape": _reshape_back,
    "_reshape_alias": _reshape_back,
    "squeeze": _reshape_back,
    "unsqueeze": _reshape_back,
    "flatten": _reshape_back,
    "unflatten": _reshape_back,
    "view_as": _reshape_back,
    "expand": _expand_inverse,
    "permute": _permute_inverse,
    "t": lambda b, s, st: (aten.t.default, (s,), {}),
    "transpose": lambda b, s, st: (aten.transpose.int, (s, *st.args), dict(st.kwargs)),
    "alias": _identity,
    "detach": _identity,
    "lift_fresh": _identity,
    "split": _split_inverse,
    "split_with_sizes": _split_inverse,
    "unsafe_split": _split_inverse,
    "unbind": _unbind_inverse,
}
