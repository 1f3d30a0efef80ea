"""Building and unpacking containers; structural pattern matching (match/case)."""

from __future__ import annotations

import collections.abc
import operator

from ....errors import UnsupportedError
from ....reasons import BreakReason
from ...model.tracer import SymbolicRaise
from ...model.values import (
    Const,
    DictV,
    ExceptionV,
    ListV,
    NewObjectV,
    ObjectV,
    SetV,
    TupleV,
    Value,
    const_value,
    symbolic_slice,
    tensor_bound_slice,
)
from ...semantics import attrs, folding, iteration, ops, runtime_values, set_order
from .calls import callee_below, function_str, merge_kwargs


def build_tuple(tx, f, ins):
    f.push(TupleV(f.popn(ins.arg)))


def build_list(tx, f, ins):
    f.push(ListV(f.popn(ins.arg)))


def build_set(tx, f, ins):
    entries = {}
    for x in f.popn(ins.arg):
        entries.setdefault(ops.hkey(tx, x), x)  # of equal items (1, True) the first stays
    f.push(SetV(entries, history=set_order.started("adds", tuple(entries))))


def build_map(tx, f, ins):
    flat = f.popn(2 * ins.arg)
    d = {}
    for k, v in zip(flat[::2], flat[1::2]):
        hk = ops.hkey(tx, k)
        old = d.get(hk)
        d[hk] = (old[0] if old else k, v)
    f.push(DictV(d))


def build_const_key_map(tx, f, ins):
    keys = f.pop()
    values = f.popn(ins.arg)
    ok, names = const_value(keys)
    if not ok:
        raise UnsupportedError(BreakReason.UNSUPPORTED_DICT, "BUILD_CONST_KEY_MAP with non-constant keys")
    entries = {}
    for k, v in zip(names, values):
        # equal keys (True, 1): the first key object stays, the last value wins
        entries[k] = (entries[k][0] if k in entries else Const(k), v)
    f.push(DictV(entries))


def build_slice(tx, f, ins):
    parts = f.popn(ins.arg)
    made = runtime_values.call(tx, slice, parts)  # a bound known at run time (``s[s.find(c):]``)
    if made is not None:
        f.push(made)
        return
    try:
        f.push(Const(slice(*[folding.as_python(p) for p in parts])))
    except folding.NotConst:
        # a bound that is a symbolic size; one that is a tensor (the subscript breaks: there
        # the native step runs, the slice's own instruction cannot run on its own)
        sym = symbolic_slice(parts) or tensor_bound_slice(parts)
        if sym is not None:
            f.push(sym)
            return
        raise UnsupportedError(BreakReason.UNSUPPORTED_SLICE, "a slice with non-constant bounds") from None


def build_string(tx, f, ins):
    parts = f.popn(ins.arg)
    if any(runtime_values.is_runtime(p) for p in parts):  # text known at run time: ``f'{a}/{b}'``
        joined = parts[0]
        for p in parts[1:]:
            joined = ops.binary(tx, operator.add, joined, p)
        f.push(joined)
        return
    try:
        f.push(Const("".join(folding.as_python(p) for p in parts)))
    except folding.NotConst:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_FORMAT, "an f-string part that is not a constant"
        ) from None


def list_append(tx, f, ins):
    v = f.pop()
    lst = f.stack[-ins.arg]
    tx.set(lst, "items", lst.items + [v])
    ops.touch(tx, lst)


def set_add(tx, f, ins):
    v = f.pop()
    s = f.stack[-ins.arg]
    hk = ops.hkey(tx, v)
    if hk not in s.entries:
        tx.set(s, "entries", {**s.entries, hk: v})
        set_order.record(tx, s, "adds", (hk,))
        ops.touch(tx, s)


def map_add(tx, f, ins):
    value = f.pop()
    key = f.pop()
    d = f.stack[-ins.arg]
    hk = ops.hkey(tx, key)
    old = d.entries.get(hk)
    tx.set(d, "entries", {**d.entries, hk: (old[0] if old else key, value)})
    ops.touch(tx, d)


def list_extend(tx, f, ins):
    v = f.pop()
    lst = f.stack[-ins.arg]
    if isinstance(v, Const) and isinstance(v.value, tuple):
        items = [Const(x) for x in v.value]
    else:
        cls = v.python_type()
        if not (hasattr(cls, "__iter__") or hasattr(cls, "__getitem__")):  # CPython's wording
            folding.raise_(TypeError, f"Value after * must be an iterable, not {cls.__name__}")
        items = iteration.to_list(tx, v)
    tx.set(lst, "items", lst.items + items)
    ops.touch(tx, lst)


def set_update(tx, f, ins):
    v = f.pop()
    s = f.stack[-ins.arg]
    if isinstance(v, Const) and isinstance(v.value, frozenset):
        items = [Const(x) for x in v.value]
    else:
        items = iteration.to_list(tx, v)
    entries = dict(s.entries)
    keys = [ops.hkey(tx, x) for x in items]
    for k, x in zip(keys, items):
        entries.setdefault(k, x)
    tx.set(s, "entries", entries)
    set_order.record(tx, s, *set_order.update_step(v, keys))
    ops.touch(tx, s)


