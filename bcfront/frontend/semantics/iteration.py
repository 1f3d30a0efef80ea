"""Iteration over symbolic values: iter(), next(), materializing, unpacking.

`get_iter` turns a value into a symbolic iterator (lists, tuples, ranges,
dicts and their views, tensors -- one row at a time --, generators, objects
with a Python ``__iter__``); `next_value` advances one, raising `Exhausted`
at the end.  Iterators from outside (read through ``__reduce__``) record
their final position, which the region replays.
"""

from __future__ import annotations

import operator

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import list_storage
from ..model.mapping_proxies import ProxyDictV
from ..model.tracer import SymbolicRaise
from ..model.values import (
    Const,
    DictV,
    DictViewV,
    EnumerateIterV,
    ExceptionV,
    FilterIterV,
    GeneratorV,
    HashIterV,
    IterV,
    ListV,
    MapIterV,
    NewObjectV,
    ObjectV,
    RangeIterV,
    ScalarV,
    SeqIterV,
    SetV,
    TensorV,
    TupleV,
    Value,
    ZipIterV,
)
from . import dispatch, ops, set_order
from .classes import lookup_dunder
from .folding import raise_


class CallIterV(IterV):
    """``iter(fn, sentinel)`` made in the trace: calls `fn` until it returns `sentinel`
    (compared with ``==``, as CPython's callable_iterator); `fn` is None once exhausted.
    Not rebuilt outside the trace: a break while it is live is `unreconstructable`."""

    __slots__ = ("fn", "sentinel")

    def __init__(self, fn, sentinel):
        super().__init__(None)
        self.fn = fn
        self.sentinel = sentinel

    def python_type(self):
        return type(iter(int, 0))


def _next_call(tx, it: CallIterV) -> Value:
    if it.fn is None:
        raise Exhausted()
    r = dispatch.call(tx, it.fn, [], {})
    if ops.truth(tx, dispatch.call(tx, ObjectV(operator.eq), [r, it.sentinel], {})):
        tx.set(it, "fn", None)
        raise Exhausted()
    return r


class Exhausted(Exception):
    """Internal: a symbolic iterator has no more items (carries the return value)."""

    def __init__(self, value=None):
        super().__init__()
        self.value = value


def get_iter(tx, v: Value) -> Value:
    """The iterator ``iter(v)`` gives: an `IterV`, or an object with a Python ``__next__``
    (what a user ``__iter__`` returns), which `next_value` steps through that method."""
    if isinstance(v, IterV):
        return v
    if isinstance(v, (ListV, TupleV)):
        return SeqIterV(v)
    if isinstance(v, Const):
        val = v.value
        if type(val) is range:
            return RangeIterV(val)
        if isinstance(val, (str, bytes, tuple, frozenset)):
            return SeqIterV(tuple(Const(x) for x in val))
        raise_(TypeError, f"'{type(val).__name__}' object is not iterable")
    if isinstance(v, (DictV, SetV, DictViewV)) and not _own_dunder(v, "__iter__"):
        container = v.dict if isinstance(v, DictViewV) else v
        if isinstance(container, ProxyDictV):  # a mappingproxy iterates its dict
            container = container.mapping
        if isinstance(container, SetV):
            set_order.put_in_order(tx, container)  # CPython's table order, not insertion
        kind = v.kind if isinstance(v, DictViewV) else "set" if isinstance(v, SetV) else "keys"
        return HashIterV(container, kind, tuple(container.entries))
    if isinstance(v, ScalarV):  # a number (a symbolic int): a TensorV of the graph, no tensor
        raise_(TypeError, f"'{v.ptype.__name__}' object is not iterable")
    if isinstance(v, TensorV):
        from . import torch_calls

        return SeqIterV(torch_calls.unbind_for_iter(tx, v))
    if isinstance(v, ObjectV) and v.source is not None:
        storage = list_storage(tx, v)  # a list subclass from outside, read as a list
        if storage is not None:
            return SeqIterV(storage)
    m = lookup_dunder(v, "__iter__", tx)
    if m is not None:
        r = dispatch.call(tx, m, [v], {})
        if isinstance(r, IterV):
            return r
        if isinstance(r, (ListV, TupleV)):
            return SeqIterV(r)
        if lookup_dunder(r, "__next__", tx) is not None and not isinstance(r, ObjectV):
            return r  # a user iterator object, created in the trace
        if isinstance(r, (Const, NewObjectV)):
            raise_(TypeError, f"iter() returned non-iterator of type '{r.python_type().__name__}'")
        raise UnsupportedError(BreakReason.UNSUPPORTED_ITERATOR, f"__iter__ returned {r.describe()}")
    raise UnsupportedError(BreakReason.UNSUPPORTED_ITERATOR, f"iter() of {v.describe()}")


