"""Guards: the facts a captured graph relies on, compiled into one Python function.

A `Guard` names a source, a kind and the expected value.  `GuardSet` keeps
them deduplicated and in the order they were discovered (that order is the
"first use" order explain shows).  `GuardSet.function_body(ns)` turns them
into the body of one generated function: boolean expressions, cheapest kinds
first, joined with ``and``.  Tensor checks are batched into a single call to
torch's C++ ``TensorGuards`` when it is available (dtype, device, shape,
stride, requires_grad and dispatch keys in one call), with an equivalent
pure-Python expression otherwise.

nn.Module trees are most of a model's guard.  An identity-checked module
also gets its class guarded, and a value read through its ``_modules`` /
``_parameters`` / ``_buffers`` dicts (what ``nn.Module.__getattr__`` does)
gets the facts that lookup relies on: nothing of that name in the instance
``__dict__`` (which attribute lookup consults first) nor in an earlier store.
The generated function reads each such module's instance dict and stores
once into locals (`ModuleViews`) instead of going through
``nn.Module.__getattr__``-hooked attribute access for every check.

The kinds (`GuardKind`, with what each one's expected value holds, in
`guard_kinds.py`), their cost class and their readable form live in one
table, `KINDS`.  On a miss, `first_failure` evaluates the guards one at a time to say
which one failed, with the expected and the actual value.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import cast

from ...cfast import C
from ...ir.graph import is_literal, qualified_name
from .guard_batches import batch_code_checks, batch_item_checks
from .guard_kinds import GuardKind, ShapeCheck, StorageLayout, TensorMatch
from .guard_memo import Memo, dict_version_reader, memo_body
from .guard_views import STORES, ModuleViews
from .namespace import Namespace
from .sources import AttrSource, ConstSource, LocalSource, ModuleAttrSource, Ref


@dataclass(frozen=True, slots=True)
class Guard:
    """One checked fact; `GuardKind`'s meanings say what `expected` and `extra` hold per kind."""

    kind: GuardKind
    source: object  # a Source, or None for global state
    expected: object = None  # what the check compares with
    extra: object = None  # kind-specific (an attribute name, a state name, ...)
    first_use: object = None  # report.UserFrame where the value was first used
    # Example value used to build C++ tensor checks; not part of identity.
    example: object = field(default=None, compare=False, hash=False)

    @property
    def key(self):
        return (self.kind, self.source, self.extra)

    def readable(self) -> str:
        return KINDS[self.kind][1](self)


def _type_name(t) -> str:
    return qualified_name(t) or repr(t)


def _const_check(g: Guard, s: str, ns: Namespace) -> str:
    v = g.expected
    if v is None or v is True or v is False or v is Ellipsis:
        return f"{s} is {v!r}"
    t = type(v)
    tn = ns.const(t, hint=t.__name__)
    if t is float and math.isnan(v):
        return f"{ns.helper('type')}({s}) is {tn} and {s} != {s}"
    lit = repr(v) if is_literal(v) else ns.const(v)
    check = f"{ns.helper('type')}({s}) is {tn} and {s} == {lit}"
    if (t is set or t is frozenset) and C is not None:
        # {1} == {1.0} == {True}: the members' types too, each with its value -- in C
        # (`bcfront.cfast`), the plain check below being its reference
        types_ = ns.const({k: type(k) for k in cast(frozenset, v)}, "member_types")
        members = f"{ns.const(C.members_are, 'members_are')}({s}, {types_})"
        return _same_object_first(f"{ns.helper('type')}({s}) is {tn} and {members}", v, s, ns)
    if t is set or t is frozenset:
        # {1} == {1.0} == {True}: the members' types too, each with its value
        pairs = {(type(k), k) for k in v}
        z = f"{ns.helper('set')}({ns.helper('zip')}({ns.helper('map')}({ns.helper('type')}, {s}), {s}))"
        return _same_object_first(f"{check} and {z} == {ns.const(pairs, 'typed_members')}", v, s, ns)
    if t is tuple and _mixes_numbers(v):
        check += f" and {ns.helper('repr')}({s}) == {repr(v)!r}"  # (1,) == (1.0,) == (True,)
        return _same_object_first(check, v, s, ns)
    if t is tuple:
        return _same_object_first(check, v, s, ns)
    if t is float and v == 0.0:
        # -0.0 == 0.0, but str(), copysign and 1/x tell them apart (O50): the sign's own test
        sign = ns.const(math.copysign, hint="copysign")
        return f"{check} and {sign}(1.0, {s}) == {math.copysign(1.0, v)!r}"
    if _has_signed_zero(v):  # inside a complex or tuple: repr is exact
        check += f" and {ns.helper('repr')}({s}) == {repr(v)!r}"
    return check


