"""Descriptor binding and class-level lookup hooks, for attribute access (`attrs`).

How a class attribute found through an instance binds (functions, static and
class methods, properties, Python descriptors, C descriptors), a Python
``__getattribute__``/``__getattr__`` inlined, a property's setter, and whether
an instance can store a name at all (slots, no ``__dict__``), with CPython's
wording of the errors.  What is read from a class is guarded by identity.
"""

from __future__ import annotations

import collections
import functools
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import guard_class_lookup, wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, Ref, item_source
from ..model.tracer import SymbolicRaise
from ..model.values import Const, ExceptionV, MethodV, ObjectV, Value
from . import dispatch
from .classes import MISS, is_heap_type, mro_lookup
from .folding import attribute_error


def user_getattribute(tx, v: Value, cls, ga, name):
    """``obj.name`` on a class whose ``__getattribute__`` is written in Python: that function
    is inlined like any other (what it reads is guarded as it reads it), then ``__getattr__``
    on AttributeError, as CPython's slot_tp_getattr_hook does.  The class must still hold
    the same ``__getattribute__`` next call."""
    guard_class_attr(tx, cls, "__getattribute__", ga)
    try:
        return dispatch.call(tx, ObjectV(ga), [v, Const(name)], {})
    except SymbolicRaise as e:
        if not (isinstance(e.exc, ExceptionV) and issubclass(e.exc.cls, AttributeError)):
            raise
        hook = mro_lookup(cls, "__getattr__")
        if hook is MISS:
            raise
        if not isinstance(hook, types.FunctionType):
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_ATTRIBUTE, f"C __getattr__ of {cls.__qualname__} ({name})"
            ) from None
        guard_class_attr(tx, cls, "__getattr__", hook)
        return dispatch.call(tx, ObjectV(hook), [v, Const(name)], {})


# C ``__getattribute__`` slots that are CPython's generic lookup (PyObject_GenericGetAttr):
# a user class inheriting one (a dict, OrderedDict, list, str or int subclass) reads its
# attributes the normal way
GENERIC_GETATTRIBUTE = frozenset(
    {
        object.__getattribute__,
        *(
            t.__dict__["__getattribute__"]
            for t in (dict, list, tuple, set, frozenset, str, bytes, bytearray, int, float, complex)
            if "__getattribute__" in t.__dict__
        ),
        *(
            t.__dict__["__getattribute__"]
            for t in (collections.defaultdict, collections.deque)
            if "__getattribute__" in t.__dict__
        ),
    }
)


def is_generic_getattribute(ga) -> bool:
    """Whether `ga` (a class's ``__getattribute__``) is CPython's generic attribute lookup."""
    try:
        return ga in GENERIC_GETATTRIBUTE
    except TypeError:
        return False


def is_data_descriptor(raw) -> bool:
    t = type(raw)
    return hasattr(t, "__set__") or hasattr(t, "__delete__")


def call_property(tx, prop, inst, cls, name):
    if prop.fget is None:
        attribute_error(cls.__name__, name)
    guard_class_attr(tx, cls, name, prop)
    return dispatch.call(tx, wrap(tx, prop.fget, None), [inst], {})


def traced_lookup(tx, v, cls, name, hook: bool):
    """The steps of CPython's generic lookup that run Python code, for an instance made in
    the trace or a dict-subclass instance: the class's own ``__getattribute__`` (when
    `hook`), then a property or a Python data descriptor.  Returns (value, raw), value MISS
    when neither applied; `raw` is what `name` found on the class (or MISS)."""
    ga = mro_lookup(cls, "__getattribute__") if hook else MISS
    if isinstance(ga, types.FunctionType):
        return user_getattribute(tx, v, cls, ga, name), MISS
    raw = mro_lookup(cls, name)
    if raw is not MISS and is_data_descriptor(raw):
        if isinstance(raw, property):
            return call_property(tx, raw, v, cls, name), raw
        if isinstance(mro_lookup(type(raw), "__get__"), types.FunctionType):
            return call_descriptor_get(tx, raw, v, cls, name), raw
    return MISS, raw


def call_descriptor_get(tx, raw, inst, cls, name):
    """A data descriptor written in Python (enum's ``value``/``name``, a user descriptor
    with ``__set__``): its ``__get__`` inlined, the class attribute guarded."""
    tx.guard(GuardKind.ID_MATCH, class_dict_source(cls, name), raw)
    getter = mro_lookup(type(raw), "__get__")
    clsv = wrap(tx, cls, ConstSource(Ref(cls, cls.__qualname__)), guard=False)
    return dispatch.call(tx, ObjectV(getter), [wrap(tx, raw, None), inst, clsv], {})


def guard_class_attr(tx, cls, name, raw) -> None:
    """`name` still resolves on `cls`'s MRO to `raw`.  Read from the class dicts, not as
    ``cls.name``: that runs the descriptor protocol (``C.__dict__`` is a mappingproxy, not
    the ``'__dict__'`` descriptor; a classmethod binds anew on every read)."""
    guard_class_lookup(tx, cls, name)


_C_DATA = (types.GetSetDescriptorType, types.MemberDescriptorType)


