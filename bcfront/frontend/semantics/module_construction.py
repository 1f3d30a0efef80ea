"""nn.Module objects created inside captured code: ``nn.ModuleList(...)``, ``layers[:n]``.

A module made in the trace is a `NewObjectV` of its class whose ``attrs`` are its
``__dict__``: ``_parameters``, ``_buffers`` and ``_modules`` are symbolic dicts made
in the trace, whose items keep the values (and so the guarded sources) they were
given.  Its class's ``__init__`` is inlined like any Python constructor; the few
methods of ``nn.Module`` itself that read ``self.__dict__`` are models here:

* ``Module.__init__`` stores the empty state dicts (what CPython's would store);
* ``Module.__setattr__`` files a submodule under ``_modules``, a parameter of an
  outside module under ``_parameters``, anything else in ``__dict__``;
* ``Module.__getattr__`` reads those three dicts;
* ``Module.__call__`` checks there are no hooks, then inlines ``forward``.

On an outside module (an `ObjectV`) each model inlines the real method, as before.
A new module that escapes (returned, stored) is rebuilt after the region from its
``__dict__`` (`regions.codegen`), without running ``__init__`` again: the user gets a
real module holding the same submodules, as eager would.  What is not modelled
breaks with a reason: a Parameter made in the trace (``nn.Linear(...)`` draws its
weights there; `torch_calls` refuses ``nn.Parameter(...)``), buffers, hooks
registered on the new module, re-running ``__init__`` on an outside module.
"""

from __future__ import annotations

import collections
import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.sources import ConstSource, Ref
from ..model.values import Const, DictV, NewObjectV, ObjectV, SetV, TensorV, Value
from . import dispatch
from .attrs import getattr_
from .classes import MISS, mro_lookup
from .folding import as_python, raise_
from .object_slots import new_instance
from .registry import MODELS

# The state nn.Module.__init__ stores, in its order: name -> kind of empty container.
_STATE = (
    ("training", None),
    ("_parameters", dict),
    ("_buffers", dict),
    ("_non_persistent_buffers_set", set),
    ("_backward_pre_hooks", collections.OrderedDict),
    ("_backward_hooks", collections.OrderedDict),
    ("_is_full_backward_hook", None),
    ("_forward_hooks", collections.OrderedDict),
    ("_forward_hooks_with_kwargs", collections.OrderedDict),
    ("_forward_hooks_always_called", collections.OrderedDict),
    ("_forward_pre_hooks", collections.OrderedDict),
    ("_forward_pre_hooks_with_kwargs", collections.OrderedDict),
    ("_state_dict_hooks", collections.OrderedDict),
    ("_state_dict_pre_hooks", collections.OrderedDict),
    ("_load_state_dict_pre_hooks", collections.OrderedDict),
    ("_load_state_dict_post_hooks", collections.OrderedDict),
    ("_modules", dict),
)

_HOOKS = tuple(n for n, _ in _STATE if n.endswith(("_hooks", "_kwargs", "_called")))

_GLOBAL_CALL_HOOKS = (
    "_global_forward_hooks",
    "_global_forward_pre_hooks",
    "_global_backward_hooks",
    "_global_backward_pre_hooks",
    "_global_forward_hooks_always_called",
    "_global_forward_hooks_with_kwargs",
)