def _same_object_first(check: str, v, s: str, ns: Namespace) -> str:
    """`check` of a constant tuple or frozenset, after an identity test against the object
    the trace read: an immutable object that is still the same one has the same value, and
    a module-level table (``keyword.kwlist``'s frozenset, an entity map's keys) then costs
    one ``is`` per call instead of a comparison of every member.  The guard holds the
    expected value already (for the comparison), so nothing new is kept alive."""
    if _deeply_immutable(v) and len(v) > 1:
        return f"({s} is {ns.const(v, 'expected')} or ({check}))"
    return check


def _leaves(v, into=(tuple,)):
    """The members of `v` that are not of the container types `into`, nested ones too (`v`
    itself when it is not one)."""
    work = [v]
    while work:
        x = work.pop()
        if type(x) in into:
            work.extend(x)
        else:
            yield x


_IMMUTABLE_SCALARS = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def _deeply_immutable(v) -> bool:
    """Whether `v` is a tuple/frozenset whose members are, recursively, immutable."""
    return all(type(x) in _IMMUTABLE_SCALARS for x in _leaves(v, (tuple, frozenset)))


def _mixes_numbers(v) -> bool:
    """A tuple (nested too) holding a bool, float or complex: == would confuse it with an int."""
    return any(type(x) in (bool, float, complex) for x in _leaves(v))


def _has_signed_zero(v) -> bool:
    """A float or complex zero (part), also inside a tuple: == cannot see its sign."""
    return any(
        (type(x) is float and x == 0.0) or (type(x) is complex and (x.real == 0.0 or x.imag == 0.0))
        for x in _leaves(v)
    )


def _key_text(key, ns) -> str:
    """A dict key in a check: its literal, or the constant (a class, a tuple holding one)."""
    return repr(key) if is_literal(key) else ns.const(key)


def _dict_keys_check(g: Guard, s: str, ns: Namespace) -> str:
    """The keys in order, and their types: ``1``, ``1.0`` and ``True`` are one key to a dict."""
    keys = list(g.expected)
    # `extra`: the shapes of keys that `expected` holds by their number (`dict_sources`)
    types_ = list(cast(tuple, g.extra)) if g.extra is not None else [key_shape(k) for k in keys]
    fast = getattr(C, "keys_are", None)  # (a build from before it: the plain check)
    if fast is not None and not any(type(k) is tuple for k in keys):
        # in C (`bcfront.cfast`): the same comparisons, without the calls of list, map and
        # type a program makes one by one (the plain check below is its reference)
        return f"{ns.const(fast, 'keys_are')}({s}, {ns.const(keys, 'keys')}, {ns.const(types_, 'key_types')})"
    check = f"{ns.helper('list')}({s}) == {ns.const(keys, 'keys')}"
    shape = ns.const(key_shape, "key_shape") if any(type(k) is tuple for k in keys) else ns.helper("type")
    if keys:
        typed = f"{ns.helper('list')}({ns.helper('map')}({shape}, {s}))"
        check += f" and {typed} == {ns.const(types_, 'key_types')}"
    return check


def key_shape(k):
    """A key's type; of a tuple, its items' shapes too (``(1, 2) == (True, 2.0)``, but
    they are not the same key to code that prints or encodes it)."""
    if type(k) is tuple:
        return (tuple, *map(key_shape, k))
    return type(k)


def _tensor_py(g: Guard, s: str, ns: Namespace) -> str:
    t = cast(TensorMatch, g.expected)
    head = (
        f"{ns.helper('type')}({s}) is {ns.const(t.ptype)} and {s}.dtype is {ns.const(t.dtype)} "
        f"and {s}.device == {ns.const(t.device)}"
    )
    tail = f" and {s}.requires_grad is {t.requires_grad!r}"
    if None not in t.shape and None not in t.stride:
        return f"{head} and {s}.shape == {t.shape!r} and {s}.stride() == {t.stride!r}{tail}"
    # symbolic sizes: the rank and the static sizes here, their relations in SHAPE guards
    checks = [f"{s}.dim() == {len(t.shape)}"]
    checks += [f"{s}.size({i}) == {d}" for i, d in enumerate(t.shape) if d is not None]
    checks += [f"{s}.stride({i}) == {d}" for i, d in enumerate(t.stride) if d is not None]
    return f"{head} and {' and '.join(checks)}{tail}"


