"""Symbolic sizes in the trace: Python ints that stand for a dynamic size (`SymIntV`).

In a dynamic capture (`model/shape_policy.py`) the fake tensors of some inputs have
symbolic sizes (torch SymInts of the capture's ShapeEnv).  Reading such a size
(``x.shape``, ``x.size(1)``, ``x.numel()``) gives a `SymIntV`: a graph node that
computes the real int at run time, with the SymInt as its example.  What the trace
may do with it without knowing its value:

* arithmetic with other ints (`scalars.python_op`): more SymInt nodes; a float result
  (``n ** 0.5``, ``n / 2``, ``float(n)``) is a `SymFloatV`, a SymFloat node;
* a size, shape, index or value argument of a tensor op: the fake run takes the
  SymInt, the graph node takes the int node (a SymFloat: a value operand only);
* a float argument known only at run time (a `RuntimeV`, `runtime_values`) that reaches
  a tensor op as an operand (``x * scale``) is a SymFloat graph input (`float_input`),
  as torch.compile makes such a float: one entry for every value, not one per value;
* a comparison or truth test: answered from the symbol's hint, and the ShapeEnv
  records the relation as a guard (``s0 > 1``): one entry per outcome.

Anything else that needs the value itself (a list index, a loop bound, a dict key,
a C function) *specializes* it: the int its hint holds, under the ShapeEnv guard
``s0 == value``.  A SymBool result is specialized the same way, and so is a SymFloat
wherever it is not arithmetic or a value operand of a tensor op.  All
guards reach the entry's guard function through `regions.entry.add_shape_guards`.
"""

from __future__ import annotations

import math
import operator

import torch

from ..model.node_checks import check_split, note_node
from ..model.shape_policy import NeedDynamic
from ..model.tensor_inputs import env_placeholder
from ..model.values import (
    Const,
    ListV,
    RuntimeV,
    SymFloatV,
    SymIntV,
    TupleV,
    Value,
    is_unread,
    specialized,
)

_AS_CONSTANT = {
    torch.SymInt: lambda n: n.maybe_as_int(),
    torch.SymBool: lambda n: n.maybe_as_bool(),
    torch.SymFloat: lambda n: n.maybe_as_float(),
}


def is_symbolic(x) -> bool:
    """A SymInt/SymBool/SymFloat that is not a constant (a torch size may be either)."""
    as_constant = _AS_CONSTANT.get(type(x))
    return as_constant is not None and as_constant(x.node) is None


def has_symbols(x) -> bool:
    if isinstance(x, (tuple, list)):
        return any(has_symbols(i) for i in x)
    return is_symbolic(x)


def concrete(x):
    """`x` with every symbolic number specialized (a guard each): plain Python data."""
    if isinstance(x, torch.Size):
        return torch.Size([concrete(i) for i in x])
    if isinstance(x, (tuple, list)) and type(x) in (tuple, list):
        return type(x)(concrete(i) for i in x)
    if isinstance(x, torch.SymInt):
        return int(x)
    if isinstance(x, torch.SymBool):
        return bool(x)
    if isinstance(x, torch.SymFloat):
        return float(x)
    return x


def specialize_all(items):
    """Each symbolic number of `items` as the constant its hint holds, guarded equal to it."""
    return [specialized(a) for a in items]


def int_value(tx, node, example) -> Value:
    """The value of a graph node that yields int `example` (a SymInt or a plain int)."""
    if isinstance(example, torch.SymInt):
        as_int = example.node.maybe_as_int()
        if as_int is None:
            return SymIntV(node, tx.symbol_env().scalar_fake(), int, example)
        return Const(as_int)
    return Const(concrete(example))


def number_value(tx, node, example) -> Value:
    """The value of a graph node that yields the number `example`: a symbolic int or float
    stays a node (`SymIntV`, `SymFloatV`); anything else is the constant it is (a SymBool
    guarded)."""
    if isinstance(example, torch.SymInt):
        return int_value(tx, node, example)
    if isinstance(example, torch.SymFloat) and is_symbolic(example):
        fake = tx.torch_env().run(lambda: torch.zeros((), dtype=torch.float64), [], {}, tx.state)
        return SymFloatV(node, fake, float, example)
    return Const(concrete(example))


