"""Attribute access on symbolic values: ``getattr_``, ``setattr_``, ``delattr_``.

Lookup follows CPython's order (data descriptor on the type, instance
``__dict__``, non-data descriptor or plain class attribute, ``__getattr__``),
resolved statically on the real classes.  Properties and Python descriptors
are inlined; C slots and getset descriptors are read from the real object
under a guard.  Writes to outside objects go to the value's overlay and are
replayed after the region.  How a class attribute binds (descriptors,
``__getattribute__`` hooks, slots) is `descriptors`; instance dictionaries
(dict-subclass instances, ``o.__dict__``) are `dict_objects`; attributes of
modules (Python modules, nn.Module's ``__getattr__``) and classes are
`module_attrs`.
"""

from __future__ import annotations

import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import CONST_TYPES, guard_class_lookup, is_torch_const, wrap
from ..model.c_instances import CInstanceV
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import (
    DELETED,
    CellV,
    Const,
    DictV,
    DictViewV,
    ExceptionV,
    GeneratorV,
    ListV,
    MadeFunctionV,
    MethodV,
    NewObjectV,
    ObjectV,
    PartialV,
    SetV,
    StateCMV,
    SuperV,
    SymFloatV,
    SymIntV,
    TensorV,
    TupleV,
    Value,
    specialized,
)
from . import dispatch, made_function_attrs, ops, runtime_values
from .builtins_iter import ITER_SLOTS
from .class_build import MadeClassV, set_class_attr
from .classes import MISS, builtin_subclass_instance, is_heap_type, mro_lookup, source_of
from .containers import generator_method
from .descriptors import (
    bind_class_attr,
    call_descriptor_get,
    call_property,
    check_store,
    delete_property,
    is_data_descriptor,
    is_generic_getattribute,
    set_property,
    traced_lookup,
    unset_slot_message,
    user_getattribute,
)
from .dict_objects import (
    dict_also_wrapped,
    dict_object_attr,
    dict_object_setattr,
    instance_dict,
    new_object_dict,
    object_dict,
    traced_instance_dict,
)
from .folding import attribute_error, raise_
from .module_attrs import (
    class_attr,
    is_module_class,
    module_attr,
    module_class_descriptor,
    module_missing,
    module_namespace,
    pymodule_attr,
)
from .registry import MODELS


def getattr_(tx, v: Value, name: str) -> Value:
    h = _GETTERS.get(type(v))
    if h is None:
        for klass, fn in _GETTERS.items():
            if isinstance(v, klass):
                h = fn
                break
    if h is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"{v.describe()}.{name}")
    return h(tx, v, name)


def has_attr(tx, v: Value, name: str) -> bool:
    try:
        getattr_(tx, v, name)
        return True
    except SymbolicRaise as e:
        if isinstance(e.exc, ExceptionV) and issubclass(e.exc.cls, AttributeError):
            return False
        raise


def written_by_trace(tx, v: Value, name: str) -> bool:
    """Whether the trace itself set or deleted attribute `name` of outside object `v` (a
    module's through its namespace): what a lookup finds then is the trace's own doing, not
    a fact about the state the call started from, so it is no guard's business."""
    if not isinstance(v, ObjectV):
        return False
    if name in v.overlay:
        return True
    ns = tx.globals_values.get(id(v.obj.__dict__)) if isinstance(v.obj, types.ModuleType) else None
    return ns is not None and name in ns.overlay


# -- per-kind getters ----------------------------------------------------------------------


def _const_attr(tx, v: Const, name):
    if runtime_values.is_runtime(v):  # a method of text known at run time: bound, unread
        m = runtime_values.method(v, name)
        if m is not None:
            return m
    val = v.value
    try:
        attr = getattr(val, name)
    except AttributeError:
        attribute_error(type(val).__name__, name)
    if (
        isinstance(attr, (types.BuiltinMethodType, types.MethodWrapperType))
        and getattr(attr, "__self__", None) is val
    ):
        return MethodV(ObjectV(getattr(type(val), name)), v)
    if type(attr) in CONST_TYPES or is_torch_const(attr) or attr is None:
        return Const(attr)
    return wrap(tx, attr, None)


