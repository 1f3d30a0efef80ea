"""Wrap real objects met during the trace into symbolic values, installing guards.

`wrap(tx, obj, source)` is the single entry point.  The rules, by type:

==========================  ===================  ==========================================
object                      value                guards on `source`
==========================  ===================  ==========================================
int/float/bool/str/None...  Const                CONSTANT_MATCH (type and value)
torch dtype                 Const                ID_MATCH
torch device/layout/...     Const                CONSTANT_MATCH
tensor / Parameter          TensorV (graph in)   TENSOR_MATCH (+ TENSOR_ALIAS if seen before)
tuple / list / namedtuple   TupleV / ListV       TYPE_MATCH + LENGTH, items recursively
dict / OrderedDict          DictV                TYPE_MATCH + DICT_KEYS, values recursively
                                                 (an int/float-subclass key: its number
                                                 and type, the key read by position)
(and Python subclasses)                          (keys and items read through the builtin
                                                 base, + the instance __dict__, as a dict)
deque / defaultdict         DequeV/DefaultDictV  TYPE_MATCH + LENGTH + maxlen / DICT_KEYS,
                                                 items recursively (`c_instances`)
mappingproxy over a dict    ProxyDictV           TYPE_MATCH; its dict as a dict, guarded
                                                 through the proxy (`mapping_proxies`)
set / frozenset             SetV                 CONSTANT_MATCH
function, class, builtin,   ObjectV              ID_MATCH
module, nn.Module, Enum member
functools.partial           PartialV             TYPE_MATCH, parts recursively
bound method                MethodV              TYPE_MATCH, __func__/__self__ recursively
builtin method, method-     MethodV              TYPE_MATCH, bound from its class's
wrapper of an instance                           descriptor, __self__ recursively
cell                        CellV                (contents guarded when read)
generator a region rebuilt  OutsideGeneratorV    TYPE_MATCH, its code, stopped at its own
at a yield (resumed_gens)                        yield, not finished; stack and locals
anything else               ObjectV              TYPE_MATCH (attributes guarded when read)
==========================  ===================  ==========================================

Values with a source are memoized by identity for mutable objects and tuples,
so two paths to one object (a tuple passed twice, or reached again through what
it holds) yield one value (plus an alias guard): `tracer.remember`.  Tensors, and
int arguments made symbols under dynamic shapes, are graph inputs (`tensor_inputs`).
"""

from __future__ import annotations

import enum
import functools
import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from .c_instances import WRAPPERS as C_WRAPPERS
from .dict_sources import KeyAtSource, key_stand_in, number_key, stored_item_source, stored_keys_source
from .guard_kinds import GuardKind
from .guards import key_shape
from .hash_iters import HashIterator
from .list_objects import LIST_IMPLICIT, wrap_list_object
from .mapping_proxies import wrap_proxy
from .resumed_gens import wrap_resumed
from .sources import (
    BoundDescriptorSource,
    ItemSource,
    Ref,
    SameBoundMethodSource,
    attr_source,
    bound_descriptor,
    item_source,
)
from .tensor_inputs import dynamic_int, input_path, is_tensor, torch_mod, wrap_sym_int, wrap_tensor
from .tracer import remember
from .unread_dicts import KEYED_MIN, DictReader, plain_key
from .unread_lists import ListReader
from .values import CellV, Const, DictV, ListV, MethodV, ObjectV, PartialV, RuntimeV, SetV, TupleV

CONST_TYPES = frozenset(
    {
        int,
        float,
        bool,
        str,
        bytes,
        complex,
        type(None),
        type(Ellipsis),
        type(NotImplemented),
        range,
        types.CodeType,
    }
)
CONTAINER_LIMIT = 4096
NUMBER_KEYS_LIMIT = 32  # int/float-subclass keys of one dict: each is read back by position


def is_torch_const(obj) -> bool:
    torch = torch_mod()
    return torch is not None and isinstance(
        obj, (torch.dtype, torch.device, torch.layout, torch.memory_format)
    )


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def is_structseq_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "n_fields")


NESTING_LIMIT = 100  # containers in containers an input may nest: bcfront's own recursion


