"""Instance dictionaries in attribute access: dict-subclass instances and ``o.__dict__``.

An instance of a Python subclass of dict (a ``@dataclass`` ModelOutput, an
OrderedDict subclass) is a `DictV` whose `attrs` is its ``__dict__``: its
attributes are looked up over its class and that dict, its items are no
attributes.  ``o.__dict__`` of an outside object is the symbolic dict of the
real one, kept coherent with reads through the object (O42).
"""

from __future__ import annotations

import types
from typing import NoReturn

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, Ref
from ..model.values import Const, DictV, ListV, NewObjectV, ObjectDictV, ObjectV
from . import dispatch
from .classes import MISS, mro_lookup
from .descriptors import (
    bind_class_attr,
    check_store,
    is_data_descriptor,
    set_property,
    traced_lookup,
)
from .folding import attribute_error


def object_dict(tx, v: ObjectV, obj, src):
    """``o.__dict__`` of an outside object, as the symbolic dict of the real one.  Reads
    through either stay coherent while neither is written: a write through the object
    after this breaks (`_object_setattr`), as does a read through it after a write
    through the dict (O42); a dict read after writes through the object would miss them."""
    d = instance_dict(obj)
    if v.overlay or type(d) is not dict or src is None:
        # the live dict: writes through it (copy.copy's state.update, vars(o)[k] = ...)
        # must reach the object, which a detached DictV would not do (O42)
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, "reading an object's __dict__")
    return wrap(tx, d, AttrSource(src, "__dict__"))


def instance_dict(obj):
    try:
        return object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None


def dict_also_wrapped(name: str) -> NoReturn:
    """The object's ``__dict__`` is also a symbolic dict of this trace (``d = vars(o)``, or
    passed in): writes through one would be missed by the other, so the attribute access
    runs natively, after the recorded writes are replayed (O42)."""
    raise UnsupportedError(
        BreakReason.UNSUPPORTED_ATTRIBUTE, f"attribute {name} of an object whose __dict__ is also in use"
    )


def traced_instance_dict(tx, v: ObjectV, d) -> DictV | None:
    """The trace's own model of outside object `v`'s instance dict `d`, where the object may
    be read and written through it: a plain `DictV` (every key known, guarded) made by a read
    of ``o.__dict__`` (transformers' configs read ``super().__getattribute__("__dict__")`` on
    every attribute access) while nothing was written through the object.  Writes through
    the object then go to that dict, and reads through the object see them; otherwise the
    access breaks (`dict_also_wrapped`)."""
    known = tx.by_id.get(id(d)) if d is not None else None
    if type(known) is DictV and known.cls is dict and known.source is not None and not v.overlay:
        return known
    return None


def dict_object_attr(tx, v: DictV | ListV, name, hook=True):
    """An attribute of an instance of a Python dict subclass (an OrderedDict subclass, a
    ``@dataclass`` ModelOutput): CPython's generic lookup over its class and its
    ``__dict__`` (`v.attrs`); the items are no attributes."""
    cls = v.cls
    found, raw = traced_lookup(tx, v, cls, name, hook)
    if found is not MISS:
        return found
    if raw is not MISS and is_data_descriptor(raw):
        if name == "__class__":
            return wrap(tx, cls, ConstSource(Ref(cls, cls.__qualname__)), guard=False)
        if name == "__dict__" and v.attrs is not None:
            return v.attrs
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_ATTRIBUTE, f"data descriptor {cls.__qualname__}.{name}"
        )
    if v.attrs is not None:
        e = v.attrs.entries.get(name)
        if e is not None:
            return e[1]
    if raw is not MISS:
        if v.attrs is not None and v.attrs.source is not None:
            # found on the class: an instance attribute set later would shadow it
            tx.guard(GuardKind.NOT_PRESENT, v.attrs.source, None, name)
        return bind_class_attr(tx, raw, v, cls, name)
    getattr_hook = mro_lookup(cls, "__getattr__") if hook else MISS
    if isinstance(getattr_hook, types.FunctionType):
        return dispatch.call(tx, ObjectV(getattr_hook), [v, Const(name)], {})
    if v.attrs is not None and v.attrs.source is not None:
        tx.guard(GuardKind.NOT_PRESENT, v.attrs.source, None, name)  # may be set by the next call
    attribute_error(cls.__name__, name)


def dict_object_setattr(tx, v: DictV | ListV, name, value, raw) -> None:
    cls = v.cls
    hook = mro_lookup(cls, "__setattr__")
    if not raw and isinstance(hook, types.FunctionType):
        dispatch.call(tx, ObjectV(hook), [v, Const(name), value], {})
        return
    if not raw and hook is not object.__setattr__:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"{cls.__qualname__}.__setattr__")
    if set_property(tx, cls, name, v, value):
        return
    d = mro_lookup(cls, name)
    if v.attrs is None or (d is not MISS and is_data_descriptor(d)):
        check_store(cls, name)
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"storing {cls.__qualname__}.{name}")
    old = v.attrs.entries.get(name)
    tx.set(v.attrs, "entries", {**v.attrs.entries, name: (old[0] if old else Const(name), value)})
    if not v.attrs.mutated:
        tx.set(v.attrs, "mutated", True)
    if v.attrs.source is not None:
        tx.mark_mutated(v.attrs)


def new_object_dict(tx, v: NewObjectV) -> ObjectDictV:
    """``o.__dict__`` of an object made in the trace (``super().__getattribute__("__dict__")``
    in transformers' configs, ``vars(o)``): the same dict on every read; writes through it or
    through the object reach the other (see `ObjectDictV`)."""
    if v.dict_view is None:
        view = ObjectDictV({k: (Const(k), x) for k, x in v.attrs.items()}, v)
        tx.set(v, "dict_view", view)
    return v.dict_view
