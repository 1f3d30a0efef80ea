"""Memoized guards: the checks whose facts live in watched dicts, re-run only when one changed.

Most of an nn.Module model's guard is about its module tree: ``m._modules['fc'] is fc``,
``'weight' not in m.__dict__``, ``m.padding[1] == 1``, the keys of ``m._parameters``...
Each of these reads nothing but dicts the guard function already holds in locals (each
identity-checked module's instance ``__dict__`` and its ``_parameters`` / ``_buffers`` /
``_modules`` stores, `guard_views.ModuleViews`) and immutable values found in them.  CPython
gives every dict a version tag that changes on every insertion, deletion and replacement
of a value, and every new dict a tag no other dict had (PEP 509; torch exposes it as
``torch._C._dynamo.guards.dict_version``).  So the tags of those dicts, all equal to the
tags of a call on which these checks all passed, mean the checks pass again: the guard
function compares one tuple of tags and skips them.  Any change (a swapped parameter, a
new attribute shadowing a store, a replaced ``__dict__``, a changed hyperparameter)
changes a tag, and the checks run in full, as before.

A check is memoized only when its truth is a function of the watched dicts' contents:

* its value is fetched from an identity-checked module through its view (a dict read), or
  by an index into an exact ``tuple`` so fetched (immutable), or it is a class attribute
  ``cls.attr`` of a class the entry holds that Python's lookup reads plainly from one class
  dict (`class_reads`: the class dicts ahead of it in the MRO and the metaclass dicts are
  watched too, the memo re-checks that they still make it a plain read, and the MRO tuples,
  which ``__bases__`` / ``__class__`` assignment change without touching a dict, are
  compared on every call); an exact dict so read (``Color._member_map_``) is watched;
* its kind looks only at the identity, the exact immutable type, the scalar value, the
  length or the keys of that value (`MEMO_KINDS`): a module's class (``__class__`` can be
  assigned without touching a dict), hooks (dicts mutated in place, not watched), tensor
  metadata (``requires_grad_``, ``resize_``, ``.data =``), class dicts and global state are
  checked on every call.

Only tags (ints) are kept between calls: nothing of the user's stays alive.  The tags
are read where the interpreter keeps them current on every store
(`dict_version_reader` probes that once); elsewhere nothing is memoized.  3.13 moves no
tag for a store through an object into its split dict (its inline values): the readers
give such a dict a fresh tag at every read, so checks on it run on every call there,
while the memo holds for every other dict (a class's, a module's globals, a table).
"""

from __future__ import annotations

import itertools
import sys
import types

from ...cfast import C
from .class_reads import ClassRead, class_dict, plain_class_read, plain_type
from .guard_kinds import GuardKind
from .sources import AttrSource, BuiltinSource, ConstSource, GlobalSource, ItemSource, ModuleAttrSource

_MRO_OF = vars(type)["__mro__"].__get__  # a class's tp_mro, read without its metaclass
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: no __class__ assignment on instances


def _probe(dv) -> bool:
    """Whether `dv` sees every kind of store the memoized checks depend on."""

    class Probe:
        a: int
        b: int
        x: int

    o = Probe()
    o.a = 1
    d = o.__dict__
    seen = [dv(d)]
    o.a = 2  # replace a value
    seen.append(dv(d))
    o.b = 1  # insert
    seen.append(dv(d))
    del o.a  # delete
    seen.append(dv(d))
    o.b = 3
    seen.append(dv(d))
    store: dict = {"w": 1}
    seen.append(dv(store))
    store["w"] = 2
    seen.append(dv(store))
    store.pop("w")
    seen.append(dv(store))
    cd = class_dict(Probe)
    if cd is None:
        return False
    seen.append(dv(cd))
    Probe.x = 1  # a class attribute
    seen.append(dv(cd))
    del Probe.x
    seen.append(dv(cd))
    return len(set(seen)) == len(seen) and dv({}) != dv({})


_READER: list = []