def wrap(tx, obj, source=None, guard=True):
    """The symbolic value for real object `obj` fetched from `source`; a graph break for
    one nested deeper than `NESTING_LIMIT` (the recursion here, in its guards' code and
    in a rebuild would overflow the stack a native call of that depth does not)."""
    depth = enter_nesting(tx)
    try:
        return _wrap(tx, obj, source, guard)
    finally:
        tx.__dict__["wrap_depth"] = depth


_RUNTIME_TYPES = frozenset({str, bytes, float, int})


def _runtime_scalar(tx, source, value) -> bool:
    """Whether str, bytes, float or int input `value` read from `source` is known only at
    run time (a `RuntimeV`): an argument, an item of one, a global or an attribute of an
    object reached from one (`input_path`: ``opt.param_groups[0]["lr"]``) that has varied
    (`ShapePolicy.value_dynamic`) -- an int only where it is not a symbol (torch not
    imported: the builder asked `dynamic_int` first)."""
    policy = tx.shape_policy
    if policy is None or source is None or not input_path(source):
        return False
    return policy.value_dynamic(source, value)


def _unchanging_path(tx, source) -> bool:
    """`source` is a parameter, or an item of a tuple (type guarded) reached from one: what
    the region reads there any time is what the call passed.  Elsewhere (a list item, an
    attribute) a write the region replays may replace it: the region reads such a runtime
    value once, first (`early_runtime_values`)."""
    while type(source) is ItemSource:
        source = source.base
        if tx.guards.expected(GuardKind.TYPE_MATCH, source) is not tuple:
            return False
    return type(source).__name__ == "LocalSource"


EARLY_RUNTIME = "early_runtime"  # tracer attribute: runtime values the region reads first


def runtime_input(tx, value, source) -> RuntimeV:
    """The runtime value `value` read from `source`, noted for an early read where the
    region could find it changed later (`_unchanging_path`)."""
    v = RuntimeV(value, source, tx)
    if not _unchanging_path(tx, source):
        tx.__dict__.setdefault(EARLY_RUNTIME, []).append(v)
    return v


def early_runtime_values(tx) -> list[RuntimeV]:
    """The runtime values the region must read before anything else it does (before the
    graph's inputs, which may be one of them): those still unread by the trace."""
    return [v for v in tx.__dict__.get(EARLY_RUNTIME, ()) if not v.pinned]


def enter_nesting(tx) -> int:
    """One level deeper into a value from outside: the depth before, to set back after
    (``tx.wrap_depth``); past `NESTING_LIMIT`, a graph break."""
    state = tx.__dict__
    depth = state.get("wrap_depth", 0)
    if depth >= NESTING_LIMIT:
        raise UnsupportedError(
            BreakReason.NESTING_DEPTH, f"a value nested deeper than {NESTING_LIMIT} levels"
        )
    state["wrap_depth"] = depth + 1
    return depth