def _dims_text(dims) -> str:
    return "[" + ", ".join("*" if d is None else str(d) for d in dims) + "]"


def _tensor_readable(g: Guard) -> str:
    t = cast(TensorMatch, g.expected)
    return (
        f"check_tensor({g.source.readable()}, {_type_name(t.ptype)}, {t.dtype}, "
        f"device={str(t.device)!r}, shape={_dims_text(t.shape)}, stride={_dims_text(t.stride)}, "
        f"requires_grad={t.requires_grad})"
    )


_WHOLE_SIZE_ITEM = re.compile(r"\.(size|stride)\(\)\[(\d+)\]")


def shape_code(check: ShapeCheck, spell, ns: Namespace | None = None, shapes: dict | None = None) -> str:
    """A SHAPE guard's expression with each placeholder spelled by `spell(source)`;
    ``t.size()[1]`` as ``t.size(1)`` (no torch.Size made per check).  With `shapes` (one
    guard function's), an input's sizes are read once: its first size read binds
    ``(local := t.shape)``, later ones index that local."""
    code = _WHOLE_SIZE_ITEM.sub(r".\1(\2)", check.code)
    for name, src in check.inputs:
        if shapes is not None and ns is not None and f"{name}.size(" in code:
            code = _bind_sizes(code, name, src, spell, ns, shapes)
        code = code.replace(name, f"({spell(src)})")
    if ns is not None:  # torch's printer names modules (``torch.sym_float(s0 - 4) ** 1.0``)
        code = _SHAPE_MODULE.sub(lambda m: _module_name(m, ns), code)
    return code


_SHAPE_MODULE = re.compile(r"(?<![\w.])(torch|math)\.")


def _module_name(m: re.Match, ns: Namespace) -> str:
    module = sys.modules.get(m.group(1))
    return f"{ns.const(module, m.group(1))}." if module is not None else m.group(0)


def _bind_sizes(code: str, name: str, src, spell, ns: Namespace, shapes: dict) -> str:
    def size(m: re.Match) -> str:
        local = shapes.get(src)
        if local is None:
            local = shapes[src] = ns.fresh("shape")
            return f"({local} := ({spell(src)}).shape)[{m.group(1)}]"
        return f"{local}[{m.group(1)}]"

    return re.sub(rf"{re.escape(name)}\.size\((\d+)\)", size, code)


def _shape_readable(g: Guard) -> str:
    legend = cast(ShapeCheck, g.extra).legend
    return f"{g.expected}  ({legend})" if legend else str(g.expected)


def _state_check(g: Guard, s: str, ns: Namespace) -> str:
    fn = ns.const(STATE_READERS[g.extra](), hint=f"state_{g.extra}")
    v = g.expected
    lit = repr(v) if is_literal(v) else ns.const(v)
    op = "is" if v is None or isinstance(v, bool) else "=="
    if not is_literal(v):
        op = "is"
    return f"{fn}() {op} {lit}"


def _distinct_check(g: Guard, ns: Namespace) -> str:
    ids = ", ".join(f"{ns.helper('id')}({ns.spell(x)})" for x in g.expected)
    return f"{ns.helper('len')}({{{ids}}}) == {len(g.expected)}"


def storage_signature(*tensors) -> tuple:
    """Which tensors share a storage, and at which offsets: for each, None when its
    storage is its own, else (index of the first tensor on that storage, storage_offset)."""
    first: dict = {}
    out = []
    for i, t in enumerate(tensors):
        s = t.untyped_storage()
        key = (str(t.device), s.data_ptr()) if s.nbytes() else ("empty", i)
        j = first.setdefault(key, i)
        out.append((j, t.storage_offset()))
    leaders = {j for j, _ in out}
    shared = {j for j in leaders if sum(1 for k, _ in out if k == j) > 1}
    return tuple(x if x[0] in shared else None for x in out)


def _storage_check(g: Guard, ns: Namespace) -> str:
    layout = cast(StorageLayout, g.expected)
    srcs = ", ".join(ns.spell(x) for x in layout.sources)
    return f"{ns.const(storage_signature)}({srcs}) == {layout.signature!r}"


