"""Which sizes a capture makes symbolic: automatic dynamic, user marks, the `dynamic` option.

Each captured function (a continuation too) keeps one `ShapePolicy`.  It remembers,
per input source, the sizes of the tensor and the value of the int it fetched on
earlier captures.  A dimension (an int) that differed between two captures is
dynamic from then on: the next capture makes it a symbol, and its entry serves
every later size.  ``bcfront.mark_dynamic(t, d)`` / ``mark_static`` /
``maybe_mark_dynamic`` (and torch's ``torch._dynamo.mark_dynamic`` family, read
from the same tensor attributes torch sets) decide a dimension from the first
capture; the ``dynamic`` capture option makes every input size dynamic (True) or
none by itself (False: only marked dimensions).

A size that changed is a changing *value* too: an input first met after some
dimension changed (no history of its own) makes symbolic each dimension that
carries one of the values a changing dimension had.  Token-by-token generation is
the case: the prompt's length 6 changes to 1 when decoding starts, and the
key/value cache that appears on that call has length 6, the prompt's: the cache's
length is symbolic from its first capture, so decoding needs one entry, not two.
An int input that changed counts as such a size: beam search's ``cur_len`` changes
first, and its running ids, first read a step later, have a length it had.
Sound either way: a symbol only loses a specialization, its relations are guarded.

Plain data, no torch: the builder asks `tensor_dims` / `int_dynamic` while it wraps
inputs; `ir.fake.FakeEnv` makes the symbols.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...errors import DynamicDimSpecializedError, DynamicDimSpecializedWarning

# set by bcfront.mark_dynamic / mark_static / maybe_mark_dynamic (sets of dims)
DYNAMIC_ATTR = "_bcfront_dynamic_dims"
STATIC_ATTR = "_bcfront_static_dims"
MAYBE_DYNAMIC_ATTR = "_bcfront_maybe_dynamic_dims"
# what torch._dynamo.mark_dynamic / mark_static / maybe_mark_dynamic set
_TORCH_DYNAMIC = ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices")
_TORCH_STATIC = ("_dynamo_static_indices",)


class NeedDynamic(BaseException):
    """An input needs a symbolic size but the capture's fake env is a static one: the
    driver traces the call again with a dynamic env (`Tracer.dynamic`).  A BaseException:
    no handler of the trace's own (which turn errors into breaks) may catch it."""


def _dims(t: Any, attrs: tuple[str, ...]) -> set[int]:
    out: set[int] = set()
    d = getattr(t, "__dict__", None)
    if not d:
        return out
    for a in attrs:
        v = d.get(a)
        if v:
            out |= set(v)
    return out


def marked_dims(t: Any) -> tuple[frozenset[int], frozenset[int]]:
    """(dims marked dynamic, dims marked static) on tensor `t`."""
    dyn = _dims(t, (DYNAMIC_ATTR, MAYBE_DYNAMIC_ATTR, *_TORCH_DYNAMIC))
    static = _dims(t, (STATIC_ATTR, *_TORCH_STATIC))
    return frozenset(dyn), frozenset(static)


def has_marks(t: Any) -> bool:
    return bool(marked_dims(t)[0])


def strict_marks(t: Any) -> frozenset[int]:
    """Dims marked with `mark_dynamic` (not `maybe_mark_dynamic`): a specialization of one is
    reported (torch raises; bcfront keeps the result right and says so)."""
    return frozenset(_dims(t, (DYNAMIC_ATTR, "_dynamo_dynamic_indices")))


_CHANGED = object()  # a str, bytes, float or int input that has varied: known at run time
SPECIALIZED_VALUES = 2  # values of such an input that get constant entries before that


def _items_of(source: Any) -> tuple | None:
    """The key `value_dynamic` keeps for all the items ``base[i]`` (an int i) of the base of
    item `source`: once one has varied, each of them is known at run time at once, not one
    entry per item's third value (a list the caller changes item by item)."""
    if type(getattr(source, "key", None)) is not int or getattr(source, "base", None) is None:
        return None
    return ("items of", source.base)