def _wrap(tx, obj, source, guard):
    g = tx.guard if (guard and source is not None) else _no_guard
    t = type(obj)
    if t in CONST_TYPES:
        if t is int and guard and dynamic_int(tx, source, obj):
            return wrap_sym_int(tx, obj, source)
        if t in _RUNTIME_TYPES and guard and _runtime_scalar(tx, source, obj):
            g(GuardKind.TYPE_MATCH, source, t)  # its value only where the trace reads it
            return runtime_input(tx, obj, source)
        g(GuardKind.CONSTANT_MATCH, source, obj)
        return Const(obj, source)
    if is_tensor(obj):
        return wrap_tensor(tx, obj, source, guard)
    if is_torch_const(obj):
        torch = torch_mod()
        g(GuardKind.ID_MATCH if isinstance(obj, torch.dtype) else GuardKind.CONSTANT_MATCH, source, obj)
        return Const(obj, source)
    known = tx.by_id.get(id(obj)) if source is not None else None
    if known is not None and getattr(known, "obj", known) is not None:
        if known.source is not None and known.source != source and guard:
            if (GuardKind.ID_MATCH, known.source, None) in tx.guards:
                g(GuardKind.ID_MATCH, source, obj)
            else:  # an input reached twice (a bound method's __self__): the same object, not this one
                g(GuardKind.SAME_OBJECT, source, None, known.source)
        return known
    if t is tuple or is_namedtuple_class(t) or is_structseq_class(t) or _is_size(t):
        if len(obj) > CONTAINER_LIMIT:
            raise UnsupportedError(BreakReason.LARGE_CONTAINER, f"a {t.__name__} of {len(obj)} items")
        g(GuardKind.TYPE_MATCH, source, t)
        g(GuardKind.LENGTH, source, len(obj))
        # one value per outside tuple, like a list: `a is b` and a tuple reached again
        # through what it holds (a cycle) see the same value, not a copy
        v = TupleV((), t, source)
        if source is not None:
            remember(tx, obj, v, source)
        v.items = tuple(wrap(tx, x, item_source(source, i), guard) for i, x in enumerate(obj))
        return v
    if t is list:
        g(GuardKind.TYPE_MATCH, source, t)
        v = ListV([], source)
        remember(tx, obj, v, source)
        if guard and source is not None:
            # its length and items guarded and wrapped where the trace first reads them:
            # a list the trace only appends to (``history.append(loss)``) is not an entry
            # per length
            v.unread = ListReader(tx, obj, v, source, wrap, (NESTING_LIMIT, CONTAINER_LIMIT))
            tx.__dict__.setdefault("unread_lists", []).append(v)
            return v
        if len(obj) > CONTAINER_LIMIT:
            raise UnsupportedError(BreakReason.LARGE_CONTAINER, f"a list of {len(obj)} items")
        g(GuardKind.LENGTH, source, len(obj))
        v.items = [wrap(tx, x, item_source(source, i), guard) for i, x in enumerate(obj)]
        v.read_length = len(obj) if guard and source is not None else None
        return v
    if isinstance(obj, list):  # a list subclass leaving list's reads to list (`list_objects`)
        v = wrap_list_object(tx, obj, source, guard, wrap, remember, CONTAINER_LIMIT, guard_class_lookup)
        if v is not None:
            return v
    if obj is sys.modules:  # big and changed by every import: read key by key, never whole
        g(GuardKind.ID_MATCH, source, obj)
        if guard and source is not None:
            return _keyed_dict(tx, obj, source, _sys_modules_whole)
        v = ObjectV(obj, source)
        if source is not None:
            remember(tx, obj, v, source)
        return v
    if t is dict or _is_ordered_dict(t):
        # a big plain dict is read key by key (`unread_dicts`): whole, if ever, only where
        # the trace reads it whole (and then, past CONTAINER_LIMIT, a graph break)
        may_key = t is dict and guard and source is not None  # (a plain dict, read from somewhere)
        if not all(_is_constant_key(k, tx) for k in obj):
            # keys a DICT_KEYS guard cannot compare (``re._cache``'s tuples holding a class):
            # looked up key by key all the same, where each is a `plain_key`; never read whole
            if may_key and all(map(plain_key, obj)):
                g(GuardKind.TYPE_MATCH, source, t)
                return _keyed_dict(tx, obj, source)
            return _opaque(tx, obj, source, g)
        big = may_key and len(obj) > KEYED_MIN
        if len(obj) > CONTAINER_LIMIT and not big:
            return _opaque(tx, obj, source, g)
        keys = tuple(obj)
        held = tuple(map(key_stand_in, keys))  # no user object: a number-subclass key's number
        numbers = sum(h is not k for h, k in zip(held, keys))
        if numbers > NUMBER_KEYS_LIMIT or (numbers and len(obj) > CONTAINER_LIMIT):
            return _opaque(tx, obj, source, g)
        g(GuardKind.TYPE_MATCH, source, t)
        if big and not numbers:
            return _keyed_dict(tx, obj, source)
        v = DictV({}, t, source)
        remember(tx, obj, v, source)
        v.entries = _dict_entries(tx, obj, source, {}, guard)
        return v
    wrapper = C_WRAPPERS.get(t)  # deque, defaultdict: their state, guarded (`c_instances`)
    if t is types.MappingProxyType:
        wrapper = wrap_proxy
    if wrapper is not None and source is not None and len(obj) <= CONTAINER_LIMIT:
        v = wrapper(tx, obj, source, g, wrap, remember)
        if v is not None:
            return v
    storage = _dict_storage(t)
    if storage is not None:
        keys = tuple(storage.keys(obj))
        if len(keys) > CONTAINER_LIMIT or not all(type(k) in CONST_TYPES or is_torch_const(k) for k in keys):
            return _opaque(tx, obj, source, g)
        # an instance of a Python subclass of dict/OrderedDict: its items, read through the
        # builtin base (not the subclass's own keys()/[]: dict_sources), and its __dict__
        g(GuardKind.TYPE_MATCH, source, t)
        g(GuardKind.CONSTANT_MATCH, stored_keys_source(source, storage), keys)
        v = DictV({}, t, source)
        remember(tx, obj, v, source)
        v.entries = {
            k: (Const(k), wrap(tx, dict.__getitem__(obj, k), stored_item_source(source, k), guard))
            for k in keys
        }
        d = getattr(obj, "__dict__", None)
        if type(d) is dict:
            v.attrs = wrap(tx, d, attr_source(source, "__dict__"), guard)
        return v
    if t is set or t is frozenset:
        if len(obj) <= CONTAINER_LIMIT and all(type(k) in CONST_TYPES or _is_plain_class(k) for k in obj):
            # a copy of a set: the live set as the expected value would always equal itself (O48);
            # classes (a registry of types) compare by identity
            g(GuardKind.CONSTANT_MATCH, source, obj if t is frozenset else set(obj))
            v = SetV({k: _set_item(k) for k in obj}, t is frozenset, source)
            if t is set:
                remember(tx, obj, v, source)
            return v
        return _opaque(tx, obj, source, g)
    if t is functools.partial:
        g(GuardKind.TYPE_MATCH, source, t)
        func = wrap(tx, obj.func, attr_source(source, "func"), guard)
        args = wrap(tx, obj.args, attr_source(source, "args"), guard)
        kw = wrap(tx, obj.keywords, attr_source(source, "keywords"), guard)
        return PartialV(func, args.items, {k: e[1] for k, e in kw.entries.items()}, source)
    if t is types.MethodType:
        g(GuardKind.TYPE_MATCH, source, t)
        func = wrap(tx, obj.__func__, attr_source(source, "__func__"), guard)
        self_v = wrap(tx, obj.__self__, attr_source(source, "__self__"), guard)
        return MethodV(func, self_v, source)
    if (t is types.BuiltinMethodType or t is types.MethodWrapperType) and source is not None:
        raw = bound_descriptor_of(obj)
        if raw is not None and _immutable_constant(obj.__self__):
            # bound to a constant the guard may hold: the object itself first (one held in
            # a cell or a global is the same every call), else its pieces, in one check
            self_ref = Ref(obj.__self__, _describe(obj.__self__))
            g(
                GuardKind.CONSTANT_MATCH,
                SameBoundMethodSource(source, Ref(obj), Ref(raw, _describe(raw)), self_ref),
                True,
            )
            self_v = wrap(tx, obj.__self__, attr_source(source, "__self__"), False)
            return MethodV(ObjectV(raw), self_v, source)
        if raw is not None:
            # a new object on every attribute read: guarded by its pieces, not its identity
            g(GuardKind.TYPE_MATCH, source, t)
            g(GuardKind.CONSTANT_MATCH, BoundDescriptorSource(source, Ref(raw, _describe(raw))), True)
            self_v = wrap(tx, obj.__self__, attr_source(source, "__self__"), guard)
            return MethodV(ObjectV(raw), self_v, source)
    if t is types.CellType:
        return CellV(None, real=obj)
    if t in _ITERATOR_TYPES and source is not None:
        return _wrap_iterator(tx, obj, source, guard)
    if t is HashIterator and source is not None:
        return _wrap_hash_iterator(tx, obj, source, g)
    if t is types.GeneratorType and source is not None and guard:
        v = wrap_resumed(tx, obj, source, wrap, remember)  # one a region rebuilt at its yield
        if v is not None:
            return v
    if _is_id_matched(obj):
        g(GuardKind.ID_MATCH, source, obj)
        v = ObjectV(obj, source)
        if source is not None:
            remember(tx, obj, v, source)
        return v
    return _opaque(tx, obj, source, g)