# nn.Module.__call__ runs forward directly when these four are empty (the keyword and
# always-called dicts only refine hooks registered in them).
_HOOK_GATES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def _hooks_check(g: Guard, s: str, ns: Namespace) -> str:
    """``not (m._forward_hooks or ...)``, the dicts read afresh on every call: register_*_hook
    changes them in place, but a user may also replace one wholesale."""
    extra = cast("tuple[str, ...]", g.extra)
    gates = [n for n in extra if n in _HOOK_GATES]
    names = gates if len(gates) == len(_HOOK_GATES) else list(extra)
    return "not (" + " or ".join(ns.spell(AttrSource(g.source, n)) for n in names) + ")"


# kind -> (cost class, readable(g), code(g, source_expr, ns))
KINDS = {
    GuardKind.ID_MATCH: (
        0,
        lambda g: f"{g.source.readable()} is {describe(g.expected)}",
        lambda g, s, ns: f"{s} is {identity_name(ns, g.expected)}",
    ),
    GuardKind.TYPE_MATCH: (
        0,
        lambda g: f"type({g.source.readable()}) is {_type_name(g.expected)}",
        lambda g, s, ns: f"{ns.helper('type')}({s}) is {ns.const(g.expected)}",
    ),
    GuardKind.CONSTANT_MATCH: (1, lambda g: f"{g.source.readable()} == {g.expected!r:.80}", _const_check),
    GuardKind.LENGTH: (
        1,
        lambda g: f"len({g.source.readable()}) == {g.expected}",
        lambda g, s, ns: f"{ns.helper('len')}({s}) == {g.expected}",
    ),
    GuardKind.DICT_KEYS: (
        2,
        lambda g: f"list({g.source.readable()}.keys()) == {list(g.expected)!r:.120}, same types",
        lambda g, s, ns: _dict_keys_check(g, s, ns),
    ),
    GuardKind.NOT_PRESENT: (
        1,
        lambda g: f"{g.extra!r} not in {g.source.readable()}",
        lambda g, s, ns: f"{_key_text(g.extra, ns)} not in {s}",
    ),
    GuardKind.HASATTR: (
        1,
        lambda g: f"hasattr({g.source.readable()}, {g.extra!r}) is {g.expected}",
        lambda g, s, ns: f"{ns.helper('hasattr')}({s}, {g.extra!r}) is {g.expected!r}",
    ),
    GuardKind.NO_HOOKS: (
        1,
        lambda g: " and ".join(f"not {g.source.readable()}.{n}" for n in g.extra),
        _hooks_check,
    ),
    # `a is b` between two objects from outside, as the trace answered it (extra: b's source)
    GuardKind.SAME_OBJECT: (
        1,
        lambda g: f"{g.source.readable()} is {g.extra.readable()}",
        lambda g, s, ns: f"{s} is {ns.spell(g.extra)}",
    ),
    GuardKind.DISTINCT_OBJECTS: (
        1,
        lambda g: f"{g.source.readable()} is not {g.extra.readable()}",
        lambda g, s, ns: f"{s} is not {ns.spell(g.extra)}",
    ),
    GuardKind.GLOBAL_STATE: (
        2,
        lambda g: f"{STATE_NAMES[g.extra]}() == {describe(g.expected)}",
        _state_check,
    ),
    GuardKind.TENSOR_MATCH: (3, _tensor_readable, _tensor_py),
    GuardKind.TENSOR_ALIAS: (
        4,
        lambda g: f"{g.source.readable()} is {g.expected.readable()}",
        lambda g, s, ns: f"{s} is {ns.spell(g.expected)}",
    ),
    GuardKind.TENSOR_DISTINCT: (
        4,
        lambda g: "no two of " + ", ".join(x.readable() for x in g.expected) + " are the same tensor",
        lambda g, s, ns: _distinct_check(g, ns),
    ),
    GuardKind.SHAPE: (
        5,
        lambda g: _shape_readable(g),
        lambda g, s, ns: shape_code(cast(ShapeCheck, g.extra), ns.spell, ns),
    ),
    # inputs of a graph that writes input storage share storage exactly as when captured
    GuardKind.TENSOR_STORAGE: (
        4,
        lambda g: (
            "storage shared among "
            + ", ".join(x.readable() for x in g.expected.sources)
            + f" as captured: {g.expected.signature}"
        ),
        lambda g, s, ns: _storage_check(g, ns),
    ),
}