def _own_dunder(v, name) -> bool:
    """Whether `v`, an instance of a Python dict subclass, defines special method `name`."""
    return isinstance(v, DictV) and v.cls is not dict and lookup_dunder(v, name) is not None


def iter_items(tx, v) -> list[Value]:
    """The items iteration over a dict/set/view yields, as a snapshot."""
    if isinstance(v, SetV):
        return list(set_order.ordered_entries(v).values())
    if isinstance(v, DictV):
        return [e[0] for e in v.entries.values()]
    d = v.dict
    if v.kind == "keys":
        return [e[0] for e in d.entries.values()]
    if v.kind == "values":
        return [e[1] for e in d.entries.values()]
    return [TupleV((e[0], e[1])) for e in d.entries.values()]


def next_value(tx, it: Value) -> Value:
    if isinstance(it, SeqIterV):
        seq = it.seq
        items = seq.items if isinstance(seq, (ListV, TupleV)) else seq
        if it.index >= len(items):
            if isinstance(seq, ListV):
                _exhaust(tx, it)
            raise Exhausted()
        _advance(tx, it)
        return items[it.index - 1]
    if isinstance(it, HashIterV):
        return _next_hashed(tx, it)
    if isinstance(it, RangeIterV):
        if it.index >= len(it.range):
            raise Exhausted()
        _advance(tx, it)
        return Const(it.range[it.index - 1])
    if isinstance(it, EnumerateIterV):
        x = next_value(tx, it.it)
        tx.set(it, "count", it.count + 1)
        return TupleV((Const(it.count - 1), x))
    if isinstance(it, ZipIterV):
        if it.strict:
            return _next_strict_zip(tx, it)
        return TupleV(tuple(next_value(tx, i) for i in it.iters))
    if isinstance(it, MapIterV):
        args = [next_value(tx, i) for i in it.iters]
        return dispatch.call(tx, it.fn, args, {})
    if isinstance(it, FilterIterV):
        while True:
            x = next_value(tx, it.it)
            keep = (
                ops.truth(tx, x)
                if isinstance(it.fn, Const) and it.fn.value is None
                else ops.truth(tx, dispatch.call(tx, it.fn, [x], {}))
            )
            if keep:
                return x
    if isinstance(it, GeneratorV):
        return dispatch.resume_generator(tx, it, Const(None))
    if isinstance(it, CallIterV):
        return _next_call(tx, it)
    if not isinstance(it, IterV):
        return _next_user(tx, it)
    step = getattr(it, "step", None)  # an iterator that steps itself (`pure_c.ReplayIterV`)
    if step is not None:
        x = step(tx)
        if x is None:
            raise Exhausted()
        return x
    raise UnsupportedError(BreakReason.UNSUPPORTED_ITERATOR, f"next() of {it.describe()}")