def _immutable_constant(obj) -> bool:
    """`obj` is a scalar constant, or a tuple or frozenset of them: immutable, and what a
    guard of it holds (by value) anyway -- holding a method bound to it holds nothing more."""
    t = type(obj)
    if t is tuple or t is frozenset:
        return len(obj) <= CONTAINER_LIMIT and all(type(k) in CONST_TYPES for k in obj)
    return t in CONST_TYPES


# A class attribute naming the instance attribute a call of an instance stands for, as far
# as a trace is concerned: bcfront's own `CapturedFunction` says "target", so a captured
# function called inside captured code runs its original code, inlined, and neither its
# wrapper nor its cache of entries is traced (or touched) (TorchDynamo: `_torchdynamo_inline`).
CALL_THROUGH = "__bcfront_calls__"


def call_through(tx, fv):
    """The value a call of `fv` (an ObjectV) runs, when its class names one (`CALL_THROUGH`),
    fetched from `fv`'s source and guarded; None for anything else."""
    obj = fv.obj
    name = next((c.__dict__[CALL_THROUGH] for c in type(obj).__mro__ if CALL_THROUGH in c.__dict__), None)
    d = getattr(obj, "__dict__", None) if isinstance(name, str) else None
    if type(d) is not dict or name not in d:
        return None
    # the class (TYPE_MATCH on fv's source) is bcfront's; the instance attribute is guarded
    return wrap(tx, d[name], attr_source(fv.source, name))


