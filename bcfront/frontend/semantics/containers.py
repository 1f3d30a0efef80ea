"""Models of list, dict and set methods, and of generator methods.

Every mutation goes through the journal (`tx.set`) and marks containers that
came from outside as mutated, so the region replays their final contents.
"""

from __future__ import annotations

import collections
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import DefaultDictV
from ..model.mapping_proxies import ProxyDictV
from ..model.sources import ConstSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import (
    Const,
    DictV,
    DictViewV,
    ExceptionV,
    GeneratorV,
    ListV,
    ObjectV,
    SetV,
    TupleV,
    Value,
)
from . import dispatch, ops, set_order
from .classes import is_heap_type, mro_lookup
from .compare import compare, contains, equal
from .folding import NotConst, as_python, raise_
from .iteration import Exhausted, get_iter, to_list
from .ops import hkey
from .registry import MODELS, model
from .slots import SlotMethod


def _touch(tx, c) -> None:
    ops.touch(tx, c)


def _list(v) -> ListV:
    if not isinstance(v, ListV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"list method on {v.describe()}")
    return v


# -- list ------------------------------------------------------------------------------------


@model(list.append)
def _append(tx, args, kwargs):
    lst = _list(args[0])
    if not lst.append_unread(tx, args[1]):  # (an outside list's items unread: not read now)
        tx.set(lst, "items", lst.items + [args[1]])
    _touch(tx, lst)
    return Const(None)


@model(list.extend)
def _extend(tx, args, kwargs):
    lst = _list(args[0])
    ops.list_extend(tx, lst, to_list(tx, args[1]))
    return Const(None)


@model(list.insert)
def _insert(tx, args, kwargs):
    lst = _list(args[0])
    items = list(lst.items)
    items.insert(as_python(args[1]), args[2])
    tx.set(lst, "items", items)
    _touch(tx, lst)
    return Const(None)


@model(list.pop)
def _pop(tx, args, kwargs):
    lst = _list(args[0])
    items = list(lst.items)
    if not items:
        raise_(IndexError, "pop from empty list")
    i = as_python(args[1]) if len(args) > 1 else -1
    try:
        v = items.pop(i)
    except IndexError:
        raise_(IndexError, "pop index out of range")
    tx.set(lst, "items", items)
    _touch(tx, lst)
    return v


@model(list.remove)
def _remove(tx, args, kwargs):
    lst = _list(args[0])
    for i, x in enumerate(lst.items):
        if equal(tx, x, args[1]):
            tx.set(lst, "items", lst.items[:i] + lst.items[i + 1 :])
            _touch(tx, lst)
            return Const(None)
    raise_(ValueError, "list.remove(x): x not in list")


@model(list.clear)
def _clear(tx, args, kwargs):
    c = args[0]
    if isinstance(c, ListV):
        tx.set(c, "items", [])
    else:
        tx.set(c, "entries", {})
        if isinstance(c, SetV):
            set_order.record(tx, c, "clear", None)
    _touch(tx, c)
    return Const(None)


MODELS[dict.clear] = _clear
MODELS[set.clear] = _clear


@model(list.index, tuple.index)
def _index(tx, args, kwargs):
    seq = args[0]
    items = seq.items if isinstance(seq, (ListV, TupleV)) else None
    if items is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "index() on this value")
    try:  # start and stop are clipped like slice bounds (O14)
        bounds = [as_python(a) for a in args[2:4]]
        start, stop, _ = slice(*(bounds + [None, None])[:2]).indices(len(items))
    except (NotConst, TypeError):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "index() with these bounds") from None
    for i in range(start, stop):
        if equal(tx, items[i], args[1]):
            return Const(i)
    if isinstance(seq, TupleV):
        raise_(ValueError, "tuple.index(x): x not in tuple")
    text = MODELS[repr](tx, [args[1]], {})
    if not isinstance(text, Const):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "index() error message of this value")
    raise_(ValueError, f"{text.value} is not in list")


