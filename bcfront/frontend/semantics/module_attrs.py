"""Attributes of modules and classes: Python modules, nn.Module's ``__getattr__``, classes.

A Python module's attributes live in the symbolic globals dict of the module
(`globals_value`, `module_namespace`): ``m.x = 1`` in the trace and a function of
``m`` reading its global ``x`` see the same write.  A name a module lacks runs
its PEP 562 ``__getattr__`` natively or raises CPython's AttributeError, both
guarded; nn.Module's ``__getattr__`` reads ``_parameters``, ``_buffers`` and
``_modules`` directly.  `attrs` dispatches here.
"""

from __future__ import annotations

import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import guard_class_lookup, wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, ModuleAttrSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import DELETED, Const, ExceptionV, MethodV, ObjectV
from .classes import MISS, is_heap_type, mro_lookup
from .descriptors import bind_class_attr, is_data_descriptor
from .folding import attribute_error


def is_module_class(cls) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(cls, torch.nn.Module)


def module_attr(tx, v, mod, src, name):
    """nn.Module.__getattr__: parameters, buffers, submodules, read from their dicts."""
    d = mod.__dict__
    for where in ("_parameters", "_buffers", "_modules"):
        store = d.get(where)
        if store is not None and name in store:
            value = store[name]
            return wrap(tx, value, ModuleAttrSource(src, where, name))
    if src is not None:  # `getattr(self, "norm", None)`: a submodule may be added back later
        tx.guard(GuardKind.HASATTR, src, False, name)
    attribute_error(type(mod).__name__, name)


def module_class_descriptor(tx, obj, name: str) -> bool:
    """Whether ``obj.name`` on a module of a ModuleType subclass (``torch.backends.cudnn``)
    is its class's data descriptor (a property), found before the module's dict (guarded)."""
    cls = type(obj)
    if cls is types.ModuleType or not is_heap_type(cls):
        return False
    guard_class_lookup(tx, cls, name)
    return is_data_descriptor(mro_lookup(cls, name))


def pymodule_attr(tx, v, mod, src, name):
    d = mod.__dict__
    if name not in d:
        if name == "__name__":
            return Const(mod.__name__)
        if name == "__class__":  # (assignable: a module may switch to a ModuleType subclass)
            cls = type(mod)
            if src is not None:
                tx.guard(GuardKind.TYPE_MATCH, src, cls)
            return wrap(tx, cls, ConstSource(Ref(cls, cls.__qualname__)), guard=False)
        raw = mro_lookup(type(mod), name)
        if raw is MISS:
            return module_missing(tx, v, mod, name, src)
        return module_type_attr(tx, v, mod, src, name, raw)
    # Module attributes are guarded too (an identity check each, reached through the
    # identity-checked module): monkeypatching torch.nn.functional.gelu recompiles.
    return wrap(tx, d[name], AttrSource(src, name))


def module_type_attr(tx, v, mod, src, name, raw):
    """``m.name`` found on the module's type, not in its namespace: a method of ModuleType
    or object (``m.__repr__``, ``m.__dir__``), bound; a data descriptor (``__dict__``, the
    live namespace, whose writes the trace keeps apart; ``__annotations__``, whose getter
    writes the namespace) runs natively."""
    if is_data_descriptor(raw):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"a module's {name} (its namespace)")
    if src is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"{name} of an unguardable module")
    # an attribute the module gains by the next call would be found first
    tx.guard(GuardKind.NOT_PRESENT, AttrSource(src, "__dict__"), None, name)
    return bind_class_attr(tx, raw, v, type(mod), name)


def module_missing(tx, v, mod, name, src):
    """A name a module does not have: its ``__getattr__`` (PEP 562: lazy imports, deprecation
    shims) runs natively; else the ``__getattr__`` method of its ModuleType subclass
    (``torch._VF``'s, which reads ``torch._C._VariableFunctions``), traced, as CPython's
    slot_tp_getattr_hook calls it; else CPython's AttributeError.  The absences are
    guarded: a cached entry must not keep raising once the module gains the name or a hook."""
    overlay = module_namespace(tx, mod).overlay
    hook = overlay.get("__getattr__", MISS)
    if hook is MISS:
        hook = mod.__dict__.get("__getattr__", MISS)
    if hook is not MISS and hook is not DELETED:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"module {mod.__name__!r} defines __getattr__ ({name})"
        )
    if src is None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"missing attribute {name} of an unguardable module"
        )
    for missing in (name, "__getattr__"):
        if missing not in overlay:  # else the trace itself deleted it
            tx.guard(GuardKind.NOT_PRESENT, AttrSource(src, "__dict__"), None, missing)
    cls = type(mod)
    if cls is not types.ModuleType and is_heap_type(cls):
        guard_class_lookup(tx, cls, "__getattr__")
        class_hook = mro_lookup(cls, "__getattr__")
        if isinstance(class_hook, types.FunctionType):
            from . import dispatch

            return dispatch.call(tx, ObjectV(class_hook), [v, Const(name)], {})
    owner = mod.__dict__.get("__name__")
    text = (
        f"module '{owner}' has no attribute '{name}'"
        if isinstance(owner, str)
        else f"module has no attribute '{name}'"
    )
    raise SymbolicRaise(ExceptionV(AttributeError, [Const(text)]))


def class_attr(tx, v, cls, src, name):
    if name in ("__name__", "__qualname__", "__module__", "__mro__", "__bases__", "__doc__"):
        return wrap(tx, getattr(cls, name), AttrSource(src, name), guard=False)
    raw = mro_lookup(cls, name)
    if raw is MISS:
        meta = mro_lookup(type(cls), name)
        if meta is not MISS and not isinstance(meta, types.FunctionType):
            try:
                return wrap(tx, getattr(cls, name), AttrSource(src, name))
            except AttributeError:
                pass
        elif isinstance(meta, types.FunctionType):
            return MethodV(ObjectV(meta), v)
        if src is not None:  # the class may gain it by the next call (O47)
            tx.guard(GuardKind.HASATTR, src, False, name)
        raise SymbolicRaise(
            ExceptionV(AttributeError, [Const(f"type object '{cls.__name__}' has no attribute '{name}'")])
        )
    if isinstance(raw, staticmethod):
        return wrap(tx, raw.__func__, AttrSource(src, name))
    if isinstance(raw, classmethod):
        return MethodV(wrap(tx, raw.__func__, None), v)
    if isinstance(raw, types.FunctionType):
        return wrap(tx, raw, AttrSource(src, name))
    if isinstance(
        raw,
        (
            types.MethodDescriptorType,
            types.WrapperDescriptorType,
            types.ClassMethodDescriptorType,
            types.BuiltinFunctionType,
        ),
    ):
        return ObjectV(getattr(cls, name))
    return wrap(tx, getattr(cls, name), AttrSource(src, name))


def globals_value(tx, g: dict) -> ObjectV:
    """The symbolic stand-in for a globals dict: its overlay holds writes made by the trace."""
    v = tx.globals_values.get(id(g))
    if v is None:
        v = ObjectV(g, None)
        tx.globals_values[id(g)] = v
    return v


def module_namespace(tx, mod) -> ObjectV:
    """The symbolic globals dict of `mod`: ``m.x = 1`` and a function of `m` reading its
    global ``x`` must see the same write, so module attributes live in the same overlay as
    STORE_GLOBAL's."""
    return globals_value(tx, mod.__dict__)