def guard_class_lookup(tx, cls, name: str) -> None:
    """Guard that `name` still resolves on `cls`'s MRO as it does now (to the same object, or
    to nothing): what CPython's special-method lookup (``type(o).__len__``...) reads, which
    a patch of the class (``C.__len__ = f``, ``del C.__bool__``) changes.  Only the Python
    classes of the MRO are checked: a builtin class's dict cannot change."""
    from .sources import AttrSource, ConstSource

    for c in cls.__mro__:
        d = c.__dict__
        heap = c.__flags__ & _HEAPTYPE
        if heap:
            src = AttrSource(ConstSource(Ref(c, c.__qualname__)), "__dict__")
            if name in d:
                tx.guard(GuardKind.ID_MATCH, ItemSource(src, name), d[name])
            else:
                tx.guard(GuardKind.NOT_PRESENT, src, None, name)
        if name in d:
            return


def guard_list_class(tx, cls) -> None:
    """Guard that none of `list_objects.LIST_IMPLICIT` is defined on `cls`'s Python classes."""
    for name in LIST_IMPLICIT:
        guard_class_lookup(tx, cls, name)


def guard_storage_offsets(tx) -> None:
    """The trace folded a value read from a tensor's storage offset (``x.storage_offset()``,
    of an input or a view of one): guard every input tensor's offset, which the tensor
    guard does not check."""
    from .sources import StorageOffsetSource

    for v in tx.input_tensors:
        real = tx.real_tensors.get(id(v))
        if real is not None and v.source is not None:
            tx.guard(GuardKind.CONSTANT_MATCH, StorageOffsetSource(v.source), real.storage_offset())


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (its dict can change)


def _is_plain_class(k) -> bool:
    """A class whose metaclass hashes and compares it by identity."""
    m = type(k)
    return isinstance(k, type) and m.__hash__ is type.__hash__ and m.__eq__ is type.__eq__


_NO_KEY = object()


def _keyed_dict(tx, obj: dict, source, whole=None) -> DictV:
    """Outside dict `obj` (type guarded) as a `DictV` read key by key (`unread_dicts`);
    `whole` reads it whole where the trace needs that (`_dict_entries`, or a break)."""
    v = DictV({}, dict, source)
    remember(tx, obj, v, source)
    v.unread = DictReader(tx, obj, v, source, whole or _dict_entries, wrap)
    tx.__dict__.setdefault("unread_lists", []).append(v)
    return v