def dict_version_reader():
    """A reader of CPython's dict version tags if it tracks every store here (probed once),
    else None (no memo): bcfront's C one where it is built, else torch's ``dict_version``
    once torch is imported, else the tag read from the dict's memory (`_memory_reader`, the
    reference: `tests/frontend/test_cfast_guards.py` compares them).  Pure Python code
    captured before anything imported torch does not import it here."""
    if not _READER:
        reader = C.dict_version if C is not None else None  # the C fast path (`bcfront.cfast`)
        if reader is None and "torch" in sys.modules:
            try:
                from torch._C._dynamo.guards import dict_version as reader
            except Exception:  # noqa: BLE001 - a torch without it: the memory reader
                reader = None
        if reader is None:
            reader = _memory_reader()
        _READER.append(reader if reader is not None and _probe(reader) else None)
    return _READER[0]


def _memory_reader():
    """``ma_version_tag`` read where CPython 3.11-3.13 keep it in a dict object (after the
    object header and ``ma_used``), the field torch's ``dict_version`` reads; None where
    that layout is not known (another implementation, a free-threaded build, 3.14+).  On
    3.13 a split dict's tag is fresh at every read, as the C reader's.  `_probe` still
    checks it sees every store before the memo uses it."""
    import ctypes
    import sysconfig

    if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return None
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return None
    offset = 2 * ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
    field = ctypes.c_uint64.from_address
    # 3.13 keeps no tag current for a split dict (`ma_values`, after the tag and `ma_keys`):
    # each read of one is a tag never read before, as `_cdict.h`'s `dict_tag` reads it
    values = offset + 8 + ctypes.sizeof(ctypes.c_void_p) if sys.version_info[:2] == (3, 13) else None
    pointer = ctypes.c_void_p.from_address
    fresh = itertools.count()

    def dict_version(d) -> int:
        if type(d) is not dict:
            raise TypeError(f"expected a dict, got {type(d).__name__}")
        if values is not None and pointer(id(d) + values).value:
            return (1 << 63) | next(fresh)
        return field(id(d) + offset).value

    return dict_version


def _immutable_type(t) -> bool:
    return isinstance(t, type) and bool(t.__flags__ & _IMMUTABLE_TYPE) and not issubclass(t, types.ModuleType)