def bind_class_attr(tx, raw, inst: Value, cls, name) -> Value:
    """A class attribute found through an instance, bound the way the descriptor protocol binds it."""
    if isinstance(raw, types.FunctionType):
        if is_heap_type(cls):
            guard_class_attr(tx, cls, name, raw)
        return MethodV(ObjectV(raw), inst)
    if isinstance(raw, staticmethod):
        return wrap(tx, raw.__func__, None)
    if isinstance(raw, classmethod):
        return MethodV(
            wrap(tx, raw.__func__, None), wrap(tx, cls, ConstSource(Ref(cls, cls.__qualname__)), guard=False)
        )
    if isinstance(raw, property):
        return call_property(tx, raw, inst, cls, name)
    if isinstance(raw, functools.cached_property):
        return cached_property_get(tx, raw, inst, cls, name)
    if isinstance(raw, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return MethodV(ObjectV(raw), inst)
    if isinstance(raw, functools._lru_cache_wrapper):  # binds like a function (a bound method)
        if is_heap_type(cls):
            guard_class_attr(tx, cls, name, raw)
        return MethodV(ObjectV(raw), inst)
    if isinstance(raw, types.ClassMethodDescriptorType):
        return ObjectV(getattr(cls, name))
    getter = mro_lookup(type(raw), "__get__")
    if getter is not MISS:
        if isinstance(getter, types.FunctionType):
            clsv = wrap(tx, cls, ConstSource(Ref(cls, cls.__qualname__)), guard=False)
            return dispatch.call(tx, ObjectV(getter), [wrap(tx, raw, None), inst, clsv], {})
        if type(raw).__module__ == "builtins" and not callable(raw) and not isinstance(raw, _C_DATA):
            pass
        else:  # (a C getset or member descriptor without a model computes what it reads)
            raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"descriptor {cls.__qualname__}.{name}")
    return wrap(tx, raw, class_dict_source(cls, name))


def cached_property_get(tx, raw, inst: Value, cls, name) -> Value:
    """``functools.cached_property.__get__`` when the instance's ``__dict__`` lacks the name
    (the lookup read the instance first: a non-data descriptor): its function called, the
    result stored straight into ``__dict__`` (no ``__setattr__``), as 3.11-3.13 do.  3.11's
    version takes a lock around this; no other thread runs inside a trace."""
    if type(raw) is not functools.cached_property or raw.attrname is None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"cached_property {name} (subclassed or unnamed)"
        )
    if cls.__dictoffset__ == 0:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"cached_property {name} without __dict__")
    if is_heap_type(cls):
        guard_class_attr(tx, cls, name, raw)
    val = dispatch.call(tx, wrap(tx, raw.func, None), [inst], {})
    dispatch.call(tx, ObjectV(object.__setattr__), [inst, Const(raw.attrname), val], {})
    return val


def class_dict_source(cls, name):
    """Where `name` is found on `cls`'s MRO, read from that class's ``__dict__``: reading it
    as ``cls.name`` would run the descriptor (``OrderedDict.__dict__`` is a mappingproxy,
    not the ``'__dict__'`` getset descriptor stored under that name)."""
    owner = next(c for c in cls.__mro__ if name in c.__dict__)
    return item_source(AttrSource(ConstSource(Ref(owner, owner.__qualname__)), "__dict__"), name)


def set_property(tx, cls, name, v, value) -> bool:
    """Run a property's setter when `name` is a property of `cls` (True if it was)."""
    d = mro_lookup(cls, name)
    if not isinstance(d, property):
        return False
    if d.fset is None:
        raise SymbolicRaise(
            ExceptionV(AttributeError, [Const(f"property '{name}' of '{cls.__name__}' object has no setter")])
        )
    dispatch.call(tx, wrap(tx, d.fset, None), [v, value], {})
    return True


def delete_property(tx, cls, name, v) -> bool:
    """Run a property's deleter when `name` is a property of `cls` (True if it was):
    ``del o.name`` goes to the class's data descriptor before the instance's dict."""
    d = mro_lookup(cls, name)
    if not isinstance(d, property):
        return False
    guard_class_lookup(tx, cls, name)
    if d.fdel is None:
        raise SymbolicRaise(
            ExceptionV(
                AttributeError, [Const(f"property '{name}' of '{cls.__name__}' object has no deleter")]
            )
        )
    dispatch.call(tx, wrap(tx, d.fdel, None), [v], {})
    return True


def check_store(cls, name) -> None:
    """Raise, as CPython would, when an instance of `cls` cannot hold attribute `name` (no
    ``__dict__`` and no slot of that name), before the store is recorded: the replay at the
    region's end would raise outside the user's ``try`` (O23).  Properties are handled by
    `set_property`; other C-level data descriptors run natively."""
    raw = mro_lookup(cls, name)
    if isinstance(raw, types.MemberDescriptorType):
        return
    if raw is not MISS and hasattr(type(raw), "__set__"):
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"storing {cls.__qualname__}.{name} (a C descriptor)"
        )
    if cls.__dictoffset__ == 0:  # no instance __dict__, and `name` is no slot
        if not is_heap_type(cls):  # a C type: its message names it its own way
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_ATTRIBUTE, f"storing {name} on a {cls.__qualname__}"
            )
        raise SymbolicRaise(ExceptionV(AttributeError, [Const(no_slot_message(cls.__name__, name))]))


@functools.lru_cache(maxsize=256)
def unset_slot_message(module: str, qualname: str, name: str) -> str:
    """This CPython's wording of a read of an unset slot (3.13 names the type with its
    module), asked of a stand-in slotted class with the same names."""
    stand_in = type(
        qualname.rpartition(".")[2],
        (),
        {"__slots__": (name,), "__module__": module, "__qualname__": qualname},
    )
    try:
        getattr(object.__new__(stand_in), name)
    except AttributeError as e:
        return str(e)
    return f"'{stand_in.__name__}' object has no attribute '{name}'"


@functools.lru_cache(maxsize=256)
def no_slot_message(type_name: str, name: str) -> str:
    """This CPython's wording of a store to a missing slot, asked of a stand-in slotted
    class with the same name (the user's class is never instantiated)."""
    try:
        object.__setattr__(type(type_name, (), {"__slots__": ()})(), name, None)
    except AttributeError as e:
        return str(e)
    return f"'{type_name}' object has no attribute '{name}'"