def _merge(tx, f, ins, strict: bool):
    v = f.pop()
    d = f.stack[-ins.arg]
    if not isinstance(v, (DictV, ObjectV, NewObjectV)) and not hasattr(v.python_type(), "keys"):
        _not_a_mapping(f, ins, v, strict)
    merge_kwargs(
        tx, d, v, (lambda: _callee(f, ins)) if strict else None, lambda: _not_a_mapping(f, ins, v, strict)
    )


def _not_a_mapping(f, ins, v: Value, strict: bool):
    if strict:  # DICT_MERGE builds a call's **kwargs: CPython names the callee
        folding.raise_(
            TypeError,
            f"{_callee(f, ins)} argument after ** must be a mapping, not {v.python_type().__name__}",
        )
    folding.raise_(TypeError, f"'{v.python_type().__name__}' object is not a mapping")


def _callee(f, ins) -> str:
    return function_str(callee_below(f, ins.arg + 1))


def dict_update(tx, f, ins):
    _merge(tx, f, ins, strict=False)


def dict_merge(tx, f, ins):
    _merge(tx, f, ins, strict=True)


def list_to_tuple(tx, f, ins):
    f.push(TupleV(f.pop().items))


def unpack_sequence(tx, f, ins):
    items = iteration.unpack(tx, f.pop(), ins.arg)
    for x in reversed(items):
        f.push(x)


def unpack_ex(tx, f, ins):
    before, after = ins.arg & 0xFF, ins.arg >> 8
    items = iteration.to_list(tx, f.pop())
    if len(items) < before + after:
        folding.raise_(
            ValueError, f"not enough values to unpack (expected at least {before + after}, got {len(items)})"
        )
    head, rest = items[:before], items[before:]
    middle, tail = (rest[: len(rest) - after], rest[len(rest) - after :]) if after else (rest, [])
    for x in reversed(tail):
        f.push(x)
    f.push(ListV(middle))
    for x in reversed(head):
        f.push(x)


# -- match/case -----------------------------------------------------------------------------------


def get_len(tx, f, ins):
    f.push(Const(ops.length(tx, f.peek())))


def _cls(v: Value):
    return v.python_type()


def match_mapping(tx, f, ins):
    f.push(Const(issubclass(_cls(f.peek()), collections.abc.Mapping)))


def match_sequence(tx, f, ins):
    t = _cls(f.peek())
    f.push(Const(issubclass(t, collections.abc.Sequence) and not issubclass(t, (str, bytes, bytearray))))


def match_keys(tx, f, ins):
    keys = f.peek()
    subject = f.peek(2)
    ok, names = const_value(keys)
    if not ok or not isinstance(subject, DictV):
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_MATCH, "mapping pattern on a non-dict or with non-constant keys"
        )
    values = []
    for k in names:
        e = subject.entries.get(k)
        if e is None:
            f.push(Const(None))
            return
        values.append(e[1])
    f.push(TupleV(values))


_SELF_MATCHING = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


def match_class(tx, f, ins):
    names = f.pop()
    cls_v = f.pop()
    subject = f.pop()
    if not (isinstance(cls_v, ObjectV) and isinstance(cls_v.obj, type)):
        raise UnsupportedError(BreakReason.UNSUPPORTED_MATCH, "class pattern with a non-class")
    cls = cls_v.obj
    if not issubclass(_cls(subject), cls):
        f.push(Const(None))
        return
    count = ins.arg
    attr_names = []
    if count:
        match_args = getattr(cls, "__match_args__", None)
        if match_args is None and cls in _SELF_MATCHING and count == 1:
            values = [subject]
            count = 0
        elif match_args is None or len(match_args) < count:
            folding.raise_(
                TypeError,
                f"{cls.__name__}() accepts {len(match_args or ())} positional sub-patterns ({count} given)",
            )
        else:
            values = []
            attr_names = list(match_args[:count])
    else:
        values = []
    ok, kw = const_value(names)
    attr_names += list(kw)
    for name in attr_names:
        try:
            values.append(attrs.getattr_(tx, subject, name))
        except SymbolicRaise as e:
            if isinstance(e.exc, ExceptionV) and issubclass(e.exc.cls, AttributeError):
                f.push(Const(None))
                return
            raise
    f.push(TupleV(values))


HANDLERS = {
    "BUILD_TUPLE": build_tuple,
    "BUILD_LIST": build_list,
    "BUILD_SET": build_set,
    "BUILD_MAP": build_map,
    "BUILD_CONST_KEY_MAP": build_const_key_map,
    "BUILD_SLICE": build_slice,
    "BUILD_STRING": build_string,
    "LIST_APPEND": list_append,
    "SET_ADD": set_add,
    "MAP_ADD": map_add,
    "LIST_EXTEND": list_extend,
    "SET_UPDATE": set_update,
    "DICT_UPDATE": dict_update,
    "DICT_MERGE": dict_merge,
    "LIST_TO_TUPLE": list_to_tuple,
    "UNPACK_SEQUENCE": unpack_sequence,
    "UNPACK_EX": unpack_ex,
    "GET_LEN": get_len,
    "MATCH_MAPPING": match_mapping,
    "MATCH_SEQUENCE": match_sequence,
    "MATCH_KEYS": match_keys,
    "MATCH_CLASS": match_class,
}
