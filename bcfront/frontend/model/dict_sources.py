"""Sources that read an instance of a Python dict subclass through its builtin base.

A subclass may override ``keys``, ``__iter__`` or ``__getitem__`` (transformers'
``ModelOutput`` reads ``out["k"]`` through ``dict(self.items())``, ``out[0]``
through ``to_tuple``): what the trace models is the storage the builtin keeps,
so the guards and the graph inputs read that storage the same way,
``dict.__getitem__(o, k)`` and ``OrderedDict.keys(o)``, never running the
subclass's own methods.
"""

from __future__ import annotations

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
