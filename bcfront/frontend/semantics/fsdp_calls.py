"""Calling an FSDP2 module (``fully_shard``) in traced code: one opaque node of the graph.

FSDP's forward pre-hook all-gathers the module's parameters into unsharded ``nn.Parameter``
objects (their storage re-allocated in place) and swaps them onto the module; its post-hook
frees that storage again and registers the backward hooks (the reduce-scatter).  A graph
that inlined the call could read neither the parameters (sharded DTensors before the hook,
empty storage after) nor guard them, so the graph keeps the call itself: one ``call``
node (`FSDPModuleCall`) that, at run time, calls the module through its own capture
(`regions.fsdp_entry`): ``Module.__call__`` natively, FSDP's hooks as eager runs them
(all-gather before, reshard after, the autograd hooks of the backward), the forward
captured in its own graph.  The node's result is the real output, so autograd records
exactly what eager records.

The trace learns the outputs' metadata by running the module's ``forward`` once on fake
tensors with fakes of the unsharded parameters (``FSDPParam._orig_size``, the original
dtype) and of its buffers swapped onto the module for that run only, FSDP's hooks not run
(as `autograd_functions` runs a Function's forward on fakes).  Guarded: the module by
identity, its class's ``forward`` and no instance ``forward``, its hook dicts' keys (FSDP's
two hooks and no other), its ``training`` flag; the node checks at run time that the real
outputs have the traced shapes, dtypes and ``requires_grad`` (a clear error otherwise).

The call stays a reported break (``module-hooks``: the module runs through its own capture,
`regions.breaks.CallSite`) when the node cannot stand for it, with the reason: a module
holding fully_shard'ed modules of its own (their hooks would run on the fakes), mixed
precision casts, hooks other than FSDP's, a forward that fails on fakes or changes the
module's attributes, outputs other than tensors (or tuples and lists of them), or a trace
with no capture to call it through.
"""

from __future__ import annotations

import sys
import types
import weakref
from typing import Any, NoReturn

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ...timing import NativeOps
from ..model.builder import guard_class_lookup
from ..model.guard_kinds import GuardKind
from ..model.node_checks import check_split, note_node
from ..model.sources import AttrSource
from ..model.values import TensorV, Value
from .classes import source_of

_HOOKED = ("_forward_pre_hooks", "_forward_hooks")  # FSDP's own: its pre- and post-forward
_HOOKS_NONE = (  # hook dicts that must stay empty: what the fake run does not model
    "_backward_hooks",
    "_backward_pre_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
)


def is_fsdp_module(obj) -> bool:
    """Whether `obj` is a module ``fully_shard`` was applied to."""
    if "torch.distributed.fsdp" not in sys.modules:
        return False  # (no FSDP module can exist yet; keeps the import out of plain runs)
    from torch.distributed.fsdp import FSDPModule

    return isinstance(obj, FSDPModule)


class Refused(Exception):
    """Why the call cannot be one node of the graph (it breaks to its own capture)."""


def call_fsdp_module(tx, mv, args: list, kwargs: dict) -> Value:
    """``module(*args, **kwargs)`` of an FSDP module: the graph's node (see the module doc),
    or the break to the module's own capture with the reason."""
    try:
        return _call_node(tx, mv, args, kwargs)
    except Refused as e:
        why = str(e)  # (raised below, outside the handler: no context holding the frames)
    call_fsdp_break(type(mv.obj), why)


def call_fsdp_break(cls: type, why: str = "") -> NoReturn:
    """The break at ``module(*args)`` of an FSDP module: its call runs through its own
    capture (``own_capture``, read by `regions.breaks`)."""
    err = UnsupportedError(
        BreakReason.MODULE_HOOKS,
        f"{cls.__qualname__} is fully_shard'ed: FSDP's hooks run natively around its forward, "
        f"captured on its own{f' ({why})' if why else ''}",
    )
    err.own_capture = True  # type: ignore[attr-defined]
    raise err


# -- the node ----------------------------------------------------------------------------------


