"""Models of ``itertools.islice``, ``chain`` (and ``chain.from_iterable``), ``starmap``,
``compress``, ``filterfalse``, ``takewhile``, ``dropwhile`` and ``batched`` (3.12+) as lazy
symbolic iterators.

They take their items from their arguments one step at a time, as CPython's do: an
iterator argument also used elsewhere (``tuple(islice(it, n))`` called again and again,
``chain(it, ...)`` then ``list(it)``) is advanced exactly as far as natively, and an
argument is only made an iterator when the chain reaches it.  They step themselves
(``step``, see `iteration.next_value`) and are made again, at the same position, by
``rebuild`` when a break leaves them live.
"""

from __future__ import annotations

import itertools
import operator

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.tracer import SymbolicRaise
from ..model.values import Const, IterV, SeqIterV, TupleV
from . import dispatch, iteration, ops
from .folding import raise_, value_needed
from .iteration import Exhausted
from .registry import ctor, model


class IsliceIterV(IterV):
    """CPython's islice object: the iterator `it` (None once it ended), the position
    `count` it is at, the `next` position to yield, `stop` (None: no end) and `stride` (its step)."""

    __slots__ = ("it", "count", "next", "stop", "stride")

    def __init__(self, it, start, stop, stride):
        super().__init__(None)
        self.it, self.count, self.next, self.stop, self.stride = it, 0, start, stop, stride

    def python_type(self):
        return itertools.islice

    def describe(self):
        return "an itertools.islice"

    def step(self, tx):
        """The next item (None at the end), as ``islice_next`` in itertoolsmodule.c: the
        iterator's end or error lets go of it (the error raised, once)."""
        if self.it is None:
            return None
        try:
            while self.count < self.next:
                iteration.next_value(tx, self.it)
                tx.set(self, "count", self.count + 1)
            if self.stop is not None and self.count >= self.stop:
                raise Exhausted()
            item = iteration.next_value(tx, self.it)
        except Exhausted:
            tx.set(self, "it", None)
            return None
        except SymbolicRaise:
            tx.set(self, "it", None)
            raise
        tx.set(self, "count", self.count + 1)
        nxt = self.next + self.stride
        tx.set(self, "next", nxt if self.stop is None else min(nxt, self.stop))
        return item

    def rebuild(self, rb) -> str:
        """A new islice over the same iterator, its positions taken from where it is."""
        ns = rb.ns
        if self.it is None:
            return rb.temp(f"{ns.helper('iter')}(())", self, "it")
        stop = None if self.stop is None else self.stop - self.count
        args = f"{rb.expr(self.it)}, {self.next - self.count}, {stop}, {self.stride}"
        return rb.temp(f"{ns.const(itertools.islice)}({args})", self, "it")


class ChainIterV(IterV):
    """CPython's chain object: `sources`, the iterator of the iterables still to come
    (None once it ended), and `active`, the iterator of the one it is in (None between
    two).  ``chain(*args)`` iterates its arguments, ``chain.from_iterable(x)`` iter(x)."""

    __slots__ = ("sources", "active")

    def __init__(self, sources):
        super().__init__(None)
        self.sources, self.active = sources, None

    def python_type(self):
        return itertools.chain

    def describe(self):
        return "an itertools.chain"

    def step(self, tx):
        """The next item (None at the end), as ``chain_next``: the next iterable's
        ``iter()`` when it is reached; its error ends the chain, as its end does."""
        while self.sources is not None:
            if self.active is None:
                try:
                    iterable = iteration.next_value(tx, self.sources)
                    active = iteration.get_iter(tx, iterable)
                except Exhausted:
                    tx.set(self, "sources", None)
                    return None
                except SymbolicRaise:
                    tx.set(self, "sources", None)
                    raise
                tx.set(self, "active", active)
            try:
                return iteration.next_value(tx, self.active)
            except Exhausted:
                tx.set(self, "active", None)
        return None

    def rebuild(self, rb) -> str:
        ns = rb.ns
        if self.sources is None:
            return rb.temp(f"{ns.helper('iter')}(())", self, "it")
        rest = f"{ns.const(itertools.chain.from_iterable, 'chain_from_iterable')}({rb.expr(self.sources)})"
        made = rest if self.active is None else f"{ns.const(itertools.chain)}({rb.expr(self.active)}, {rest})"
        return rb.temp(made, self, "it")


class StepIterV(IterV):
    """One of itertools' one-iterator adapters -- starmap, compress, filterfalse,
    takewhile, dropwhile, batched (3.12+) -- stepped as its C ``next`` does: `kind` names
    it, `fn` is its function (compress: the selectors' iterator; batched: n), `it` its
    iterator (None once it ended),
    `flag` takewhile's "stopped" / dropwhile's "started dropping no more"."""

    __slots__ = ("kind", "fn", "it", "flag")

    def __init__(self, kind, fn, it):
        super().__init__(None)
        self.kind, self.fn, self.it, self.flag = kind, fn, it, False

    def python_type(self):
        return getattr(itertools, self.kind)

    def describe(self):
        return f"an itertools.{self.kind}"

    def step(self, tx):
        if self.it is None or (self.kind == "takewhile" and self.flag):
            return None
        try:
            return _ADAPTER_STEPS[self.kind](tx, self)
        except Exhausted:
            return None

    def rebuild(self, rb) -> str:
        ns = rb.ns
        if self.it is None or (self.kind == "takewhile" and self.flag):
            return rb.temp(f"{ns.helper('iter')}(())", self, "it")
        cls = ns.const(self.python_type(), self.kind)
        fn, it = rb.expr(self.fn), rb.expr(self.it)
        if self.kind == "batched":
            return rb.temp(f"{cls}({it}, {fn})", self, "it")
        if self.kind == "dropwhile" and self.flag:  # dropping is over: a predicate never true
            fn = ns.const(_never, "never")
        return rb.temp(f"{cls}({it}, {fn})" if self.kind == "compress" else f"{cls}({fn}, {it})", self, "it")