class Memo:
    """Which guards of one guard function are memoized; `views` is its `ModuleViews`."""

    def __init__(self, ns, views, guards) -> None:
        self.ns, self.views = ns, views
        self.const_dicts: dict[str, None] = {}  # spellings of constant dicts watched, in order
        # sources known to hold an exact tuple (their TYPE_MATCH or CONSTANT_MATCH says so)
        self.tuples = {
            g.source
            for g in guards
            if (g.kind == GuardKind.TYPE_MATCH and g.expected is tuple)
            or (g.kind == GuardKind.CONSTANT_MATCH and type(g.expected) is tuple)
        }
        self.const_tuples = {
            g.source for g in guards if g.kind == GuardKind.ID_MATCH and type(g.expected) is tuple
        }
        # sources whose identity check expects an exact dict (a function's __kwdefaults__):
        # that dict, held by the check, is what they read
        self.id_dicts = {
            g.source: g.expected for g in guards if g.kind == GuardKind.ID_MATCH and type(g.expected) is dict
        }
        # sources known to hold an exact dict (a table in a module's globals: ``_html5``)
        self.dicts = {g.source for g in guards if g.kind == GuardKind.TYPE_MATCH and g.expected is dict}
        # class attributes read plainly from a watched class dict (`class_reads`), and the
        # checks that keep them so: memoized (`structure`) and on every call (`every_call`)
        self.class_reads: dict = {}
        self.structure: dict[str, None] = {}
        self.every_call: dict[str, None] = {}
        self._read_class_attrs(guards)

    def _read_class_attrs(self, guards) -> None:
        """Find the class attributes ``cls.attr`` (of a class held by the entry) that are a
        plain read of a watched class dict now (`plain_class_read`) and whose value a guard
        pins to a plain type, and add what keeps that read plain to the guard."""
        ids = {g.source: g.expected for g in guards if g.kind == GuardKind.ID_MATCH}
        for g in guards:
            src = g.source
            if type(src) is not AttrSource or src in self.class_reads or _pin(g) is None:
                continue
            base = src.base
            cls = base.value.obj if type(base) is ConstSource else ids.get(base)
            read = plain_class_read(cls, src.attr) if isinstance(cls, type) else None
            if read is not None:
                self.class_reads[src] = read
                self._keep_plain(read, [p for h in guards if h.source == src and (p := _pin(h)) is not None])

    def _keep_plain(self, read: ClassRead, pins: list) -> None:
        """Watch the dicts `read` rests on; check in the memo that they still say what they
        said (the attribute nowhere ahead of its owner nor on a metaclass, no metaclass
        ``__getattribute__`` or ``__mro__``, the value found of a plain type), and on every
        call that the MROs are the same tuples (``__bases__`` / ``__class__`` assignment
        changes no dict)."""
        ns, attr = self.ns, read.attr
        found = f"{self._watch_class(read.owner)}[{attr!r}]"
        for pin in pins:
            self.structure[pin(ns, found)] = None
        for c in read.before:
            self.structure[f"{attr!r} not in {self._watch_class(c)}"] = None
        for m, entry in read.metas:
            d = self._watch_class(m)
            if entry is None:
                self.structure[f"{attr!r} not in {d}"] = None
            else:  # a plain attribute of the metaclass, which the class's own hides
                self.structure[f"{ns.helper('type')}({d}[{attr!r}]) is {ns.const(entry)}"] = None
            for name in ("__getattribute__", "__mro__"):
                self.structure[f"{name!r} not in {d}"] = None
        cls = ns.const(read.cls)
        mro = f"{cls}.__mro__"
        if any("__getattr__" in vars(m) for m, _ in read.metas):  # each class attribute read
            mro = f"{ns.const(_MRO_OF, hint='mro_of')}({cls})"  # calls it: read tp_mro itself
        self.every_call[f"{mro} is {ns.const(read.cls_mro, hint='mro')}"] = None
        if read.metas:
            meta_mro = ns.const(read.meta_mro, hint="meta_mro")
            self.every_call[f"{ns.helper('type')}({cls}).__mro__ is {meta_mro}"] = None

    def _watch_class(self, cls) -> str:
        d = class_dict(cls)
        assert d is not None  # (`plain_class_read` chose classes that have one)
        name = self.ns.const(d, hint=f"{cls.__name__}_classdict")
        self.const_dicts[name] = None
        return name

    def own_checks(self) -> list[tuple[str, bool]]:
        """The checks the memo adds to the guard where it is used, ``(expression,
        memoized)``: what keeps its class attributes plain reads (`_keep_plain`).  Where every
        check runs on every call, each reads ``cls.attr`` afresh: they are not needed."""
        return [(e, True) for e in self.structure] + [(e, False) for e in self.every_call]

    def watched_dict(self, src) -> bool:
        """`src` is a dict the guard function watches: a module's instance dict or exact-dict
        store (a local of its view), or a constant exact dict (a function's globals, or a
        dict an identity check pins: its checks are not memoized, they run on every call)."""
        pinned = self.id_dicts.get(src)
        if pinned is not None:
            return self._const_dict(pinned)
        t = type(src)
        if t is AttrSource:
            view = self.views.views.get(src.base)
            if view is not None and view.watched(src.attr):
                return True
            return self._class_dict(src) or self._fetched_dict(src)
        if t is ConstSource:
            return self._const_dict(src.value.obj)
        return self._fetched_dict(src)

    def _fetched_dict(self, src) -> bool:
        """`src` holds an exact dict (its type is guarded) reached only through watched dicts:
        watched too, spelled as that read (a replaced table is a new dict: a new tag; a
        missing one raises in the tags' read, and the guard fails).  A class attribute
        (``Color._member_map_``) is spelled as its read of the class dict that holds it."""
        if src not in self.dicts:
            return False
        if not self.fetched(src):
            return self._spelled_dict(src)
        read = self.class_reads.get(src)
        if read is not None:
            self.const_dicts[f"{self._watch_class(read.owner)}[{read.attr!r}]"] = None
            return True
        if type(src) not in (GlobalSource, ItemSource):
            return False
        self.const_dicts[self.ns.spell(src)] = None
        return True

    def _spelled_dict(self, src) -> bool:
        """`src` holds an exact dict reached through reads no watched dict decides (an
        object's attribute: ``_MIME.suffix_map``): watched as its spelling, read again on
        every call.  The tag found then equals the last passing call's only for the same
        dict, unchanged (a new dict has a tag no dict had), so the checks of its contents
        hold again; the checks of the way to it are not memoized (`fetched` refuses them).
        Not an object's own ``__dict__`` (3.13 gives that split dict a fresh tag per read),
        and only on a way from a global or a constant: a dict reached from an argument is
        most often another one each call, whose new tag would make the memo run every check
        on every call."""
        if type(src) is AttrSource and src.attr == "__dict__":
            return False
        step = src
        while type(step) in (AttrSource, ItemSource):
            if type(step) is ItemSource and type(step.key) not in (str, int, bytes):
                return False
            step = step.base
        if step is src or type(step) not in (GlobalSource, ConstSource):
            return False
        self.const_dicts[self.ns.spell(src)] = None
        return True

    def _class_dict(self, src) -> bool:
        """`src` is ``C.__dict__`` of a class held by the entry: its mappingproxy over the
        dict ``setattr(C, ...)`` writes, which is watched (`class_dict`)."""
        if not (type(src) is AttrSource and src.attr == "__dict__" and type(src.base) is ConstSource):
            return False
        d = class_dict(src.base.value.obj)
        if d is None:
            return False
        self.const_dicts[self.ns.const(d, hint=f"{src.base.value.obj.__name__}_classdict")] = None
        return True

    def _const_dict(self, obj) -> bool:
        if type(obj) is not dict:
            return False
        self.const_dicts[self.ns.const(obj)] = None
        return True

    def _tuple(self, src) -> bool:
        if type(src) is ConstSource:
            return type(src.value.obj) is tuple  # held by the entry: the same tuple always
        # spelled through the constant its identity check expects, or fetched and a tuple
        return src in self.const_tuples or (src in self.tuples and self.fetched(src))

    def fetched(self, src) -> bool:
        """`src`'s value is reached only through watched dicts and exact tuples."""
        t = type(src)
        if t is ModuleAttrSource:  # ``m.<where>[name]``: read from a watched store
            view = self.views.views.get(src.base)
            return view is not None and view.watched(src.where) and view.spell(src) is not None
        if t is AttrSource:  # ``m.__dict__[attr]`` (a store is itself a value there)
            if src in self.class_reads:  # ``cls.attr``, a plain read of a watched class dict
                return True
            view = self.views.views.get(src.base)
            return view is not None and src.attr != "__dict__" and view.spell(src) is not None
        if t is ItemSource and type(src.key) in (str, int, bytes):  # no user __eq__ in the lookup
            return self.watched_dict(src.base) or self._tuple(src.base)
        if t is GlobalSource:  # a name in a function's globals
            return self._const_dict(src.globals.obj)
        if t is BuiltinSource:
            return self._const_dict(src.builtins.obj)
        return False

    def memoized(self, g) -> bool:
        rule = MEMO_KINDS.get(g.kind)
        return rule is not None and g.source is not None and rule(self, g)