class WeakIdentity:
    """ID_MATCH's expected in a built entry, for an object held weakly (`held_weakly`): a
    weak reference to it and its description; a guard never keeps a user's object alive."""

    __slots__ = ("ref", "text")

    def __init__(self, obj):
        self.ref = weakref.ref(obj)
        self.text = describe(obj)

    def __repr__(self):
        return self.text


_STRONG = (type, types.FunctionType, types.ModuleType, types.BuiltinFunctionType, types.MethodType)


def held_weakly(obj) -> bool:
    """Whether an identity guard holds `obj` through a weak reference: an instance of a user
    class (a module, a plain object), not a class, function or module."""
    if isinstance(obj, _STRONG) or not type(obj).__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
        return False
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


def identity_name(ns: Namespace, obj) -> str:
    """The expression for the object an ID_MATCH guard expects: its constant, or a call of a
    weak reference to it (None once it is gone, which no source is)."""
    if isinstance(obj, WeakIdentity):
        ref = obj.ref
    elif held_weakly(obj):
        ref = weakref.ref(obj)
    else:
        return ns.const(obj)
    return f"{ns.const(ref, hint=type(ref()).__name__)}()"


def weak_expected(g: Guard) -> Guard:
    """`g` as a built entry keeps it: an ID_MATCH of an object held weakly expects a
    `WeakIdentity`."""
    import dataclasses

    if g.kind == GuardKind.ID_MATCH and held_weakly(g.expected):
        return dataclasses.replace(g, expected=WeakIdentity(g.expected))
    return g


def describe(v) -> str:
    name = qualified_name(v) if (callable(v) or isinstance(v, type)) else None
    if name:
        return name
    if type(v).__name__ == "module":
        return f"<module {v.__name__}>"
    text = repr(v)
    return text if len(text) < 80 else f"<{type(v).__name__} object>"


STATE_NAMES = {
    "grad": "torch.is_grad_enabled",
    "dtype": "torch.get_default_dtype",
    "autocast": "torch._C._is_any_autocast_enabled",
    "torch_function_mode": "torch._C._is_torch_function_mode_enabled",
    "inference": "torch.is_inference_mode_enabled",
    "dispatch_mode": "torch._C._len_torch_dispatch_stack",
    # queries of torch state folded into a trace (`semantics.torch_queries.STATE_QUERIES`)
    "jit_tracing": "torch._C._is_tracing",
    "anomaly": "torch.is_anomaly_enabled",
    "anomaly_nan": "torch.is_anomaly_check_nan_enabled",
    "deterministic": "torch._C._get_deterministic_algorithms",
    "num_threads": "torch.get_num_threads",
    "num_interop_threads": "torch.get_num_interop_threads",
    "cuda_capturing": "torch._C._cuda_isCurrentStreamCapturing",
}


def _torch_reader(path):
    def get():
        import torch

        obj = torch
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
        return obj

    return get


STATE_READERS = {k: _torch_reader(v) for k, v in STATE_NAMES.items()}


_AFTER_TENSOR_CHECKS = (
    GuardKind.TENSOR_ALIAS,
    GuardKind.TENSOR_DISTINCT,
    GuardKind.TENSOR_STORAGE,
    GuardKind.SHAPE,
)