@model(list.count, tuple.count)
def _count(tx, args, kwargs):
    return Const(sum(1 for x in args[0].items if equal(tx, x, args[1])))


@model(list.reverse)
def _reverse(tx, args, kwargs):
    lst = _list(args[0])
    tx.set(lst, "items", lst.items[::-1])
    _touch(tx, lst)
    return Const(None)


def key_list(tx, items, key):
    """The sort keys of `items` (``key`` called on each, in order, as CPython does first)."""
    if key is None or (isinstance(key, Const) and key.value is None):
        return list(items)
    return [dispatch.call(tx, key, [x], {}) for x in items]


class _TracedKey:
    """A stand-in sort key whose ``<`` the trace answers: the real ``list.sort`` (this
    CPython's own algorithm) orders the stand-ins, so user ``__lt__`` methods run in the
    trace in exactly the order, and as many times, as natively."""

    __slots__ = ("tx", "v", "i")

    def __init__(self, tx, v, i):
        self.tx, self.v, self.i = tx, v, i

    def __lt__(self, other):
        return ops.truth(self.tx, compare(self.tx, "<", self.v, other.v))


@model(list.sort)
def list_sort(tx, args, kwargs):
    lst = _list(args[0])
    key = kwargs.get("key")
    reverse = as_python(kwargs["reverse"]) if "reverse" in kwargs else False
    items, empty = lst.items, []
    # CPython empties the list while it sorts: the key function sees [], and a change made
    # meanwhile is a ValueError once the sorted items are back (O55)
    tx.set(lst, "items", empty)
    try:
        keys = key_list(tx, items, key)
    except SymbolicRaise:
        tx.set(lst, "items", items)  # a failing key puts the items back, unsorted
        raise
    modified = lst.items is not empty
    try:
        consts = [as_python(k) for k in keys]
    except NotConst:  # user objects, or values compared by user code: compared in the trace
        traced = [_TracedKey(tx, k, i) for i, k in enumerate(keys)]
        try:
            traced.sort(reverse=bool(reverse))
        except SymbolicRaise:  # the items stay as the sort left them, as CPython's do
            tx.set(lst, "items", [items[t.i] for t in traced])
            raise
        order = [t.i for t in traced]
    else:
        try:
            order = sorted(range(len(consts)), key=consts.__getitem__, reverse=reverse)
        except TypeError as e:
            tx.set(lst, "items", items)
            raise SymbolicRaise(ExceptionV(TypeError, [Const(str(e))])) from None
    tx.set(lst, "items", [items[i] for i in order])
    _touch(tx, lst)
    if modified:
        raise_(ValueError, "list modified during sort")
    return Const(None)


@model(list.copy)
def _list_copy(tx, args, kwargs):
    return ListV(_list(args[0]).items)


# -- dict -------------------------------------------------------------------------------------


def _dict(v) -> DictV:
    if not isinstance(v, DictV) or isinstance(v, ProxyDictV):  # (``dict.get(proxy)`` raises)
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"dict method on {v.describe()}")
    return v


@model(dict.get)
def _get(tx, args, kwargs):
    e = ops.dict_entry(tx, _dict(args[0]), args[1])
    if e is not None:
        return e[1]
    return args[2] if len(args) > 2 else Const(None)


@model(dict.keys)
def _keys(tx, args, kwargs):
    return DictViewV(_dict(args[0]), "keys")


@model(dict.values)
def _values(tx, args, kwargs):
    return DictViewV(_dict(args[0]), "values")


@model(dict.items)
def _items(tx, args, kwargs):
    return DictViewV(_dict(args[0]), "items")


@model(dict.__len__)
def _dict_len(tx, args, kwargs):
    """``dict.__len__(d)``: the storage's size, also of a subclass with its own ``__len__``."""
    if len(args) != 1 or kwargs:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "dict.__len__ with other arguments")
    d = _dict(args[0])
    return Const(ops.dict_size(tx, d))