def _pin(g):
    """Where guard `g` pins its source's value to a `plain_type` (an identity, an exact
    type, a scalar): how to check the same of the value found in a class dict, else None."""
    v = g.expected
    if g.kind == GuardKind.ID_MATCH and plain_type(type(v)):
        return lambda ns, found: f"{found} is {ns.const(v)}"
    if g.kind == GuardKind.CONSTANT_MATCH and any(v is s for s in (None, True, False)):
        return lambda ns, found: f"{found} is {v!r}"
    t = v if g.kind == GuardKind.TYPE_MATCH else type(v) if g.kind == GuardKind.CONSTANT_MATCH else None
    if t is None or not plain_type(t) or (g.kind == GuardKind.CONSTANT_MATCH and t not in _SCALARS):
        return None
    return lambda ns, found: f"{ns.helper('type')}({found}) is {ns.const(t)}"


MEMO_KINDS = {
    # the object reached is the one the dict held when the checks last passed
    GuardKind.ID_MATCH: lambda m, g: m.fetched(g.source),
    GuardKind.TYPE_MATCH: lambda m, g: _immutable_type(g.expected) and m.fetched(g.source),
    GuardKind.CONSTANT_MATCH: lambda m, g: type(g.expected) in _SCALARS and m.fetched(g.source),
    GuardKind.LENGTH: lambda m, g: m.watched_dict(g.source) or m._tuple(g.source),
    GuardKind.NOT_PRESENT: lambda m, g: m.watched_dict(g.source),
    GuardKind.DICT_KEYS: lambda m, g: m.watched_dict(g.source),
    GuardKind.SAME_OBJECT: lambda m, g: m.fetched(g.source) and m.fetched(g.extra),
    GuardKind.DISTINCT_OBJECTS: lambda m, g: m.fetched(g.source) and m.fetched(g.extra),
}