def _container_attr(tx, v, name):
    cls = v.python_type()
    if name == "__class__":  # object's data descriptor: before any instance or class lookup
        return wrap(tx, cls, ConstSource(Ref(cls, cls.__qualname__)), guard=False)
    if builtin_subclass_instance(v):
        return dict_object_attr(tx, v, name)
    if isinstance(v, TupleV) and cls is not tuple:
        fields = getattr(cls, "_fields", None) or getattr(cls, "__match_args__", ())
        if name in fields:
            return v.items[list(fields).index(name)]
    raw = mro_lookup(cls, name)
    if raw is MISS:
        attribute_error(cls.__name__, name)
    if isinstance(raw, _C_DATA) and raw in MODELS:  # deque.maxlen, defaultdict.default_factory
        return MODELS[raw](tx, [v], {})
    return bind_class_attr(tx, raw, v, cls, name)


_C_DATA = (types.GetSetDescriptorType, types.MemberDescriptorType)


def _object_attr(tx, v: ObjectV, name):
    obj = v.obj
    if not isinstance(obj, (type, types.ModuleType, types.FunctionType)):
        cls = type(obj)
        ga = mro_lookup(cls, "__getattribute__")
        if isinstance(ga, types.FunctionType) and not is_module_class(cls):
            return user_getattribute(tx, v, cls, ga, name)
    return _generic_object_attr(tx, v, name)


def generic_getattr(tx, v: Value, name: str) -> Value:
    """``object.__getattribute__(v, name)``: the normal lookup, without a Python
    ``__getattribute__`` of v's class and without ``__getattr__``."""
    if isinstance(v, ObjectV) and not isinstance(v.obj, (type, types.ModuleType, types.FunctionType)):
        return _generic_object_attr(tx, v, name, hook=False)
    if isinstance(v, NewObjectV):
        return _new_object_attr(tx, v, name, hook=False)
    if builtin_subclass_instance(v):
        return dict_object_attr(tx, v, name, hook=False)
    return getattr_(tx, v, name)


