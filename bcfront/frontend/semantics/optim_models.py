"""``opt.step()`` and ``opt.zero_grad()`` of ``torch.optim`` optimizers inside a graph.

``opt.step()`` is one effectful graph node, as ``loss.backward()`` is (`autograd_calls`):
the eager backend runs a graph as straight-line torch calls on the real tensors, so the
node runs the optimizer's own ``step`` at its place in program order.  Parameters,
optimizer state (created on the first step), ``_opt_called`` and the profiler range are
eager's own, bit for bit, for every optimizer and every path (``foreach``, single-tensor,
``fused``).  The learning rate and the other hyperparameters are read by the real step
when the node runs: an LR scheduler that changes ``param_groups[i]['lr']`` between calls
changes nothing the trace guarded, so there is no recompile (the trace never reads them).

What the trace must know of the node, and guards:

* it is a stock step: the class's ``step`` is torch's ``profile_hook_step`` wrapper
  around a function defined in ``torch.optim`` (a user's own ``step`` may do anything:
  it is traced as Python); the optimizer is the traced one (``ID_MATCH``: the node holds
  it by a weak reference), with no step hooks of its own and no global ones
  (``NO_HOOKS``, read afresh on every call: a hook runs Python the trace would not see);
  no ``closure`` (it runs the forward again);
* it writes the parameters in place (the node mutates; their fakes keep their metadata)
  and nothing else the trace knows: the state tensors and ``param_groups`` are read by
  the real step only.

``opt.zero_grad(set_to_none=True)`` (torch's, the default) is traced as what it does:
``p.grad = None`` for each parameter of each group (`autograd_calls.set_grad`, a
``setattr`` node each), the parameters read through
``opt.param_groups[i]['params'][j]`` under length guards.  ``set_to_none=False`` is
traced as Python (torch's ``zero_grad`` body).

Other backends refuse the step node (``bcfront_opaque_effect``, see
`ir.alias_facts.opaque_effect`): such a graph runs on the eager backend, with a note.
"""

from __future__ import annotations

import sys
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensor

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.node_checks import check_split, note_node
from ..model.sources import AttrSource, ConstSource, ItemSource, Ref
from ..model.values import Const, ObjectV, TensorV, Value
from .autograd_calls import set_grad

_STEP_CODE = torch.optim.Optimizer.profile_hook_step(lambda *a, **k: None).__code__
_ZERO_GRAD = torch.optim.Optimizer.zero_grad


def _code_named(code, qualname):
    """The code object `qualname` nested in `code` (an LR scheduler's step wrapper)."""
    for c in code.co_consts:
        if hasattr(c, "co_qualname"):
            found = c if c.co_qualname == qualname else _code_named(c, qualname)
            if found is not None:
                return found
    return None


_SCHED_CODE = _code_named(
    torch.optim.lr_scheduler.LRScheduler.__init__.__code__,
    "LRScheduler.__init__.<locals>.patch_track_step_called.<locals>.wrap_step.<locals>.wrapper",
)
_STEP_HOOKS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks")
_GLOBAL_HOOKS = ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks")


class OptimizerStep:
    """The target of a step node: ``opt.step()`` on the optimizer held weakly (the guards
    keep the traced one; a collected optimizer fails its ID_MATCH first)."""

    bcfront_opaque_effect = True  # `ir.alias_facts.opaque_effect`: no pure graph holds it

    def __init__(self, opt) -> None:
        self.ref = weakref.ref(opt)
        self.__name__ = f"{type(opt).__name__}.step"
        self.__qualname__ = self.__name__

    def __call__(self, params: tuple) -> None:
        if params and isinstance(params[0], FakeTensor):
            return  # a re-run of the graph on fakes (its alias facts): the real step must not run
        opt = self.ref()
        assert opt is not None, "the optimizer's ID_MATCH guard passed"
        opt.step()

    def __repr__(self) -> str:
        return f"<{self.__name__}>"


def is_step(fn) -> bool:
    """`fn` is torch's hooked step wrapper (``Optimizer.profile_hook_step``), or an LR
    scheduler's wrapper of one (``opt.step`` replaced to set ``opt._opt_called``)."""
    return getattr(fn, "__code__", None) is _STEP_CODE or _sched_optimizer(fn) is not None


def _sched_optimizer(fn):
    """The optimizer whose bound step `fn` wraps, when `fn` is an LR scheduler's wrapper."""
    if _SCHED_CODE is None or getattr(fn, "_wrapped_by_lr_sched", False) is not True:
        return None
    if getattr(fn, "__code__", None) is not _SCHED_CODE:
        return None
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    func = cells["func"].cell_contents if "func" in cells else None
    opt = cells["opt_ref"].cell_contents() if "opt_ref" in cells else None
    ok = getattr(func, "__code__", None) is _STEP_CODE and isinstance(opt, torch.optim.Optimizer)
    return (opt, func) if ok else None


def is_zero_grad(fn) -> bool:
    """`fn` is torch's ``Optimizer.zero_grad`` (its ``torch._disable_dynamo`` wrapper)."""
    return fn is _ZERO_GRAD


