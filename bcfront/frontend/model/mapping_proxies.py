"""A mappingproxy from outside (``cls.__dict__``, ``types.MappingProxyType(d)``) over a dict.

Every read of a mappingproxy is its mapping's (``mp[k]``, ``k in mp``, ``len``, iteration,
``get``, ``keys``/``values``/``items``, ``copy``, ``==``), and that mapping may change
behind it between calls.  So the proxy is a `ProxyDictV`: a `DictV` of class
mappingproxy whose entries are, live, those of the dict it holds, which is wrapped as any
dict from outside is, guarded through its own source (`ProxiedSource`: the proxy's one
referent, its real mapping; ``DICT_KEYS`` and the items read there).  A write through the
proxy raises CPython's TypeError (`semantics`: a DictV of class mappingproxy); a write
to the dict through another path in the trace shows through the proxy, as natively.
A proxy over anything but an exact dict stays an opaque object.
"""

from __future__ import annotations

import gc
import types
from dataclasses import dataclass

from .guard_kinds import GuardKind
from .sources import DerivedSource, cache_hash
from .values import DictV, Value


def proxied(proxy):
    """The mapping a mappingproxy holds (its only referent: ``mappingproxy_traverse``);
    None for anything else."""
    if type(proxy) is not types.MappingProxyType:
        return None
    refs = gc.get_referents(proxy)
    return refs[0] if len(refs) == 1 else None


@cache_hash
@dataclass(frozen=True, slots=True)
class ProxiedSource(DerivedSource):
    """The mapping behind the mappingproxy at `base` (`proxied`)."""

    def readable(self):
        return f"proxied({self.base.readable()})"

    def expr(self, ns):
        return f"{ns.const(proxied, 'proxied')}({ns.spell(self.base)})"


class ProxyDictV(DictV):
    """A mappingproxy over the dict `mapping` (a DictV): its entries are the mapping's own,
    read and (by a journal rollback) set through it; the proxy itself is never written."""

    __slots__ = ("mapping",)

    def __init__(self, mapping: DictV, source=None):
        Value.__init__(self, source)  # not DictV's: it would set the entries
        self.mapping = mapping
        self.cls = types.MappingProxyType
        self.mutated = False
        self.attrs = None
        self.unread = None  # (read through `mapping`, which may be read key by key)

    @property  # type: ignore[override]
    def entries(self):
        return self.mapping.entries

    @entries.setter
    def entries(self, value):
        self.mapping.entries = value


def wrap_proxy(tx, obj, source, g, wrap, remember):
    """The `ProxyDictV` of mappingproxy `obj` at `source`, or None (left opaque)."""
    mapping = proxied(obj)
    if type(mapping) is not dict:
        return None
    g(GuardKind.TYPE_MATCH, source, types.MappingProxyType)
    inner = wrap(tx, mapping, ProxiedSource(source))
    if type(inner) is not DictV or inner.cls is not dict:
        return None  # keys a guard cannot compare: the dict is opaque, and so the proxy
    v = ProxyDictV(inner, source)
    remember(tx, obj, v, source)
    return v
