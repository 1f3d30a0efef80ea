"""Sources: how to fetch a value at run time, starting from the captured call's inputs.

A source is a small frozen dataclass.  It has two spellings:

* ``readable()`` — what explain shows, in TorchDynamo's notation:
  ``L['x']`` (a local/argument), ``G['w']`` (a global of the captured
  function), ``C['n']`` (a closure cell of the captured function),
  ``B['len']`` (a builtin), ``L['self'].fc1.weight`` ...;
* ``expr(ns)`` — a Python expression for generated code.  ``ns`` (a
  `namespace.Namespace`) spells locals and constants; user names become
  attribute or subscript text only when they are safe identifiers, otherwise
  they go through ``getattr``/constants, so nothing from user code is ever
  pasted into generated source unescaped.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ...cfast import C
from ...ir.graph import is_identifier, is_literal


class Ref:
    """Identity wrapper: lets a source hold an arbitrary object yet stay hashable."""

    __slots__ = ("obj", "label")

    def __init__(self, obj, label: str = ""):
        self.obj = obj
        self.label = label

    def __eq__(self, other):
        return isinstance(other, Ref) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return self.label or f"<{type(self.obj).__name__}>"


@dataclass(frozen=True)
class Source:
    __slots__ = ("_hash",)  # a derived source's hash, computed once (`cache_hash`)
    # fetching it has an effect: the region's call, made once (`InPlaceCallSource`)
    effect = False

    @property
    def guardable(self) -> bool:
        """Whether a guard may compute it: no source it reads (`reads`), at any depth, nor
        itself, has an `effect`."""
        todo, seen = [self], set()
        while todo:
            src = todo.pop()
            if src.effect:
                return False
            for part in src.reads():
                if id(part) not in seen:
                    seen.add(id(part))
                    todo.append(part)
        return True

    def reads(self):
        """The sources this one is fetched from: each of its fields that is a source, or a
        tuple holding sources -- whatever the class (a `DerivedSource`'s base, a
        `PureCallSource`'s arguments, a composite of sources yet to come)."""
        for name in _field_names(type(self)):
            v = getattr(self, name)
            if isinstance(v, Source):
                yield v
            elif type(v) is tuple:
                yield from (x for x in v if isinstance(x, Source))

    def readable(self) -> str:
        raise NotImplementedError

    def expr(self, ns) -> str:
        raise NotImplementedError

    @property
    def root(self) -> Source:
        return self

    def __str__(self) -> str:
        return self.readable()


_FIELDS: dict = {}


def _field_names(cls) -> tuple:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
    return names


def cache_hash(cls):
    """Class decorator (outside ``@dataclass``): the dataclass's own hash, computed once per
    object -- it hashes the whole chain of bases, and guards hash their sources often."""
    plain = cls.__hash__

    def __hash__(self):
        try:
            return self._hash
        except AttributeError:
            pass
        # bases first, innermost up: each hash then reads its base's cached one, so a deep
        # chain never recurses deeper than one level
        chain, src = [], self
        while isinstance(src, DerivedSource) and not hasattr(src, "_hash"):
            chain.append(src)
            src = src.base
        for s in reversed(chain):
            object.__setattr__(s, "_hash", getattr(type(s), "plain_hash", type(s).__hash__)(s))
        return self._hash

    cls.__hash__ = __hash__
    cls.plain_hash = plain  # the reference the test compares with
    return cls


@dataclass(frozen=True, slots=True)
class DerivedSource(Source):
    """A source read from another one, `base`: it has base's root."""

    base: Source

    @property
    def root(self):
        return self.base.root


@dataclass(frozen=True, slots=True)
class LocalSource(Source):
    name: str

    def readable(self):
        return f"L[{self.name!r}]"

    def expr(self, ns):
        return ns.local(self.name)


@dataclass(frozen=True, slots=True)
class GlobalSource(Source):
    name: str
    globals: Ref  # the globals dict the name is looked up in

    def readable(self):
        if self.globals.label == "G":
            return f"G[{self.name!r}]"
        return (
            f"{self.globals.label}.{self.name}"
            if is_identifier(self.name)
            else f"{self.globals.label}[{self.name!r}]"
        )

    def expr(self, ns):
        return f"{ns.const(self.globals.obj)}[{self.name!r}]"


@dataclass(frozen=True, slots=True)
class BuiltinSource(Source):
    name: str
    builtins: Ref

    def readable(self):
        return f"B[{self.name!r}]"

    def expr(self, ns):
        return f"{ns.const(self.builtins.obj)}[{self.name!r}]"


@dataclass(frozen=True, slots=True)
class CellSource(Source):
    """The contents of a closure cell object known at capture time (the captured function's)."""

    name: str
    cell: Ref

    def readable(self):
        return f"C[{self.name!r}]"

    def expr(self, ns):
        return f"{ns.const(self.cell.obj)}.cell_contents"


@dataclass(frozen=True, slots=True)
class ConstSource(Source):
    """An object held by identity (a class, a function object, a cell)."""

    value: Ref

    def readable(self):
        return repr(self.value)

    def expr(self, ns):
        return ns.const(self.value.obj)


@dataclass(frozen=True, slots=True)
class CallSource(Source):
    """``fn()`` of a function held by identity, called with nothing: a process-wide fact
    (the default process group, an ``lru_cache``'s ``cache_info()``)."""

    fn: Ref

    def readable(self):
        return f"{self.fn!r}()"

    def expr(self, ns):
        return f"{ns.const(self.fn.obj)}()"


@dataclass(frozen=True, slots=True)
class PureCallSource(Source):
    """``fn(*args)`` of a pure builtin held by identity, on other sources, literal
    constants and immutable constants held by identity (`Ref`): a value computed from the
    inputs, fetched by computing it again (`semantics.runtime_values`: ``s.upper()`` of a
    str argument known only at run time)."""

    fn: Ref
    args: tuple  # each a Source, a literal constant or a Ref
    kinds: tuple = ()  # the args' types: ``1`` and ``True`` are equal, not the same argument

    def _spelled(self, spell) -> str:
        out = []
        for a in self.args:
            if isinstance(a, Source):
                out.append(spell(a))
            elif isinstance(a, Ref):
                out.append(a.label or repr(a.obj))
            else:
                out.append(repr(a))
        return ", ".join(out)

    def readable(self):
        return f"{self.fn!r}({self._spelled(lambda a: a.readable())})"

    def expr(self, ns):
        parts = [
            ns.spell(a) if isinstance(a, Source) else ns.const(a.obj) if isinstance(a, Ref) else repr(a)
            for a in self.args
        ]
        fn = ns.const(self.fn.obj)
        ns.pure.add(fn)
        return f"{fn}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class InPlaceCallSource(Source):
    """``fn(*args)`` of a C call that changes its first argument, a list (``heappop``): made
    by the region once, first (`semantics.whole_lists`), never by a guard; `serial` tells
    two calls on the same arguments apart (each is made)."""

    fn: Ref
    args: tuple  # each a Source or a literal constant
    serial: int

    effect = True

    def readable(self):
        spelled = ", ".join(a.readable() if isinstance(a, Source) else repr(a) for a in self.args)
        return f"{self.fn!r}({spelled}) [call {self.serial}]"

    def expr(self, ns):
        parts = [ns.spell(a) if isinstance(a, Source) else repr(a) for a in self.args]
        return f"{ns.const(self.fn.obj)}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class RecheckedSource(Source):
    """``holder()``, a fact about process-wide state that `holder` checks again only when
    ``version()`` (a C function: ``abc.get_cache_token``) moved from ``holder.version``,
    the version it last held at; spelled so that the usual case is C calls and an
    attribute read, no Python frame: ``version() == holder.version or holder()``."""

    version: Ref
    holder: Ref

    def readable(self):
        return f"{self.holder!r}()"

    def expr(self, ns):
        held = ns.const(self.holder.obj)
        return f"({ns.const(self.version.obj)}() == {held}.version or {held}())"


@cache_hash
@dataclass(frozen=True, slots=True)
class AttrSource(DerivedSource):
    attr: str

    def readable(self):
        b = self.base.readable()
        return f"{b}.{self.attr}" if is_identifier(self.attr) else f"getattr({b}, {self.attr!r})"

    def expr(self, ns):
        b = ns.spell(self.base)
        if is_identifier(self.attr):
            return f"{b}.{self.attr}"
        return f"{ns.helper('getattr')}({b}, {self.attr!r})"


@cache_hash
@dataclass(frozen=True, slots=True)
class ItemSource(DerivedSource):
    """``base[key]`` for a constant key (an int, str, or an object held by identity)."""

    key: object

    def _key(self, spell):
        k = self.key.obj if isinstance(self.key, Ref) else self.key
        return repr(k) if is_literal(k) else spell(k)

    def readable(self):
        return f"{self.base.readable()}[{self._key(lambda k: repr(self.key))}]"

    def expr(self, ns):
        return f"{ns.spell(self.base)}[{self._key(ns.const)}]"


@cache_hash
@dataclass(frozen=True, slots=True)
class ModuleAttrSource(DerivedSource):
    """An nn.Module attribute stored in one of its dicts (`_parameters`, `_buffers`, `_modules`).

    Reads it from that dict directly: what ``module.name`` returns when the
    name is not in the instance ``__dict__`` (guarded by the module's type and
    the module's own dict layout), without nn.Module.__getattr__'s cost.
    """

    where: str
    name: str

    def readable(self):
        b = self.base.readable()
        return f"{b}.{self.name}" if is_identifier(self.name) else f"getattr({b}, {self.name!r})"

    def expr(self, ns):
        return f"{ns.spell(self.base)}.{self.where}[{self.name!r}]"


@cache_hash
@dataclass(frozen=True, slots=True)
class TypeSource(DerivedSource):
    def readable(self):
        return f"type({self.base.readable()})"

    def expr(self, ns):
        return f"{ns.helper('type')}({ns.spell(self.base)})"


def attr_source(base: Source | None, attr: str) -> Source | None:
    return AttrSource(base, attr) if base is not None else None


def item_source(base: Source | None, key) -> Source | None:
    if base is None:
        return None
    if not is_literal(key):
        key = Ref(key, repr(key))
    return ItemSource(base, key)


@cache_hash
@dataclass(frozen=True, slots=True)
class ReduceSource(DerivedSource):
    """``base.__reduce__()``: how a builtin iterator's state (sequence, position) is read."""

    def readable(self):
        return f"{self.base.readable()}.__reduce__()"

    def expr(self, ns):
        return f"{ns.spell(self.base)}.__reduce__()"


@cache_hash
@dataclass(frozen=True, slots=True)
class StorageOffsetSource(DerivedSource):
    """``base.storage_offset()`` of a tensor: not part of its TENSOR_MATCH guard, guarded when
    the trace folds a value that depends on it."""

    def readable(self):
        return f"{self.base.readable()}.storage_offset()"

    def expr(self, ns):
        return f"{ns.spell(self.base)}.storage_offset()"


@cache_hash
@dataclass(frozen=True, slots=True)
class CellFilledSource(DerivedSource):
    """Whether the cell at `base` holds a value (an empty cell's ``cell_contents`` raises)."""

    def readable(self):
        return f"{self.base.readable()}.cell_contents is set"

    def expr(self, ns):
        return f"{ns.const(cell_filled, 'cell_filled')}({ns.spell(self.base)})"


@cache_hash
@dataclass(frozen=True, slots=True)
class PlainFunctionSource(DerivedSource):
    """Whether the function at `base` still has the given names and module and no attributes
    of its own (what a `MadeFunctionV` answers without looking at the object)."""

    name: str
    qualname: str
    module: object

    def readable(self):
        return f"{self.base.readable()} named {self.qualname!r} in {self.module!r}, no attributes"

    def expr(self, ns):
        # evaluated in the order the names were made before: the constants' names depend on it
        fn = ns.const(plain_function, "plain_function")
        base = ns.spell(self.base)
        module = repr(self.module) if isinstance(self.module, str) else ns.const(self.module)
        return f"{fn}({base}, {self.name!r}, {self.qualname!r}, {module})"


@cache_hash
@dataclass(frozen=True, slots=True)
class BoundDescriptorSource(DerivedSource):
    """Whether the method at `base` (a builtin method or method-wrapper, a new object on
    every attribute read) is `descriptor` bound to its own ``__self__``: what identity says
    of it, with ``__self__`` guarded on its own source."""

    descriptor: Ref

    def readable(self):
        return f"{self.base.readable()} is {self.descriptor!r} bound to its __self__"

    def expr(self, ns):
        return bound_spelling(ns, ns.spell(self.base), self.descriptor.obj)


@cache_hash
@dataclass(frozen=True, slots=True)
class ItemsOfTypeSource(DerivedSource):
    """Whether the list at `base` is an exact list whose every item has exactly the type
    `item_type` (a builtin scalar type): what a call on a list whose items are not read
    needs to know (`semantics.whole_lists`), at any length."""

    item_type: Ref

    def readable(self):
        return f"every item of {self.base.readable()} is a {self.item_type.obj.__name__}"

    def expr(self, ns):
        xs, t = ns.spell(self.base), ns.const(self.item_type.obj)
        if C is not None:  # its C version (`bcfront.cfast`); the plain spelling is the reference
            return f"{ns.const(C.items_of_type, 'items_of_type')}({xs}, {t})"
        return f"{ns.const(items_of_type, 'items_of_type')}({xs}, {t})"


def items_of_type(xs, t) -> bool:
    """`xs` is an exact list whose every item has exactly type `t` (C's `items_of_type`)."""
    return type(xs) is list and all(type(x) is t for x in xs)


def bound_spelling(ns, method: str, descriptor) -> str:
    """The check that the method spelled `method` is `descriptor` bound to its own
    ``__self__`` (`bound_descriptor`): C's `bound_to` where built, else the comparison
    inline (a call of `bound_descriptor` cost more), the reference."""
    if C is not None:
        return f"{ns.const(C.bound_to, 'bound_to')}({method}, {ns.const(descriptor)})"
    t = f"{ns.helper('type')}({method}.__self__)"
    return f"({method} == {ns.const(descriptor)}.__get__({method}.__self__, {t}))"


@cache_hash
@dataclass(frozen=True, slots=True)
class SameBoundMethodSource(DerivedSource):
    """Whether the builtin method at `base` is `method`, the very object the trace read
    (held in a cell or a global: ``keyword.iskeyword``) -- or else one like it, `descriptor`
    bound to `self_obj` itself (a new object every attribute read makes: ``", ".join`` on
    the stack at a break).  One check where `BoundDescriptorSource` and the guards of
    ``__self__`` make three: `self_obj` is an immutable constant the guard may hold."""

    method: Ref
    descriptor: Ref
    self_obj: Ref

    def readable(self):
        return f"{self.base.readable()} is {self.descriptor!r} bound to {self.self_obj!r}"

    def expr(self, ns):
        m = ns.spell(self.base)
        t = f"{ns.helper('type')}({m}) is {ns.const(type(self.method.obj))}"
        bound = bound_spelling(ns, m, self.descriptor.obj)
        same = f"{m}.__self__ is {ns.const(self.self_obj.obj, 'self')}"
        return f"({m} is {ns.const(self.method.obj, 'method')} or ({t} and {bound} and {same}))"


def bound_descriptor(method, descriptor) -> bool:
    """`method` equals `descriptor` bound to ``method.__self__`` (same C function, same self)."""
    self = method.__self__
    return method == descriptor.__get__(self, type(self))


def plain_function(fn, name, qualname, module) -> bool:
    return fn.__name__ == name and fn.__qualname__ == qualname and fn.__module__ == module and not fn.__dict__


def cell_filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - reading an empty cell raises ValueError
    except ValueError:
        return False
    return True
