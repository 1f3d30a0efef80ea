"""Torch calls that ask rather than compute: state queries, pure helpers, ``torch._assert``.

A torch call with no tensor argument has nothing to put in a graph.  What it
answers is either fixed for the whole capture (``torch.jit.is_scripting()``,
``torch.promote_types(a, b)``: folded), a piece of torch's global state that
can change between calls (``torch._C._is_tracing()``, the number of threads:
folded, with a GLOBAL_STATE guard that asks again on every call), or the
symbolic state the trace keeps itself (grad mode, inference mode, autocast:
read from ``tx.state``).  A torch *Python* function without tensor arguments
is interpreted like user code: its body reads torch's flags as guarded
globals (``torch.compiler.is_exporting`` returns ``_is_exporting_flag``) and
reaches the C calls that do the work, which meet these rules in turn.  A C
function not known here is still a break: calling it at capture time could
have effects, and its answer might differ on the next call.

``torch._assert(cond, msg)`` on a constant condition raises (or not) in the
trace; on a tensor it is a graph op (`assert_tensor`) that raises eager's
AssertionError when the condition is false: never dropped.
"""

from __future__ import annotations

import sys
import types

import torch

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.node_checks import note_node
from ..model.sources import AttrSource, ConstSource, Ref
from ..model.values import Const, ObjectV, TensorV, Value
from . import deferred_calls, dispatch
from .folding import NotConst, as_python, as_symbolic, fold_model


def assert_tensor(condition, message):
    """``torch._assert`` on a tensor, as a graph op: what eager does (``assert cond, msg``)."""
    if not condition:
        raise AssertionError(message)


def _bind(name, args, kwargs, params):
    """The values of `params` (name -> default) for a call, positional then keyword."""
    out = dict(zip(params, args))
    for k, v in kwargs.items():
        if k not in params or k in out:
            raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{name}() with argument {k!r}")
        out[k] = v
    for k, d in params.items():
        if k not in out:
            if d is _REQUIRED:
                raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{name}() without {k!r}")
            out[k] = Const(d)
    return out


_REQUIRED = object()


def _assert(tx, args, kwargs):
    p = _bind("torch._assert", args, kwargs, {"condition": _REQUIRED, "message": _REQUIRED})
    cond, msg = p["condition"], p["message"]
    if not isinstance(cond, TensorV):
        # a constant or a Python object: the Python body (`if not condition: raise`)
        return dispatch.inline_call(tx, ObjectV(torch._assert), args, kwargs)
    if cond.ptype is not torch.Tensor and cond.ptype is not torch.nn.Parameter:
        raise UnsupportedError(BreakReason.TENSOR_SUBCLASS, "torch._assert on a tensor subclass")
    try:
        message = as_python(msg)
    except NotConst:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ARGUMENT, "torch._assert with a computed message"
        ) from None
    tx.graph.add(
        "call",
        assert_tensor,
        [cond.node, message],
        {},
        meta=None,
        loc=tx.loc(),
        state=tx.node_state(),
        mutates=False,
    )
    note_node(tx)
    return Const(None)


# -- global state ------------------------------------------------------------------------------


def state_query(key: str, fn):
    """A zero-argument reader of torch state: its value now, guarded (GLOBAL_STATE `key`)."""

    def m(tx, args, kwargs):
        if args or kwargs:
            raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{fn.__name__}() with arguments")
        tx.torch_env()
        try:
            value = fn()
        except Exception as e:  # noqa: BLE001 - a build without the feature raises as eager would
            raise as_symbolic(e) from None
        tx.guard(GuardKind.GLOBAL_STATE, None, value, key)
        return Const(value)

    return m


def _is_grad_enabled(tx, args, kwargs):
    tx.torch_env()
    return Const(tx.state.grad)


def _is_inference_mode_enabled(tx, args, kwargs):
    tx.torch_env()
    return Const(tx.state.inference)


def _get_default_dtype(tx, args, kwargs):
    tx.torch_env()
    tx.guard(GuardKind.GLOBAL_STATE, None, torch.get_default_dtype(), "dtype")
    return Const(torch.get_default_dtype())


def _get_tracing_state(tx, args, kwargs):
    tx.torch_env()
    if torch._C._is_tracing():
        raise UnsupportedError(BreakReason.TORCH_GLOBAL_EFFECT, "capture under torch.jit.trace")
    tx.guard(GuardKind.GLOBAL_STATE, None, False, "jit_tracing")
    return Const(None)