def _sys_modules_whole(tx, obj: dict, source, known: dict) -> dict:
    """`sys.modules` is never read whole: a guard on all its keys would fail at the next
    import anywhere (bcfront's own, while it captures, too), as TorchDynamo's
    ``PythonSysModulesVariable`` holds; its iteration, copy or comparison is a graph break."""
    raise UnsupportedError(
        BreakReason.UNSUPPORTED_DICT,
        f"sys.modules read whole ({len(obj)} modules, and every import adds one): only a lookup "
        "of a constant name (`in`, `[]`, `.get`, a store) is captured",
    )


def _dict_entries(tx, obj: dict, source, known: dict, guard: bool = True) -> dict:
    """The entries of outside dict `obj`, its keys guarded; the item of a key in `known`
    (read before, `unread_dicts`) is that entry.  A dict too big, or with keys a DICT_KEYS
    guard cannot compare, is a graph break."""
    if len(obj) > CONTAINER_LIMIT:
        raise UnsupportedError(BreakReason.LARGE_CONTAINER, f"a dict of {len(obj)} items read whole")
    odd = next((k for k in obj if not _is_constant_key(k, tx)), _NO_KEY)
    if odd is not _NO_KEY:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_DICT, f"a dict read whole with a key a guard cannot compare: {odd!r:.60}"
        )
    keys = tuple(obj)
    held = tuple(map(key_stand_in, keys))  # no user object: a number-subclass key's number
    numbers = any(h is not k for h, k in zip(held, keys))
    g = tx.guard if (guard and source is not None) else _no_guard
    g(GuardKind.DICT_KEYS, source, held, tuple(map(key_shape, keys)) if numbers else None)
    return {
        k: known.get(k)
        or (
            wrap(tx, k, KeyAtSource(source, i), guard) if h is not k else _set_item(k),
            wrap(tx, x, item_source(source, h), guard),
        )
        for i, (k, h, x) in enumerate(zip(keys, held, obj.values()))
    }


def _set_item(k):
    if isinstance(k, (type, enum.Enum)) or _is_typing_form(k):
        from .sources import ConstSource, Ref

        return ObjectV(k, ConstSource(Ref(k, getattr(k, "__qualname__", None) or repr(k))))
    return Const(k)


def _is_typing_form(k) -> bool:
    """A typing special form (``Union``, ``Literal``, ``Optional``): one object per name,
    hashed and compared by identity."""
    m = type(k)
    return m.__module__ == "typing" and m.__hash__ is object.__hash__ and m.__eq__ is object.__eq__


def _is_constant_key(k, tx=None) -> bool:
    """A dict key a DICT_KEYS guard can compare: a constant, or a class or typing form
    (compared by identity; both live as long as their module, so holding them leaks nothing
    of the user's), or an Enum member compared by the enum module or a builtin mixin
    (transformers keys its decoding methods by ``GenerationMode``).  huggingface_hub keys
    its type validators by ``Union``, ``list``, ..."""
    return (
        type(k) in CONST_TYPES
        or is_torch_const(k)
        or _is_plain_class(k)
        or _is_typing_form(k)
        or _is_plain_enum_key(k, tx)
        or _is_constant_tuple(k)
        or _is_plain_number_key(k, tx)
    )


def _is_plain_number_key(k, tx) -> bool:
    """An instance of an int or float subclass hashed and compared as its number
    (`dict_sources.number_key`); with `tx`, those class lookups are guarded."""
    if number_key(k) is None:
        return False
    if tx is not None:
        for name in ("__eq__", "__hash__"):
            guard_class_lookup(tx, type(k), name)
    return True


def _is_constant_tuple(k) -> bool:
    """An exact tuple of constants (nested too): ``{(1, "a"): ...}``; the DICT_KEYS guard
    checks the types inside it as well (`guards.key_shape`)."""
    return type(k) is tuple and all(type(x) in CONST_TYPES or _is_constant_tuple(x) for x in k)