def _call_node(tx, mv, args: list, kwargs: dict) -> Value:
    from .torch_calls import add_call, convert, wrap_output  # (imports torch: only when FSDP is used)

    mod, cls = mv.obj, type(mv.obj)
    state, groups = _fsdp_groups(mod)
    _check_callable(mod, cls, state)
    site = tx.__dict__.get("own_capture")  # `regions.breaks.CallSite`, set by the driver
    if site is None:
        raise Refused("this trace has no capture to call it through")
    try:
        conv = [convert(a) for a in args]
        kconv = {k: convert(v) for k, v in kwargs.items()}
    except UnsupportedError as e:
        raise Refused(str(e)) from None
    try:
        check_split(tx)
    except UnsupportedError as e:  # a split before this node: the call still runs through
        e.own_capture = True  # type: ignore[attr-defined]  # its own capture (`regions.breaks`)
        raise
    env = tx.torch_env()
    fargs, fkwargs = [c[0] for c in conv], {k: c[0] for k, c in kconv.items()}
    out = env.run(fake_forward, [mod, groups, env.mode, fargs, fkwargs], {}, tx.state)
    capture = site(mod)
    if capture is mod:  # (the capture of this very module, called in its own forward)
        raise Refused("it is the module being captured")
    src = source_of(mv)
    tx.guard(GuardKind.ID_MATCH, src, mod)
    guard_class_lookup(tx, cls, "forward")
    tx.guard(GuardKind.NOT_PRESENT, AttrSource(src, "__dict__"), None, "forward")
    tx.guard(GuardKind.NO_HOOKS, src, None, _HOOKS_NONE, example=mod)
    for name in (*_HOOKED, "_forward_pre_hooks_with_kwargs"):
        tx.guard(GuardKind.DICT_KEYS, AttrSource(src, name), list(getattr(mod, name)))
    tx.guard(GuardKind.CONSTANT_MATCH, AttrSource(src, "training"), mod.training)
    group = _group_text(groups)
    target = FSDPModuleCall(mod, capture, out, src.readable(), group)
    node = add_call(tx, "call", target, conv, kconv, out)
    tx.has_mutation = True  # (FSDP's state, the module's forward: opaque, as DDP's hook nodes)
    tx.notes.append(
        f"{src.readable()} ({cls.__qualname__}) is fully_shard'ed: its call is one opaque node "
        f"of the graph ({target.__name__}), running Module.__call__ natively: FSDP's all-gather "
        f"before and reshard after the forward, on process group {group}, and its autograd hooks "
        f"(the reduce-scatter in backward); its forward runs through its own capture"
    )
    note_node(tx)
    return wrap_output(tx, node, out, [a for a in args if isinstance(a, TensorV)])


def _fsdp_groups(mod) -> tuple[Any, list]:
    """The module's FSDP state and its parameter groups."""
    state = mod._get_fsdp_state()
    groups = getattr(state, "_fsdp_param_groups", None)
    if groups is None:  # (torch before grouped fully_shard: one group or None)
        one = getattr(state, "_fsdp_param_group", None)
        groups = [one] if one is not None else []
    return state, list(groups)


def _check_callable(mod, cls, state) -> None:
    """Refuse what the fake run of the forward would not model."""
    fn = getattr(cls, "forward", None)
    if not isinstance(fn, types.FunctionType) or "forward" in mod.__dict__:
        raise Refused("its forward is not its class's Python function")
    for sub in mod.modules():
        if sub is not mod and is_fsdp_module(sub):
            raise Refused("it holds fully_shard'ed modules of its own, whose hooks a fake run would call")
    mp = state._mp_policy
    if mp.param_dtype is not None or mp.output_dtype is not None:
        raise Refused("mixed precision casts its inputs, parameters or outputs")
    for name in _HOOKS_NONE:
        if getattr(mod, name, None):
            raise Refused(f"it has {name.strip('_').replace('_', ' ')}")
    for name in _HOOKED:
        for h in getattr(mod, name).values():
            if getattr(h, "__self__", None) is not state:
                raise Refused("it has forward hooks other than FSDP's")


def _group_text(groups: list) -> str:
    """The process group(s) FSDP communicates on: name and size."""
    out = []
    for g in groups:
        pg = g.mesh_info.mesh.get_group()
        out.append(f"'{pg.group_name}' ({pg.size()} rank{'s' if pg.size() != 1 else ''})")
    return ", ".join(dict.fromkeys(out)) or "none (no parameters)"


