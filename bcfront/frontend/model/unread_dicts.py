"""An outside dict read key by key: only the keys the trace looks at are guarded.

A dict of more than `KEYED_MIN` entries from outside (a registry, a cache such as
``linecache.cache``, which every traceback or ``inspect`` call grows), one keyed by classes
or functions (``re._cache``), and ``sys.modules`` are wrapped as a `DictV` whose `unread`
is a `DictReader`.  While unread, a lookup with a constant key
(``k in d``, ``d[k]``, ``d.get(k)``, ``d.pop(k)``, ``d.setdefault(k)``) guards that one
key -- present, its value wrapped from ``d[k]``, or absent (NOT_PRESENT) -- and a write
(``d[k] = v``, ``del d[k]``) is logged in `DictV.writes`, replayed on the real dict in
order after the graph (`write_replay`).  Its length (``len``, truth) is the real dict's,
guarded, with the written keys counted (`size`).  Any other read of the dict (an
iteration, a copy, ``==``) reads it whole, as a smaller dict is at once: every key
guarded, every item wrapped (the reads so far kept), the logged writes made on it.

So a function that looks up a few keys of a dict of thousands does not guard (or wrap, or
compile a check for) all of them, and is not recompiled when an unrelated key is added.
TorchDynamo reads ``sys.modules`` so; this is that for every plain dict.  ``sys.modules``
itself is never read whole (the builder's reader for it is a graph break): a guard on all
its keys would fail at the next import anywhere.
"""

from __future__ import annotations

import re
import types

from .guard_kinds import GuardKind
from .sources import item_source
from .values import DELETED, Const, DictV, ObjectV, TupleV, Value

KEYED_MIN = 64  # a dict from outside with more entries is read key by key
ABSENT = object()  # `DictV.known`: a key guarded absent
NOT_KEYED = object()  # `keyed_key`: the lookup is not made key by key

_KEY_TYPES = frozenset({str, int, bytes, bool, type(None)})
# functions and descriptors, hashed and compared by identity (``pprint`` keys its dispatch
# by ``dict.__repr__``, ``Counter.__repr__``, ...), held by a guard as an identity guard
# holds them; a compiled pattern, by its pattern and flags in C (``re._cache``)
_OBJECT_KEY_TYPES = frozenset(
    {
        types.FunctionType,
        types.BuiltinFunctionType,
        types.WrapperDescriptorType,
        types.MethodDescriptorType,
        types.ClassMethodDescriptorType,
        re.Pattern,
    }
)


def plain_key(k) -> bool:
    """A key whose lookup runs nothing of the user's and whose guard holds nothing of theirs
    alive but what an identity guard holds: a str, int, bytes, bool or None (not a float: a
    NaN is only itself), a class hashed and compared by identity, a function or builtin
    descriptor, a compiled pattern, or a tuple of them (``re._cache``'s ``(type(pattern),
    pattern, flags)``)."""
    t = type(k)
    if t in _KEY_TYPES or t in _OBJECT_KEY_TYPES:
        return True
    if t is tuple:
        return all(plain_key(x) for x in k)
    return isinstance(k, type) and t.__hash__ is type.__hash__ and t.__eq__ is type.__eq__


def keyed_key(d: Value, key: Value):
    """The real key `key` looks up where its lookup in `d` is made key by key (`d` unread,
    `key` a constant, an object or a tuple of them that is a `plain_key`), else
    `NOT_KEYED`."""
    if not (isinstance(d, DictV) and d.unread is not None):
        return NOT_KEYED
    return _real_key(key)


def _real_key(v: Value):
    if isinstance(v, Const):
        k = v.value
    elif isinstance(v, ObjectV):
        k = v.obj
    elif isinstance(v, TupleV) and v.cls is tuple:
        items = tuple(map(_real_key, v.items))
        return NOT_KEYED if any(x is NOT_KEYED for x in items) else items
    else:
        return NOT_KEYED
    return k if plain_key(k) else NOT_KEYED


class DictReader:
    """`DictV.unread` of the outside dict `obj` (`v`, read from `source`).  Called, it reads
    the dict whole: `fill(tx, obj, source, known)` (the builder's) guards its keys and
    returns its entries, wrapping those not in `known`; the logged writes are then made on
    them.  `wrap` is the builder's, for one item.  `obj` is the dict itself while the
    trace runs."""

    __slots__ = ("tx", "obj", "v", "source", "fill", "wrap")

    def __init__(self, tx, obj: dict, v: DictV, source, fill, wrap):
        self.tx, self.obj, self.v, self.source = tx, obj, v, source
        self.fill, self.wrap = fill, wrap

    def __call__(self) -> None:
        tx, v = self.tx, self.v
        _check_open(tx, self.source)
        known = {h: e for h, e in v.known.items() if e is not ABSENT}
        tx.set(v, "unread", None)
        entries = self.fill(tx, self.obj, self.source, known)
        for h, key, x in v.writes:  # in order: a key deleted and stored again moves to the end
            if x is DELETED:
                del entries[h]
            else:
                old = entries.get(h)
                entries[h] = (old[0] if old else key, x)  # an equal key keeps its first object
        tx.set(v, "_entries", entries)
        tx.set(v, "known", {})
        tx.set(v, "writes", ())


def _check_open(tx, source) -> None:
    if tx.guards.sealed:
        raise AssertionError(f"the items of {source} were read after its entry's guards were built")


def lookup(tx, d: DictV, key: Value, h) -> tuple | None:
    """The entry (key value, value) at `key` (real key `h`, `keyed_key`) of unread `d`, or
    None where there is none: the trace's last write of it, else the real dict's, guarded."""
    for hk, _, x in reversed(d.writes):
        if hk == h:
            return None if x is DELETED else (key, x)
    return _read(tx, d, key, h)


def _read(tx, d: DictV, key: Value, h) -> tuple | None:
    """The real dict's entry at `key` (real key `h`) when the trace began, guarded: present
    with its value, or absent (NOT_PRESENT)."""
    e: tuple | object | None = d.known.get(h)
    if e is None:
        _check_open(tx, d.source)
        reader = d.unread
        obj = reader.obj
        if h in obj:
            e = (key, reader.wrap(tx, obj[h], item_source(reader.source, h)))
        else:
            tx.guard(GuardKind.NOT_PRESENT, reader.source, None, h)
            e = ABSENT
        tx.set(d, "known", {**d.known, h: e})
    return e if type(e) is tuple else None  # (or ABSENT)


def size(tx, d: DictV) -> int:
    """``len(d)`` of unread `d`: the real dict's length (guarded) and, for each key the trace
    wrote, whether it is there now against whether it was (guarded), without reading it
    whole."""
    _check_open(tx, d.source)
    obj = d.unread.obj
    tx.guard(GuardKind.LENGTH, d.source, len(obj))
    last = {h: (key, x) for h, key, x in d.writes}
    there = sum((x is not DELETED) - (_read(tx, d, key, h) is not None) for h, (key, x) in last.items())
    return len(obj) + there


def store(tx, d: DictV, key: Value, h, value: Value) -> None:
    """``d[key] = value`` on unread `d`, logged (the caller marks `d` written)."""
    tx.set(d, "writes", (*d.writes, (h, key, value)))


def remove(tx, d: DictV, key: Value, h) -> None:
    """``del d[key]`` on unread `d` holding `key` (the caller looked it up), logged."""
    tx.set(d, "writes", (*d.writes, (h, key, DELETED)))