# -- autocast, as the trace's symbolic state has it (entry: none, guarded) ----------------------


def _device_arg(name, args, kwargs, default):
    p = _bind(name, args, kwargs, {"device_type": default})
    try:
        dev = as_python(p["device_type"])
    except NotConst:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{name}() of a computed device") from None
    if not isinstance(dev, str):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{name}() of {dev!r}")
    return dev


def _innermost(tx, dev):
    for entry in reversed(tx.state.autocast):
        if entry[0] == dev:
            return entry
    return None


def autocast_enabled(name, default=None):
    def m(tx, args, kwargs):
        tx.torch_env()
        if default is not None and (args or kwargs):
            raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{name}() with arguments")
        dev = default or _device_arg(name, args, kwargs, "cuda")
        entry = _innermost(tx, dev)
        return Const(bool(entry[2]) if entry is not None else False)

    return m


def autocast_dtype(name, default=None):
    def m(tx, args, kwargs):
        tx.torch_env()
        if default is not None and (args or kwargs):
            raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"{name}() with arguments")
        dev = default or _device_arg(name, args, kwargs, _REQUIRED)
        entry = _innermost(tx, dev)
        # outside any autocast region the default is what an autocast(dev) would take (as its ctor)
        return Const(entry[1] if entry is not None else torch.get_autocast_dtype(dev))

    return m


def _autocast_cache(tx, args, kwargs):
    tx.torch_env()
    entries = tx.state.autocast
    return Const(entries[-1][3] if entries else torch.is_autocast_cache_enabled())


def _any_autocast(tx, args, kwargs):
    tx.torch_env()
    return Const(any(e[2] for e in tx.state.autocast))


# -- the __torch_function__ protocol's "does anyone override?" checks ------------------------------

_DISABLED_TF = torch._C._disabled_torch_function_impl


def _overrides(tx, v: Value) -> bool:
    """Whether `v`'s type overrides ``__torch_function__`` (what has_torch_function asks)."""
    if isinstance(v, TensorV):
        return v.ptype is not torch.Tensor and v.ptype is not torch.nn.Parameter
    if isinstance(v, ObjectV):
        return torch._C._has_torch_function_unary(v.obj)
    try:
        return torch._C._has_torch_function_unary(as_python(v))
    except NotConst:
        pass
    tf = getattr(v.python_type(), "__torch_function__", None)
    return tf is not None and getattr(tf, "__func__", tf) is not _DISABLED_TF


def _has_torch_function(tx, args, kwargs):
    if len(args) != 1 or kwargs:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, "has_torch_function() of several arguments")
    return Const(any(_overrides(tx, v) for v in dispatch.to_list(tx, args[0])))


def _has_torch_function_args(tx, args, kwargs):
    return Const(any(_overrides(tx, v) for v in args))


def module_flag(module, name: str):
    """A query that returns a module's global flag (the flag read again by a guard)."""

    def m(tx, args, kwargs):
        if args or kwargs:
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_ARGUMENT, f"{module.__name__}.{name} with arguments"
            )
        value = getattr(module, name)
        src = AttrSource(ConstSource(Ref(module, module.__name__)), name)
        tx.guard(GuardKind.CONSTANT_MATCH, src, value)
        return Const(value)

    return m


def _const_result(value):
    return lambda tx, args, kwargs: Const(value)


def _fold_call(fn):
    def m(tx, args, kwargs):
        return fold_model(fn)(tx, args, kwargs)

    return m


def _resolve(path):
    obj = torch
    for p in path.split("."):
        obj = getattr(obj, p)
    return obj


