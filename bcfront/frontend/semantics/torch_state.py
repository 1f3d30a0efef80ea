"""Global torch state in the trace: grad mode, inference mode and autocast as context managers.

``torch.no_grad()``, ``torch.enable_grad()``, ``torch.set_grad_enabled(b)``,
``torch.inference_mode()`` and ``torch.autocast(...)`` are `StateCMV` values; entering
and exiting them changes the symbolic `tx.state`, which every node records.  A manager
still entered at a break is rebuilt entered in the code after it (`rebuild_state_cm`).
"""

from __future__ import annotations

import dataclasses

import torch

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import (
    Const,
    MethodV,
    ObjectV,
    StateCMV,
    Value,
)
from .registry import MODELS


def _set_state(tx, **changes) -> None:
    tx.set(tx, "state", dataclasses.replace(tx.state, **changes))


def _grad_ctor(mode):
    def c(tx, clsv, args, kwargs):
        tx.torch_env()
        return StateCMV("grad", mode, clsv.obj)

    return c


def _set_grad_ctor(tx, clsv, args, kwargs):
    tx.torch_env()
    mode = bool(_const(args[0] if args else kwargs["mode"], "set_grad_enabled mode"))
    cm = StateCMV("set_grad", (mode, tx.state.grad), clsv.obj)
    _set_state(tx, grad=mode)  # set_grad_enabled(mode) switches on construction
    return cm


def _inference_ctor(tx, clsv, args, kwargs):
    tx.torch_env()
    mode = bool(_const(args[0] if args else kwargs.get("mode", Const(True)), "inference_mode mode"))
    if not mode and tx.entry_state.inference:
        # the eager backend's fast path would run the block's ops in the caller's inference mode
        raise UnsupportedError(
            BreakReason.INFERENCE_MODE, "inference_mode(False) inside a caller's inference_mode"
        )
    return StateCMV("inference", mode, clsv.obj)


def _autocast_ctor(default_device=None):
    def c(tx, clsv, args, kwargs):
        tx.torch_env()
        params = dict(kwargs)
        names = ["device_type", "dtype", "enabled", "cache_enabled"]
        if default_device is not None:
            names = names[1:]
            params.setdefault("device_type", Const(default_device))
        for n, a in zip(names, args):
            params[n] = a
        dev = _const(params["device_type"], "autocast device_type")
        dtype = _const(params.get("dtype", Const(None)), "autocast dtype")
        enabled = bool(_const(params.get("enabled", Const(True)), "autocast enabled"))
        cache = _const(params.get("cache_enabled", Const(None)), "autocast cache_enabled")
        if dtype is None:
            dtype = torch.get_autocast_dtype(dev)
        cache = torch.is_autocast_cache_enabled() if cache is None else bool(cache)
        return StateCMV("autocast", (dev, dtype, enabled, cache), clsv.obj)

    return c


def _const(v: Value, what: str):
    if isinstance(v, Const):
        return v.value
    raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{what} must be a constant")


def cm_enter(tx, args, kwargs):
    cm = args[0]
    if cm.kind == "grad":
        tx.set(cm, "saved", cm.saved + [tx.state.grad])
        _set_state(tx, grad=cm.args)
    elif cm.kind == "autocast":
        tx.set(cm, "saved", cm.saved + [tx.state.autocast])
        _set_state(tx, autocast=tx.state.autocast + (cm.args,))
    elif cm.kind == "inference":  # inference_mode(m) sets grad mode to (not m)
        tx.set(cm, "saved", cm.saved + [(tx.state.grad, tx.state.inference)])
        _set_state(tx, grad=not cm.args, inference=cm.args)
    return Const(None)


def cm_exit(tx, args, kwargs):
    cm = args[0]
    if cm.kind == "grad":
        _set_state(tx, grad=cm.saved[-1])
        tx.set(cm, "saved", cm.saved[:-1])
    elif cm.kind == "set_grad":
        _set_state(tx, grad=cm.args[1])
    elif cm.kind == "autocast":
        _set_state(tx, autocast=cm.saved[-1])
        tx.set(cm, "saved", cm.saved[:-1])
    elif cm.kind == "inference":
        grad, inference = cm.saved[-1]
        _set_state(tx, grad=grad, inference=inference)
        tx.set(cm, "saved", cm.saved[:-1])
    return Const(None)


class _CMMethod:
    def __init__(self, name):
        self.__name__ = self.__qualname__ = name
        self.rebuild_attr = name


def rebuild_state_cm(rb, cm: StateCMV) -> str:
    """Generated code re-creating a torch state manager as it is at a graph break."""
    ns = rb.ns
    set_grad = ns.const(torch._C._set_grad_enabled, "set_grad_enabled")
    cls = ns.const(cm.cls)
    if cm.kind == "grad":
        if cm.saved:
            rb.emit(f"{set_grad}({cm.saved[-1]!r})")
        name = rb.temp(f"{cls}()", cm, "cm")
        if cm.saved:
            rb.emit(f"{name}.__enter__()")
        return name
    if cm.kind == "set_grad":
        mode, prev = cm.args
        rb.emit(f"{set_grad}({prev!r})")
        return rb.temp(f"{cls}({mode!r})", cm, "cm")
    if cm.kind == "inference":
        # entering it here (the region runs in the entry state) restores the traced state;
        # the native `with` exit restores the caller's
        name = rb.temp(f"{cls}({cm.args!r})", cm, "cm")
        if cm.saved:
            rb.emit(f"{name}.__enter__()")
        return name
    if cm.kind == "autocast":
        dev, dtype, enabled, cache = cm.args
        name = rb.temp(
            f"{cls}({dev!r}, dtype={ns.const(dtype)}, enabled={enabled!r}, cache_enabled={cache!r})", cm, "cm"
        )
        if cm.saved:
            rb.emit(f"{name}.__enter__()")
        return name
    raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, f"torch context manager {cm.kind}")


CM_ENTER, CM_EXIT = _CMMethod("__enter__"), _CMMethod("__exit__")


def state_cm_attr(tx, cm: StateCMV, name: str) -> Value:
    if name == "__enter__":
        return MethodV(ObjectV(CM_ENTER), cm)
    if name == "__exit__":
        return MethodV(ObjectV(CM_EXIT), cm)
    raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"{cm.cls.__name__}.{name}")


STATE_CONSTRUCTORS = {
    torch.no_grad: _grad_ctor(False),
    torch.enable_grad: _grad_ctor(True),
    torch.set_grad_enabled: _set_grad_ctor,
    torch.autocast: _autocast_ctor(),
    torch.inference_mode: _inference_ctor,
}
for _path, _dev in (("cuda.amp", "cuda"), ("cpu.amp", "cpu")):
    _mod = torch
    try:
        for _p in _path.split("."):
            _mod = getattr(_mod, _p)
        STATE_CONSTRUCTORS[_mod.autocast] = _autocast_ctor(_dev)
    except AttributeError:
        pass


def _register_models() -> None:
    MODELS[CM_ENTER] = cm_enter
    MODELS[CM_EXIT] = cm_exit


_register_models()