class ShapePolicy:
    """One captured function's memory of input sizes, and its `dynamic` option."""

    __slots__ = (
        "mode", "sizes", "strides", "ints", "scalars", "saw_tensors", "ints_broke", "changing", "known",
        "fullgraph",
    )  # fmt: skip

    def __init__(self, mode: bool | None = None):
        self.mode = mode  # None: automatic; True: every size dynamic; False: marks only
        self.sizes: dict[Any, tuple[int | None, ...]] = {}  # source -> sizes (None: dynamic)
        self.strides: dict[Any, tuple[int | None, ...]] = {}  # source -> strides (None: dynamic)
        self.ints: dict[Any, int | None] = {}  # source -> value (None: dynamic)
        # source -> the (type, hash) pairs a str, bytes, float or int input has had
        # (`_CHANGED`: too many); hashes, not values: a policy outlives calls, and a
        # collision only keeps a value constant
        self.scalars: dict[Any, Any] = {}
        self.saw_tensors = False  # ints are made dynamic only in functions that touch tensors
        # (or once torch is imported); True after symbolic ints of a function touching no
        # tensor met a graph break (`driver.IntsStaticAgain`): its ints stay constants
        self.ints_broke = False
        self.changing: set[int] = set()  # sizes (>= 2) a dynamic dimension has had
        self.known: frozenset[Any] = frozenset()  # tensor sources met before this capture
        self.fullgraph = False  # this capture's: a specialized mark_dynamic raises

    def begin_capture(self, fullgraph: bool = False) -> bool:
        """A capture starts: remember which inputs have a history; whether it would make
        some size symbolic before any mark is seen (`any_dynamic`)."""
        self.known = frozenset(self.sizes)
        self.fullgraph = fullgraph
        return self.any_dynamic()

    def specialized_mark(self, source: str, dim: int, value: int) -> str:
        """The code needed the value of a size marked with `mark_dynamic`: under fullgraph
        raise `DynamicDimSpecializedError` (as torch does), else warn; returns the note."""
        text = (
            f"{source}.shape[{dim}] was marked dynamic but the code needs its value "
            f"(a loop bound, an index, a Python number): specialized to {value}; each "
            "size is a capture of its own"
        )
        if self.fullgraph:
            raise DynamicDimSpecializedError(text)
        warnings.warn(text, DynamicDimSpecializedWarning, stacklevel=2)
        return text

    def any_dynamic(self) -> bool:
        """Whether a capture would make some size symbolic before any mark is seen."""
        if self.mode is True:
            return True
        if self.mode is False:
            return False
        return (
            any(v is None for v in self.ints.values())
            or any(None in s for s in self.sizes.values())
            or any(None in s for s in self.strides.values())
        )

    def tensor_dims(self, source: Any, shape: tuple[int, ...], t: Any = None) -> frozenset[int]:
        """The dims of input `source` (sizes `shape`, tensor `t` for its marks) to make
        symbolic in this capture; remembers `shape` for the next one."""
        dyn, static = marked_dims(t) if t is not None else (frozenset(), frozenset())
        n = len(shape)
        if self.mode is True:
            auto = set(range(n))
        elif self.mode is False:
            auto = set()
        else:
            seen = self.sizes.get(source)
            merged: tuple[int | None, ...]
            if source not in self.known:  # new (also on a retrace): inherits the changing sizes
                merged = tuple(None if b in self.changing else b for b in shape)
            elif seen is None or len(seen) != n:
                merged = tuple(shape)
            else:
                merged = tuple(None if a is None or a != b else a for a, b in zip(seen, shape))
                self.changing.update(
                    v for a, b in zip(seen, shape) if a != b for v in (a, b) if v is not None and v >= 2
                )
            self.changing.update(b for a, b in zip(merged, shape) if a is None and b >= 2)
            self.sizes[source] = merged
            auto = {i for i, a in enumerate(merged) if a is None}
        return frozenset(d for d in (auto | dyn) if 0 <= d < n and d not in static)

    def stride_dims(self, source: Any, stride: tuple[int, ...]) -> frozenset[int]:
        """The dims of input `source` whose stride is symbolic in this capture (automatic
        only: a view into a buffer that grows, ``seq[:, -1:]``, keeps its sizes but not its
        strides); remembers `stride`."""
        if self.mode is not None:
            return frozenset()
        seen = self.strides.get(source)
        merged: tuple[int | None, ...]
        if seen is None or len(seen) != len(stride):
            merged = tuple(stride)
        else:
            merged = tuple(None if a is None or a != b else a for a, b in zip(seen, stride))
        self.strides[source] = merged
        return frozenset(i for i, a in enumerate(merged) if a is None)

    def value_dynamic(self, source: Any, value: Any) -> bool:
        """Whether str, bytes, float or int input `source` (now `value`) is known only at run
        time in this capture (`semantics.runtime_values`): once it has had more than
        `SPECIALIZED_VALUES` values.  Up to that, each value keeps an entry of its own: a
        constant entry's cached call is the fastest there is (its result often folded), and
        an argument that takes two values (a mode, a flag spelled as text) never needs more;
        a third one says it varies, and from then on one entry serves every value."""
        if self.mode is False:  # dynamic=False: nothing is dynamic by itself
            return False
        key = (type(value), hash(value))
        seen = self.scalars.setdefault(source, frozenset())
        group = _items_of(source)
        if seen is _CHANGED or (group is not None and self.scalars.get(group) is _CHANGED):
            self.scalars[source] = _CHANGED
            return True
        if key in seen or len(seen) < SPECIALIZED_VALUES:
            self.scalars[source] = seen | {key}
            return False
        self.scalars[source] = _CHANGED
        if group is not None:  # its sibling items vary with it: a heap, a caller's buffer
            self.scalars[group] = _CHANGED
        return True

    def length_dynamic(self, source: Any, n: int) -> bool:
        """Whether list input `source` (now of length `n`) varies in length: its third length
        (`value_dynamic`'s rule), from which on the C calls on it that need only its items'
        type are made on the list itself, its items unread (`semantics.whole_lists`): one
        entry for every length, where each length made an entry of its own."""
        return self.value_dynamic(("length of", source), n)

    def int_dynamic(self, source: Any, value: int) -> bool:
        """Whether int input `source` (now `value`) is a symbol in this capture."""
        if self.mode is not None:
            return self.mode
        seen = self.ints.get(source, value)
        if seen is None or seen != value:
            self.ints[source] = None
            # a changing int is a changing length too (a decoding loop's ``cur_len``)
            self.changing.update(v for v in (seen, value) if v is not None and v >= 2)
            return True
        self.ints[source] = value
        return False