@model(dict.__getitem__)
def _dict_getitem(tx, args, kwargs):
    return ops.getitem(tx, args[0], args[1])


@model(dict.__contains__)
def _dict_contains(tx, args, kwargs):
    return Const(contains(tx, args[1], args[0]))


@model(dict.update)
def dict_update(tx, args, kwargs):
    d = _dict(args[0])
    src = args[1] if len(args) > 1 else None
    if src is not None and not isinstance(src, (DictV, DictViewV)) and hasattr(src.python_type(), "keys"):
        merge(tx, d, src, keys_checked=True)  # a mapping that is no dict: its keys() and []
    elif isinstance(src, DictV):
        merge(tx, d, src)
    elif src is not None:
        try:  # a pair that fails leaves the ones before it stored, as in CPython
            ops.dict_store_many(tx, d, _seq_pairs(tx, src))
        except SymbolicRaise:
            _touch(tx, d)
            raise
        _touch(tx, d)
    if kwargs:
        ops.dict_store_many(tx, d, ((Const(name), v) for name, v in kwargs.items()))
        _touch(tx, d)
    return Const(None)


def _seq_pairs(tx, src: Value):
    for i, item in enumerate(to_list(tx, src)):
        yield _update_pair(tx, i, item)


def merge(tx, d: DictV, src: Value, keys_checked: bool = False, on_equal_key=None) -> None:
    """CPython's ``dict_merge(d, src)`` (``dict(src)``, ``d.update(src)``, ``{**src}``,
    ``f(**src)``, ``src.copy()``), in its order.  A dict whose class iterates as dict
    does: its storage.  Otherwise the generic path, also for a mapping that is no dict (a
    ChainMap, a MappingProxyType, a user ``Mapping``): ``src.keys()`` called and listed
    (PyMapping_Keys; `keys_checked`: ``keys`` was looked up once before, by
    dict_update_arg), then for each key ``src[key]`` read and stored in `d` before the
    next is read (the user's ``__getitem__`` may look at `d`).  `on_equal_key(key)`,
    given, is called (to raise) for a key `d` already holds, before its value is read
    (``_PyDict_MergeEx(d, src, 2)``, a call's ``**``)."""
    if isinstance(src, DictV) and _iterates_as_dict(src.cls):
        pairs = list(src.entries.values())
        if on_equal_key is not None:  # (a call's ``**``: `d` is the call's new kwargs dict)
            for k, v in pairs:
                if ops.dict_entry(tx, d, k) is not None:
                    on_equal_key(k)
                ops.dict_store(tx, d, k, v)
            _touch(tx, d)
            return
        ops.dict_store_many(tx, d, pairs)
        _touch(tx, d)
        return
    keys = _subclass_keys(tx, src) if isinstance(src, DictV) else _mapping_keys(tx, src, keys_checked)
    for k in keys:
        if on_equal_key is not None and ops.dict_entry(tx, d, k) is not None:
            on_equal_key(k)
        v = ops.getitem(tx, src, k)
        ops.dict_store(tx, d, k, v)
        _touch(tx, d)


def _iterates_as_dict(cls: type) -> bool:
    """dict_merge's fast path: a dict whose ``__iter__`` is dict's (an OrderedDict too)."""
    return cls is dict or cls is collections.OrderedDict or mro_lookup(cls, "__iter__") is dict.__iter__


def _subclass_keys(tx, src: DictV) -> list:
    """``src.keys()`` listed, for a dict subclass iterating otherwise (maybe code of the
    user's)."""
    cls = src.cls
    if src.attrs is not None and "keys" in src.attrs.entries:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"merging a {cls.__name__} with its own keys")
    keys = mro_lookup(cls, "keys")
    if keys is dict.keys or keys is collections.OrderedDict.keys or isinstance(src, ProxyDictV):
        return [e[0] for e in src.entries.values()]
    if isinstance(keys, types.FunctionType):
        return to_list(tx, dispatch.call(tx, ObjectV(keys), [src], {}))
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"keys() of a {cls.__name__}")