def _next_user(tx, it: Value) -> Value:
    """A step of a user iterator object: its ``__next__``; StopIteration ends it."""
    m = lookup_dunder(it, "__next__", tx)
    if m is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ITERATOR, f"next() of {it.describe()}")
    try:
        return dispatch.call(tx, m, [it], {})
    except SymbolicRaise as e:
        if isinstance(e.exc, ExceptionV) and issubclass(e.exc.cls, StopIteration):
            raise Exhausted(e.exc.args[0] if e.exc.args else None) from None
        raise


def _next_strict_zip(tx, it: ZipIterV) -> Value:
    """CPython's ``zip(..., strict=True)`` step: the first argument to run out must be the
    first one, and then every other one must be exhausted too, else ValueError."""
    items = []
    for i, sub in enumerate(it.iters):
        try:
            items.append(next_value(tx, sub))
        except Exhausted:
            if i:
                raise_(ValueError, f"zip() argument {i + 1} is shorter than {_zip_args(i)}")
            break
    else:
        return TupleV(tuple(items))
    for i, sub in enumerate(it.iters[1:], 1):
        try:
            next_value(tx, sub)
        except Exhausted:
            continue
        raise_(ValueError, f"zip() argument {i + 1} is longer than {_zip_args(i)}")
    raise Exhausted()


def _zip_args(i: int) -> str:
    return "argument 1" if i == 1 else f"arguments 1-{i}"


def _next_hashed(tx, it: HashIterV) -> Value:
    """CPython's dict/set iterator step: a size change raises (every later step too), an
    exhausted iterator stays exhausted, values are read from the live container (O8)."""
    c = it.container
    if c is None:
        raise Exhausted()
    if len(c.entries) != len(it.keys):
        what = "Set" if it.kind == "set" else "dictionary"
        raise_(RuntimeError, f"{what} changed size during iteration")
    if tuple(c.entries) != it.keys:
        # same size, other keys: where CPython's iterator goes next depends on its hash
        # table layout -- run that natively (the iterator cannot be rebuilt: whole function)
        raise UnsupportedError(BreakReason.UNSUPPORTED_ITERATOR, "a dict or set re-keyed while iterated")
    if it.index >= len(it.keys):
        tx.set(it, "container", None)
        if it.source is not None:
            tx.mark_mutated(it)  # an outside iterator (`HashIterator`): run out when replayed
        raise Exhausted()
    entry = c.entries[it.keys[it.index]]
    _advance(tx, it)
    if it.kind == "set":
        return entry
    if it.kind == "keys":
        return entry[0]
    return entry[1] if it.kind == "values" else TupleV((entry[0], entry[1]))


def _advance(tx, it) -> None:
    tx.set(it, "index", it.index + 1)
    if it.source is not None:
        tx.mark_mutated(it)  # an outside iterator: its position is replayed


def _exhaust(tx, it) -> None:
    """An exhausted list iterator drops its list (CPython clears it_seq): items appended
    later are never seen.  It now iterates a fresh empty list; an outside one is run to
    its end when the writes are replayed."""
    tx.set(it, "seq", ListV(()))
    tx.set(it, "index", 0)
    if it.source is not None:
        tx.mark_mutated(it)


def to_list(tx, v: Value) -> list[Value]:
    """Materialize an iterable value into a list of values."""
    if isinstance(v, (ListV, TupleV)):
        return list(v.items)
    it = get_iter(tx, v)
    out = []
    while True:
        try:
            out.append(next_value(tx, it))
        except Exhausted:
            return out
        if len(out) > 100_000:
            raise UnsupportedError(BreakReason.UNBOUNDED_ITERATION, "iterating over more than 100000 items")


def unpack(tx, v: Value, n: int) -> list[Value]:
    items = to_list(tx, v)
    if len(items) != n:
        if len(items) > n:
            raise_(ValueError, f"too many values to unpack (expected {n})")
        raise_(ValueError, f"not enough values to unpack (expected {n}, got {len(items)})")
    return items


dispatch.to_list = to_list  # for the modules below (`torch_calls`, `ops`); see `dispatch`
