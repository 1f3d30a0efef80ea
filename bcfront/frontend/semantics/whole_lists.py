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
- An in-place call (`pure_c.IN_PLACE`: ``heapq.heappush``, ``heappop``, ``heapify``,
  ``bisect.insort``, ``list.sort``, ``xs.insert(i, x)``, ``xs.pop()``): made by the region
  first, before its graph, as an `InPlaceCallSource` whose result is a runtime item
  (``heappop``'s: one an empty list would not give, its length guarded where the call
  raises on an empty list, `InPlace.empty_raises`) -- or, where the trace appended to the
  list first and the call returns None, recorded on the list (`ListV.calls`) and made
  after the graph, in order with the appends (`regions.codegen`).  The items stay unread;
  a later read of them breaks the graph there (``unread-items``), and the code after the
  break reads the real list.

``len(xs)`` of such a list is an int known at run time, whatever the items are: the length
the region finds first (read before it makes any call on the list), plus what the trace
appended since and what each call did to it (`InPlace.length`).  A training loop's
``history.append(loss); n = len(history)`` is one entry, not one per call; a heap's
``heappush(h, x); if len(h) > k: heappop(h)`` one per answer of its test.

A call that returns a list (``sorted``) is traced as before: its result's length is what
the trace would need.  So is one that raises on this call's values (``xs.index(x)`` of a
missing x, ``xs.pop()`` of a list the calls before emptied): the guard of an entry made
here computes such a call, and a raise misses.

