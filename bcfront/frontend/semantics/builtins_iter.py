"""Models of the iteration builtins: iter, next, enumerate, zip, map, filter, reversed,
sorted, min, max, sum, any, all, functools.reduce and a few itertools.

Lazy ones (enumerate, zip, map, filter) become symbolic iterators advanced on
demand; eager ones materialize their argument with `to_list`.
"""

from __future__ import annotations

import functools
import itertools
import operator

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.tracer import SymbolicRaise
from ..model.values import (
    Const,
    DictV,
    DictViewV,
    EnumerateIterV,
    ExceptionV,
    FilterIterV,
    IterV,
    ListV,
    MapIterV,
    SeqIterV,
    TupleV,
    ZipIterV,
)
from . import compare, dispatch, iteration, ops
from .classes import lookup_dunder
from .containers import list_sort
from .folding import arity, as_python, raise_
from .iteration import Exhausted, to_list
from .ops import truth
from .registry import MODELS, ctor, model


@model(iter)
def model_iter(tx, args, kwargs):
    if len(args) != 1:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "iter(callable, sentinel)")
    return iteration.get_iter(tx, args[0])


@model(next)
def model_next(tx, args, kwargs):
    arity("next", args, 1, 2)
    it = args[0]
    if not isinstance(it, IterV):
        m = lookup_dunder(it, "__next__", tx)
        if m is None and hasattr(it.python_type(), "__next__"):
            # a C iterator from outside (dict or set iterator, generator object, ...)
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_ITERATOR, f"next() of a {it.python_type().__name__}"
            )
        if m is None:
            raise_(TypeError, f"'{it.python_type().__name__}' object is not an iterator")
        return dispatch.call(tx, m, [it], {})
    try:
        return iteration.next_value(tx, it)
    except Exhausted as e:
        if len(args) == 2:
            return args[1]
        raise SymbolicRaise(ExceptionV(StopIteration, [] if e.value is None else [e.value])) from None


@ctor(enumerate)
def _enumerate(tx, clsv, args, kwargs):
    start = kwargs.get("start", args[1] if len(args) > 1 else Const(0))
    return EnumerateIterV(iteration.get_iter(tx, args[0]), as_python(start))


@ctor(zip)
def _zip(tx, clsv, args, kwargs):
    strict = as_python(kwargs["strict"]) if "strict" in kwargs else False
    return ZipIterV([iteration.get_iter(tx, a) for a in args], strict)


@ctor(map)
def _map(tx, clsv, args, kwargs):
    return MapIterV(args[0], [iteration.get_iter(tx, a) for a in args[1:]])


@ctor(filter)
def _filter(tx, clsv, args, kwargs):
    return FilterIterV(args[0], iteration.get_iter(tx, args[1]))


@ctor(reversed)
def _reversed(tx, clsv, args, kwargs):
    v = args[0]
    if isinstance(v, (ListV, TupleV)):
        return SeqIterV(tuple(reversed(v.items)))
    if isinstance(v, Const) and isinstance(v.value, (range, str, tuple, bytes)):
        r = v.value
        if isinstance(r, range):
            from ..model.values import RangeIterV

            return RangeIterV(r[::-1])
        return SeqIterV(tuple(Const(x) for x in reversed(r)))
    if isinstance(v, (DictV, DictViewV)):
        return SeqIterV(tuple(reversed(iteration.iter_items(tx, v))))
    m = lookup_dunder(v, "__reversed__", tx)
    if m is not None:
        return dispatch.call(tx, m, [v], {})
    items = [ops.getitem(tx, v, Const(i)) for i in range(ops.length(tx, v))]
    return SeqIterV(tuple(reversed(items)))


@model(sorted)
def _sorted(tx, args, kwargs):
    items = to_list(tx, args[0])
    out = ListV(items)
    list_sort(tx, [out], kwargs)
    return out


def _make_minmax(name, better):
    def m(tx, args, kwargs):
        key = kwargs.get("key")
        items = to_list(tx, args[0]) if len(args) == 1 else list(args)
        if not items:
            if "default" in kwargs:
                return kwargs["default"]
            raise_(ValueError, f"{name}() arg is an empty sequence")
        best = items[0]
        best_k = best if key is None else dispatch.call(tx, key, [best], {})
        for x in items[1:]:
            k = x if key is None else dispatch.call(tx, key, [x], {})
            if truth(tx, compare.compare(tx, better, k, best_k)):
                best, best_k = x, k
        return best

    return m


MODELS[min] = _make_minmax("min", "<")
MODELS[max] = _make_minmax("max", ">")


@model(sum)
def _sum(tx, args, kwargs):
    total = kwargs.get("start", args[1] if len(args) > 1 else Const(0))
    kind = total.python_type()
    if issubclass(kind, (str, bytes, bytearray)):  # CPython refuses these starts (O17)
        what, hint = (
            ("strings", "''")
            if issubclass(kind, str)
            else ("bytes" if issubclass(kind, bytes) else "bytearray", "b''")
        )
        raise_(TypeError, f"sum() can't sum {what} [use {hint}.join(seq) instead]")
    items = to_list(tx, args[0])
    if all(isinstance(v, Const) and type(v.value) in _NUMBERS for v in (total, *items)):
        # CPython 3.12+ adds floats with compensated summation (sum([0.1] * 10) == 1.0):
        # the real sum of the constants is right on every version
        return Const(sum((v.value for v in items), total.value))
    for x in items:
        total = ops.binary(tx, operator.add, total, x)
    return total


_NUMBERS = (int, float, bool, complex)


def _any(tx, args, kwargs):
    it = iteration.get_iter(tx, args[0])
    while True:
        try:
            if truth(tx, iteration.next_value(tx, it)):
                return Const(True)
        except Exhausted:
            return Const(False)


def _all(tx, args, kwargs):
    it = iteration.get_iter(tx, args[0])
    while True:
        try:
            if not truth(tx, iteration.next_value(tx, it)):
                return Const(False)
        except Exhausted:
            return Const(True)


MODELS[any] = _any
MODELS[all] = _all


@model(functools.reduce)
def _reduce(tx, args, kwargs):
    it = iteration.get_iter(tx, args[1])
    if len(args) > 2:
        acc = args[2]
    else:
        try:
            acc = iteration.next_value(tx, it)
        except Exhausted:
            raise_(TypeError, "reduce() of empty iterable with no initial value")
    while True:
        try:
            x = iteration.next_value(tx, it)
        except Exhausted:
            return acc
        acc = dispatch.call(tx, args[0], [acc, x], {})


@ctor(itertools.chain)
def _chain(tx, clsv, args, kwargs):
    items = []
    for a in args:
        items.extend(to_list(tx, a))
    return SeqIterV(tuple(items))


@ctor(itertools.product)
def _product(tx, clsv, args, kwargs):
    pools = [to_list(tx, a) for a in args] * (as_python(kwargs["repeat"]) if "repeat" in kwargs else 1)
    return SeqIterV(tuple(TupleV(p) for p in itertools.product(*pools)))


@ctor(itertools.islice)
def _islice(tx, clsv, args, kwargs):
    items = to_list(tx, args[0])
    return SeqIterV(tuple(itertools.islice(items, *[as_python(a) for a in args[1:]])))