def _generic_object_attr(tx, v: ObjectV, name, hook=True):
    if name in v.overlay:
        val = v.overlay[name]
        if val is DELETED:
            cls = type(v.obj)
            if isinstance(mro_lookup(cls, name), types.MemberDescriptorType):  # a deleted slot
                raise SymbolicRaise(
                    ExceptionV(
                        AttributeError, [Const(unset_slot_message(cls.__module__, cls.__qualname__, name))]
                    )
                )
            # the instance's own is gone: the class's (or __getattr__) answers, as in CPython
            guard_class_lookup(tx, cls, name)
            raw = mro_lookup(cls, name)
            if raw is not MISS:
                return bind_class_attr(tx, raw, v, cls, name)
            getattr_hook = mro_lookup(cls, "__getattr__") if hook else MISS
            if isinstance(getattr_hook, types.FunctionType):
                guard_class_lookup(tx, cls, "__getattr__")
                return dispatch.call(tx, ObjectV(getattr_hook), [v, Const(name)], {})
            attribute_error(cls.__name__, name)
        return val
    obj = v.obj
    src = source_of(v)
    if isinstance(obj, types.ModuleType) and not module_class_descriptor(tx, obj, name):
        written = module_namespace(tx, obj).overlay.get(name, MISS)
        if written is DELETED:
            return module_missing(tx, v, obj, name, src)
        if written is not MISS:
            return written
        return pymodule_attr(tx, v, obj, src, name)
    if isinstance(obj, type):
        return class_attr(tx, v, obj, src, name)
    if isinstance(obj, types.FunctionType):
        if (
            name
            in (
                "__name__",
                "__qualname__",
                "__module__",
                "__doc__",
                "__code__",
                "__defaults__",
                "__kwdefaults__",
                "__globals__",
                "__closure__",
                "__annotations__",
                "__dict__",
            )
            or name in obj.__dict__
        ):
            return wrap(tx, getattr(obj, name), AttrSource(src, name))
        if name == "__get__":
            return MethodV(ObjectV(types.FunctionType.__get__), v)
        if name == "__class__":
            return wrap(tx, types.FunctionType, ConstSource(Ref(types.FunctionType, "function")), guard=False)
        raw = mro_lookup(types.FunctionType, name)
        if isinstance(raw, (types.GetSetDescriptorType, types.MemberDescriptorType)):
            return wrap(tx, getattr(obj, name), AttrSource(src, name))  # (no instance dict shadows it)
        if src is not None:  # `f.foo = 1` later gives the function the attribute
            tx.guard(GuardKind.NOT_PRESENT, AttrSource(src, "__dict__"), None, name)
        if raw is not MISS:  # `__call__`, `__repr__`, ... of the function type
            return bind_class_attr(tx, raw, v, types.FunctionType, name)
        attribute_error("function", name)
    cls = type(obj)
    ga = mro_lookup(cls, "__getattribute__")
    if (
        not isinstance(ga, types.FunctionType)  # its own lookup is this one (object.__getattribute__)
        and not is_generic_getattribute(ga)
        and is_heap_type(cls)
        and not is_module_class(cls)
        and ga is not types.ModuleType.__getattribute__  # generic, then the module dict
    ):
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"{cls.__qualname__} inherits a C __getattribute__"
        )
    raw = mro_lookup(cls, name)
    if raw is not MISS and is_data_descriptor(raw):
        try:
            if isinstance(raw, property):
                return call_property(tx, raw, v, cls, name)
            if isinstance(mro_lookup(type(raw), "__get__"), types.FunctionType):
                return call_descriptor_get(tx, raw, v, cls, name)
        except SymbolicRaise as e:
            return _getattr_after_error(tx, v, cls, name, hook, e)
        if isinstance(raw, (types.MemberDescriptorType, types.GetSetDescriptorType)):
            if name == "__dict__":
                return object_dict(tx, v, obj, src)
            try:
                real = getattr(obj, name)
            except AttributeError as e:  # CPython's own words (3.13 qualifies the type name)
                if src is not None:
                    tx.guard(GuardKind.HASATTR, src, False, name)  # still unset next call (O47)
                raise SymbolicRaise(ExceptionV(AttributeError, [Const(str(e))])) from None
            if name == "__class__":
                return wrap(tx, real, ConstSource(Ref(real, real.__qualname__)), guard=False)
            return wrap(tx, real, AttrSource(src, name))
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"data descriptor {cls.__qualname__}.{name}"
        )
    d = instance_dict(obj)
    known = tx.by_id.get(id(d)) if d is not None else None
    if known is not None and getattr(known, "mutated", True):
        model = traced_instance_dict(tx, v, d)
        if model is None:
            dict_also_wrapped(name)  # written through its __dict__: reads through the object would miss it
        entry = model.entries.get(name)
        if entry is not None:
            return entry[1]
        d = None  # not in the dict as the trace left it (its keys are guarded): the class's
    if d is not None and name in d:
        return wrap(tx, d[name], AttrSource(src, name))
    if raw is not MISS:
        if d is not None:
            # found on the class: an instance attribute set later would shadow it
            tx.guard(GuardKind.NOT_PRESENT, AttrSource(src, "__dict__"), None, name)
        return bind_class_attr(tx, raw, v, cls, name)
    getattr_hook = mro_lookup(cls, "__getattr__") if hook else MISS
    torch = sys.modules.get("torch")
    if torch is not None and getattr_hook is torch.nn.Module.__getattr__:
        return module_attr(tx, v, obj, src, name)
    if isinstance(getattr_hook, types.FunctionType):
        guard_class_lookup(tx, cls, "__getattr__")
        return dispatch.call(tx, ObjectV(getattr_hook), [v, Const(name)], {})
    if src is not None:  # the attribute (or a __getattr__) may exist by the next call (O47)
        if hook:
            tx.guard(GuardKind.HASATTR, src, False, name)
        else:
            # object.__getattribute__ from inside a user's hook: hasattr() would run that
            # hook (and __getattr__) again, so guard what the generic lookup read
            if d is not None:
                tx.guard(GuardKind.NOT_PRESENT, AttrSource(src, "__dict__"), None, name)
            guard_class_lookup(tx, cls, name)
    attribute_error(cls.__name__, name)


def _getattr_after_error(tx, v, cls, name, hook, e: SymbolicRaise):
    """An AttributeError raised by the generic lookup (a property's getter, a descriptor's
    ``__get__``, a Python ``__getattribute__``) goes to the class's Python ``__getattr__``,
    as CPython's ``slot_tp_getattr_hook`` does; anything else propagates."""
    getattr_hook = mro_lookup(cls, "__getattr__") if hook else MISS
    if not (
        isinstance(getattr_hook, types.FunctionType)
        and isinstance(e.exc, ExceptionV)
        and issubclass(e.exc.cls, AttributeError)
    ):
        raise e
    guard_class_lookup(tx, cls, "__getattr__")
    return dispatch.call(tx, ObjectV(getattr_hook), [v, Const(name)], {})