`call_declared` is the one path of a declared call on values known only at run time: an
unread list here, else `runtime_values` (``x in xs`` reaches it as ``operator.contains``).
"""

from __future__ import annotations

import itertools
import operator
import sys
from typing import Any

from ..model.builder import EARLY_RUNTIME
from ..model.guard_kinds import GuardKind
from ..model.sources import InPlaceCallSource, ItemsOfTypeSource, PureCallSource, Ref, Source
from ..model.tensor_inputs import wrap_sym_int
from ..model.tracer import SymbolicRaise
from ..model.values import Const, ExceptionV, ListV, RuntimeV, Value, is_unread
from . import ops, pure_c, runtime_items, runtime_values

# `pure_c.TABLE` calls on lists that raise on some values of any type (no `Pure.items`):
# the guard computes them, a raise misses
_INDEXING = frozenset({list.index, operator.indexOf})
_SCALAR_RESULTS = frozenset({int, float, bool, str, bytes})
_serials = itertools.count()


def call_declared(tx, fn, args: list, kwargs: dict | None) -> Value | None:
    """``fn(*args, **kwargs)`` of a C call declared in `pure_c`, made on values known only
    at run time: on an unread outside list itself (`call`), else on runtime values and
    lists or tuples of them (`runtime_values.call`); None where neither applies.  The one
    path of a call (`objects.call_object`) and of ``x in xs`` (``operator.contains``)."""
    if not args:
        return None
    if type(args[0]) is ListV and args[0].unread is not None:  # an outside list, unread
        made = call(tx, fn, args, kwargs)
        if made is not None:
            return made
    if (
        any(type(a) is RuntimeV or runtime_items.input_symbol(a) for a in args)
        or runtime_values.is_join(fn)
        or runtime_values.holds_runtime(args, fn)
    ):
        return runtime_values.call(tx, fn, args, kwargs)
    return None


def call(tx, fn, args: list, kwargs: dict | None) -> Value | None:
    """``fn(*args, **kwargs)`` made on an unread outside list whose length varies, as the
    module docstring says; None where it does not apply (the caller goes on as before)."""
    if not args or not _whole_list(args[0]) or tx.shape_policy is None:
        return None
    if fn is len and len(args) == 1 and not kwargs:
        return _length(tx, args[0])
    try:
        change = pure_c.IN_PLACE.get(fn)
    except TypeError:  # an unhashable callable: none of these
        return None
    in_place = change is not None
    entry = None if in_place else pure_c.lookup(fn)
    if not in_place and (entry is None or not (entry.items or fn in _INDEXING) or kwargs):
        return None
    if change is not None and not 0 <= len(change.example) - len(args) <= change.optional:
        return None
    keywords = runtime_items.literal_keywords(fn, kwargs)
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
    t = _item_type(obj, rest, change.indices if change is not None else ())
    if t is None or not tx.shape_policy.length_dynamic(lst.source, len(obj)):
        return None
    # (an index known only at run time: which lengths make ``xs.pop(i)`` raise is not known)
    need = 0 if change is None else pure_c.fewest_items(change, [_known(a) for a in rest])
    if need is None:
        return None
    examples = [_example(a) for a in rest]
    try:
        result = fn(list(obj), *examples, **dict(keywords))
    except Exception as e:  # noqa: BLE001 - raises on these values
        if in_place and not pending and not keywords and len(obj) < need and _scalar_args(e):
            _raise_on_length(tx, lst, e)  # the list too short: raising as natively, made here
        return None  # else traced as before, raising as natively
    if not in_place and type(result) not in _SCALAR_RESULTS:
        return None
    tx.guard(GuardKind.CONSTANT_MATCH, ItemsOfTypeSource(lst.source, Ref(t, t.__name__)), True)
    parts = [lst.source, *(_part(a) for a in rest)]
    label = getattr(fn, "__qualname__", None) or repr(fn)
    if in_place:
        if pending or keywords:  # after the graph, in order with the appends before it
            return _record(tx, lst, (tuple(lst._items), fn, tuple(rest), keywords, None))
        grown = _grown(lst)
        if need and need > grown:  # it raises on a shorter list: the list is as long at the start as
            # the calls made first before this one take out, and as this one needs
            length = _length_first(lst)
            enough = PureCallSource(Ref(operator.ge, "ge"), (length, need - grown), (Source, int))
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


def _length_first(lst: ListV) -> PureCallSource:
    """``len(lst)`` as the region finds it, before it makes any call on the list."""
    return PureCallSource(Ref(len, "len"), (lst.source,), ())


def _scalar_args(e: Exception) -> bool:
    return all(type(a) in _SCALAR_RESULTS for a in e.args)


def _raise_on_length(tx, lst: ListV, e: Exception) -> None:
    """An in-place call that raises on the list as this call finds it, too short for it
    (`pure_c.fewest_items`): what it raises depends on the length alone -- the region's
    first length guarded (the calls recorded before it change it as they declare) -- so the
    trace raises it here, after the calls the region makes first (``heappop`` of an empty
    heap: ``IndexError('index out of range')``, natively), where reading the items for the
    call broke the graph (``unread-items``) and ran it natively in a stand-in frame."""
    tx.guard(GuardKind.CONSTANT_MATCH, _length_first(lst), len(lst.unread.obj))  # type: ignore[union-attr]
    raise SymbolicRaise(ExceptionV(type(e), [Const(a) for a in e.args]))


def _length(tx, lst: ListV) -> Value | None:
    """``len(lst)``, an int known at run time once the list's length has varied: the
    length the region finds first (read before the region makes any call on the list),
    plus what the trace appended since and what the in-place calls on it did to it (each
    call's declared `pure_c.InPlace.length`)."""
    obj = lst.unread.obj  # type: ignore[union-attr]
    if not tx.shape_policy.length_dynamic(lst.source, len(obj)):
        return None
    src = first = _length_first(lst)
    _read_first(tx, lst, RuntimeV(len(obj), first, tx))
    grown = _grown(lst) + len(lst._items)
    if grown:
        src = PureCallSource(Ref(operator.add, "add"), (first, grown), (Source, int))
    n = len(obj) + grown
    runtime_items.computed_once(tx, n, src)
    policy = tx.shape_policy
    if policy.saw_tensors or not (tx.static_ints or policy.ints_broke or "torch" not in sys.modules):
        return wrap_sym_int(tx, n, src)  # a symbol, as a changing int input is: a tensor's operand too
    return RuntimeV(n, src, tx)


def _grown(lst: ListV) -> int:
    """What the calls recorded on `lst`, and the items appended before each, did to its
    length (`pure_c.InPlace.length`)."""
    return sum(len(before) + pure_c.IN_PLACE[fn].length for before, fn, *_ in lst.calls)


def _read_first(tx, lst: ListV, v: RuntimeV) -> None:
    """Has the region read `v` before the first call on `lst` it makes first (`EARLY_RUNTIME`
    holds those in order): what it reads is then the list as the region found it."""
    early = tx.__dict__.setdefault(EARLY_RUNTIME, [])
    if any(e.source == v.source for e in early):
        return
    calls = (
        i
        for i, e in enumerate(early)
        if type(e.source) is InPlaceCallSource and e.source.args[0] == lst.source
    )
    at = next(calls, len(early))
    tx.set(tx, EARLY_RUNTIME, [*early[:at], v, *early[at:]])  # (journaled, as the calls are)


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


def _item_type(obj: list, rest: list, indices: tuple = ()):
    """The one exact type among `pure_c.ORDERED_KINDS` of every item of `obj` and every
    other argument but those at `indices` (of the call's arguments: ints), int where there
    are none; None where there is no such type."""
    kinds = {type(x) for x in obj}
    for i, a in enumerate(rest, 1):
        if not _scalar(a):
            return None
        if i in indices:
            if type(_example(a)) is not int:
                return None
            continue
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


def _known(a: Value):
    """The value of argument `a` where it is known at capture, else None."""
    return None if runtime_items.unread_item(a) else a.value  # type: ignore[attr-defined]


def _part(a: Value):
    return a.source if runtime_items.unread_item(a) else a.value  # type: ignore[attr-defined]


def _record(tx, lst: ListV, call: tuple) -> Value:
    """In-place `call` recorded on `lst` (after what was appended to it before, which it
    now holds): a read of the items breaks from now on."""
    tx.set(lst, "calls", (*lst.calls, call))
    if call[-1] is None:  # made after the graph: the list is written there
        tx.set(lst, "_items", [])
        ops.touch(tx, lst)
    return Const(None)
