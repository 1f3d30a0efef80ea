"""A dict/set iterator handed across a graph break, showing its container and position.

CPython's dict and set iterators do not expose what they iterate: a
continuation handed ``iter(d.values())`` could only call ``next()`` on it
natively, a break on every step of the loop.  A region that ends while such a
loop runs hands over a `HashIterator` instead: it runs a real builtin iterator
of the same container (so natively it yields, stops and raises exactly as the
real one: "dictionary changed size during iteration" and the rest) and keeps
the container, so the next trace can model it again (`builder`), reading its
`state`.
"""

from __future__ import annotations

from collections import OrderedDict
from operator import length_hint

KINDS = ("keys", "values", "items", "set")


class HashIterator:
    """``iter(d.keys())`` / ``iter(d.values())`` / ``iter(d.items())`` / ``iter(s)``
    after `index` items, as a Python object.  For a dict it runs the container's items
    iterator (same positions and errors as the keys and values ones) and picks the part
    of each item that `kind` yields."""

    __slots__ = ("container", "kind", "it", "done")

    def __init__(self, container, kind: str, index: int = 0):
        if kind not in KINDS:
            raise ValueError(f"unknown iterator kind {kind!r}")
        self.container = container
        self.kind = kind
        self.it = iter(_items_view(container, "set" if kind == "set" else "items"))
        self.done = False
        for _ in range(index):
            next(self)

    def __iter__(self):
        return self

    def __next__(self):
        try:
            item = next(self.it)
        except StopIteration:
            self.done = True  # the builtin iterator let go of its container
            raise
        kind = self.kind
        if kind == "keys":
            return item[0]
        if kind == "values":
            return item[1]
        return item

    def __length_hint__(self):
        return length_hint(self.it)

    def __reduce__(self):
        return iter, (self.remaining(),)

    def remaining(self) -> list:
        """What the iterator yields from here if nothing changes (it does not advance)."""
        rest = self.it.__reduce__()[1][0]  # CPython copies the iterator and runs the copy
        if self.kind == "keys":
            return [k for k, _ in rest]
        if self.kind == "values":
            return [v for _, v in rest]
        return list(rest)

    @property
    def state(self):
        """``(kind, index)`` when the iterator yields the container's keys from position
        `index` on, in their order, and nothing else (so a trace that reads the container
        can step it); None otherwise (it changed size, was re-keyed, or ran out)."""
        try:
            rest = self.it.__reduce__()[1][0]
        except RuntimeError:  # changed size or keys: the next step raises
            return None
        if self.kind != "set":
            rest = [k for k, _ in rest]
        keys = list(_items_view(self.container, "set" if self.kind == "set" else "keys"))
        index = len(keys) - len(rest)
        if self.done or index < 0 or any(a is not b for a, b in zip(keys[index:], rest)):
            return None  # (a run-out iterator stays run out whatever the container does)
        return self.kind, index


def step_to(it: HashIterator, index: int) -> None:
    """Advance `it` (whose `state` holds) until it has yielded the first `index` keys."""
    state = it.state
    if state is None or state[1] > index:
        raise RuntimeError("bcfront: a dict/set iterator changed while its region ran")
    for _ in range(index - state[1]):
        next(it)


def _items_view(container, kind):
    """The builtin view (never a subclass's override) whose iterator yields `kind`."""
    if kind == "set":
        return container
    base = OrderedDict if isinstance(container, OrderedDict) else dict
    return base.keys(container) if kind == "keys" else base.items(container)