def _is_module(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


class GuardSet:
    """Guards of one capture, deduplicated, in discovery order."""

    def __init__(self):
        self._guards: dict = {}
        self._looked_up: set = set()  # ModuleAttrSources whose lookup guards are in
        self._true: dict = {}  # key -> expected, of facts true by construction (`holds`)
        self.sealed = False  # the entry's guard function is built: a lazy guard is too late

    def drop_examples(self) -> None:
        """Forget the example values (real tensors, modules) the guards were built from."""
        for key, g in self._guards.items():
            if g.example is not None:
                self._guards[key] = dataclasses.replace(g, example=None)

    def discard(self, kind: GuardKind, source) -> None:
        """Drop the guard of `kind` on `source`: one added since checks what it did."""
        self._guards.pop((kind, source, None), None)

    def expected(self, kind: GuardKind, source):
        """What the guard of `kind` on `source` (or the fact `holds` states) expects."""
        g = self._guards.get((kind, source, None))
        return g.expected if g is not None else self._true.get((kind, source, None))

    def holds(self, kind: GuardKind, source, expected) -> None:
        """A fact the guard function's own binding makes true (a ``*args`` parameter is an
        exact tuple, a ``**kwargs`` one an exact dict): a guard stating it is not added."""
        self._true[(kind, source, None)] = expected

    def add(self, guard: Guard) -> None:
        if guard.key in self._guards or (self._true and self._true.get(guard.key, self) is guard.expected):
            return
        self._guards[guard.key] = guard
        if guard.kind == GuardKind.ID_MATCH and _is_module(guard.expected):
            # the identity says nothing of the class: `m.__class__ = Other` swaps forward
            self.add(
                Guard(GuardKind.TYPE_MATCH, guard.source, type(guard.expected), first_use=guard.first_use)
            )
        src = guard.source
        while src is not None:
            if type(src) is ModuleAttrSource:
                self._add_lookup_guards(src, guard.first_use)
            src = getattr(src, "base", None)

    def _add_lookup_guards(self, src: ModuleAttrSource, first_use) -> None:
        """What reading ``m.<name>`` from ``m.<where>[name]`` relies on: attribute lookup would
        find the name in the instance ``__dict__`` first, then nn.Module.__getattr__ in the
        stores before `where` (an empty store is guarded empty, one check for all names)."""
        if src in self._looked_up:
            return  # the same guards again: every key is in already
        owner = self._guards.get((GuardKind.ID_MATCH, src.base, None))
        if owner is None or not _is_module(owner.expected):
            return
        self._looked_up.add(src)
        d = owner.expected.__dict__
        self.add(Guard(GuardKind.NOT_PRESENT, AttrSource(src.base, "__dict__"), None, src.name, first_use))
        # a class attribute of that name (a property, say) would be found before
        # nn.Module.__getattr__ looks in the stores (L2); the class itself is guarded
        for cls in type(owner.expected).__mro__[:-1]:  # object's dict is fixed
            cls_dict = AttrSource(ConstSource(Ref(cls, cls.__qualname__)), "__dict__")
            self.add(Guard(GuardKind.NOT_PRESENT, cls_dict, None, src.name, first_use))
        for store in STORES[: STORES.index(src.where)] if src.where in STORES else ():
            if store not in d:
                continue
            if d[store]:
                self.add(Guard(GuardKind.NOT_PRESENT, AttrSource(src.base, store), None, src.name, first_use))
            else:
                self.add(Guard(GuardKind.LENGTH, AttrSource(src.base, store), 0, None, first_use))

    def restate(self, guard: Guard) -> None:
        """`guard` in place of the one with its key (a fact read again later in the trace,
        whose last value is what the entry relies on), or added."""
        old = self._guards.get(guard.key)
        if old is not None:
            guard = dataclasses.replace(guard, first_use=old.first_use)
        self._guards[guard.key] = guard

    def __iter__(self):
        return iter(self._guards.values())

    def __len__(self):
        return len(self._guards)

    def __contains__(self, key):
        return key in self._guards

    def ordered(self) -> list[Guard]:
        """Cheapest kinds first; discovery order within a kind (parents before children)."""
        return sorted(self._guards.values(), key=lambda g: KINDS[g.kind][0])

    def identity_checks(self, ns: Namespace, emit: bool = True, views=None) -> list[str]:
        """ID_MATCH checks, outermost sources first; each checked source is rebased in `ns`
        so later expressions reach through it from the constant (one lookup, not a chain).
        With `views`, an identity-checked nn.Module's dicts are read through its view."""
        out = []
        ids = [g for g in self._guards.values() if g.kind == GuardKind.ID_MATCH]
        for g in _by_depth(ids):
            name = identity_name(ns, g.expected)
            if emit:
                out.append(f"{ns.spell(g.source)} is {name}")
            if not (type(g.source) is LocalSource and name.endswith("()")):
                # a parameter stays spelled as itself: cheaper than calling the weak reference
                ns.rebased.setdefault(g.source, name)
            if views is not None and _is_module(g.expected):
                views.add(g.source, g.expected, name)
        return out

    def function_body(self, ns: Namespace, miss: str | None = None, skip=frozenset()) -> list[str]:
        """The body of the guard function: module dicts fetched into locals, then one
        conjunction of boolean expressions (cheapest first); any exception means False.
        The checks that read only watched dicts run only when a dict's version tag changed
        since they last passed (`guard_memo`).  With `miss`, the same checks ahead of
        other code: they return `miss` where the guard would return False.  `skip`: keys of
        guards whose checks the caller makes itself (left out; they still rebase)."""
        views = ModuleViews(ns)
        memo = Memo(ns, views, self._guards.values()) if dict_version_reader() is not None else None
        exprs = self._expressions(ns, views, memo, skip)
        if not exprs:
            return [] if miss is not None else ["    return True"]
        watched = views.watched() + list(memo.const_dicts if memo is not None else ())
        own = memo.own_checks() if memo is not None else None
        return memo_body(ns, views.prologue(), watched, exprs, miss, own)

    def _expressions(self, ns: Namespace, views, memo=None, skip=frozenset()) -> list[tuple[str, bool]]:
        """(expression, memoized) for each check, in evaluation order."""
        ids = _by_depth([g for g in self._guards.values() if g.kind == GuardKind.ID_MATCH])
        checks = self.identity_checks(ns, views=views)  # first: they make the views
        memoized = {g.key for g in self._guards.values() if memo is not None and memo.memoized(g)}
        head = [(e, g.key in memoized, g) for e, g in zip(checks, ids) if g.key not in skip]
        if C is not None:
            head = batch_code_checks(head, ns)
        tensors = []
        for g in self.ordered():
            if g.kind == GuardKind.ID_MATCH:
                continue
            if g.kind == GuardKind.TENSOR_MATCH:
                tensors.append(g)
                continue
            if g.kind in _AFTER_TENSOR_CHECKS:
                continue
            check = KINDS[g.kind][2](g, ns.spell(g.source) if g.source else "", ns)
            head.append((check, g.key in memoized, g))
        if C is not None:
            head = batch_item_checks(head, ns, self._guards)
        # Checks of the arguments first: they tell a call's entry from its siblings' (the
        # same function, other inputs), so a call tries each other entry's guard only up to
        # them.  The order changes no result: the checks are one conjunction, and any
        # exception is False.
        on_args = [c for c in head if _on_argument(c[2].source)]
        out = [(e, m) for e, m, _ in on_args] + [(e, m) for e, m, g in head if not _on_argument(g.source)]
        if tensors:
            out.append((_batched_tensor_check(tensors, ns), False))
        shapes: dict = {}  # source -> the local its .shape is bound to (SHAPE guards)
        for g in self.ordered():
            if g.kind == GuardKind.SHAPE:
                out.append((shape_code(cast(ShapeCheck, g.extra), ns.spell, ns, shapes), False))
            elif g.kind in _AFTER_TENSOR_CHECKS:
                out.append((KINDS[g.kind][2](g, ns.spell(g.source) if g.source else "", ns), False))
        return out


def _on_argument(src) -> bool:
    """`src` is read from a parameter of the guarded function."""
    return src is not None and type(src.root) is LocalSource


def _by_depth(guards: list[Guard]) -> list[Guard]:
    return sorted(guards, key=lambda g: source_depth(g.source))


def source_depth(src) -> int:
    n = 0
    while getattr(src, "base", None) is not None:
        src, n = src.base, n + 1
    return n


def _batched_tensor_check(guards: list[Guard], ns: Namespace) -> str:
    checker = _cxx_tensor_guards(guards)
    if checker is None:
        return " and ".join(f"({_tensor_py(g, ns.spell(g.source), ns)})" for g in guards)
    name = ns.const(checker.check, hint="check_tensors")
    return f"{name}({', '.join(ns.spell(g.source) for g in guards)})"


def _cxx_tensor_guards(guards: list[Guard]):
    """torch's C++ TensorGuards over the example tensors, or None if unavailable."""
    if any(g.example is None for g in guards):
        return None
    try:
        from torch._C._dynamo.guards import TensorGuards

        ex = [g.example for g in guards]
        # a symbolic size or stride is None in the expectation: TensorGuards skips it
        return TensorGuards(
            *ex,
            dynamic_dims_sizes=[list(cast(TensorMatch, g.expected).shape) for g in guards],  # type: ignore[misc]
            dynamic_dims_strides=[list(cast(TensorMatch, g.expected).stride) for g in guards],  # type: ignore[misc]
        )
    except Exception:  # noqa: BLE001 - an older/newer torch without this API: fall back to Python checks
        return None


def single_check_source(g: Guard, ns: Namespace) -> str:
    """One guard as a standalone expression (used to diagnose misses)."""
    return KINDS[g.kind][2](g, g.source.expr(ns) if g.source else "", ns)
