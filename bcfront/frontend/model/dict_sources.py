"""Sources that read an outside dict's storage as the builtin does, and number-subclass keys.

A subclass may override ``keys``, ``__iter__`` or ``__getitem__`` (transformers'
``ModelOutput`` reads ``out["k"]`` through ``dict(self.items())``, ``out[0]``
through ``to_tuple``): what the trace models is the storage the builtin keeps,
so the guards and the graph inputs read that storage the same way,
``dict.__getitem__(o, k)`` and ``OrderedDict.keys(o)``, never running the
subclass's own methods.

A key that is an instance of a Python subclass of int or float (``class K(int)``) with
the builtin's ``==`` and hash (`number_key`) equals, as a key, whatever its number
equals, and nothing of the user's runs when it is hashed or compared.  The DICT_KEYS
guard holds its number and its type (`key_stand_in`, never the object: a guard keeps no
user object alive), so it tells ``K(1)`` from ``1``, ``True`` and ``1.0``; the trace
reads the item by that number and the key object itself from its place in the dict
(`KeyAtSource`), on every call.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from ...ir.graph import is_literal
from .sources import DerivedSource, Ref, cache_hash


@cache_hash
@dataclass(frozen=True, slots=True)
class StoredKeysSource(DerivedSource):
    """``tuple(storage.keys(base))``: the keys the builtin base (`storage`, dict or
    OrderedDict: an OrderedDict keeps its own order) holds, in order."""

    storage: Ref

    def readable(self):
        return f"tuple({self.storage.label}.keys({self.base.readable()}))"

    def expr(self, ns):
        keys = f"{ns.const(self.storage.obj)}.keys"
        return f"{ns.helper('tuple')}({keys}({ns.spell(self.base)}))"


@cache_hash
@dataclass(frozen=True, slots=True)
class StoredItemSource(DerivedSource):
    """``dict.__getitem__(base, key)``: the stored item, not the subclass's ``[]``; `key` is
    a literal or an object held by identity (`Ref`)."""

    key: object

    def _key(self, spell):
        k = self.key.obj if isinstance(self.key, Ref) else self.key
        return repr(k) if is_literal(k) else spell(k)

    def readable(self):
        return f"dict.__getitem__({self.base.readable()}, {self._key(lambda k: repr(self.key))})"

    def expr(self, ns):
        getitem = ns.const(dict.__getitem__, "dict_getitem")
        return f"{getitem}({ns.spell(self.base)}, {self._key(ns.const)})"


def stored_item_source(base, key):
    if base is None:
        return None
    if not is_literal(key):
        key = Ref(key, repr(key))
    return StoredItemSource(base, key)


def stored_keys_source(base, storage):
    return None if base is None else StoredKeysSource(base, Ref(storage, storage.__name__))


@cache_hash
@dataclass(frozen=True, slots=True)
class KeyAtSource(DerivedSource):
    """``list(base)[index]``: the key object at position `index` of the exact dict or
    OrderedDict at `base` (its DICT_KEYS guard pins the keys' numbers and types)."""

    index: int

    def readable(self):
        return f"list({self.base.readable()})[{self.index}]"

    def expr(self, ns):
        return f"{ns.helper('list')}({ns.spell(self.base)})[{self.index}]"


_NUMBER_READ = {int: int.__int__, float: float.__float__}  # the stored number, exact


def number_key(k) -> type | None:
    """The builtin base (int or float) of `k` when it is an instance of a Python subclass of
    it that is no Enum member and whose ``__eq__`` and ``__hash__`` are that base's: as a
    key it hashes and compares as its number, with no code of the user's (a NaN never
    equals itself: not one).  The caller guards those two class lookups."""
    t = type(k)
    base = int if isinstance(k, int) else float if isinstance(k, float) else None
    if base is None or t is base or t is bool or isinstance(k, enum.Enum):
        return None
    for name in ("__eq__", "__hash__"):
        if next((c.__dict__[name] for c in t.__mro__ if name in c.__dict__), None) is not base.__dict__[name]:
            return None
    if base is float and math.isnan(float.__float__(k)):
        return None
    return base


def key_stand_in(k):
    """What a DICT_KEYS guard holds for key `k`: its number for a `number_key`, else `k`."""
    base = number_key(k)
    return k if base is None else _NUMBER_READ[base](k)
