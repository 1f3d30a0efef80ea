"""The entry of a captured FSDP2 module: ``Module.__call__`` natively, its forward captured.

``fully_shard`` makes a module's call three parts: FSDP's forward pre-hook (all-gather the
parameters into unsharded ``nn.Parameter`` objects whose storage it re-allocates in place,
swap them onto the module, register the post-backward hooks on the inputs), the forward,
and the post-hook (free the unsharded storage, ``resize_(0)``, register the pre-backward
hooks on the outputs).  A region that began before the pre-hook could neither read nor
guard the parameters, so the entry of such a module does not trace its call: it calls the
module natively -- ``Module.__call__`` with FSDP's hooks (and any other) as eager runs them
-- with ``forward`` looked up, for that call only, as a capture of the module's forward
(`FSDPCall`).  That capture runs after the pre-hook, so its guards and fake tensors see
the unsharded parameters: the same objects on every call, full shape, storage allocated.
Its graph computes on them as eager does, so autograd saves exactly what eager saves (the
parameters, whose storage FSDP later frees and refills in place), and the backward hooks,
the all-gathers and the reduce-scatters stay FSDP's own.  A nested FSDP module called in
that forward is one node of its graph that calls the module through its own capture
(`semantics.fsdp_calls`): one graph per module, the nested one run inside the node.

The entry's guard checks only what decides this path: the module, its class, and that its
class still has the traced forward and the instance none of its own; everything the
forward reads is guarded by the forward's capture.  The module is held weakly.
"""

from __future__ import annotations

import types
import weakref

from ..semantics.fsdp_calls import is_fsdp_module
from .entry import Entry

_NONE = object()


class FSDPCall:
    """``module(*args, **kwargs)`` with ``module.forward`` being `body` during the call."""

    def __init__(self, module, fn, body) -> None:
        self.ref, self.cls, self.fn, self.body = weakref.ref(module), type(module), fn, body

    def guard(self, module, /, *args, **kwargs) -> bool:
        own = module.__dict__.get("forward", _NONE)
        return (
            module is self.ref()
            and type(module) is self.cls
            and self.cls.forward is self.fn
            and (own is _NONE or own is self.body)  # (ours: a recursive call)
        )

    def __call__(self, module, /, *args, **kwargs):
        d = module.__dict__
        prev = d.get("forward", _NONE)
        d["forward"] = self.body  # read by Module._call_impl after the pre-hooks
        try:
            return module(*args, **kwargs)
        finally:
            if prev is _NONE:
                d.pop("forward", None)
            else:
                d["forward"] = prev


def fsdp_entry(cf, root, args: tuple) -> Entry | None:
    """The entry of `cf` (a module's capture, `root` its call wrapper) when the module is
    fully_shard'ed with a Python forward; None otherwise (it is traced as usual)."""
    module = args[0] if args and root is cf.call_object else None
    if module is None or module is not getattr(cf, "module_root", None) or not is_fsdp_module(module):
        return None
    fn = getattr(type(module), "forward", None)
    if not isinstance(fn, types.FunctionType) or "forward" in module.__dict__:
        return None
    body = type(cf)(
        types.MethodType(fn, module),
        backend=cf.backend,  # capture's class, as `breaks.CallSite` makes it
        fullgraph=cf.fullgraph,
        recompile_limit=cf.recompile_limit,
        **cf.options,
    )
    call = FSDPCall(module, fn, body)
    name = type(module).__qualname__
    return Entry(
        guard=call.guard,
        region=call,
        notes=[
            (
                f"{name} is fully_shard'ed: Module.__call__ runs natively (FSDP's hooks, its "
                f"all-gathers and reduce-scatters), with {fn.__qualname__} captured on its own"
            )
        ],
        guard_source=f"# {name}: the module itself, its class and its class's forward",
        region_source=f"# {name}(*args): Module.__call__ natively, forward = capture of {fn.__qualname__}",
        children=[body],
    )