def _mapping_keys(tx, src: Value, keys_checked: bool) -> list:
    """``PyMapping_Keys(src)`` of a value that is no DictV: ``src.keys()`` (looked up
    twice when dict_update_arg looked first), listed, with CPython's error for keys that
    do not iterate; a missing ``keys`` is the AttributeError the callers reword."""
    cls = src.python_type()
    if issubclass(cls, dict):  # dict_merge reads a dict subclass's storage, not its methods
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"dict update from a {cls.__name__} mapping")
    look_up = ObjectV(getattr)
    if keys_checked:
        dispatch.call(tx, look_up, [src, Const("keys")], {})
    keys = dispatch.call(tx, dispatch.call(tx, look_up, [src, Const("keys")], {}), [], {})
    try:
        it = get_iter(tx, keys)
    except SymbolicRaise as e:
        if not issubclass(e.exc.python_type(), TypeError):
            raise
        made = _type_name(keys.python_type())
        raise_(TypeError, f"{_type_name(cls)}.keys() returned a non-iterable (type {made})")
    return to_list(tx, it)


def _type_name(cls: type) -> str:
    """A class's C ``tp_name``: its name for a class made by a class statement, the dotted
    name a C type declares (``collections.OrderedDict``) otherwise."""
    if is_heap_type(cls) or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def _update_pair(tx, i: int, item):
    """Element `i` of a dict update sequence as a key/value pair, with CPython's errors (O51)."""
    cls = item.python_type()
    if not (hasattr(cls, "__iter__") or hasattr(cls, "__getitem__")):
        raise_(TypeError, f"cannot convert dictionary update sequence element #{i} to a sequence")
    items = to_list(tx, item)
    if len(items) != 2:
        raise_(ValueError, f"dictionary update sequence element #{i} has length {len(items)}; 2 is required")
    return items[0], items[1]


@model(dict.pop)
def _dict_pop(tx, args, kwargs):
    d = _dict(args[0])
    e = ops.dict_remove(tx, d, args[1])
    if e is None:
        if len(args) > 2:
            return args[2]
        raise SymbolicRaise(ExceptionV(KeyError, [args[1]]))
    _touch(tx, d)
    return e[1]


@model(dict.popitem)
def _popitem(tx, args, kwargs):
    d = _dict(args[0])
    if not d.entries:
        raise_(KeyError, "popitem(): dictionary is empty")
    entries = dict(d.entries)
    k, v = entries.popitem()[1]
    tx.set(d, "entries", entries)
    _touch(tx, d)
    return TupleV((k, v))


@model(dict.setdefault)
def _setdefault(tx, args, kwargs):
    d = _dict(args[0])
    e = ops.dict_entry(tx, d, args[1])
    if e is not None:
        return e[1]
    v = args[2] if len(args) > 2 else Const(None)
    ops.dict_store(tx, d, args[1], v)
    _touch(tx, d)
    return v


@model(dict.copy)
def _dict_copy(tx, args, kwargs):
    """``dict.copy(d)``: a plain dict, also of a subclass instance (CPython's PyDict_Copy)."""
    d = _dict(args[0])
    if d.cls is dict:
        return DictV(d.entries)
    return _plain_dict(tx, d)


def _plain_dict(tx, src: DictV) -> DictV:
    made = DictV({})
    merge(tx, made, src)
    return made


@model(collections.OrderedDict.copy)
def _ordered_dict_copy(tx, args, kwargs):
    """``OrderedDict.copy``: ``type(self)(self)``, a subclass's constructor included."""
    d = _dict(args[0])
    if d.cls is collections.OrderedDict:
        return DictV(d.entries, d.cls)
    if not issubclass(d.cls, collections.OrderedDict):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"OrderedDict.copy of a {d.cls.__name__}")
    return dispatch.call(tx, ObjectV(d.cls, ConstSource(Ref(d.cls, d.cls.__qualname__))), [d], {})