def fake_forward(mod, groups: list, mode, args: list, kwargs: dict):
    """``type(mod).forward(mod, *args, **kwargs)`` on fakes of the unsharded parameters and
    of the buffers (fresh ones of `mode`), swapped onto the module for this run only;
    FSDP's hooks do not run.  Raises `Refused` where the fake run cannot stand for the
    call (it fails, changes the module's attributes, returns other than tensors)."""
    import torch

    managed: dict[tuple[int, str], Any] = {}
    for g in groups:
        for fp in g.fsdp_params:
            info = fp._module_info
            for m, n in ((info.module, info.param_name), *zip(info.shared_modules, info.shared_param_names)):
                managed[(id(m), n)] = fp

    def fresh(shape, stride, dtype, device, requires_grad):
        with mode:
            t = torch.empty_strided(shape, stride, dtype=dtype, device=device)
        return t.requires_grad_(requires_grad) if requires_grad else t

    swaps, before = [], []
    for m in mod.modules():
        before.append((m, dict(m.__dict__)))
        for kind in ("_parameters", "_buffers"):
            d = m.__dict__[kind]
            for n, t in d.items():
                if t is None:
                    continue
                fp = managed.get((id(m), n)) if kind == "_parameters" else None
                if fp is not None:
                    fake = fresh(
                        fp._orig_size,
                        fp._contiguous_orig_stride,
                        fp.sharded_param.dtype,
                        fp.device,
                        fp.sharded_param.requires_grad,
                    )
                else:
                    fake = fresh(t.shape, t.stride(), t.dtype, t.device, t.requires_grad)
                swaps.append((d, n, t))
                d[n] = fake
    try:
        out = type(mod).forward(mod, *args, **kwargs)
    except Refused:
        raise
    except Exception as e:  # noqa: BLE001 - reads values, a C extension...: the break runs it
        raise Refused(f"its forward failed on fake tensors: {type(e).__name__}: {e}") from None
    finally:
        for d, n, t in swaps:
            d[n] = t
    changed = [
        m
        for m, d in before
        if m.__dict__.keys() != d.keys()
        or any(m.__dict__[k] is not v for k, v in d.items() if k not in ("_parameters", "_buffers"))
    ]
    for m, d in before:  # undo what the fake run set (it runs again, for real)
        m.__dict__.clear()
        m.__dict__.update(d)
    if changed:
        raise Refused(f"its forward changes the attributes of {type(changed[0]).__qualname__}")
    if not _tensors_only(out):
        raise Refused("its forward returns other than tensors, or tuples and lists of them")
    return out


def _tensors_only(out) -> bool:
    import torch

    if isinstance(out, (tuple, list)):
        return all(isinstance(x, torch.Tensor) for x in out)
    return isinstance(out, torch.Tensor)


def _kind(out) -> type | None:
    """The container of the outputs: tuple, list, or None for one tensor."""
    return type(out) if isinstance(out, (tuple, list)) else None


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _described(t) -> tuple:
    """What the node promises of an output: static sizes (None where symbolic), dtype,
    device, requires_grad."""
    from ...ir.fake import static_parts

    return (static_parts(t.shape), t.dtype, t.device, t.requires_grad)


class FSDPModuleCall:
    """The target of the node calling an FSDP module: ``capture(*args, **kwargs)``, the
    module's own capture (``Module.__call__`` natively, FSDP's hooks in it).  Holds the
    module weakly (the ID_MATCH guard keeps the traced one)."""

    bcfront_opaque_effect = True  # `ir.alias_facts.opaque_effect`: no pure graph holds it

    def __init__(self, mod, capture, out, where: str, group: str) -> None:
        self.ref, self.capture, self.group = weakref.ref(mod), capture, group
        self.kind = _kind(out)
        self.expected = [_described(t) for t in _flat(out)]
        self.__name__ = f"fsdp_call[{type(mod).__qualname__} {where}, group {group}]"
        self.__qualname__ = self.__name__
        self.__module__ = ""  # (printed by its name alone)

    def __call__(self, /, *args, **kwargs):
        from .collectives import on_fakes  # (imports torch: not at this module's import)

        if on_fakes([a for a in args if hasattr(a, "shape")]):  # a re-run on fakes (alias facts)
            mod = self.ref()
            assert mod is not None, "the module's ID_MATCH guard passed"
            from torch._guards import detect_fake_mode

            mode = detect_fake_mode(args)
            return fake_forward(mod, _fsdp_groups(mod)[1], mode, list(args), kwargs)
        with NativeOps():  # (FSDP's hooks: native ops, the forward's graph nested in them)
            out = self.capture(*args, **kwargs)
        self._check(out)
        return out

    def _check(self, out) -> None:
        got = _flat(out) if _tensors_only(out) else None
        if got is not None and _kind(out) is self.kind and len(got) == len(self.expected):
            bad = [
                (d, w)
                for d, w in zip((_described(t) for t in got), self.expected)
                if d[1:] != w[1:] or any(x is not None and x != y for x, y in zip(w[0], d[0]))
            ]
            if not bad:
                return
        raise RuntimeError(
            f"bcfront: {self.__name__} returned outputs other than the fake run of its forward "
            f"traced ({[_described(t) for t in got] if got is not None else type(out)} instead of "
            f"{self.expected}); the captured graph cannot continue on them"
        )

    def __repr__(self) -> str:
        return f"<{self.__name__}>"
