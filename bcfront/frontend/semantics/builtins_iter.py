"""Models of the iteration builtins: iter, next, enumerate, zip, map, filter, reversed,
sorted, min, max, sum, any, all, functools.reduce and itertools.product
(islice and chain: `lazy_itertools`).

Lazy ones (enumerate, zip, map, filter) become symbolic iterators advanced on
demand; eager ones materialize their argument with `to_list`.
"""

from __future__ import annotations

import functools
import itertools
import operator
import sys

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
from .slots import SlotMethod


@model(iter)
def model_iter(tx, args, kwargs):
    arity("iter", args, 1, 2)
    if kwargs:
        raise_(TypeError, "iter() takes no keyword arguments")
    if len(args) == 2:
        if not MODELS[callable](tx, [args[0]], {}).value:  # the `callable` builtin
            raise_(TypeError, "iter(v, w): v must be callable")
        return iteration.CallIterV(args[0], args[1])
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
        if len(args) == 1:
            return dispatch.call(tx, m, [it], {})  # its StopIteration, as raised
    try:
        return iteration.next_value(tx, it)
    except Exhausted as e:
        if len(args) == 2:
            return args[1]
        raise SymbolicRaise(ExceptionV(StopIteration, [] if e.value is None else [e.value])) from None


def _no_arguments(args, kwargs):
    if len(args) != 1 or kwargs:
        raise_(TypeError, f"expected 0 arguments, got {len(args) - 1 + len(kwargs)}")


def _iter_slot_next(tx, args, kwargs):
    """``it.__next__()`` of a symbolic iterator: ``next(it)`` without a default."""
    _no_arguments(args, kwargs)
    return model_next(tx, args, {})


def _iter_slot_iter(tx, args, kwargs):
    _no_arguments(args, kwargs)
    return iteration.get_iter(tx, args[0])


def _shaped(name, lo, hi=None, kw=()):
    """A model that runs only on the argument shapes the real callable accepts: any other
    call breaks, so that it runs natively and raises Python's own TypeError."""

    def check(args, kwargs):
        if not lo <= len(args) <= (lo if hi is None else hi) or any(k not in kw for k in kwargs):
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{name}() with arguments it does not take")

    def wrap(fn):
        if fn.__code__.co_argcount == 4:  # a constructor model (tx, clsv, args, kwargs)

            def ctor_model(tx, clsv, args, kwargs):
                check(args, kwargs)
                return fn(tx, clsv, args, kwargs)

            return ctor_model

        def call_model(tx, args, kwargs):
            check(args, kwargs)
            return fn(tx, args, kwargs)

        return call_model

    return wrap


# the methods of a symbolic iterator, as real callables (`slots`): never the models themselves
ITER_SLOTS = {name: SlotMethod("iterator", name) for name in ("__next__", "__iter__")}
MODELS[ITER_SLOTS["__next__"]] = _iter_slot_next
MODELS[ITER_SLOTS["__iter__"]] = _iter_slot_iter


@ctor(enumerate)
@_shaped("enumerate", 0, 2, ("iterable", "start"))
def _enumerate(tx, clsv, args, kwargs):
    it = kwargs.get("iterable", args[0] if args else None)
    start = kwargs.get("start", args[1] if len(args) > 1 else Const(0))
    if it is None or (len(args) > 1 and "start" in kwargs) or (args and "iterable" in kwargs):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "enumerate() with arguments it does not take")
    if not (isinstance(start, Const) and type(start.value) is int):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"enumerate() starting at {start.describe()}")
    return EnumerateIterV(iteration.get_iter(tx, it), start.value)


@ctor(zip)
@_shaped("zip", 0, 1 << 30, ("strict",))
def _zip(tx, clsv, args, kwargs):
    strict = as_python(kwargs["strict"]) if "strict" in kwargs else False
    return ZipIterV([iteration.get_iter(tx, a) for a in args], strict)


@ctor(map)
@_shaped("map", 2, 1 << 30)
def _map(tx, clsv, args, kwargs):
    return MapIterV(args[0], [iteration.get_iter(tx, a) for a in args[1:]])


@ctor(filter)
@_shaped("filter", 2)
def _filter(tx, clsv, args, kwargs):
    return FilterIterV(args[0], iteration.get_iter(tx, args[1]))


@ctor(reversed)
@_shaped("reversed", 1)
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
@_shaped("sorted", 1, 1, ("key", "reverse"))
def _sorted(tx, args, kwargs):
    items = to_list(tx, args[0])
    out = ListV(items)
    list_sort(tx, [out], kwargs)
    return out


def _make_minmax(name, better):
    def m(tx, args, kwargs):
        extra = [k for k in kwargs if k not in ("key", "default")]
        if extra:
            raise_(TypeError, f"{name}() got an unexpected keyword argument '{extra[0]}'")
        if not args:
            raise_(TypeError, f"{name} expected at least 1 argument, got 0")
        if len(args) > 1 and "default" in kwargs:
            raise_(TypeError, f"Cannot specify a default for {name}() with multiple positional arguments")
        key = kwargs.get("key")
        if isinstance(key, Const) and key.value is None:  # key=None: no key, as in CPython
            key = None
        items = to_list(tx, args[0]) if len(args) == 1 else list(args)
        if not items:
            if "default" in kwargs:
                return kwargs["default"]
            raise_(ValueError, f"{name}() {_EMPTY}")
        best = items[0]
        best_k = best if key is None else dispatch.call(tx, key, [best], {})
        for x in items[1:]:
            k = x if key is None else dispatch.call(tx, key, [x], {})
            if truth(tx, compare.compare(tx, better, k, best_k)):
                best, best_k = x, k
        return best

    return m


_EMPTY = "arg is an empty sequence" if sys.version_info < (3, 12) else "iterable argument is empty"
MODELS[min] = _make_minmax("min", "<")
MODELS[max] = _make_minmax("max", ">")


@model(sum)
@_shaped("sum", 1, 2, ("start",))
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


@_shaped("any", 1)
def _any(tx, args, kwargs):
    it = iteration.get_iter(tx, args[0])
    while True:
        try:
            if truth(tx, iteration.next_value(tx, it)):
                return Const(True)
        except Exhausted:
            return Const(False)


@_shaped("all", 1)
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
@_shaped("reduce", 2, 3)
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


@ctor(itertools.product)
@_shaped("product", 0, 1 << 30, ("repeat",))
def _product(tx, clsv, args, kwargs):
    pools = [to_list(tx, a) for a in args] * (as_python(kwargs["repeat"]) if "repeat" in kwargs else 1)
    return SeqIterV(tuple(TupleV(p) for p in itertools.product(*pools)))