def _is_plain_enum_key(k, tx) -> bool:
    """An Enum member whose ``==`` and hash are the enum module's or a builtin base's (a
    ``str`` mixin): as a key, one member equals only itself, and nothing of the user's
    runs.  With `tx`, those class lookups are guarded."""
    if not isinstance(k, enum.Enum):
        return False
    t = type(k)
    for name in ("__eq__", "__hash__"):
        raw = mro_lookup_raw(t, name)
        if isinstance(raw, types.FunctionType) and raw.__module__ != "enum":
            return False
    if tx is not None:
        for name in ("__eq__", "__hash__"):
            guard_class_lookup(tx, t, name)
    return True


def bound_descriptor_of(method):
    """The class attribute (a method or slot descriptor) that `method`, a builtin method or
    method-wrapper bound to an instance, is bound from; None for a function of a module, a
    method of a class, or one that is not its class's attribute of that name bound."""
    self = getattr(method, "__self__", None)
    if self is None or isinstance(self, (types.ModuleType, type)):
        return None
    name = getattr(method, "__name__", None)
    for cls in type(self).__mro__:
        raw = cls.__dict__.get(name) if isinstance(name, str) else None
        if raw is None:
            continue
        if not isinstance(raw, (types.MethodDescriptorType, types.WrapperDescriptorType)):
            return None
        try:
            return raw if bound_descriptor(method, raw) else None
        except Exception:  # noqa: BLE001 - an odd descriptor: keep the identity guard
            return None
    return None


def _describe(raw) -> str:
    owner = getattr(raw, "__objclass__", None)
    return f"{getattr(owner, '__qualname__', '?')}.{getattr(raw, '__name__', '?')}"


def _opaque(tx, obj, source, g):
    g(GuardKind.TYPE_MATCH, source, type(obj))
    v = ObjectV(obj, source)
    if source is not None:
        remember(tx, obj, v, source)
    return v


def _no_guard(*args, **kwargs):
    return None


def _is_id_matched(obj) -> bool:
    if isinstance(obj, enum.Enum):  # a singleton: `is` and `==` on it fold under this guard
        return True
    if isinstance(
        obj,
        (
            type,
            types.FunctionType,
            types.BuiltinFunctionType,
            types.ModuleType,
            types.MethodDescriptorType,
            types.WrapperDescriptorType,
            types.MethodWrapperType,
            types.ClassMethodDescriptorType,
            types.GetSetDescriptorType,
            types.MemberDescriptorType,
            property,
            staticmethod,
            classmethod,
        ),
    ):
        return True
    torch = torch_mod()
    if torch is not None and isinstance(obj, torch.nn.Module):
        return True
    return callable(obj) and type(obj).__module__ in (
        "builtins",
        "operator",
        "functools",
        "math",
        "itertools",
    )


def _is_size(t) -> bool:
    torch = torch_mod()
    return torch is not None and t is torch.Size


def _dict_storage(t):
    """The builtin base (dict or OrderedDict) whose storage holds the items of an instance of
    Python dict subclass `t`, or None; a class with its own ``__getattribute__`` is left
    opaque (the guards read its ``__dict__`` as an attribute)."""
    import collections

    if not (issubclass(t, dict) and t.__flags__ & (1 << 9)):  # Py_TPFLAGS_HEAPTYPE
        return None
    base = next(c for c in t.__mro__ if not c.__flags__ & (1 << 9))
    if base is not dict and base is not collections.OrderedDict:
        return None
    ga = next(c.__dict__["__getattribute__"] for c in t.__mro__ if "__getattribute__" in c.__dict__)
    return None if isinstance(ga, types.FunctionType) else base


def _is_ordered_dict(t) -> bool:
    import collections

    return t is collections.OrderedDict


_ITERATOR_TYPES = {
    type(iter(range(0))): "range",
    type(iter([])): "list",
    type(iter(())): "tuple",
    enumerate: "enumerate",
    zip: "zip",
    map: "map",
}


