"""An outside list whose items the trace has not read yet: read where first needed.

The builder wraps an outside list as a `ListV` whose `unread` is a `ListReader`: its
length is guarded and its items wrapped on the first read of ``ListV.items``, through the
journal (a rollback to before the read makes it unread again), ahead of what the trace
appended meanwhile (`ListV.append_unread`).  A list the trace only appends to
(``history.append(loss)``) is then no entry per length, and a C call declared to need only
its items' type is made on the list itself (`semantics.whole_lists`), after which the
items are not known: a read of them breaks (``unread-items``).
"""

from __future__ import annotations

from ...errors import UnsupportedError
from ...reasons import BreakReason
from .guard_kinds import GuardKind
from .sources import DerivedSource, item_source


class ListReader:
    """`ListV.unread` of the outside list `obj` (`v`, read from `source`): called, it
    guards the length and wraps the items with `wrap` (the builder's; `limits`: its
    (nesting, container) limits).  `obj` is the list itself, while the trace runs."""

    __slots__ = ("tx", "obj", "v", "source", "wrap", "limits")

    def __init__(self, tx, obj: list, v, source, wrap, limits: tuple[int, int]):
        self.tx, self.obj, self.v, self.source, self.wrap, self.limits = tx, obj, v, source, wrap, limits

    def __call__(self) -> None:
        tx, obj, v, source = self.tx, self.obj, self.v, self.source
        if tx.guards.sealed:
            raise AssertionError(f"the items of {source} were read after its entry's guards were built")
        if v.calls:  # changed by a C call on them unread (`semantics.whole_lists`): not known
            fn = v.calls[-1][1]
            raise UnsupportedError(
                BreakReason.UNREAD_ITEMS,
                f"the items of {source.readable()} after {getattr(fn, '__qualname__', fn)} changed them",
            )
        tx.set(v, "unread", None)
        nesting, container = self.limits
        if source_depth(source) >= nesting:  # read level by level: as deep as wrapping it
            raise UnsupportedError(BreakReason.NESTING_DEPTH, f"a value nested deeper than {nesting} levels")
        if len(obj) > container:
            raise UnsupportedError(BreakReason.LARGE_CONTAINER, f"a list of {len(obj)} items")
        tx.guard(GuardKind.LENGTH, source, len(obj))
        made = [self.wrap(tx, x, item_source(source, i)) for i, x in enumerate(obj)]
        tx.set(v, "_items", made + v._items)
        tx.set(v, "read_length", len(made))


def source_depth(source) -> int:
    """How many reads `source` is from its root."""
    n = 0
    while isinstance(source, DerivedSource):
        source, n = source.base, n + 1
    return n
