"""Instances of C container classes whose state the trace models: deque, StringIO, defaultdict.

A `CInstanceV` stands for an instance of the C class `cls`, made in the trace or read
from outside (`WRAPPERS`, with guards); its state lives in the slots of its subclass
and changes only through the journal.  Its methods and special methods are the
class's own C methods, each run by the model registered under that very method object
in `semantics.registry.MODELS` (found by `classes.lookup_dunder` and attribute
lookup), so a method without a model is a graph break, never a guess.

A value made in the trace leaves it as a real instance of `cls` with the same contents
(`rebuild`); the final state of one from outside is written back after the region's
other writes (`replay_ops`).  A defaultdict is a `DictV` (every dict operation applies)
that also holds its `factory`.
"""

from __future__ import annotations

import collections
import io
from dataclasses import dataclass

from ...errors import UnsupportedError
from ...ir.graph import is_literal
from ...reasons import BreakReason
from .guard_kinds import GuardKind
from .sources import DerivedSource, attr_source, cache_hash, item_source
from .values import Const, DictV, Value

DEQUE_ITER: type = type(iter(collections.deque()))
DEQUE_REV_ITER: type = type(reversed(collections.deque()))


class CInstanceV(Value):
    """An instance of C class `cls` whose state the trace holds (see the module docstring)."""

    __slots__ = ("cls", "mutated")

    def __init__(self, cls, source=None):
        super().__init__(source)
        self.cls = cls
        self.mutated = False

    def python_type(self):
        return self.cls

    def describe(self):
        return f"{self.cls.__name__}(...)"

    def hash_key(self):
        """What stands for it as a dict key: itself (hash by identity, as the class's)."""
        return self


class DequeV(CInstanceV):
    """A ``collections.deque``: `items` (a tuple of values, replaced on every change, so an
    iterator can tell a mutation), `maxlen` (an int or None)."""

    __slots__ = ("items", "maxlen")

    def __init__(self, items, maxlen=None, source=None):
        super().__init__(collections.deque, source)
        self.items = tuple(items)
        self.maxlen = maxlen

    def hash_key(self):
        from .tracer import SymbolicRaise

        raise SymbolicRaise(_type_error("unhashable type: 'collections.deque'"))

    def rebuild(self, rb) -> str:
        if self.source is not None:
            return self.source.expr(rb.ns)  # its writes are replayed
        ns = rb.ns
        # made empty first, under its name: an item may hold the deque itself
        name = rb.temp(f"{ns.const(collections.deque)}((), {self.maxlen!r})", self, "deque")
        if self.items:
            rb.emit(f"{name}.extend(({', '.join(rb.expr(x) for x in self.items)},))")
        return name

    def replay_ops(self, rb) -> None:
        target = rb.pinned(self.source.expr(rb.ns))
        items = ", ".join(rb.pinned_value(x) for x in self.items)
        # after the other writes: they were computed from values pinned before any write
        rb.positions.append(f"{target}.clear(); {target}.extend(({items}{',' if self.items else ''}))")


class DequeIterV(CInstanceV):
    """An iterator over the deque `deque` made in the trace: the `items` it started with
    (another items tuple in the deque means it was changed: RuntimeError, as CPython's),
    the next `index`, and whether it runs backwards (``reversed``)."""

    __slots__ = ("deque", "items", "index", "backwards")

    def __init__(self, deque, backwards=False):
        super().__init__(DEQUE_REV_ITER if backwards else DEQUE_ITER)
        self.deque = deque
        self.items = deque.items
        self.index = 0
        self.backwards = backwards

    def rebuild(self, rb) -> str:
        if self.deque.mutated and self.deque.source is not None:
            raise UnsupportedError(
                BreakReason.UNRECONSTRUCTABLE, "an iterator over an outside deque written meanwhile"
            )
        fn = rb.ns.helper("reversed" if self.backwards else "iter")
        name = rb.temp(f"{fn}({rb.expr(self.deque)})", self, "it")
        if self.index:
            rb.emit(f"for _ in {rb.ns.helper('range')}({self.index}): {rb.ns.helper('next')}({name})")
        return name