def wrap_numbers(tx, node, out) -> Value:
    """The value of a node whose result `out` (from the fake run) holds symbolic numbers:
    SymInts as `SymIntV` items (one getitem node each), everything else specialized."""
    if isinstance(out, torch.SymInt):
        return int_value(tx, node, out)
    if isinstance(out, (torch.SymBool, torch.SymFloat)):
        return Const(concrete(out))
    if isinstance(out, (tuple, list)) and type(out) in (tuple, list, torch.Size):
        items = [_item(tx, node, i, x) for i, x in enumerate(out)]
        if type(out) is list:
            return ListV(items)
        return TupleV(items, torch.Size if isinstance(out, torch.Size) else tuple)
    return Const(concrete(out))


def _item(tx, node, i, x) -> Value:
    if not has_symbols(x):
        return Const(concrete(x)) if not isinstance(x, (tuple, list)) else wrap_numbers(tx, None, x)
    n = tx.graph.add("call", operator.getitem, [node, i], meta=x, loc=node.loc, state=node.state)
    return wrap_numbers(tx, n, x)


def sizes(tx, t, what: str = "size") -> Value:
    """``t.shape`` / ``t.size()`` / ``t.stride()`` of a tensor value: constants where the fake's
    are, a ``t.size(i)`` node per symbolic one."""
    dims = t.fake.shape if what == "size" else t.fake.stride()
    items: list[Value] = []
    for i, d in enumerate(dims):
        if is_symbolic(d):
            items.append(_dim_node(tx, t, what, i, d))
        else:
            items.append(Const(concrete(d)))
    return TupleV(items, torch.Size if what == "size" else tuple)


def _dim_node(tx, t, what: str, i: int, d) -> Value:
    check_split(tx)
    node = tx.graph.add("method", what, [t.node, i], {}, meta=d, loc=tx.loc(), state=tx.node_state())
    note_node(tx)
    return int_value(tx, node, d)


def float_operands(tx, args: list, kwargs: dict) -> tuple[list, dict]:
    """The arguments of a torch call with each unread runtime float among them, or in a
    list or tuple among them, as its graph input (`float_input`): an operand (``x * s``),
    a fill value (``torch.full(size, s)``).  Where the call needs the value itself (a
    size: ``torch.arange(s)``), the ShapeEnv guards it, as any symbol."""
    if not any(_has_runtime_float(a) for a in (*args, *kwargs.values())):
        return args, kwargs
    return [_operand(tx, a) for a in args], {k: _operand(tx, v) for k, v in kwargs.items()}


def _is_runtime_float(v) -> bool:
    return is_unread(v) and type(v.example) is float


def _has_runtime_float(v) -> bool:
    if isinstance(v, (ListV, TupleV)):
        return any(_is_runtime_float(x) for x in v.items)
    return _is_runtime_float(v)


def _operand(tx, v):
    if isinstance(v, (ListV, TupleV)) and any(_is_runtime_float(x) for x in v.items):
        items = [float_input(tx, x) if _is_runtime_float(x) else x for x in v.items]
        return ListV(items) if isinstance(v, ListV) else TupleV(items, v.cls)
    return float_input(tx, v) if _is_runtime_float(v) else v


def float_input(tx, v: RuntimeV) -> Value:
    """Runtime float `v` as a graph input: a SymFloat of the capture's ShapeEnv with `v`'s
    source, its value unread (one per source; a dynamic env first: `NeedDynamic`)."""
    if not math.isfinite(v.example):  # torch.compile too: a nan or inf hint is no symbol
        return v
    made = tx.__dict__.setdefault("float_inputs", {})
    known = made.get(v.source)
    if known is not None:
        return known
    env = tx.symbol_env()
    if not env.dynamic:
        raise NeedDynamic(v.source)
    sym = env.sym_float(v.example, env_placeholder(tx, v.source))
    if not isinstance(sym, torch.SymFloat):
        return v
    node = tx.graph.add_input(v.source, sym)
    fake = tx.torch_env().run(lambda: torch.zeros((), dtype=torch.float64), [], {}, tx.state)
    out = made[v.source] = SymFloatV(node, fake, float, sym)
    out.source = v.source
    return out
