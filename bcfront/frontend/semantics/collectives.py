"""torch.distributed in captured code: collectives as graph nodes, DDP's forward.

A collective becomes a node of the functional c10d ops (``torch.ops._c10d_functional.*``,
the ops torch.compile rewrites to), followed by its ``wait_tensor``:

* the in-place calls (``dist.all_reduce(t)``, ``all_gather_into_tensor(out, t)``,
  ``reduce_scatter_tensor(out, t)``, ``broadcast(t, src)``, ``all_to_all_single(out, t)``)
  are the functional op, its wait, and a ``copy_`` into the tensor eager writes;
* the `_functional_collectives` forms (``all_reduce``, ``all_gather_tensor`` /
  ``all_gather_single``, ``reduce_scatter_tensor`` / ``reduce_scatter_single``,
  ``broadcast``, ``all_to_all_single``, ``wait_tensor``) are the op and its wait (their
  result is a plain tensor, which is what their `AsyncCollectiveTensor` reads as).

The backends move each wait down to the first node that reads the value
(`ir.passes.sink_waits`).  The process group is read when tracing and guarded by
identity (held weakly) with the rank and world size of the default group; a group
that is neither ``None``, a ``ProcessGroup`` nor a group name breaks.  With
``async_op=True`` the call returns a work handle whose ``wait()`` records the wait and
the copy (`async_work`).  What would run on the engine outside the graph breaks: a
collective on a tensor autograd records, methods of c10d objects (process groups, native
work handles, stores) and the in-place ``torch.ops.c10d`` ops, which a fake run would
silently drop (`BreakReason.COLLECTIVE`).

``DistributedDataParallel.forward`` runs DDP's ``_pre_forward`` and ``_post_forward``
natively as two opaque nodes around the captured inner module: the gradient
all-reduce stays DDP's own (its reducer's autograd hooks, bucketed, overlapped with
backward), and ``no_sync()`` is read by those nodes on every call.
"""

from __future__ import annotations

import inspect
import sys
import weakref
from typing import Any, NoReturn

import torch

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.node_checks import check_split, note_node
from ..model.sources import AttrSource, CallSource, Ref
from ..model.values import Const, DictV, ListV, ObjectV, TensorV, TupleV, Value
from . import dispatch
from .torch_calls import record

_F = "torch.ops._c10d_functional"


def _default_group():
    """The default process group, None when torch.distributed is not initialized (a guard)."""
    import torch.distributed as dist

    return dist.group.WORLD if dist.is_initialized() else None


