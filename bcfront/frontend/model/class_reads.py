"""When ``cls.attr`` is a plain read of one class dict, and which facts keep it so.

``type.__getattribute__(cls, attr)`` looks, in order: for a data descriptor of that name on
the metaclass's MRO (called); through ``cls.__mro__``'s dicts (the first hit; a hit whose
type has ``__get__`` is called); for a plain attribute of the metaclass; then the
metaclass's ``__getattr__``.  A metaclass that defines ``__getattribute__`` replaces all of
it.  `plain_class_read` says when the answer is simply ``found[attr]`` for one mutable class
dict ``found`` of ``cls.__mro__``, and what that rests on: `ClassRead`'s dicts (whose
contents a guard memo watches through their version tags, `guard_memo`), the two MRO tuples
(``__bases__`` and ``__class__`` assignment change no dict: compared by identity on every
call) and the type of the value found (no ``__get__``: pinned by the guard checks on it).
Immutable types (builtins, Py_TPFLAGS_IMMUTABLETYPE) have dicts that never change: they are
judged once, here.
"""

from __future__ import annotations

import gc
import inspect
import types
from dataclasses import dataclass

_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: no setattr on the class, no __bases__


def class_dict(cls) -> dict | None:
    """The dict behind ``cls.__dict__`` (a mappingproxy) of a heap type whose metaclass
    reads it plainly, else None.  ``setattr``/``delattr`` on the class store into it."""
    if not isinstance(cls, type) or not cls.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
        return None
    if any("__dict__" in vars(m) for m in inspect.getmro(type(cls))[:-2]):  # a metaclass's own __dict__
        return None
    proxy = cls.__dict__
    refs = gc.get_referents(proxy)
    if type(proxy) is not types.MappingProxyType or len(refs) != 1 or type(refs[0]) is not dict:
        return None
    return refs[0] if refs[0].keys() == proxy.keys() else None


@dataclass(frozen=True)
class ClassRead:
    """``cls.attr`` is ``class_dict(owner)[attr]`` as long as: `attr` stays absent from the
    dicts of `before` (the mutable classes ahead of `owner` in ``cls.__mro__``); `attr`,
    ``__getattribute__`` and ``__mro__`` stay absent from the dicts of `metas` (the mutable
    metaclasses, each with the type of its own entry for `attr` where it has one: a type
    that is no data descriptor, which the entry keeps); ``cls.__mro__`` is `cls_mro` and,
    where the metaclass is mutable (`metas` not empty), ``type(cls).__mro__`` is
    `meta_mro`; and the value found has a `plain_type`."""

    cls: type
    attr: str
    owner: type
    before: tuple[type, ...]
    metas: tuple[tuple[type, type | None], ...]
    cls_mro: tuple
    meta_mro: tuple


def fixed_type(t) -> bool:
    """`t`'s dict and bases never change (a builtin or an immutable extension type)."""
    return bool(t.__flags__ & _IMMUTABLE_TYPE)


def _data_descriptor(v) -> bool:
    t = type(v)
    return hasattr(t, "__set__") or hasattr(t, "__delete__")


def plain_type(t) -> bool:
    """Reading a value of exact type `t` out of a class dict gives the value itself, now and
    whatever happens to other classes: `t` is immutable and has no ``__get__``, or it is the
    plain function type (whose ``__get__`` on a class gives the function itself)."""
    if t is types.FunctionType:
        return True
    if not isinstance(t, type) or not fixed_type(t) or issubclass(t, types.ModuleType):
        return False
    return not any("__get__" in vars(k) for k in t.__mro__)


def _metas(meta, attr: str) -> list[tuple[type, type | None]] | None:
    """The mutable metaclasses (whose dicts to watch), each with the type of its own entry
    for `attr` (None where it has none: the entry must be no data descriptor, and stay of
    that immutable type), or None where the metaclass's lookup is not plain now: its own
    ``__getattribute__``, a data descriptor of `attr` (``type``'s ``__doc__``,
    ``__name__``...), a ``__mro__`` of its own, or a class dict it hides."""
    if type(meta) is not type:  # a meta-metaclass: how type(cls).__mro__ reads is its say
        return None
    out: list[tuple[type, type | None]] = []
    for m in meta.__mro__:
        own = vars(m)
        if attr in own and _data_descriptor(own[attr]):
            return None
        if m is type or m is object:  # the lookup itself
            continue
        if "__getattribute__" in own or "__mro__" in own:
            return None
        if fixed_type(m):
            continue
        entry = type(own[attr]) if attr in own else None
        if class_dict(m) is None or (entry is not None and not fixed_type(entry)):
            return None
        out.append((m, entry))
    return out


def plain_class_read(cls, attr: str) -> ClassRead | None:
    """`ClassRead` for ``cls.attr`` where it is a plain read of a mutable class dict of
    ``cls.__mro__`` now, else None."""
    if not isinstance(cls, type) or class_dict(cls) is None or type(attr) is not str:
        return None
    meta: type = type(cls)
    metas = _metas(meta, attr)
    if metas is None:
        return None
    before: list[type] = []
    for c in cls.__mro__:
        if fixed_type(c):
            if attr in vars(c):  # found in a builtin's dict: not one watched
                return None
            continue
        d = class_dict(c)
        if d is None:
            return None
        if attr in d:
            if not plain_type(type(d[attr])):
                return None
            return ClassRead(cls, attr, c, tuple(before), tuple(metas), cls.__mro__, meta.__mro__)
        before.append(c)
    return None  # not in the class: the metaclass's attribute or __getattr__