def _never(x) -> bool:
    return False


def _truth_of_call(tx, fn, x) -> bool:
    if isinstance(fn, Const) and fn.value is None:  # filterfalse(None, ...): the items' truth
        return ops.truth(tx, x)
    return ops.truth(tx, dispatch.call(tx, fn, [x], {}))


def _starmap_step(tx, v: StepIterV):
    args = iteration.to_list(tx, iteration.next_value(tx, v.it))
    return dispatch.call(tx, v.fn, args, {})


def _compress_step(tx, v: StepIterV):
    while True:
        datum = iteration.next_value(tx, v.it)
        if ops.truth(tx, iteration.next_value(tx, v.fn)):
            return datum


def _filterfalse_step(tx, v: StepIterV):
    while True:
        x = iteration.next_value(tx, v.it)
        if not _truth_of_call(tx, v.fn, x):
            return x


def _takewhile_step(tx, v: StepIterV):
    x = iteration.next_value(tx, v.it)
    if _truth_of_call(tx, v.fn, x):
        return x
    tx.set(v, "flag", True)
    raise Exhausted()


def _dropwhile_step(tx, v: StepIterV):
    while True:
        x = iteration.next_value(tx, v.it)
        if v.flag or not _truth_of_call(tx, v.fn, x):
            tx.set(v, "flag", True)
            return x


def _batched_step(tx, v: StepIterV):
    """The next batch of up to ``n`` (`fn`) items; the iterator's error lets go of it."""
    items: list = []
    try:
        while len(items) < v.fn.value:
            items.append(iteration.next_value(tx, v.it))
    except Exhausted:
        if not items:
            tx.set(v, "it", None)
            raise
    except SymbolicRaise:
        tx.set(v, "it", None)
        raise
    return TupleV(items)


_ADAPTER_STEPS = {
    "starmap": _starmap_step,
    "compress": _compress_step,
    "filterfalse": _filterfalse_step,
    "takewhile": _takewhile_step,
    "dropwhile": _dropwhile_step,
}


def _shaped_batched(fn):
    """batched(iterable, n) with both positional (3.13's ``strict`` runs natively)."""

    def make(tx, clsv, args, kwargs):
        if kwargs or len(args) != 2:
            _shape_error("batched")
        return fn(tx, clsv, args, kwargs)

    return make


def _adapter(kind):
    def make(tx, clsv, args, kwargs):
        if kind == "compress" and not args and set(kwargs) == {"data", "selectors"}:
            args = [kwargs["data"], kwargs["selectors"]]
        elif kwargs or len(args) != 2:
            _shape_error(kind)
        if kind == "compress":  # compress(data, selectors): both iterators, data first
            data = iteration.get_iter(tx, args[0])
            return StepIterV(kind, iteration.get_iter(tx, args[1]), data)
        return StepIterV(kind, args[0], iteration.get_iter(tx, args[1]))

    return make


@_shaped_batched
def _batched(tx, clsv, args, kwargs):
    n = args[1]
    if not (isinstance(n, Const) and type(n.value) is int):
        _shape_error("batched")
    if n.value < 1:
        raise_(ValueError, "n must be at least one")
    return StepIterV("batched", n, iteration.get_iter(tx, args[0]))


if hasattr(itertools, "batched"):  # 3.12+
    _ADAPTER_STEPS["batched"] = _batched_step
    ctor(itertools.batched)(_batched)
for _kind in ("starmap", "compress", "filterfalse", "takewhile", "dropwhile"):
    ctor(getattr(itertools, _kind))(_adapter(_kind))


def _shape_error(name):
    """Arguments the callable does not take: it runs natively, raising its own TypeError."""
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{name}() with arguments it does not take")


@ctor(itertools.islice)
def _islice(tx, clsv, args, kwargs):
    if kwargs or not 2 <= len(args) <= 4:
        _shape_error("islice")
    bounds = [value_needed(a) for a in args[1:]]
    try:
        itertools.islice((), *bounds)  # CPython's own checks of the bounds, and their errors
    except ValueError as e:
        raise_(ValueError, str(e))
    bounds = [None if b is None else operator.index(b) for b in bounds]
    if len(bounds) == 1:
        start, stop, step = 0, bounds[0], 1
    else:
        start, stop = bounds[0] or 0, bounds[1]
        step = 1 if len(bounds) < 3 or bounds[2] is None else bounds[2]
    return IsliceIterV(iteration.get_iter(tx, args[0]), start, stop, step)


@ctor(itertools.chain)
def _chain(tx, clsv, args, kwargs):
    if kwargs:
        _shape_error("chain")
    return ChainIterV(SeqIterV(tuple(args)))


@model(itertools.chain.from_iterable)
def _chain_from_iterable(tx, args, kwargs):
    if kwargs or len(args) != 1:
        _shape_error("chain.from_iterable")
    return ChainIterV(iteration.get_iter(tx, args[0]))