def optimizer_step(tx, fv: ObjectV, args: list, kwargs: dict) -> Value:
    """``opt.step()`` as one node (see the module doc)."""
    fn = fv.obj
    sched = _sched_optimizer(fn)
    if sched is not None:  # the scheduler's wrapper (its function guarded: its closure is `opt`)
        src = fv.source
        if not (isinstance(src, AttrSource) and src.attr == "step"):
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_CALL, "an LR scheduler's step wrapper, not as opt.step"
            )
        tx.guard(GuardKind.ID_MATCH, src, fn)
        opt, fn = sched  # `src.base` is `opt` (its ID_MATCH below)
        from ..model.builder import wrap

        args = [wrap(tx, opt, src.base), *args]  # the optimizer's one value in the trace
    if not args or not isinstance(args[0], ObjectV) or not isinstance(args[0].obj, torch.optim.Optimizer):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "an optimizer step without its optimizer")
    optv, opt = args[0], args[0].obj
    if len(args) > 1 or kwargs:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, "opt.step(closure): the closure runs Python")
    inner, nxt = fn, getattr(fn, "__wrapped__", None)
    while nxt is not None:
        inner, nxt = nxt, getattr(nxt, "__wrapped__", None)
    if not (getattr(inner, "__module__", "") or "").startswith("torch.optim."):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{type(opt).__name__}.step is not torch's")
    if optv.source is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "an optimizer made in the trace")
    if any(getattr(opt, h) for h in _STEP_HOOKS):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "an optimizer step hook runs Python")
    module = sys.modules[torch.optim.Optimizer.__module__]
    if any(getattr(module, h) for h in _GLOBAL_HOOKS):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "a global optimizer step hook runs Python")
    tx.guard(GuardKind.ID_MATCH, optv.source, opt)
    tx.guard(GuardKind.NO_HOOKS, optv.source, None, _STEP_HOOKS, example=opt)
    msrc = ConstSource(Ref(module, module.__name__))
    tx.guard(GuardKind.NO_HOOKS, msrc, None, _GLOBAL_HOOKS, example=module)
    params = _params(tx, optv, opt)
    if params is None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL, "optimizer param_groups that are not lists of tensors"
        )
    check_split(tx)
    # its argument, the parameters it writes: the node is ordered after their last use and
    # never folded as input-independent
    target = OptimizerStep(opt)
    args = [tuple(p.node for p in params)]
    tx.graph.add("call", target, args, {}, meta=None, loc=tx.loc(), state=tx.node_state(), mutates=True)
    tx.has_mutation = True  # the parameters, in place
    note_node(tx)
    if sched is not None:
        _note_opt_called(tx, optv)
    return Const(None)


def _note_opt_called(tx, optv: ObjectV) -> None:
    """What the scheduler's wrapper records, ``opt._opt_called = True``, in the trace's view of
    the optimizer: the node's real step sets it when it runs (`OptimizerStep` calls the
    wrapper), so the region writes nothing, but code traced after the step (the scheduler's
    own ``step()``, which warns when it is unset) must read True, as it does natively."""
    tx.set(optv, "overlay", {**optv.overlay, "_opt_called": Const(True)})


def _params(tx, optv: ObjectV, opt) -> list | None:
    """The optimizer's parameters as graph inputs, read through
    ``opt.param_groups[i]['params'][j]`` under length guards (None: not plain lists of tensors)."""
    from ..model.builder import wrap

    groups = opt.param_groups
    if type(groups) is not list or not all(type(g) is dict and type(g.get("params")) is list for g in groups):
        return None
    if not all(isinstance(p, torch.Tensor) for g in groups for p in g["params"]):
        return None
    groups_src = AttrSource(optv.source, "param_groups")
    tx.guard(GuardKind.LENGTH, groups_src, len(groups))
    params = []
    for i, group in enumerate(groups):
        params_src = ItemSource(ItemSource(groups_src, i), "params")
        tx.guard(GuardKind.LENGTH, params_src, len(group["params"]))
        params += [wrap(tx, p, ItemSource(params_src, j)) for j, p in enumerate(group["params"])]
    return params if all(isinstance(p, TensorV) for p in params) else None


def zero_grad(tx, args: list, kwargs: dict) -> Value | None:
    """``opt.zero_grad(set_to_none=True)``: ``p.grad = None`` for each parameter (traced);
    None: not this case (the caller traces torch's body)."""
    if not args or not isinstance(args[0], ObjectV) or len(args) > 2 or set(kwargs) - {"set_to_none"}:
        return None
    optv, opt = args[0], args[0].obj
    to_none = args[1] if len(args) > 1 else kwargs.get("set_to_none", Const(True))
    if not (isinstance(to_none, Const) and to_none.value is True) or optv.source is None:
        return None
    params = _params(tx, optv, opt)
    if params is None or not all(p.fake.requires_grad for p in params):
        return None  # eager's body decides (e.g. a grad on a tensor without requires_grad)
    for pv in params:
        set_grad(tx, pv, Const(None))
    return Const(None)


def step_root(fn):
    """``capture(opt.step)``: `fn` as the root function.  torch's hooked step wrapper (or an
    LR scheduler's wrapper of it) is replaced by a small function calling ``opt.step(...)``,
    which the trace meets as a call: one node (`optimizer_step`), guarded as inside any
    captured function, instead of stepping into the wrapper's profiler calls.  Anything
    else is returned as it is."""
    opt = getattr(fn, "__self__", None)
    if not (isinstance(opt, torch.optim.Optimizer) and getattr(fn, "__code__", None) is _STEP_CODE):
        sched = _sched_optimizer(fn)
        if sched is None:
            return fn
        opt = sched[0]

    def step(*args, **kwargs):
        return opt.step(*args, **kwargs)

    step.__qualname__ = step.__name__ = f"{type(opt).__name__}.step"
    return step
