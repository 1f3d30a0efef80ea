"""Operators: arithmetic, comparison, identity, membership, subscripts, slices, f-strings."""

from __future__ import annotations

import operator
import sys

from ....errors import UnsupportedError
from ....reasons import BreakReason
from ...model.values import Const, ObjectV, TensorV, Value, specialized, symbolic_slice
from ...semantics import classes, compare, folding, objects, ops, runtime_values

PY = sys.version_info[:2]


def binary_op(tx, f, ins):
    b = f.pop()
    a = f.pop()
    f.push(ops.binary(tx, ops.BINARY_OPS[ins.arg], a, b))


def compare_op(tx, f, ins):
    b = f.pop()
    a = f.pop()
    r = compare.compare(tx, ins.argval, a, b)
    if PY >= (3, 13) and ins.arg & 16:
        r = Const(ops.truth(tx, r))  # 3.13 fuses the bool() of a following branch
    f.push(r)


def is_op(tx, f, ins):
    b = f.pop()
    a = f.pop()
    same = compare.is_same(a, b, tx)
    if same is None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_IDENTITY, f"`is` between {a.describe()} and {b.describe()}"
        )
    f.push(Const(same != bool(ins.arg)))


def contains_op(tx, f, ins):
    container = f.pop()
    item = f.pop()
    f.push(Const(compare.contains(tx, item, container) != bool(ins.arg)))


def _unary(fn):
    def h(tx, f, ins):
        f.push(ops.unary(tx, fn, f.pop()))

    return h


def binary_subscr(tx, f, ins):
    key = f.pop()
    obj = f.pop()
    f.push(ops.getitem(tx, obj, key))


def store_subscr(tx, f, ins):
    key = f.pop()
    obj = f.pop()
    value = f.pop()
    ops.setitem(tx, obj, key, value)


def delete_subscr(tx, f, ins):
    key = f.pop()
    obj = f.pop()
    ops.delitem(tx, obj, key)


def _slice(tx, start, stop):
    made = runtime_values.call(tx, slice, [start, stop])  # a bound known at run time
    if made is not None:
        return made
    try:
        return Const(slice(folding.as_python(start), folding.as_python(stop)))
    except folding.NotConst:
        sym = symbolic_slice([start, stop])  # a bound that is a symbolic size
        if sym is not None:
            return sym
        raise UnsupportedError(
            BreakReason.DATA_DEPENDENT
            if isinstance(start, TensorV) or isinstance(stop, TensorV)
            else BreakReason.UNSUPPORTED_SLICE,
            "a slice with non-constant bounds",
        ) from None


def binary_slice(tx, f, ins):
    stop = f.pop()
    start = f.pop()
    obj = f.pop()
    f.push(ops.getitem(tx, obj, _slice(tx, start, stop)))


def store_slice(tx, f, ins):
    stop = f.pop()
    start = f.pop()
    obj = f.pop()
    value = f.pop()
    ops.setitem(tx, obj, _slice(tx, start, stop), value)


# -- f-strings -----------------------------------------------------------------------------------

_CONVERSIONS = {1: str, 2: repr, 3: ascii}


def _convert(tx, v, which):
    fn = _CONVERSIONS[which]
    return objects.call(tx, ObjectV(fn), [v], {})


def _format(tx, v, spec) -> Value:
    v = specialized(v)  # a symbolic size as text: its value, guarded
    if runtime_values.is_runtime(v) and type(v.example) is str and spec == "":
        return v  # a str formats as itself
    made = runtime_values.call(tx, format, [v, Const(spec)])  # text known at run time
    if made is not None:
        return made
    if isinstance(v, TensorV):
        raise UnsupportedError(BreakReason.IO, "formatting a tensor reads its data")
    try:
        value = folding.as_python(v)
    except folding.NotConst:
        m = classes.lookup_dunder(v, "__format__", tx)
        if m is not None:
            return objects.call(tx, m, [v, Const(spec)], {})
        if spec == "":
            return _convert(tx, v, 1)
        raise UnsupportedError(BreakReason.UNSUPPORTED_FORMAT, f"formatting {v.describe()}") from None
    return folding.fold(format, value, spec)


def format_value(tx, f, ins):
    spec = folding.as_python(f.pop()) if ins.arg & 4 else ""
    v = f.pop()
    if ins.arg & 3:
        v = _convert(tx, v, ins.arg & 3)
    f.push(_format(tx, v, spec))


def convert_value(tx, f, ins):
    f.push(_convert(tx, f.pop(), ins.arg))


def format_simple(tx, f, ins):
    f.push(_format(tx, f.pop(), ""))


def format_with_spec(tx, f, ins):
    spec = folding.as_python(f.pop())
    f.push(_format(tx, f.pop(), spec))


HANDLERS = {
    "BINARY_OP": binary_op,
    "COMPARE_OP": compare_op,
    "IS_OP": is_op,
    "CONTAINS_OP": contains_op,
    "UNARY_NEGATIVE": _unary(operator.neg),
    "UNARY_NOT": _unary(operator.not_),
    "UNARY_INVERT": _unary(operator.invert),
    "UNARY_POSITIVE": _unary(operator.pos),
    "BINARY_SUBSCR": binary_subscr,
    "STORE_SUBSCR": store_subscr,
    "DELETE_SUBSCR": delete_subscr,
    "BINARY_SLICE": binary_slice,
    "STORE_SLICE": store_slice,
    "FORMAT_VALUE": format_value,
    "CONVERT_VALUE": convert_value,
    "FORMAT_SIMPLE": format_simple,
    "FORMAT_WITH_SPEC": format_with_spec,
}
