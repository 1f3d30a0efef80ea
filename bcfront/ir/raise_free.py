"""Graph nodes that raise nothing at run time beyond what the fake run already raised.

Fake tensors ran every node at capture: shapes, dtypes, devices and argument checks
raised there, and the sizes they read are guarded (a backed symbol's facts are the
ShapeEnv's guards).  What a node can still raise at run time reads data: an index out of
range, an ``embedding`` id, a factorization, an integer division by zero, an ``.item()``,
a ``max`` over what may be empty, an assert, a collective, a user ``autograd.Function``,
an opaque effect -- or a size only known then (an unbacked symbol), or a stride a real
kernel lays out otherwise than its meta kernel (``view``).

`cannot_raise(n)` says `n` is one of the few declared not to: the table `raise_free_table`
maps a method name (on a tensor) or a call target to the condition that makes it so
(`Kind`); anything else may raise.  Conservative: when unsure, a node may raise.
`frontend.regions.region_errors` reads it: a Python write the region replays after the
graph matters only if a node at or after it may raise.
"""

from __future__ import annotations

import builtins
import enum
import operator
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensor

from .graph import Node, iter_nodes
from .int_arith import is_total


class Kind(enum.Enum):
    """When a table entry raises nothing the fake run did not."""

    ANY = "any"  # whatever the dtypes: its checks read only metadata (sizes, dtypes)
    FLOAT = "float"  # every tensor operand floating point (no integer division, no int pow)
    DTYPE = "dtype"  # a dtype conversion only: ``t.to(torch.float16)`` (no device, no copy=)
    GRAD_NONE = "grad_none"  # ``setattr(t, "grad", None)`` (``zero_grad(set_to_none=True)``)


# tensor methods, by name
_ANY_METHODS = frozenset({"detach", "clone", "contiguous", "reshape", "reshape_as", "transpose"})
_ANY_METHODS |= {"permute", "unsqueeze", "squeeze", "flatten", "expand", "expand_as", "t"}
_ANY_METHODS |= {"float", "double", "half", "bfloat16"}
_FLOAT_METHODS = frozenset({"add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt"})
_FLOAT_METHODS |= {"tanh", "sigmoid", "relu", "sum", "mean", "softmax", "log_softmax", "pow"}


@cache
def raise_free_table() -> Mapping[tuple[str, object], Kind]:
    """The declared table: ``(op, target)`` -> `Kind` (method and getattr targets are names,
    call targets the callables themselves, compared by identity)."""
    table: dict[tuple[str, object], Kind] = {}
    table.update({("method", m): Kind.ANY for m in _ANY_METHODS})
    table.update({("method", m): Kind.FLOAT for m in _FLOAT_METHODS})
    table[("method", "to")] = Kind.DTYPE
    table[("getattr", "grad")] = Kind.ANY  # reading .grad (a warning at most)
    any_calls: tuple[object, ...] = (torch.detach, torch.clone, torch.reshape, torch.transpose)
    any_calls += (torch.permute, torch.unsqueeze, torch.squeeze, torch.flatten, torch.t)
    float_calls: tuple[object, ...] = (operator.add, operator.sub, operator.mul, operator.truediv)
    float_calls += (operator.neg, operator.pos, torch.add, torch.sub, torch.mul, torch.div)
    float_calls += (torch.neg, torch.abs, torch.exp, torch.log, torch.sqrt, torch.rsqrt)
    float_calls += (torch.tanh, torch.sigmoid, torch.relu, torch.sum, torch.mean, torch.softmax)
    float_calls += (torch.log_softmax, F.relu, F.gelu, F.silu, F.softmax, F.log_softmax, F.tanh)
    float_calls += (F.sigmoid,)
    table.update({("call", c): Kind.ANY for c in any_calls})
    table.update({("call", c): Kind.FLOAT for c in float_calls})
    table[("call", builtins.setattr)] = Kind.GRAD_NONE
    return table