def _rank_and_size():
    """(rank, world size) of the default group, None when not initialized (a guard)."""
    import torch.distributed as dist

    return (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else None


_WORLD = CallSource(Ref(_default_group, "torch.distributed.group.WORLD"))
_RANK_SIZE = CallSource(Ref(_rank_and_size, "(dist.get_rank(), dist.get_world_size())"))


def _break(message: str) -> NoReturn:
    raise UnsupportedError(BreakReason.COLLECTIVE, message)


def _python(v: Value, what: str):
    """The Python object a constant argument holds (an int, a ReduceOp, a list of ints)."""
    if isinstance(v, Const):
        return v.value
    if isinstance(v, ObjectV):
        return v.obj
    if isinstance(v, (TupleV, ListV)):
        return [_python(x, what) for x in v.items]
    _break(f"{what} is {v.describe()}, not a constant")


def group_of(tx, gv: Value):
    """The process group a ``group=`` argument names, guarded (identity, held weakly)."""
    import torch.distributed as dist

    if isinstance(gv, Const) and gv.value is None:
        pg = _default_group()
        if pg is None:
            _break("a collective before torch.distributed.init_process_group")
        tx.guard(GuardKind.ID_MATCH, _WORLD, pg)
        tx.guard(GuardKind.CONSTANT_MATCH, _RANK_SIZE, _rank_and_size())
        return pg
    if isinstance(gv, ObjectV) and isinstance(gv.obj, dist.ProcessGroup):
        from .classes import source_of

        tx.guard(GuardKind.ID_MATCH, source_of(gv), gv.obj)
        tx.guard(GuardKind.CONSTANT_MATCH, _RANK_SIZE, _rank_and_size())
        return gv.obj
    if isinstance(gv, Const) and isinstance(gv.value, str):
        from torch.distributed.distributed_c10d import _resolve_process_group

        return _resolve_process_group(gv.value)  # type: ignore[arg-type]  # a GroupName is a str
    _break(f"a collective over {gv.describe()} (only None, a ProcessGroup or a group name)")


def _reduce_op(v: Value) -> str:
    op = _python(v, "the reduce op")
    name = op if isinstance(op, str) else getattr(op, "name", None)
    if not isinstance(name, str):
        _break(f"reduce op {op!r}")
    return name.lower()


def _issue(tx, name: str, args: list) -> Any:
    """``_c10d_functional.<name>(*args)``: the collective, not waited."""
    check_split(tx)
    return record(tx, "call", getattr(torch.ops._c10d_functional, name).default, args, {})


def _collective(tx, name: str, args: list) -> Any:
    """``wait_tensor(_c10d_functional.<name>(*args))`` as two nodes."""
    return record(tx, "call", torch.ops._c10d_functional.wait_tensor.default, [_issue(tx, name, args)], {})


def _check_tensor(tx, t: Value, what: str) -> Any:
    if not isinstance(t, TensorV):
        _break(f"{what} is {t.describe()}, not a tensor")
    if t.fake.requires_grad and tx.state.grad:
        _break(f"{what} requires grad: autograd would record the collective")
    return t


def _bind(fn, args, kwargs) -> dict:
    try:
        b = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        _break(f"{fn.__name__}{tuple(args)!r}: {e}")
    b.apply_defaults()
    return {k: v if isinstance(v, Value) else Const(v) for k, v in b.arguments.items()}


def _into(tx, a: dict, dst: TensorV, name: str, args: list) -> Value:
    """The in-place call's result: the collective issued, its result copied into `dst` (viewed
    as `dst` first when the shapes differ); with ``async_op=True`` the copy waits for the
    handle's ``wait()`` (`async_work`)."""
    issued = _issue(tx, name, args)
    shape = tuple(dst.fake.shape)
    view = None if tuple(issued.fake.shape) == shape else shape
    if _python(a["async_op"], "async_op"):
        from .async_work import pending

        return pending(tx, issued, dst, view)
    out = record(tx, "call", torch.ops._c10d_functional.wait_tensor.default, [issued], {})
    if view is not None:  # e.g. a stacked output of all_gather: [n, *t.shape]
        out = record(tx, "method", "view", [out, Const(view)], {})
    record(tx, "method", "copy_", [dst, out], {}, mutates=True)
    return Const(None)


def _sizes(v: Value, n: int, length: int, what: str) -> list:
    sizes = _python(v, what)
    if sizes is None or sizes == []:
        if length % n:
            _break(f"{what}: dimension 0 ({length}) does not split evenly into {n}")
        return [length // n] * n
    return [int(s) for s in sizes]


# -- the in-place calls of torch.distributed ----------------------------------------------------


def _all_reduce(tx, fn, a: dict) -> Value:
    t = _check_tensor(tx, a["tensor"], "all_reduce's tensor")
    pg = group_of(tx, a["group"])
    return _into(tx, a, t, "all_reduce", [t, Const(_reduce_op(a["op"])), Const(pg.group_name)])


def _all_gather(tx, fn, a: dict) -> Value:
    out = _check_tensor(tx, a["output_tensor"], "all_gather_into_tensor's output")
    t = _check_tensor(tx, a["input_tensor"], "all_gather_into_tensor's input")
    pg = group_of(tx, a["group"])
    return _into(tx, a, out, "all_gather_into_tensor", [t, Const(pg.size()), Const(pg.group_name)])


def _reduce_scatter(tx, fn, a: dict) -> Value:
    out = _check_tensor(tx, a["output"], "reduce_scatter_tensor's output")
    t = _check_tensor(tx, a["input"], "reduce_scatter_tensor's input")
    pg = group_of(tx, a["group"])
    if (
        t.fake.dim() >= 1
        and t.fake.shape[0] == pg.size()
        and tuple(t.fake.shape[1:]) == tuple(out.fake.shape)
    ):
        t = record(tx, "method", "flatten", [t, Const(0), Const(1)], {}) if t.fake.dim() > 1 else t
    args = [t, Const(_reduce_op(a["op"])), Const(pg.size()), Const(pg.group_name)]
    return _into(tx, a, out, "reduce_scatter_tensor", args)


def _broadcast(tx, fn, a: dict) -> Value:
    import torch.distributed as dist

    t = _check_tensor(tx, a["tensor"], "broadcast's tensor")
    pg = group_of(tx, a["group"])
    src, group_src = _python(a["src"], "src"), _python(a["group_src"], "group_src")
    if group_src is None:
        if src is None:
            _break("dist.broadcast without src")
        group_src = dist.get_group_rank(pg, src)
    return _into(tx, a, t, "broadcast", [t, Const(int(group_src)), Const(pg.group_name)])


def _all_to_all(tx, fn, a: dict) -> Value:
    out = _check_tensor(tx, a["output"], "all_to_all_single's output")
    t = _check_tensor(tx, a["input"], "all_to_all_single's input")
    pg = group_of(tx, a["group"])
    n = pg.size()
    osz = _sizes(a["output_split_sizes"], n, out.fake.shape[0], "output_split_sizes")
    isz = _sizes(a["input_split_sizes"], n, t.fake.shape[0], "input_split_sizes")
    return _into(tx, a, out, "all_to_all_single", [t, Const(osz), Const(isz), Const(pg.group_name)])


# -- the functional forms --------------------------------------------------------------------


def _f_all_reduce(tx, fn, a: dict) -> Value:
    t = _check_tensor(tx, a["self"], "all_reduce's tensor")
    pg = group_of(tx, a["group"])
    return _collective(tx, "all_reduce", [t, Const(_reduce_op(a["reduceOp"])), Const(pg.group_name)])


def _f_all_gather(tx, fn, a: dict) -> Value:
    t = _check_tensor(tx, a["self"], "all_gather's tensor")
    pg = group_of(tx, a["group"])
    dim = int(_python(a["gather_dim"], "gather_dim"))
    g = _collective(tx, "all_gather_into_tensor", [t, Const(pg.size()), Const(pg.group_name)])
    if dim != 0:  # as the library does: gathered on dim 0, then its chunks concatenated on dim
        chunks = record(tx, "call", torch.chunk, [g, Const(pg.size())], {})
        g = record(tx, "call", torch.cat, [chunks, Const(dim)], {})
    return g


def _f_reduce_scatter(tx, fn, a: dict) -> Value:
    t = _check_tensor(tx, a["self"], "reduce_scatter's tensor")
    pg = group_of(tx, a["group"])
    dim = int(_python(a["scatter_dim"], "scatter_dim"))
    if dim != 0:
        chunks = record(tx, "call", torch.chunk, [t, Const(pg.size())], {"dim": Const(dim)})
        t = record(tx, "call", torch.cat, [chunks], {})
    args = [t, Const(_reduce_op(a["reduceOp"])), Const(pg.size()), Const(pg.group_name)]
    return _collective(tx, "reduce_scatter_tensor", args)


def _f_broadcast(tx, fn, a: dict) -> Value:
    t = _check_tensor(tx, a["self"], "broadcast's tensor")
    pg = group_of(tx, a["group"])
    return _collective(tx, "broadcast", [t, Const(int(_python(a["src"], "src"))), Const(pg.group_name)])


def _f_all_to_all(tx, fn, a: dict) -> Value:
    t = _check_tensor(tx, a["self"], "all_to_all_single's tensor")
    pg = group_of(tx, a["group"])
    n = pg.size()
    isz = _sizes(a["input_split_sizes"], n, t.fake.shape[0], "input_split_sizes")
    osz_v = a["output_split_sizes"]
    osz = isz if _python(osz_v, "output_split_sizes") is None else _sizes(osz_v, n, 0, "output_split_sizes")
    return _collective(tx, "all_to_all_single", [t, Const(osz), Const(isz), Const(pg.group_name)])


def _f_wait(tx, fn, a: dict) -> Value:
    t = _check_tensor(tx, a["tensor"], "wait_tensor's tensor")
    return record(tx, "call", torch.ops._c10d_functional.wait_tensor.default, [t], {})


# -- queries ---------------------------------------------------------------------------------


def _rank(tx, fn, a: dict) -> Value:
    pg = group_of(tx, a["group"])
    return Const(pg.rank() if fn.__name__ == "get_rank" else pg.size())


def _is_initialized(tx, fn, a: dict) -> Value:
    tx.guard(GuardKind.ID_MATCH, _WORLD, _default_group())
    return Const(_default_group() is not None)


# -- DDP -------------------------------------------------------------------------------------


class DDPForwardHook:
    """The target of a node running DDP's ``_pre_forward`` / ``_post_forward`` natively on the
    DDP module, held weakly (its ID_MATCH guard keeps the traced one)."""

    bcfront_opaque_effect = True  # `ir.alias_facts.opaque_effect`: no pure graph holds it

    def __init__(self, ddp, which: str) -> None:
        self.ref, self.which = weakref.ref(ddp), which
        self.__name__ = f"DistributedDataParallel.{which}"
        self.__qualname__ = self.__name__

    def __call__(self, tensors: tuple) -> None:
        if on_fakes(tensors):
            return  # a re-run of the graph on fakes (its alias facts): DDP must not run
        ddp = self.ref()
        assert ddp is not None, "the module's ID_MATCH guard passed"
        if self.which == "_pre_forward":
            ddp._pre_forward()
        else:
            ddp._post_forward(tensors)

    def __repr__(self) -> str:
        return f"<{self.__name__}>"


def on_fakes(tensors: tuple) -> bool:
    """Whether a graph runs on fake tensors: a fake mode is active or a tensor is fake (what
    ``torch._guards.detect_fake_mode`` answers, in a microsecond instead of ten: on every
    call of a DDP forward)."""
    from torch._subclasses.fake_tensor import FakeTensor

    if torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is not None:
        return True
    return any(isinstance(t, FakeTensor) for t in tensors)


def _hook_node(tx, ddp, which: str, tensors: list) -> None:
    check_split(tx)
    target = DDPForwardHook(ddp, which)
    node_args = [tuple(t.node for t in tensors)]
    tx.graph.add("call", target, node_args, {}, meta=None, loc=tx.loc(), state=tx.node_state(), mutates=True)
    tx.has_mutation = True
    note_node(tx)


def _tensors(v: Value) -> list:
    if isinstance(v, TensorV):
        return [v]
    if isinstance(v, (TupleV, ListV)):
        return [t for x in v.items for t in _tensors(x)]
    if isinstance(v, DictV):
        return [t for e in v.entries.values() for t in _tensors(e[1])]
    return []


# DDP's attributes that decide whether its forward is "pre-forward, module, post-forward"
_DDP_FLAGS = ("_use_python_reducer", "_delay_all_reduce_all_params", "find_unused_parameters", "static_graph")


def ddp_forward(tx, args: list, kwargs: dict) -> Value:
    """``DistributedDataParallel.forward(self, *inputs, **kwargs)`` (see the module doc)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    from .attrs import getattr_
    from .classes import source_of

    if not args or not isinstance(args[0], ObjectV) or not isinstance(args[0].obj, DDP):
        _break("DistributedDataParallel.forward without its module")
    mv, ddp = args[0], args[0].obj
    src = source_of(mv)
    tx.guard(GuardKind.ID_MATCH, src, ddp)
    for flag in _DDP_FLAGS:
        tx.guard(GuardKind.CONSTANT_MATCH, AttrSource(src, flag), getattr(ddp, flag))
    if ddp._use_python_reducer or ddp._delay_all_reduce_all_params:
        _break("DDP with the Python reducer or delayed all-reduce of all parameters")
    if ddp.find_unused_parameters or ddp.static_graph:
        _break("DDP with find_unused_parameters or static_graph wraps outputs in an autograd Function")
    if ddp.device_ids:
        tx.guard(GuardKind.CONSTANT_MATCH, AttrSource(src, "device_ids"), list(ddp.device_ids))
    inputs = args[1:]
    _hook_node(tx, ddp, "_pre_forward", _tensors(TupleV(list(inputs))))
    if ddp.device_ids:  # as _pre_forward's _to_kwargs: inputs moved to the module's device
        dev = Const(
            torch.device(ddp.device_ids[0]) if isinstance(ddp.device_ids[0], int) else ddp.device_ids[0]
        )
        inputs = [record(tx, "method", "to", [x, dev], {}) if isinstance(x, TensorV) else x for x in inputs]
    inner = getattr_(tx, mv, "module")
    out = dispatch.call(tx, inner, list(inputs), kwargs)
    _hook_node(tx, ddp, "_post_forward", _tensors(out))
    return out


# -- the table -------------------------------------------------------------------------------


def _table() -> dict:
    import torch.distributed as dist
    import torch.distributed._functional_collectives as fc
    from torch.nn.parallel import DistributedDataParallel as DDP

    t = {
        dist.all_reduce: _all_reduce,
        dist.all_gather_into_tensor: _all_gather,
        dist.reduce_scatter_tensor: _reduce_scatter,
        dist.broadcast: _broadcast,
        dist.all_to_all_single: _all_to_all,
        dist.get_rank: _rank,
        dist.get_world_size: _rank,
        dist.is_initialized: _is_initialized,
        fc.all_reduce: _f_all_reduce,
        fc.all_gather_tensor: _f_all_gather,
        fc.reduce_scatter_tensor: _f_reduce_scatter,
        fc.broadcast: _f_broadcast,
        fc.all_to_all_single: _f_all_to_all,
        fc.wait_tensor: _f_wait,
    }
    for name, model, f_model in (
        ("all_gather_single", _all_gather, _f_all_gather),
        ("reduce_scatter_single", _reduce_scatter, _f_reduce_scatter),
    ):  # the newer names (torch 2.13 deprecates the *_tensor forms for them)
        if hasattr(dist, name):
            t[getattr(dist, name)] = model
        if hasattr(fc, name):
            t[getattr(fc, name)] = f_model
    models = {k: _bound(k, m) for k, m in t.items()}
    models[DDP.forward] = ddp_forward
    return models


def _bound(fn, model):
    def m(tx, args, kwargs):
        return model(tx, fn, _bind(fn, args, kwargs))

    return m


_TABLE: dict | None = None
_C10D_MODULES = ("torch._C._distributed_c10d", "torch.distributed")


def model_for(obj):
    """The model of a torch.distributed callable, a breaking one for c10d objects' methods
    and in-place c10d ops (a fake run would drop them), None for anything else."""
    global _TABLE
    if "torch.distributed" not in sys.modules:
        return None
    if _TABLE is None:
        import torch.distributed as dist

        if not dist.is_available():
            return None
        _TABLE = _table()
    try:
        m = _TABLE.get(obj)
    except TypeError:
        return None
    if m is not None:
        return m
    from .async_work import model_for as work_model

    m = work_model(obj)  # a work handle's methods
    if m is not None:
        return m
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, type) and type(owner).__module__ == _C10D_MODULES[0]:
        what = f"{type(owner).__name__}.{getattr(obj, '__name__', '?')}"
        return lambda tx, args, kwargs: _break(f"{what}() runs on the process group outside the graph")
    if isinstance(obj, torch._ops.OpOverloadPacket):
        name = obj._qualified_op_name
    elif isinstance(obj, torch._ops.OpOverload):
        name = obj._schema.name
    else:
        return None
    if name.startswith("c10d::"):
        return lambda tx, args, kwargs: _break(f"torch.ops.{name.replace('::', '.')}: an in-place collective")
    return None
