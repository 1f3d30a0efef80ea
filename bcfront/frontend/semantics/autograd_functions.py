"""``MyFunction.apply(...)`` of a user's ``torch.autograd.Function``: one opaque autograd node.

Tracing a Function's ``forward`` into the graph and its ``backward`` into a backward graph
is what a joint-graph compiler needs; the eager backend needs neither.  The graph keeps
the call itself: a ``call`` node whose target is the class's ``apply``, run by the eager
backend on the region's real tensors.  torch then builds the Function's autograd node
exactly as eager does, so ``ctx.save_for_backward``, ``needs_input_grad``,
``mark_dirty``, ``mark_non_differentiable``, ``set_materialize_grads``,
``once_differentiable``, ``setup_context``-style Functions and double backward (where the
Function's backward is itself differentiable) are torch's own, bit for bit.

The trace learns the outputs' metadata by running ``apply`` once on the fake tensors (the
user's ``forward`` runs there, as a custom op's meta function would): shapes, dtypes,
``requires_grad``, and the fake autograd node whose backward the model of ``backward()``
(`autograd_calls`) runs on the fakes.  An output that is an input's fake (``mark_dirty``)
is the input written in place: the node mutates it.  A ``forward`` that fails on fakes
(reads tensor values, calls a C extension) is a break: the call runs natively and raises
what eager raises.

Limits: ``forward`` runs once more at trace time, on fakes; Python side effects it has
(a counter, a print) happen then too, as they would under TorchDynamo's fake tracing.
Non-tensor results are constants of the trace.  Functions with their own ``vmap`` or
``jvp`` are treated the same (only ``apply`` is called).  Other backends refuse the
node as they refuse a backward node (functionalization cannot see into it).  Under
``joint_graph=True`` a Function that `backends.function_purity` clears is traced by AOT
autograd instead (`backends/joint.py`); the globals its code reads are guarded here.
"""

from __future__ import annotations

import torch

from ...backends import function_purity
from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guards import GuardKind
from ..model.node_checks import check_split, note_node
from ..model.sources import GlobalSource
from ..model.values import ObjectV, TensorV, Value
from .torch_calls import add_call, convert, wrap_output

APPLY = torch.autograd.Function.apply.__func__  # type: ignore[attr-defined]


def function_apply(tx, args: list, kwargs: dict) -> Value:
    """``cls.apply(*args, **kwargs)`` for a subclass `cls` of ``torch.autograd.Function``."""
    if not args or not isinstance(args[0], ObjectV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "Function.apply without its class")
    cls = args[0].obj
    if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"Function.apply on {args[0].describe()}")
    name = getattr(cls, "__qualname__", "Function")
    check_split(tx)
    env = tx.torch_env()
    conv = [convert(a) for a in args[1:]]
    kconv = {k: convert(v) for k, v in kwargs.items()}
    fargs = [c[0] for c in conv]
    try:
        out = env.run(cls.apply, fargs, {k: c[0] for k, c in kconv.items()}, tx.state)
    except UnsupportedError:
        raise
    except Exception as e:  # noqa: BLE001 - eager raises it, or forward needs real values: run natively
        raise UnsupportedError(
            BreakReason.TORCH_ERROR, f"{name}.apply failed on fake tensors: {type(e).__name__}: {e}"
        ) from None
    outs = out if isinstance(out, (tuple, list)) else (out,)
    ins = [x for x in fargs if isinstance(x, torch.Tensor)]
    dirty = any(any(o is i for i in ins) for o in outs if isinstance(o, torch.Tensor))
    node = add_call(tx, "call", cls.apply, conv, kconv, out, mutates=dirty)
    if dirty:
        tx.has_mutation = True
    if tx.options.joint_graph:
        guard_traced_reads(tx, cls)
    note_node(tx)
    return wrap_output(tx, node, out, [a for a in args[1:] if isinstance(a, TensorV)])


def guard_traced_reads(tx, cls) -> None:
    """A Function the joint graph traces (`backends.function_purity`) runs as compiled aten
    code from then on: the globals its code reads are guarded by identity, so rebinding
    one (a helper, a constant) recompiles instead of running the stale trace."""
    try:
        reads = function_purity.check(cls)
    except function_purity.NotTraceable:
        return  # an opaque node: torch runs the Function's own Python at every call
    for globs, name, value in reads:
        tx.guard(GuardKind.ID_MATCH, GlobalSource(name, tx.globals_ref(globs)), value)