def dict_or(tx, a: Value, b: Value, inplace: bool):
    """``a | b`` / ``a |= b`` with a dict (or subclass) on either side, as CPython's
    dict_or / odict_or build it (None: not two mappings).  dict's: a plain dict, copied
    then updated; an OrderedDict's (either side, the reflected one first): ``type(od)(a)``
    then updated with ``b``."""
    if not (isinstance(a, DictV) and isinstance(b, DictV)):
        return None
    if _own_or(a, "__ior__" if inplace else "__or__") or _own_or(b, "__ror__"):
        return None  # Counter's |: its Python code, through the operator's dunders
    kind = a if isinstance(a, DefaultDictV) else b if a.cls is dict else None
    if not inplace and isinstance(kind, DefaultDictV):
        # defaultdict's __or__, or its __ror__ (a subclass's reflected one runs first): a
        # defaultdict with that factory
        made = DefaultDictV(a.entries, kind.factory)
        dict_update(tx, [made, b], {})
        return made
    od = collections.OrderedDict
    if inplace and isinstance(a, ProxyDictV):
        raise_(TypeError, "'|=' is not supported by mappingproxy; use '|' instead")
    if inplace:
        if issubclass(a.cls, od) and a.cls is not od:
            raise UnsupportedError(BreakReason.UNSUPPORTED_OPERATOR, f"|= on a {a.cls.__name__}")
        dict_update(tx, [a, b], {})
        return a
    for x in (b, a) if issubclass(b.cls, od) and not issubclass(a.cls, b.cls) else (a, b):
        if issubclass(x.cls, od):
            if x.cls is od:
                new = DictV({}, od)
                dict_update(tx, [new, a], {})
            else:
                clsv = ObjectV(x.cls, ConstSource(Ref(x.cls, x.cls.__qualname__)))
                new = dispatch.call(tx, clsv, [a], {})
                if not isinstance(new, DictV):
                    raise UnsupportedError(BreakReason.UNSUPPORTED_OPERATOR, f"| on a {x.cls.__name__}")
            dict_update(tx, [new, b], {})
            return new
    new = _plain_dict(tx, a)
    dict_update(tx, [new, b], {})
    return new


def _own_or(d: DictV, name: str) -> bool:
    return isinstance(mro_lookup(d.cls, name), types.FunctionType)


# reached by `ops.container_binary` (below this module) through the table
MODELS["dict |"] = lambda tx, args, kwargs: dict_or(tx, args[0], args[1], args[2].value)


@model(dict.fromkeys)
def _fromkeys(tx, args, kwargs):
    keys = to_list(tx, args[0])
    value = args[1] if len(args) > 1 else Const(None)
    entries = {}
    for k in keys:
        entries.setdefault(hkey(tx, k), (k, value))  # of equal keys the first stays
    return DictV(entries)


for _name in (
    "keys",
    "values",
    "items",
    "get",
    "pop",
    "update",
    "setdefault",
    "popitem",
    "__getitem__",
    "__contains__",
    "clear",
):
    _od = getattr(collections.OrderedDict, _name, None)
    _d = getattr(dict, _name)
    if _od is not None and _od is not _d and _d in MODELS:
        MODELS[_od] = MODELS[_d]


# -- set -------------------------------------------------------------------------------------


def _set(v) -> SetV:
    if not isinstance(v, SetV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"set method on {v.describe()}")
    return v


@model(set.add)
def _set_add(tx, args, kwargs):
    s = _set(args[0])
    hk = hkey(tx, args[1])
    if hk not in s.entries:
        tx.set(s, "entries", {**s.entries, hk: args[1]})
        set_order.record(tx, s, "adds", (hk,))
        _touch(tx, s)
    return Const(None)


@model(set.remove)
def _set_remove(tx, args, kwargs):
    if hkey(tx, args[1]) not in _set(args[0]).entries:  # discard's silence was O52
        raise SymbolicRaise(ExceptionV(KeyError, [args[1]]))
    return _set_discard(tx, args, kwargs)