class StringIOV(CInstanceV):
    """An ``io.StringIO`` made in the trace: its text and position, both known (a write
    of text not known at capture is a graph break), and whether it is closed."""

    __slots__ = ("text", "pos", "closed")

    def __init__(self, text="", pos=0):
        super().__init__(io.StringIO)
        self.text = text
        self.pos = pos
        self.closed = False

    def rebuild(self, rb) -> str:
        ns = rb.ns
        name = rb.temp(f"{ns.const(io.StringIO)}({self.text!r})", self, "sio")
        if self.closed:
            rb.emit(f"{name}.close()")
        elif self.pos:
            rb.emit(f"{name}.seek({self.pos})")
        return name


class DefaultDictV(DictV):
    """A ``collections.defaultdict``: a dict whose missing keys call `factory` (a value,
    or None)."""

    __slots__ = ("factory",)

    def __init__(self, entries, factory, source=None):
        super().__init__(entries, collections.defaultdict, source)
        self.factory = factory

    def rebuild(self, rb) -> str:
        ns = rb.ns
        name = rb.temp(f"{ns.const(collections.defaultdict)}({rb.expr(self.factory)})", self, "dd")
        if self.entries:
            body = ", ".join(f"{rb.expr(k)}: {rb.expr(x)}" for k, x in self.entries.values())
            rb.emit(f"{name}.update({{{body}}})")
        return name


def _type_error(text):
    from .values import ExceptionV

    return ExceptionV(TypeError, [Const(text)])


@cache_hash
@dataclass(frozen=True, slots=True)
class DictGetSource(DerivedSource):
    """``dict.get(base, key)``: an item of a defaultdict read without running its
    ``__missing__`` (a guard must never insert a key); the key's presence is its DICT_KEYS
    guard's business."""

    key: object

    def readable(self):
        return f"{self.base.readable()}[{self.key!r}]"

    def expr(self, ns):
        key = repr(self.key) if is_literal(self.key) else ns.const(self.key)
        return f"{ns.const(dict.get, 'dict_get')}({ns.spell(self.base)}, {key})"


# -- from outside ---------------------------------------------------------------------------------


_KEY_TYPES = (int, str, bytes, float, bool, type(None))


def _wrap_deque(tx, obj, source, g, wrap, remember):
    g(GuardKind.TYPE_MATCH, source, collections.deque)
    g(GuardKind.LENGTH, source, len(obj))
    g(GuardKind.CONSTANT_MATCH, attr_source(source, "maxlen"), obj.maxlen)
    v = DequeV((), obj.maxlen, source)
    remember(tx, obj, v, source)
    v.items = tuple(wrap(tx, x, item_source(source, i)) for i, x in enumerate(obj))
    return v


def _wrap_defaultdict(tx, obj, source, g, wrap, remember):
    if not all(type(k) in _KEY_TYPES for k in obj):
        return None  # keys a DICT_KEYS guard cannot compare: an opaque object
    g(GuardKind.TYPE_MATCH, source, collections.defaultdict)
    g(GuardKind.DICT_KEYS, source, tuple(obj))
    factory = wrap(tx, obj.default_factory, attr_source(source, "default_factory"))
    v = DefaultDictV({}, factory, source)
    remember(tx, obj, v, source)
    v.entries = {k: (Const(k), wrap(tx, x, DictGetSource(source, k))) for k, x in obj.items()}
    return v


# type -> wrap(tx, obj, source, guard, wrap, remember) -> value, or None
# (left to the generic rules); `builder.wrap` asks for objects with a source
WRAPPERS = {collections.deque: _wrap_deque, collections.defaultdict: _wrap_defaultdict}
