"""C calls on an outside list whose length varies, made on the list itself, its items unread.

An outside list's items are read -- its length and every item guarded -- on the first read
(`ListV.unread`), so a function handed lists of many lengths (a heap, a sorted buffer, a
list of scores) made an entry per length and, past the recompile limit, ran natively.
Once the list's length has varied (`ShapePolicy.length_dynamic`: a third length), a call
declared in `pure_c` that only compares, adds or tests items of builtin scalar types is
made on the list itself, whatever its length: the guard checks that every item has one
exact type among `pure_c.ORDERED_KINDS`, and the call's other arguments are of that type
too (`ItemsOfTypeSource`), so the call runs nobody's Python code.

- A pure call (``bisect.bisect(xs, x)``, ``max(xs)``, ``sum(xs)``, ``x in xs`` through
  ``operator.contains``, ``xs.count(x)``) with a scalar result: a `PureCallSource` on the
  list, computed once by the region before anything else (`runtime_items.computed_once`);
  only on a list the trace has not changed, so that what it computes -- and what a guard
  computing it sees -- is what the call saw.
  Where it may raise on items of that type or on no items (``xs.index(x)``, ``max([])``:
  the length is not guarded) the guard computes it too: a raise misses.
- An in-place call that returns None (``heapq.heappush``, ``heapify``, ``bisect.insort``,
  ``list.sort``): recorded on the list (`ListV.calls`) and made by the region after its
  graph, in order with the list's appends (`regions.codegen`).  The items stay unread; a
  later read of them breaks the graph there (``unread-items``), and the code after the
  break reads the real list.

A call that returns an item of the list (``heappop``) or a list (``sorted``) is traced as
before: its result's length or value is what the trace would need.  So is one that raises
on this call's values (``xs.index(x)`` of a missing x): the guard of an entry made here
computes such a call, and a raise misses.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import operator
from typing import Any

from ..model.builder import EARLY_RUNTIME
from ..model.guard_kinds import GuardKind
from ..model.sources import InPlaceCallSource, ItemsOfTypeSource, PureCallSource, Ref, Source
from ..model.values import Const, ListV, RuntimeV, Value, is_unread
from . import ops, pure_c, runtime_items

# the in-place calls taken here, with their number of arguments
_IN_PLACE_ARITY = {fn: len(entry.example) for fn, entry in pure_c.IN_PLACE.items()}
# of those, the ones that raise on an empty list (else on none of the items' one type)
_EMPTY_RAISES = frozenset({heapq.heappop, heapq.heapreplace})
# what each does to the list's length
_LENGTH_CHANGE = {heapq.heappush: 1, heapq.heappop: -1, bisect.insort_left: 1, bisect.insort_right: 1}
# `pure_c.TABLE` calls on lists that raise on some values of any type (no `Pure.items`):
# the guard computes them, a raise misses
_INDEXING = frozenset({list.index, operator.indexOf})
_SCALAR_RESULTS = frozenset({int, float, bool, str, bytes})
_serials = itertools.count()


def call(tx, fn, args: list, kwargs: dict | None) -> Value | None:
    """``fn(*args, **kwargs)`` made on an unread outside list whose length varies, as the
    module docstring says; None where it does not apply (the caller goes on as before)."""
    if not args or not _whole_list(args[0]) or tx.shape_policy is None:
        return None
    try:
        in_place = fn in _IN_PLACE_ARITY
    except TypeError:  # an unhashable callable: none of these
        return None
    entry = None if in_place else pure_c.lookup(fn)
    if not in_place and (entry is None or not (entry.items or fn in _INDEXING) or kwargs):
        return None
    if in_place and len(args) != _IN_PLACE_ARITY[fn]:
        return None
    keywords = _keywords(fn, kwargs)
    if keywords is None:
        return None
    lst: ListV = args[0]
    # appended to, or changed by a call the region makes after its graph: a call now sees
    # that only if it is made there too (and has no result the trace needs)
    pending = bool(lst._items) or any(made is None for *_, made in lst.calls)
    if pending and not (in_place and fn in _IN_PLACE_NONE):
        return None
    if not in_place and lst.calls:  # a guard computing it would see the list before them
        return None
    obj = _as_the_calls_leave_it(lst)
    rest = args[1:]
    if any(isinstance(a, ListV) and a is lst for a in rest):
        return None
    t = _item_type(obj, rest)
    if t is None or not tx.shape_policy.length_dynamic(lst.source, len(obj)):
        return None
    examples = [_example(a) for a in rest]
    try:
        result = fn(list(obj), *examples, **dict(keywords))
    except Exception:  # noqa: BLE001 - raises on these values: traced as before, raising as natively
        return None
    if not in_place and type(result) not in _SCALAR_RESULTS:
        return None
    tx.guard(GuardKind.CONSTANT_MATCH, ItemsOfTypeSource(lst.source, Ref(t, t.__name__)), True)
    parts = [lst.source, *(_part(a) for a in rest)]
    label = getattr(fn, "__qualname__", None) or repr(fn)
    if in_place:
        if pending or keywords:  # after the graph, in order with the appends before it
            return _record(tx, lst, (tuple(lst._items), fn, tuple(rest), keywords, None))
        if fn in _EMPTY_RAISES:  # the list holds an item then: as long at the start as the
            # calls made first before this one take out, and one more
            grown = sum(_LENGTH_CHANGE.get(c[1], 0) for c in lst.calls)
            if grown < 1:
                length = PureCallSource(Ref(len, "len"), (lst.source,), ())
                enough = PureCallSource(Ref(operator.ge, "ge"), (length, 1 - grown), (Source, int))
                tx.guard(GuardKind.CONSTANT_MATCH, enough, True)
        made = RuntimeV(result, InPlaceCallSource(Ref(fn, label), tuple(parts), next(_serials)), tx)
        early = tx.__dict__.setdefault(EARLY_RUNTIME, [])
        tx.set(tx, EARLY_RUNTIME, [*early, made])  # (journaled: a rollback forgets the call)
        _record(tx, lst, ((), fn, tuple(rest), keywords, made.source))
        return Const(None) if result is None else made
    src = PureCallSource(Ref(fn, label), tuple(parts), tuple(type(p) for p in parts))
    if (
        entry is None
        or entry.items in ("pick", "sum")
        or not pure_c.total_on_items(fn, [list(obj), *examples])
    ):
        # (the length is not guarded here: ``max([])`` raises, ``sum([])`` of floats is an int)
        tx.guard(GuardKind.TYPE_MATCH, src, type(result))  # computed by the guard: a raise misses
    runtime_items.computed_once(tx, result, src)
    return RuntimeV(result, src, tx)


def _none_results() -> dict:
    """The `pure_c.IN_PLACE` calls whose result is None, with their number of arguments."""
    out: dict = {}
    fn: Any
    for fn, entry in pure_c.IN_PLACE.items():
        args = [list(a) if type(a) is list else a for a in entry.example]  # (they change it)
        if fn(*args) is None:
            out[fn] = len(entry.example)
    return out


_IN_PLACE_NONE = _none_results()


def _as_the_calls_leave_it(lst: ListV) -> list:
    """A copy of the real list as this call finds it: the calls on it before, and what was
    appended before each and since (the trace's examples)."""
    out = list(lst.unread.obj)  # type: ignore[union-attr]
    for before, fn, args, keywords, _ in lst.calls:
        out.extend(map(_item_example, before))
        fn(out, *map(_item_example, args), **dict(keywords))
    out.extend(map(_item_example, lst._items))  # appended since: an item the call sees too
    return out


def _item_example(v: Value):
    """What `v`, an item or argument, is in this capture; an object of no scalar type
    where it is no scalar (a tensor appended: no call is made unread on that list)."""
    return _example(v) if _scalar(v) else _NOT_SCALAR


_NOT_SCALAR = object()


def _whole_list(v: Value) -> bool:
    """`v` is an outside exact list whose items the trace has not read."""
    return type(v) is ListV and v.cls is list and v.unread is not None and v.source is not None


def _item_type(obj: list, rest: list):
    """The one exact type among `pure_c.ORDERED_KINDS` of every item of `obj` and every
    other argument (int where there are none); None where there is no such type."""
    kinds = {type(x) for x in obj}
    for a in rest:
        if not _scalar(a):
            return None
        kinds.add(type(_example(a)))
    if not kinds:  # an empty list, nothing else (``heapify([])``): the kind most lists have
        return int
    if len(kinds) != 1:
        return None
    (t,) = kinds
    return t if t in pure_c.ORDERED_KINDS else None


def _scalar(a: Value) -> bool:
    """A literal constant, a runtime value (its type guarded) of a builtin scalar type, or
    an int input that is a ShapeEnv symbol (torch imported: `runtime_items.input_symbol`)."""
    if runtime_items.input_symbol(a):
        return True
    return isinstance(a, Const) and (is_unread(a) or type(a.value) in pure_c.ORDERED_KINDS)


def _example(a: Value):
    return runtime_items.item_example(a) if runtime_items.unread_item(a) else a.value  # type: ignore[attr-defined]


def _part(a: Value):
    return a.source if runtime_items.unread_item(a) else a.value  # type: ignore[attr-defined]


def _keywords(fn, kwargs: dict | None) -> tuple | None:
    if not kwargs:
        return ()
    allowed = runtime_items.item_keywords(fn)
    out = []
    for name, v in kwargs.items():
        if name not in allowed or not isinstance(v, Const) or is_unread(v) or type(v.value) is not bool:
            return None
        out.append((name, v.value))
    return tuple(out)


def _record(tx, lst: ListV, call: tuple) -> Value:
    """In-place `call` recorded on `lst` (after what was appended to it before, which it
    now holds): a read of the items breaks from now on."""
    tx.set(lst, "calls", (*lst.calls, call))
    if call[-1] is None:  # made after the graph: the list is written there
        tx.set(lst, "_items", [])
        ops.touch(tx, lst)
    return Const(None)