def is_new_module(v: Value) -> bool:
    """A module made in this trace (a NewObjectV of an nn.Module class)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, NewObjectV) and issubclass(v.cls, torch.nn.Module)


def _is_module_value(v: Value) -> bool:
    import torch

    return is_new_module(v) or (isinstance(v, ObjectV) and isinstance(v.obj, torch.nn.Module))


def construct_module(tx, clsv: ObjectV, args, kwargs) -> Value:
    """``cls(*args, **kwargs)`` for an nn.Module class: a new module, its ``__init__`` inlined."""
    import torch

    register()
    cls = clsv.obj
    name = cls.__qualname__
    meta_call = mro_lookup(type(cls), "__call__")
    if meta_call is not type.__call__ and meta_call is not MISS:
        raise UnsupportedError(
            BreakReason.MODULE_CONSTRUCTION, f"{name}: metaclass {type(cls).__name__}.__call__"
        )
    if isinstance(cls, type) and issubclass(cls, torch.jit.ScriptModule):
        raise UnsupportedError(BreakReason.MODULE_CONSTRUCTION, f"creating the ScriptModule {name}")
    if mro_lookup(cls, "__new__") not in (object.__new__, MISS):
        raise UnsupportedError(BreakReason.MODULE_CONSTRUCTION, f"{name} has its own __new__")
    if cls.__dictoffset__ == 0:
        raise UnsupportedError(BreakReason.MODULE_CONSTRUCTION, f"{name} instances have no __dict__")
    init = mro_lookup(cls, "__init__")
    if not isinstance(init, types.FunctionType):
        raise UnsupportedError(BreakReason.MODULE_CONSTRUCTION, f"{name}.__init__ is not Python code")
    inst = new_instance(tx, cls)
    r = dispatch.call(tx, ObjectV(init), [inst, *args], kwargs)
    if not (isinstance(r, Const) and r.value is None):
        raise_(TypeError, "__init__() should return None")
    return inst


# -- the models of nn.Module's own methods -------------------------------------------------


def _inline_real(tx, fn, args, kwargs):
    """The real method on an outside module: its bytecode inlined, as without the model."""
    return dispatch.inline_call(tx, ObjectV(fn), args, kwargs)


def _module_init(tx, args, kwargs):
    import torch

    self = args[0] if args else None
    if not is_new_module(self):
        if isinstance(self, ObjectV) and isinstance(self.obj, torch.nn.Module):
            raise UnsupportedError(
                BreakReason.MODULE_MUTATION, "running nn.Module.__init__ on an existing module"
            )
        return _inline_real(tx, torch.nn.Module.__init__, args, kwargs)
    if mro_lookup(self.cls, "call_super_init") is not False:
        raise UnsupportedError(BreakReason.MODULE_CONSTRUCTION, f"{self.cls.__qualname__}.call_super_init")
    rest = args[1:]
    if kwargs:
        raise_(
            TypeError,
            f"{self.cls.__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'",
        )
    if rest:
        raise_(
            TypeError,
            f"{self.cls.__name__}.__init__() takes 1 positional argument but {len(rest) + 1} were given",
        )
    attrs = dict(self.attrs)
    for name, kind in _STATE:
        if name == "training":
            attrs[name] = Const(True)
        elif kind is None:
            attrs[name] = Const(None)
        elif kind is set:
            attrs[name] = SetV({})
        else:
            attrs[name] = DictV({}, cls=kind)
    tx.set(self, "attrs", attrs)
    return Const(None)


def _state(self: NewObjectV, name: str):
    """One of the state dicts of a new module, or None before Module.__init__ stored it."""
    d = self.attrs.get(name)
    return d if isinstance(d, (DictV, SetV)) else None


def _guard_empty_global(tx, name: str) -> None:
    """A global registry of torch.nn.modules.module (hooks) is empty, and stays so."""
    import torch.nn.modules.module as m

    d = getattr(m, name, None)
    if d is None:
        return
    if d:
        raise UnsupportedError(BreakReason.MODULE_HOOKS, f"global module hooks ({name}) are registered")
    tx.guard(GuardKind.LENGTH, ConstSource(Ref(d, f"torch.nn.modules.module.{name}")), 0)


def guard_global_call_hooks(tx) -> None:
    """No global hook of module calls is registered (nn.Module.__call__ then runs forward
    alone), and none is by the next call: guarded, for existing and new modules alike."""
    for name in _GLOBAL_CALL_HOOKS:
        _guard_empty_global(tx, name)


def _remove_from(tx, self: NewObjectV, name: str, places) -> None:
    for place in places:
        if place == "__dict__":
            if name in self.attrs:
                attrs = dict(self.attrs)
                del attrs[name]
                tx.set(self, "attrs", attrs)
            continue
        d = _state(self, place)
        if d is not None and name in d.entries:
            entries = dict(d.entries)
            del entries[name]
            tx.set(d, "entries", entries)
            if not d.mutated:
                tx.set(d, "mutated", True)


def _store(tx, d: DictV, name: str, value: Value) -> None:
    old = d.entries.get(name)
    tx.set(d, "entries", {**d.entries, name: (old[0] if old else Const(name), value)})
    if not d.mutated:
        tx.set(d, "mutated", True)


def _typename(v: Value) -> str:
    """``torch.typename`` of a value, for the TypeError Module.__setattr__ raises."""
    import torch

    if isinstance(v, Const):
        return torch.typename(v.value)
    # its spelling of other objects (tensor types, instances) is left to the real code
    raise UnsupportedError(
        BreakReason.MODULE_MUTATION, "assigning a non-module to a submodule's or parameter's name"
    )


def _module_setattr(tx, args, kwargs):
    import torch

    if len(args) != 3 or kwargs or not is_new_module(args[0]):
        return _inline_real(tx, torch.nn.Module.__setattr__, args, kwargs)
    self, namev, value = args
    try:
        name = as_python(namev)
    except Exception:  # noqa: BLE001 - a name we cannot read: the real method, inlined
        return _inline_real(tx, torch.nn.Module.__setattr__, args, kwargs)
    if not isinstance(name, str):
        return _inline_real(tx, torch.nn.Module.__setattr__, args, kwargs)
    params, modules, buffers = (_state(self, n) for n in ("_parameters", "_modules", "_buffers"))
    is_param = isinstance(value, TensorV) and issubclass(value.ptype, torch.nn.Parameter)
    if is_param or (params is not None and name in params.entries):
        if params is None:
            raise_(AttributeError, "cannot assign parameters before Module.__init__() call")
        if not is_param and not (isinstance(value, Const) and value.value is None):
            raise_(
                TypeError,
                f"cannot assign '{_typename(value)}' as parameter '{name}' "
                "(torch.nn.Parameter or None expected)",
            )
        _guard_empty_global(tx, "_global_parameter_registration_hooks")
        if is_param and value.source is None:
            raise UnsupportedError(
                BreakReason.PARAMETER_CONSTRUCTION, f"registering the new parameter {name!r}"
            )
        if (
            "." in name
            or name == ""
            or (mro_lookup(self.cls, name) is not MISS and name not in params.entries)
        ):
            return _inline_real(tx, torch.nn.Module.__setattr__, args, kwargs)  # its own errors
        if is_param:
            _remove_from(tx, self, name, ("__dict__", "_buffers", "_modules", "_non_persistent_buffers_set"))
        _store(tx, params, name, value)
        return Const(None)
    if _is_module_value(value) or (modules is not None and name in modules.entries):
        if modules is None:
            raise_(AttributeError, "cannot assign module before Module.__init__() call")
        if not _is_module_value(value) and not (isinstance(value, Const) and value.value is None):
            raise_(
                TypeError,
                f"cannot assign '{_typename(value)}' as child module '{name}' "
                "(torch.nn.Module or None expected)",
            )
        _guard_empty_global(tx, "_global_module_registration_hooks")
        if _is_module_value(value):
            _remove_from(
                tx, self, name, ("__dict__", "_parameters", "_buffers", "_non_persistent_buffers_set")
            )
        _store(tx, modules, name, value)
        return Const(None)
    buffer_cls = getattr(torch.nn, "Buffer", None)
    is_buffer = buffer_cls is not None and isinstance(value, ObjectV) and isinstance(value.obj, buffer_cls)
    if is_buffer or (buffers is not None and name in buffers.entries):
        raise UnsupportedError(
            BreakReason.MODULE_MUTATION, f"assigning the buffer {name!r} of a module made here"
        )
    tx.set(self, "attrs", {**self.attrs, name: value})
    return Const(None)


def _module_getattr(tx, args, kwargs):
    import torch

    if len(args) != 2 or kwargs or not is_new_module(args[0]):
        return _inline_real(tx, torch.nn.Module.__getattr__, args, kwargs)
    self, namev = args
    name = as_python(namev) if isinstance(namev, Const) else None
    if not isinstance(name, str):
        return _inline_real(tx, torch.nn.Module.__getattr__, args, kwargs)
    for where in ("_parameters", "_buffers", "_modules"):
        d = _state(self, where)
        if d is not None and name in d.entries:
            return d.entries[name][1]
    raise_(AttributeError, f"'{self.cls.__name__}' object has no attribute '{name}'")


def _module_call(tx, args, kwargs):
    """``module(*args)`` on a new module: no hooks (its own dicts are symbolic, the global
    ones are guarded empty), then ``forward``, as ``Module._call_impl`` does."""
    import torch

    if not args or not is_new_module(args[0]):
        return _inline_real(tx, torch.nn.Module.__call__, args, kwargs)
    self = args[0]
    compiled = self.attrs.get("_compiled_call_impl")
    if compiled is not None and not (isinstance(compiled, Const) and compiled.value is None):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "a module made here and compiled (.compile())")
    guard_global_call_hooks(tx)
    for name in _HOOKS:
        d = _state(self, name)
        if d is not None and d.entries:
            raise UnsupportedError(BreakReason.MODULE_HOOKS, f"a module made here has {name} registered")
    forward = getattr_(tx, self, "forward")
    return dispatch.call(tx, forward, list(args[1:]), kwargs)


def register() -> None:
    """Put the models in the table (once torch is loaded: the first construction)."""
    import torch

    mod = torch.nn.Module
    if mod.__init__ in MODELS:
        return
    MODELS[mod.__init__] = _module_init
    MODELS[mod.__setattr__] = _module_setattr
    MODELS[mod.__getattr__] = _module_getattr
    MODELS[mod.__call__] = _module_call
    if getattr(mod, "_wrapped_call_impl", None) is not mod.__call__:
        MODELS[mod._wrapped_call_impl] = _module_call