def _wrap_iterator(tx, it, source, guard):
    """A builtin iterator from outside, read through ``__reduce__`` (state guarded)."""
    from .sources import ReduceSource
    from .values import EnumerateIterV, MapIterV, RangeIterV, SeqIterV, ZipIterV

    kind = _ITERATOR_TYPES[type(it)]
    g = tx.guard if guard else _no_guard
    g(GuardKind.TYPE_MATCH, source, type(it))
    red = it.__reduce__()
    rsrc = ReduceSource(source)
    args = red[1]
    if kind in ("range", "list", "tuple"):
        if len(args) == 0 or (kind != "range" and len(red) < 3):
            v = SeqIterV(())  # exhausted
            v.source = None
            return v
        seq_src = item_source(item_source(rsrc, 1), 0)
        index = red[2] if len(red) > 2 and red[2] is not None else 0
        g(GuardKind.CONSTANT_MATCH, item_source(rsrc, 2), red[2] if len(red) > 2 else None)
        if kind == "range":
            g(GuardKind.CONSTANT_MATCH, seq_src, args[0])
            v = RangeIterV(args[0], index)
        else:
            seq = wrap(tx, args[0], seq_src, guard)
            if isinstance(seq, ObjectV) and seq.source is not None:
                seq = list_storage(tx, seq) or seq  # a list subclass keeping list's own reads
            if not isinstance(seq, (ListV, TupleV)):  # a list subclass (traceback's StackSummary)
                # the real iterator, opaque: stepping it breaks there, and the code after that
                # break steps it natively (no continuation needs it rebuilt)
                return _opaque(tx, it, source, g)
            v = SeqIterV(seq, index)
        v.source = source
        remember(tx, it, v, source)
        return v
    if kind == "enumerate":
        return EnumerateIterV(
            wrap(tx, args[0], item_source(item_source(rsrc, 1), 0), guard), _const_arg(g, rsrc, args, 1)
        )
    inner = [wrap(tx, a, item_source(item_source(rsrc, 1), i), guard) for i, a in enumerate(args)]
    if kind == "zip":
        # zip(strict=True) reduces to a third item, the flag; a plain zip to two (O37)
        g(GuardKind.LENGTH, rsrc, len(red))
        strict = False
        if len(red) > 2:
            g(GuardKind.CONSTANT_MATCH, item_source(rsrc, 2), red[2])
            strict = bool(red[2])
        return ZipIterV(inner, strict)
    return MapIterV(inner[0], inner[1:])


_LIST_READS = ("__iter__", "__len__", "__getitem__")


def list_storage(tx, v: ObjectV):
    """The items of `v`, an instance from outside of a Python subclass of list whose
    iteration, length and indexing are list's own (``LogitsProcessorList``), as a ListV
    standing for its storage: guarded on those class lookups, its length and each item
    (``v[i]``).  Only iteration reads it (the object itself stays `v`, with its class):
    an iterator over it crossing a break is rebuilt as ``iter(v)``, where it was.  None
    for anything else."""
    obj = v.obj
    t = type(obj)
    if not (isinstance(obj, list) and t is not list and len(obj) <= CONTAINER_LIMIT):
        return None
    if any(mro_lookup_raw(t, n) is not getattr(list, n) for n in _LIST_READS):
        return None
    for name in _LIST_READS:
        guard_class_lookup(tx, t, name)
    tx.guard(GuardKind.LENGTH, v.source, len(obj))
    return ListV([wrap(tx, x, item_source(v.source, i)) for i, x in enumerate(obj)], v.source)


def mro_lookup_raw(t, name):
    return next((c.__dict__[name] for c in t.__mro__ if name in c.__dict__), None)


def _wrap_hash_iterator(tx, it, source, g):
    """A dict/set iterator a region handed across a break: stepped in the trace over its
    container while it still yields that container's keys in order (`HashIterator.state`)."""
    from .values import HashIterV

    state = it.state
    g(GuardKind.TYPE_MATCH, source, type(it))
    g(GuardKind.CONSTANT_MATCH, attr_source(source, "state"), state)
    if state is not None:
        c = wrap(tx, it.container, attr_source(source, "container"), g is not _no_guard)
        if isinstance(c, (DictV, SetV)):
            v = HashIterV(c, state[0], tuple(c.entries), state[1])
            v.source = source
            remember(tx, it, v, source)
            return v
    return _opaque(tx, it, source, g)


def _const_arg(g, rsrc, args, i):
    g(GuardKind.CONSTANT_MATCH, item_source(item_source(rsrc, 1), i), args[i])
    return args[i]