@model(set.discard)
def _set_discard(tx, args, kwargs):
    s = _set(args[0])
    hk = hkey(tx, args[1])
    if hk in s.entries:
        entries = dict(s.entries)
        del entries[hk]
        tx.set(s, "entries", entries)
        set_order.record(tx, s, "discard", hk)
        _touch(tx, s)
    return Const(None)


@model(set.update)
def _set_update(tx, args, kwargs):
    s = _set(args[0])
    entries = dict(s.entries)
    for other in args[1:]:
        items = to_list(tx, other)
        keys = [hkey(tx, x) for x in items]
        for k, x in zip(keys, items):
            entries.setdefault(k, x)
        set_order.record(tx, s, *set_order.update_step(other, keys))
    tx.set(s, "entries", entries)
    _touch(tx, s)
    return Const(None)


def _set_algebra(op, method):
    def m(tx, args, kwargs):
        s = _set(args[0])
        result = SetV(s.entries, s.frozen)
        others = []
        for other in args[1:]:
            items = to_list(tx, other)
            o = SetV({hkey(tx, x): x for x in items})
            others.append(set_order.update_step(other, [hkey(tx, x) for x in items]))
            result = ops.container_binary(tx, op, op, False, result, o)
        tx.set(result, "history", set_order.method_history(method, s, others))
        return result

    return m


import operator as _operator  # noqa: E402

MODELS[set.union] = MODELS[frozenset.union] = _set_algebra(_operator.or_, "union")
MODELS[set.intersection] = MODELS[frozenset.intersection] = _set_algebra(_operator.and_, "intersection")
MODELS[set.difference] = MODELS[frozenset.difference] = _set_algebra(_operator.sub, "difference")


@model(set.issubset, frozenset.issubset)
def _issubset(tx, args, kwargs):
    other = {hkey(tx, x) for x in to_list(tx, args[1])}
    return Const(set(_set(args[0]).entries) <= other)


@model(set.copy, frozenset.copy)
def _set_copy(tx, args, kwargs):
    s = _set(args[0])
    if s.frozen:
        return s  # frozenset.copy() is the frozenset itself
    return SetV(s.entries, s.frozen, history=set_order.started(*set_order.update_step(s, s.entries)))


# -- generators --------------------------------------------------------------------------------


def _gen_send(tx, args, kwargs):
    gen = args[0]
    if not isinstance(gen, GeneratorV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "send() on a non-generator")
    try:
        return dispatch.resume_generator(tx, gen, args[1] if len(args) > 1 else Const(None))
    except Exhausted as e:
        raise SymbolicRaise(ExceptionV(StopIteration, [] if e.value is None else [e.value])) from None


def _gen_next(tx, args, kwargs):
    return _gen_send(tx, [args[0], Const(None)], kwargs)


def _gen_close(tx, args, kwargs):
    gen = args[0]
    if isinstance(gen, GeneratorV) and (gen.done or not gen.started):
        tx.set(gen, "done", True)
        return Const(None)
    raise UnsupportedError(BreakReason.UNSUPPORTED_GENERATOR, "closing a suspended generator")


_GEN_METHODS = {"send": _gen_send, "__next__": _gen_next, "close": _gen_close}


_GEN_OBJECTS = {}
for _n, _fn in _GEN_METHODS.items():
    _GEN_OBJECTS[_n] = SlotMethod("generator", _n)  # a real callable, see `slots`
    MODELS[_GEN_OBJECTS[_n]] = _fn


def generator_method(name):
    return _GEN_OBJECTS.get(name)


def _set_contains(tx, args, kwargs):
    """``s.__contains__(x)`` taken as a method (``difflib``'s ``junk.__contains__``)."""
    if len(args) != 2 or kwargs:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "__contains__ with other arguments")
    return Const(contains(tx, args[1], args[0]))  # (item, container)


MODELS[set.__contains__] = MODELS[frozenset.__contains__] = _set_contains
