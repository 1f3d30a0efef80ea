"""The order a set made in the trace iterates in: CPython's hash-table order, not insertion.

A CPython set iterates in the order of its hash table, which depends on its items'
hashes and on how it was built (one add at a time, a merge of another set's table
presized at once, items removed...).  A `SetV` keeps its items in a dict; beside it the
set made in the trace records its `history` -- what was done to it, in order, on the
items' hash keys (`ops.hkey`: the constants themselves, objects hashed by identity) --
and `ordered_entries` replays that history on a real set, whose iteration is the order
the native set has.  A set with no history (from outside: its items are read in its
own order) or one whose history no longer accounts for its items keeps its dict's order.

A history is a persistent chain ``(previous, step, argument)``.  It starts with
``("set", update)`` or ``("frozen", update)``, a set made from one update, or with
``("binary", (op, history, history))``, a set made by ``|``/``&``/``-``/``^``.  An update
is ``("adds", keys)`` (one add each), ``("dict", keys)`` (a dict's keys),
``("merge", history)`` (another set's table merged, as ``set.update``/``set(s)``/
``s.copy()`` do) or ``("real", obj)`` (a real set), or with ``("method", (name,
history, updates))``, ``s.union(...)``/``intersection``/``difference``; later steps are updates,
``("discard", key)``, ``("clear", None)`` and ``("binary_inplace", (op, history))``
(``|=``...).
"""

from __future__ import annotations

import operator
from typing import Any

from ..model.values import Const, DictV, SetV

_INPLACE = {operator.or_: operator.ior, operator.and_: operator.iand, operator.sub: operator.isub}
_INPLACE[operator.xor] = operator.ixor


def record(tx, s: SetV, step: str, argument) -> None:
    """Append one step to the history of `s` (journaled: a rolled-back call drops it)."""
    tx.set(s, "history", (s.history, step, argument))


def started(step: str, argument, frozen: bool = False) -> tuple:
    """The history of a set (a frozenset with `frozen`) made from one update step."""
    return (None, "frozen" if frozen else "set", (step, argument))


def update_step(iterable, keys) -> tuple:
    """The step of updating a set with `iterable` (whose items' hash keys are `keys`), as
    ``set_update_internal`` does it: another set's table merged, a dict's keys after one
    resize, anything else one add at a time.  (A set from outside, whose table the trace
    does not see, is taken as added one at a time in its own order.)"""
    if isinstance(iterable, SetV) and iterable.history is not None:
        return "merge", iterable.history
    if isinstance(iterable, Const) and type(iterable.value) in (set, frozenset):
        return "real", iterable.value
    if isinstance(iterable, DictV) and iterable.cls is dict:
        return "dict", tuple(keys)
    return "adds", tuple(keys)


def binary_history(op, a: SetV, b: SetV, inplace: bool):
    """The history of ``a op b`` (a new set) or of `a` after ``a op= b``; None when either
    has none."""
    if a.history is None or b.history is None:
        return None
    if inplace:
        return (a.history, "binary_inplace", (op, b.history))
    return (None, "binary", (op, a.history, b.history))


def method_history(method: str, s: SetV, updates: list):
    """The history of ``s.method(*others)`` (union, intersection, difference), each other
    given as its update step (`update_step`); None when `s` has none."""
    if s.history is None:
        return None
    return (None, "method", (method, s.history, tuple(updates)))


def _source(step: str, argument):
    """What a set is updated from by `step` (None: a set whose table is not known)."""
    if step == "adds":
        return argument  # a tuple: one add each
    if step == "dict":
        return dict.fromkeys(argument)  # one resize for all, then one add each
    if step == "merge":
        return replay(argument)  # its table merged
    return argument  # "real": a real set


def replay(history) -> set | frozenset | None:
    """A real set with the table the native one has: `history` done again on hash keys."""
    steps = []
    while history is not None:
        history, step, argument = history
        steps.append((step, argument))
    table: Any = None
    for step, argument in reversed(steps):
        if step in ("set", "frozenset", "frozen"):
            source = _source(*argument)
            if source is None:
                return None
            table = (frozenset if step == "frozen" else set)(source)
        elif step == "binary":
            op, a, b = argument
            ra, rb = replay(a), replay(b)
            if ra is None or rb is None:
                return None
            table = op(ra, rb)
        elif step == "method":
            method, a, updates = argument
            ra = replay(a)
            sources = [_source(*u) for u in updates]
            if ra is None or any(x is None for x in sources):
                return None
            table = getattr(ra, method)(*sources)
        elif step == "binary_inplace":
            op, b = argument
            rb = replay(b)
            if rb is None or table is None:
                return None
            table = _INPLACE[op](table, rb)
        elif step == "discard" and table is not None:
            table.discard(argument)
        elif step == "clear" and table is not None:
            table.clear()
        elif table is not None and step in ("adds", "dict", "merge", "real"):
            source = _source(step, argument)
            if source is None:
                return None
            table.update(source)
        else:  # pragma: no cover - every history starts with a set's making
            return None
    return table


def ordered_entries(s: SetV) -> dict:
    """The items of `s` (hash key -> value) in the order the native set iterates them."""
    if s.history is None:
        return s.entries
    table = replay(s.history)
    entries = s.entries
    if table is None or len(table) != len(entries) or any(k not in entries for k in table):
        return entries  # a change it did not record (`clear`, ...): its dict's order
    return {k: entries[k] for k in table}


def put_in_order(tx, s: SetV) -> None:
    """Reorder the items of `s` as the native set iterates them, before they are iterated
    (journaled; the items themselves are unchanged)."""
    if s.history is not None:
        ordered = ordered_entries(s)
        if list(ordered) != list(s.entries):
            tx.set(s, "entries", ordered)


_PLAIN = (int, float, complex, str, bytes, bool, type(None))


def _plain(x) -> bool:
    t = type(x)
    if t is tuple or t is frozenset:
        return all(_plain(i) for i in x)
    return t in _PLAIN


def plain_history(history) -> bool:
    """Whether every key `history` names is a plain constant (numbers, strings, tuples
    and frozensets of them): then `replay` makes the set itself, items and order (the
    history can be a region's constant: it keeps no object of the user's alive)."""
    while history is not None:
        history, step, argument = history
        if step in ("set", "frozen"):
            step, argument = argument
        if step in ("merge",):
            if not plain_history(argument):
                return False
        elif step == "binary":
            if not (plain_history(argument[1]) and plain_history(argument[2])):
                return False
        elif step == "method":
            _, a, updates = argument
            if not plain_history(a) or not all(plain_history((None, "set", u)) for u in updates):
                return False
        elif step == "binary_inplace":
            if not plain_history(argument[1]):
                return False
        elif step == "discard":
            if not _plain(argument):
                return False
        elif step == "clear":
            continue
        elif not _plain(argument if step == "real" else tuple(argument)):
            return False
    return True
