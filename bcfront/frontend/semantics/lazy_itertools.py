"""Models of ``itertools.islice`` and ``itertools.chain`` as lazy symbolic iterators.

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
from ..model.values import IterV
from . import iteration
from .folding import as_python, raise_
from .iteration import Exhausted
from .registry import ctor


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
    """CPython's chain object: `sources`, the iterables still to come (None once it ended),
    and `active`, the iterator of the one it is in (None between two)."""

    __slots__ = ("sources", "active")

    def __init__(self, sources):
        super().__init__(None)
        self.sources, self.active = tuple(sources), None

    def python_type(self):
        return itertools.chain

    def describe(self):
        return "an itertools.chain"

    def step(self, tx):
        """The next item (None at the end), as ``chain_next``: an argument's ``iter()``
        when it is reached; its error ends the chain, as a StopIteration does."""
        while self.sources is not None:
            if self.active is None:
                if not self.sources:
                    tx.set(self, "sources", None)
                    return None
                first, rest = self.sources[0], self.sources[1:]
                tx.set(self, "sources", rest)
                try:
                    tx.set(self, "active", iteration.get_iter(tx, first))
                except SymbolicRaise:
                    tx.set(self, "sources", None)
                    raise
            try:
                return iteration.next_value(tx, self.active)
            except Exhausted:
                tx.set(self, "active", None)
        return None

    def rebuild(self, rb) -> str:
        ns = rb.ns
        if self.sources is None:
            return rb.temp(f"{ns.helper('iter')}(())", self, "it")
        parts = ([] if self.active is None else [self.active]) + list(self.sources)
        args = ", ".join(rb.expr(p) for p in parts)
        return rb.temp(f"{ns.const(itertools.chain)}({args})", self, "it")


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
    return ChainIterV(args)