def table_kind(n: Node) -> Kind | None:
    """The table's condition for `n`'s target (None: not declared, so it may raise)."""
    target = n.target
    if n.op == "call":
        try:
            return raise_free_table().get((n.op, target))
        except TypeError:  # an unhashable callable: not declared
            return None
    return raise_free_table().get((n.op, target)) if isinstance(target, str) else None


def cannot_raise(n: Node) -> bool:
    """`n` raises nothing at run time that the fake run did not raise first (memory aside):
    total int arithmetic (`int_arith.is_total`), or a `raise_free_table` entry whose `Kind` holds,
    writing nothing in place, with every size it reads known to the guards."""
    if is_total(n):
        return True
    kind = table_kind(n)
    if kind is None or n.mutates or "out" in n.kwargs or not _known_sizes(n):
        return False
    return _HOLDS[kind](n)


def may_raise(n: Node) -> bool:
    return not cannot_raise(n)


def _receiver_tensor(n: Node) -> bool:
    """A method or getattr node reads a tensor (not a user object with a method of that name)."""
    if n.op == "call":
        return True
    return bool(n.args) and isinstance(n.args[0], Node) and isinstance(n.args[0].meta, torch.Tensor)


def _known_sizes(n: Node) -> bool:
    """The node's tensors (arguments and result) are plain tensors (a subclass's
    ``__torch_function__`` may raise anything), and every size and stride of theirs is a
    constant or a backed symbol (its facts are guarded); an unbacked one is known only at
    run time."""
    metas: list[Any] = [a.meta for a in iter_nodes((n.args, n.kwargs))]
    metas.append(n.meta)
    for m in metas:
        for t in m if isinstance(m, (tuple, list)) else (m,):
            if isinstance(t, torch.Tensor) and type(t) not in _PLAIN:
                return False
            if isinstance(t, torch.Tensor) and not all(map(_backed, (*t.shape, *_strides(t)))):
                return False
            if isinstance(t, torch.SymInt) and not _backed(t):
                return False
    return True


_PLAIN = (FakeTensor, torch.Tensor)  # (a parameter's fake is a FakeTensor)


def _strides(t: torch.Tensor) -> tuple[Any, ...]:
    return tuple(t.stride()) if t.layout == torch.strided else ()


def _backed(d: object) -> bool:
    if not isinstance(d, torch.SymInt):
        return True
    node = d.node
    return node.maybe_as_int() is not None or node.hint is not None


def _any(n: Node) -> bool:
    return _receiver_tensor(n)


def _float(n: Node) -> bool:
    """Every tensor operand (and the result) floating point, every other operand a number
    or a constant; at least one tensor (else it is Python arithmetic: `int_arith`)."""
    if not _receiver_tensor(n):
        return False
    tensors = 0
    for a in (*n.args, *n.kwargs.values()):
        m = a.meta if isinstance(a, Node) else a
        if isinstance(m, torch.Tensor):
            if not m.is_floating_point():
                return False
            tensors += 1
        elif not isinstance(m, (bool, int, float, torch.dtype, torch.SymInt, torch.SymFloat, type(None))):
            if not (isinstance(m, (tuple, list)) and all(type(x) is int for x in m)):  # dims
                return False
    out = n.meta
    return tensors > 0 and isinstance(out, torch.Tensor) and out.is_floating_point()


def _dtype(n: Node) -> bool:
    """``t.to(dtype)`` alone: a conversion on the same device, which cannot fail."""
    if not _receiver_tensor(n):
        return False
    rest = n.args[1:]
    if n.kwargs:
        return not rest and set(n.kwargs) == {"dtype"} and isinstance(n.kwargs["dtype"], torch.dtype)
    return len(rest) == 1 and isinstance(rest[0], torch.dtype)


def _grad_none(n: Node) -> bool:
    return (
        len(n.args) == 3
        and not n.kwargs
        and isinstance(n.args[0], Node)
        and isinstance(n.args[0].meta, torch.Tensor)
        and n.args[1] == "grad"
        and n.args[2] is None
    )


_HOLDS: dict[Kind, Callable[[Node], bool]] = {
    Kind.ANY: _any,
    Kind.FLOAT: _float,
    Kind.DTYPE: _dtype,
    Kind.GRAD_NONE: _grad_none,
}