def memo_body(
    ns,
    prologue: list[str],
    watched: list[str],
    exprs: list[tuple[str, bool]],
    miss: str | None = None,
    own: list[tuple[str, bool]] | None = None,
) -> list[str]:
    """The guard function's body from its checks, each ``(expression, memoized)`` in order:
    the memoized ones run only when a tag of `watched` changed.  Few of them (a reading
    of a tag costs about what a check does): every check on every call, in order.  `own`:
    checks that only keep the memo sound (`Memo.own_checks`), added where it is used.

    With `miss` (a name), the body of a guard that goes on into its region's code instead
    of returning: it returns `miss` where the guard fails, and falls through where it holds."""
    memo = [e for e, m in exprs if m]
    rest = [e for e, m in exprs if not m]
    if C is not None and dict_version_reader() is C.dict_version:
        if len(memo) < MIN_MEMOIZED_C:
            return _plain(prologue, [e for e, _ in exprs], miss)
        memo, rest = _with_own(memo, rest, own)
        return _wrap(_c_memo(ns, prologue, watched, memo, rest, miss), miss)
    if len(memo) < max(MIN_MEMOIZED, 2 * len(watched)):
        return _plain(prologue, [e for e, _ in exprs], miss)
    memo, rest = _with_own(memo, rest, own)
    dv = dict_version_reader()
    tags, version = ns.fresh("tags"), ns.const(dv, hint="dict_version")
    cell = ns.const([None], hint="memo")  # the tags of the last call whose memo checks passed
    lines = [
        *prologue,
        f"{tags} = (" + "".join(f"{version}({w}), " for w in watched) + ")",
        f"if {tags} != {cell}[0]:",
        "    if not (" + "\n            and ".join(memo) + "):",
        f"        return {miss or False}",
        f"    {cell}[0] = {tags}",
        *_last(rest or ["True"], miss),
    ]
    return _wrap(lines, miss)


def _with_own(memo: list[str], rest: list[str], own) -> tuple[list[str], list[str]]:
    own = own or []
    return memo + [e for e, m in own if m], rest + [e for e, m in own if not m]


def _c_memo(ns, prologue, watched, memo, rest, miss) -> list[str]:
    """The memo's test as one C call (`bcfront.cfast`: ``dicts_unchanged``, which compares the
    tags with the last passing call's and keeps the new ones for the store): the plain
    version in `memo_body` (a tuple of tags, compared) is its reference."""
    assert C is not None  # (memo_body's test)
    unchanged = ns.const(C.dicts_unchanged, hint="dicts_unchanged")
    cell = ns.const([None, None], hint="memo")  # [tags of the last passing call, tags now]
    return [
        *prologue,
        f"if not {unchanged}({cell}, {', '.join(watched)}):",
        "    if not (" + "\n            and ".join(memo) + "):",
        f"        return {miss or False}",
        f"    {cell}[0] = {cell}[1]",
        *_last(rest or ["True"], miss),
    ]


MIN_MEMOIZED = 8  # below this many memoizable checks, running them is as cheap as the memo
MIN_MEMOIZED_C = 2  # ... where the memo's test is one C call (`_c_memo`): about one check


def _plain(prologue: list[str], exprs: list[str], miss: str | None = None) -> list[str]:
    return _wrap([*prologue, *_last(exprs, miss)], miss)


def _last(exprs: list[str], miss: str | None) -> list[str]:
    """The conjunction of the checks run on every call: returned, or (`miss`) tested."""
    if miss is None:
        return ["return (" + "\n        and ".join(exprs) + ")"]
    return ["if not (" + "\n        and ".join(exprs) + "):", f"    return {miss}"]


def _wrap(lines: list[str], miss: str | None = None) -> list[str]:
    return (
        ["    try:"]
        + [f"        {line}" for line in lines]
        + ["    except Exception:", f"        return {miss or False}"]
    )