def _new_object_attr(tx, v: NewObjectV, name, hook=True):
    cls = v.cls
    try:
        found, raw = traced_lookup(tx, v, cls, name, hook)
    except SymbolicRaise as e:
        return _getattr_after_error(tx, v, cls, name, hook, e)
    if found is not MISS:
        return found
    if raw is not MISS and is_data_descriptor(raw):
        if isinstance(raw, types.MemberDescriptorType):
            if name in v.attrs:
                return v.attrs[name]
            raise SymbolicRaise(
                ExceptionV(
                    AttributeError, [Const(unset_slot_message(cls.__module__, cls.__qualname__, name))]
                )
            )
        if name == "__class__":
            return wrap(tx, cls, ConstSource(Ref(cls, cls.__qualname__)), guard=False)
        if name == "__dict__":
            return new_object_dict(tx, v)
        if not isinstance(raw, types.GetSetDescriptorType):
            return bind_class_attr(tx, raw, v, cls, name)
    if name in v.attrs:
        return v.attrs[name]
    if raw is not MISS:
        return bind_class_attr(tx, raw, v, cls, name)
    getattr_hook = mro_lookup(cls, "__getattr__") if hook else MISS
    if isinstance(getattr_hook, types.FunctionType):
        return dispatch.call(tx, ObjectV(getattr_hook), [v, Const(name)], {})
    attribute_error(cls.__name__, name)


def _exception_attr(tx, v: ExceptionV, name):
    if name == "args":
        return TupleV(v.args)
    if name in v.attrs:
        return v.attrs[name]
    if name in ("__cause__", "__suppress_context__"):
        return Const(None if name == "__cause__" else False)  # only `raise ... from` sets them
    if name in ("__context__", "__traceback__"):
        # set by the interpreter as the exception travels (implicit chaining, the frames it
        # passed through), which the trace does not model: only the real frame knows (O11)
        raise UnsupportedError(BreakReason.FRAME_INTROSPECTION, f"reading {name} of an exception")
    if name == "__class__":
        return wrap(tx, v.cls, ConstSource(Ref(v.cls, v.cls.__qualname__)), guard=False)
    raw = mro_lookup(v.cls, name)
    if isinstance(raw, (types.MemberDescriptorType, types.GetSetDescriptorType)):
        return _exception_slot(v, name)
    if raw is not MISS:
        return bind_class_attr(tx, raw, v, v.cls, name)
    attribute_error(v.cls.__name__, name)


def _exception_slot(v: ExceptionV, name):
    """A C-level field of a built-in exception (StopIteration.value, OSError.errno, ...):
    the value its constructor would store, computed on a real exception made from the same
    constant arguments (O10)."""
    if v.cls.__module__ != "builtins" or not all(isinstance(a, Const) for a in v.args):
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"{v.cls.__name__}.{name} of a traced exception"
        )
    real = v.cls(*(a.value for a in v.args))
    try:
        return Const(getattr(real, name))
    except AttributeError:
        attribute_error(v.cls.__name__, name)


def _made_fn_attr(tx, v: MadeFunctionV, name):
    simple = {
        "__name__": v.name,
        "__qualname__": v.qualname,
        "__code__": v.code,
    }
    if name in simple:
        return Const(simple[name])
    if name == "__defaults__":
        return TupleV(v.defaults) if v.defaults else Const(None)
    if name == "__get__":
        return MethodV(ObjectV(types.FunctionType.__get__), v)
    if name == "__annotations__":
        return made_function_attrs.made_annotations(tx, v)
    if name == "__module__" and v.source is not None:
        return Const(v.globals.get("__name__"))  # guarded so by `function_by_code`
    return made_function_attrs.read(tx, v, name)


def _method_attr(tx, v: MethodV, name):
    if name == "__self__":
        return v.obj
    if name == "__func__":
        return v.func
    if name in ("__name__", "__qualname__", "__doc__", "__module__"):
        return getattr_(tx, v.func, name)
    raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"bound method attribute {name}")