SPECIAL: dict = {
    torch._assert: _assert,
    torch.is_grad_enabled: _is_grad_enabled,
    torch.get_default_dtype: _get_default_dtype,
    torch._C._get_tracing_state: _get_tracing_state,
    torch.is_inference_mode_enabled: _is_inference_mode_enabled,
    torch.cuda.is_available: _fold_call(torch.cuda.is_available),
    torch.is_autocast_enabled: autocast_enabled("is_autocast_enabled"),
    torch.is_autocast_cache_enabled: _autocast_cache,
    torch._C._is_any_autocast_enabled: _any_autocast,
    torch.get_autocast_dtype: autocast_dtype("get_autocast_dtype"),
    torch._C._has_torch_function: _has_torch_function,
    torch._C._has_torch_function_unary: _has_torch_function_args,
    torch._C._has_torch_function_variadic: _has_torch_function_args,
    # pure functions of constant arguments
    torch.promote_types: _fold_call(torch.promote_types),
    torch.can_cast: _fold_call(torch.can_cast),
}
# the legacy per-device spellings
for _name, _dev in (("cpu", "cpu"), ("gpu", "cuda"), ("xla", "xla"), ("ipu", "ipu")):
    for _path, _model in (
        ("is_autocast_%s_enabled", autocast_enabled),
        ("get_autocast_%s_dtype", autocast_dtype),
    ):
        _fn = getattr(torch, _path % _name, None)
        if _fn is not None:
            SPECIAL[_fn] = _model(_path % _name, _dev)
# torch state a guard reads again on every call (keys of `model.guards.STATE_NAMES`)
STATE_QUERIES = {
    "jit_tracing": "_C._is_tracing",
    "anomaly": "is_anomaly_enabled",
    "anomaly_nan": "is_anomaly_check_nan_enabled",
    "deterministic": "_C._get_deterministic_algorithms",
    "num_threads": "get_num_threads",
    "num_interop_threads": "get_num_interop_threads",
    "cuda_capturing": "_C._cuda_isCurrentStreamCapturing",
    "dispatch_mode": "_C._len_torch_dispatch_stack",  # (a capture under a mode breaks)
}
for _key, _path in STATE_QUERIES.items():
    try:
        _fn = _resolve(_path)
    except AttributeError:
        continue
    SPECIAL[_fn] = state_query(_key, _fn)
# is_fx_tracing() logs a deprecation once (an lru_cache'd helper) and returns the flag
_fx = sys.modules.get("torch.fx._symbolic_trace")
if _fx is not None and hasattr(_fx, "_is_fx_tracing_flag"):
    SPECIAL[_fx.is_fx_tracing] = module_flag(_fx, "_is_fx_tracing_flag")


def _api_usage_log(tx, args, kwargs):
    """``torch._C._log_api_usage_once(name)`` (torchvision calls it in every forward): a
    call on a known name, made after the region (`deferred_calls`)."""
    try:
        names = [as_python(a) for a in args]
    except NotConst:
        names = None
    if kwargs or names is None or len(names) != 1 or type(names[0]) is not str:
        raise UnsupportedError(BreakReason.UNSUPPORTED_TORCH_CALL, "torch._C._log_api_usage_once on a value")
    return deferred_calls.record(tx, torch._C._log_api_usage_once, (names[0],))


SPECIAL[torch._C._log_api_usage_once] = _api_usage_log


# "Is this being compiled?": True inside a capture unless the `compiling` option says
# otherwise (bcfront/options.py), so libraries take the paths written for torch.compile.
def _is_compiling(tx, args, kwargs):
    return Const(tx.options.compiling)


_COMPILING = (
    "compiler.is_compiling",
    "compiler.is_dynamo_compiling",
    "_utils.is_compiling",
)
# torch._dynamo's are registered once it is imported (by the user's code): resolving them
# here would import Dynamo (a second and a deep stack) on bcfront's first tensor capture
_DYNAMO_COMPILING = ("_dynamo.is_compiling", "_dynamo.external_utils.is_compiling")
_dynamo_registered = False


def _register(names) -> None:
    for name in names:
        try:
            SPECIAL[_resolve(name)] = _is_compiling
        except AttributeError:
            pass


_register(_COMPILING)


def special_for(fn):
    """The model of torch callable `fn` in `SPECIAL`, or None."""
    global _dynamo_registered
    special = SPECIAL.get(fn)
    if special is None and not _dynamo_registered and "torch._dynamo" in sys.modules:
        _dynamo_registered = True
        _register(_DYNAMO_COMPILING)
        special = SPECIAL.get(fn)
    return special


def call_without_tensors(tx, fn, args: list, kwargs: dict) -> Value:
    """A torch call with no tensor argument that is not a factory (see the module doc)."""
    if isinstance(fn, types.FunctionType):
        return dispatch.inline_call(tx, ObjectV(fn), args, kwargs)
    raise UnsupportedError(
        BreakReason.UNSUPPORTED_TORCH_CALL,
        f"torch.{getattr(fn, '__name__', fn)} without tensor arguments is not a known factory or query",
    )
