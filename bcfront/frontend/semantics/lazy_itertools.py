"""Models of ``itertools.islice`` and ``itertools.chain`` (and ``chain.from_iterable``) as
lazy symbolic iterators.

Both take their items from their arguments one step at a time, as CPython's do: an
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
from ..model.values import IterV, SeqIterV
from . import iteration
from .folding import as_python, raise_
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


def _shape_error(name):
    """Arguments the callable does not take: it runs natively, raising its own TypeError."""
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{name}() with arguments it does not take")


@ctor(itertools.islice)
def _islice(tx, clsv, args, kwargs):
    if kwargs or not 2 <= len(args) <= 4:
        _shape_error("islice")
    bounds = [as_python(a) for a in args[1:]]
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