def _partial_attr(tx, v: PartialV, name):
    if name == "func":
        return v.func
    if name == "args":
        return TupleV(v.args)
    if name == "keywords":
        return DictV({k: (Const(k), x) for k, x in v.kwargs.items()})
    attribute_error("functools.partial", name)


def _super_attr(tx, v: SuperV, name):
    obj = v.obj
    objcls = obj.obj if isinstance(obj, ObjectV) and isinstance(obj.obj, type) else obj.python_type()
    mro = objcls.__mro__
    try:
        start = mro.index(v.cls) + 1
    except ValueError:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_SUPER, "super(): obj is not an instance of cls"
        ) from None
    for c in mro[start:]:
        if name in c.__dict__:
            raw = c.__dict__[name]
            if isinstance(obj, ObjectV) and isinstance(obj.obj, type):
                if isinstance(raw, classmethod):
                    return MethodV(wrap(tx, raw.__func__, None), obj)
                return wrap(tx, raw, None)
            return (
                bind_class_attr(tx, raw, obj, objcls, name)
                if not isinstance(raw, types.FunctionType)
                else MethodV(ObjectV(raw), obj)
            )
    attribute_error("super", name)


def _cell_attr(tx, v: CellV, name):
    if name == "cell_contents":
        from .cells import load_cell

        return load_cell(tx, v)
    attribute_error("cell", name)


def _generator_attr(tx, v: GeneratorV, name):
    m = generator_method(name)
    if m is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"generator.{name}")
    return MethodV(ObjectV(m), v)


def _tensor_attr(tx, v, name):
    from . import tensor_attrs

    if isinstance(v, (SymIntV, SymFloatV)) and name != "__class__":  # a number's own attribute:
        return getattr_(tx, specialized(v), name)  # of its value

    return tensor_attrs.tensor_attr(tx, v, name)


def _state_cm_attr(tx, v, name):
    from . import torch_state

    return torch_state.state_cm_attr(tx, v, name)


def _iter_attr(tx, v, name):
    slot = ITER_SLOTS.get(name)
    if slot is not None:
        return MethodV(ObjectV(slot), v)
    raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"iterator.{name}")


from ..model.values import IterV  # noqa: E402  (ordering: the table below needs every class)

_GETTERS = {
    Const: _const_attr,
    TensorV: _tensor_attr,
    ListV: _container_attr,
    TupleV: _container_attr,
    DictV: _container_attr,
    SetV: _container_attr,
    DictViewV: _container_attr,
    ObjectV: _object_attr,
    NewObjectV: _new_object_attr,
    ExceptionV: _exception_attr,
    MadeFunctionV: _made_fn_attr,
    MethodV: _method_attr,
    PartialV: _partial_attr,
    SuperV: _super_attr,
    CellV: _cell_attr,
    GeneratorV: _generator_attr,
    StateCMV: _state_cm_attr,
    IterV: _iter_attr,
    CInstanceV: _container_attr,
}


# -- writes ---------------------------------------------------------------------------------


def setattr_(tx, v: Value, name: str, value: Value, raw: bool = False) -> None:
    """``v.name = value``; `raw` bypasses a Python ``__setattr__`` (object.__setattr__)."""
    if isinstance(v, (NewObjectV, ExceptionV)):
        cls = v.python_type()
        hook = mro_lookup(cls, "__setattr__")
        if not raw and isinstance(hook, types.FunctionType):
            dispatch.call(tx, ObjectV(hook), [v, Const(name), value], {})
            return
        if set_property(tx, cls, name, v, value):
            return
        check_store(cls, name)
        tx.set(v, "attrs", {**v.attrs, name: value})
        return
    if isinstance(v, ObjectV):
        _object_setattr(tx, v, name, value, raw)
        return
    if builtin_subclass_instance(v):
        dict_object_setattr(tx, v, name, value, raw)
        return
    if isinstance(v, TensorV) and name == "grad":
        from .autograd_calls import set_grad

        set_grad(tx, v, value)  # a node: a backward later in the graph sees it
        return
    if isinstance(v, TensorV):
        raise UnsupportedError(BreakReason.TENSOR_ATTRIBUTE_WRITE, f"setting tensor attribute .{name}")
    if isinstance(v, MadeFunctionV) and name in ("__name__", "__qualname__"):
        text = value.value if isinstance(value, Const) else None
        if type(text) is not str:
            raise_(TypeError, f"{name} must be set to a string object")
        if name == "__qualname__":
            tx.set(v, "qualname", text)
        else:  # kept in the code's name, which a rebuilt function takes its __name__ from
            tx.set(v, "code", v.code.replace(co_name=text))
            tx.set(v, "name", text)
        return
    if isinstance(v, MadeFunctionV):
        made_function_attrs.write(tx, v, name, value)
        return
    raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"setting {name} on {v.describe()}")


