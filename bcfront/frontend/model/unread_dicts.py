"""A big outside dict read key by key: only the keys the trace looks at are guarded.

A dict of more than `KEYED_MIN` entries from outside (a registry, a cache such as
``linecache.cache``, which every traceback or ``inspect`` call grows) is wrapped as a
`DictV` whose `unread` is a `DictReader`.  While unread, a lookup with a constant key
(``k in d``, ``d[k]``, ``d.get(k)``, ``d.pop(k)``, ``d.setdefault(k)``) guards that one
key -- present, its value wrapped from ``d[k]``, or absent (NOT_PRESENT) -- and a write
(``d[k] = v``, ``del d[k]``) is logged in `DictV.writes`, replayed on the real dict in
order after the graph (`write_replay`).  Any other read of the dict (its length, an
iteration, a copy, ``==``) reads it whole, as a smaller dict is at once: every key
guarded, every item wrapped (the reads so far kept), the logged writes made on it.

So a function that looks up a few keys of a dict of thousands does not guard (or wrap, or
compile a check for) all of them, and is not recompiled when an unrelated key is added.
TorchDynamo reads ``sys.modules`` so (and `semantics.sys_modules` here); this is that for
every plain dict.
"""

from __future__ import annotations

from .guard_kinds import GuardKind
from .sources import item_source
from .values import DELETED, Const, DictV, Value

KEYED_MIN = 64  # a dict from outside with more entries is read key by key
ABSENT = object()  # `DictV.known`: a key guarded absent

_KEY_TYPES = frozenset({str, int, bytes, bool, type(None)})


def keyed_read(d: Value, key: Value) -> bool:
    """Whether ``key``'s lookup in `d` is made key by key: `d` unread, `key` a constant
    whose hash and equality are the builtin's (a str, int, bytes, bool, None or a tuple of
    them; not a float: a NaN is only itself)."""
    return isinstance(d, DictV) and d.unread is not None and isinstance(key, Const) and _plain_key(key.value)


def _plain_key(k) -> bool:
    t = type(k)
    return t in _KEY_TYPES or (t is tuple and all(_plain_key(x) for x in k))


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
        for h, e in v.writes:  # in order: a key deleted and stored again moves to the end
            if e is DELETED:
                del entries[h]
            else:
                old = entries.get(h)
                entries[h] = (old[0], e[1]) if old else e  # an equal key keeps its first object
        tx.set(v, "_entries", entries)
        tx.set(v, "known", {})
        tx.set(v, "writes", ())


def _check_open(tx, source) -> None:
    if tx.guards.sealed:
        raise AssertionError(f"the items of {source} were read after its entry's guards were built")


def lookup(tx, d: DictV, key: Const) -> tuple | None:
    """The entry (key value, value) at constant `key` of unread `d`, or None where there is
    none: the trace's last write of it, else the real dict's, guarded."""
    h = key.value
    for hk, e in reversed(d.writes):
        if hk == h:
            return None if e is DELETED else e
    e = d.known.get(h)
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
    return None if e is ABSENT else e


def store(tx, d: DictV, key: Const, value: Value) -> None:
    """``d[key] = value`` on unread `d`, logged (the caller marks `d` written)."""
    tx.set(d, "writes", (*d.writes, (key.value, (key, value))))


def remove(tx, d: DictV, key: Const) -> None:
    """``del d[key]`` on unread `d` holding `key` (the caller looked it up), logged."""
    tx.set(d, "writes", (*d.writes, (key.value, DELETED)))
