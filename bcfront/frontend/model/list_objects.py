"""Instances of Python subclasses of list: which ones the trace models as lists, and how.

An instance of a Python subclass of list (transformers' ``LogitsProcessorList``,
traceback's ``StackSummary``) is a `ListV` with its class in ``cls`` and its
``__dict__`` in ``attrs``, made in the trace (``semantics.object_slots``) or passed in
(`wrap_list_object`).  The ListV paths implement list's own meaning for everything
Python reads without an attribute lookup (`LIST_IMPLICIT`: iteration, ``len``,
indexing, ``in``, comparisons, truth, repr, ``+``...), so a subclass defining one of
those stays what it was (a break, or an opaque object), and the class lookups of all of
them are guarded: a class patched later gets a new capture.
"""

from __future__ import annotations

from .guard_kinds import GuardKind

_HEAPTYPE = 1 << 9

# Not here: `__new__`/`__init__` (instantiation calls the class's own, which reach list's)
# and `__getattr__`/`__setattr__` (attribute access runs them).
LIST_IMPLICIT = (
    "__iter__", "__reversed__", "__len__", "__getitem__", "__setitem__", "__delitem__",
    "__contains__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__",
    "__repr__", "__str__", "__format__", "__hash__", "__add__", "__radd__", "__iadd__",
    "__mul__", "__rmul__", "__imul__", "__copy__", "__deepcopy__", "__reduce__",
    "__reduce_ex__", "__getstate__", "__setstate__", "__getattribute__", "__delattr__",
    "copy", "append", "extend", "insert", "pop", "remove", "clear", "index", "count",
    "sort", "reverse",
)  # fmt: skip


def list_base(cls):
    """list, when `cls` is a Python subclass of list whose builtin base is list itself."""
    if not (isinstance(cls, type) and issubclass(cls, list) and cls.__flags__ & _HEAPTYPE):
        return None
    base = next(c for c in cls.__mro__ if not c.__flags__ & _HEAPTYPE)
    return base if base is list else None


def list_subclass_shadowing(cls) -> str | None:
    """The first of `LIST_IMPLICIT` a Python class in `cls`'s MRO defines, or None."""
    for c in cls.__mro__:
        if not c.__flags__ & _HEAPTYPE:
            continue
        for name in LIST_IMPLICIT:
            if name in c.__dict__:
                return f"{c.__qualname__}.{name}"
    return None


def wrap_list_object(tx, obj, source, guard: bool, wrap, remember, limit: int, guard_class):
    """The ListV of `obj`, an instance from outside of a list subclass that leaves list's
    reads to list: its class, length and items guarded (read through list's own slots,
    which the class guards keep list's), its ``__dict__`` wrapped; None for anything else
    (the object stays opaque)."""
    from .sources import attr_source, item_source
    from .values import ListV

    t = type(obj)
    if source is None or not guard or len(obj) > limit or list_base(t) is None:
        return None
    if list_subclass_shadowing(t) is not None:
        return None
    tx.guard(GuardKind.TYPE_MATCH, source, t)
    for name in LIST_IMPLICIT:  # the builder's `guard_class_lookup`
        guard_class(tx, t, name)
    tx.guard(GuardKind.LENGTH, source, len(obj))
    v = ListV([], source, cls=t)
    remember(tx, obj, v, source)
    v.items = [wrap(tx, x, item_source(source, i), guard) for i, x in enumerate(list.__iter__(obj))]
    d = getattr(obj, "__dict__", None)
    if type(d) is dict:
        v.attrs = wrap(tx, d, attr_source(source, "__dict__"), guard)
    return v