def _object_setattr(tx, v: ObjectV, name, value, raw) -> None:
    obj = v.obj
    cls = type(obj)
    hook = mro_lookup(cls, "__setattr__")
    torch = sys.modules.get("torch")
    is_module = torch is not None and isinstance(obj, torch.nn.Module)
    if not raw and isinstance(hook, types.FunctionType) and not is_module:
        dispatch.call(tx, ObjectV(hook), [v, Const(name), value], {})
        return
    if not (
        raw
        or hook is object.__setattr__
        or is_module
        or isinstance(obj, (types.ModuleType, types.FunctionType, type))
    ):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"{cls.__qualname__}.__setattr__")
    if set_property(tx, cls, name, v, value):
        return
    if is_module:
        for where in ("_parameters", "_modules"):
            if name in obj.__dict__.get(where, {}):
                raise UnsupportedError(
                    BreakReason.MODULE_MUTATION, f"assigning to the {where[1:-1]} {name!r} of a module"
                )
        if isinstance(value, TensorV) and issubclass(value.ptype, torch.nn.Parameter):
            raise UnsupportedError(BreakReason.MODULE_MUTATION, "registering a new parameter")
    if isinstance(v, MadeClassV):  # a class statement's: its private template changes
        set_class_attr(tx, v, name, value)
        return
    if isinstance(obj, type):
        # instances, subclasses and methods read class attributes through the real class, not
        # through this value's overlay: the write must really happen first (O9)
        raise UnsupportedError(BreakReason.CLASS_MUTATION, f"setting {obj.__qualname__}.{name}")
    if isinstance(obj, types.ModuleType) and type(obj).__setattr__ is types.ModuleType.__setattr__:
        v = module_namespace(tx, obj)  # one model of the module's globals (see below)
    elif not is_module and not isinstance(obj, (types.ModuleType, types.FunctionType)):
        check_store(cls, name)
        d = instance_dict(obj)
        if d is not None and id(d) in tx.by_id:
            model = traced_instance_dict(tx, v, d)
            if model is None:
                dict_also_wrapped(name)
            ops.setitem(tx, model, Const(name), value)  # the dict the trace reads it through
            return
    tx.set(v, "overlay", {**v.overlay, name: value})
    tx.mark_mutated(v)


def delattr_(tx, v: Value, name: str) -> None:
    if isinstance(v, NewObjectV) and isinstance(mro_lookup(v.cls, "__delattr__"), types.FunctionType):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"{v.cls.__qualname__}.__delattr__")
    if isinstance(v, NewObjectV) and delete_property(tx, v.cls, name, v):
        return
    if isinstance(v, NewObjectV):
        if name not in v.attrs:
            attribute_error(v.cls.__name__, name)
        attrs = dict(v.attrs)
        del attrs[name]
        tx.set(v, "attrs", attrs)
        return
    if isinstance(v, ObjectV) and type(v.obj) is types.ModuleType:
        getattr_(tx, v, name)  # AttributeError when missing
        ns = module_namespace(tx, v.obj)
        tx.set(ns, "overlay", {**ns.overlay, name: DELETED})
        tx.mark_mutated(ns)
        return
    if isinstance(v, ObjectV) and isinstance(v.obj, type):
        raise UnsupportedError(BreakReason.CLASS_MUTATION, f"del {v.obj.__qualname__}.{name}")
    if isinstance(v, ObjectV) and mro_lookup(type(v.obj), "__delattr__") is object.__delattr__:
        if delete_property(tx, type(v.obj), name, v):
            return
        getattr_(tx, v, name)  # AttributeError when missing
        tx.set(v, "overlay", {**v.overlay, name: DELETED})
        tx.mark_mutated(v)
        return
    raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"del {v.describe()}.{name}")
