"""The order a captured function's chain tries its entries in (`fast_call`).

Any order is exact: a call runs an entry whose guard holds.  The order is speed only: a
function whose inputs varied has entries by value first, then one made for every value
(`ShapePolicy.value_dynamic`, `length_dynamic`), which the creation order would try last.
`chain_order` keeps the creation order where a keyed table picks among the entries
(`keyed_dispatch`: a repeated value keeps its faster entry), else tries the entries that fix
fewer input values first (`general_first`).  ``fast_call.GENERAL_FIRST = False`` is the
creation order, the reference (`tests/test_keyed_dispatch.py`).
"""

from __future__ import annotations

from .frontend.model.guard_kinds import GuardKind
from .frontend.model.sources import AttrSource, CellSource, GlobalSource, ItemSource, LocalSource
from .keyed_dispatch import keyed_run


def chain_order(entries: list, code, bound: bool, keyed: bool) -> list:
    """The order the chain tries `entries` in: as made where that order has a keyed table
    (`keyed` on: the call picks a specialized entry by its arguments, or goes straight to
    the value-dynamic one after them -- a repeated value keeps its faster entry), the
    entries of one key newest first (`newest_of_a_key_first`), else `general_first`'s."""
    if keyed and code is not None:
        keys, positions = keyed_run(entries, code, bound)
        if positions:
            return newest_of_a_key_first(entries, keys, positions)
    return general_first(entries)


def newest_of_a_key_first(entries: list, keys: list, positions) -> list:
    """`entries` as made, but those of the keyed run (`keys`: theirs) that share a key on
    `positions` newest first, where the oldest of them was.  A key has a second entry only
    where the first one's guard failed on a call with it -- what it read changed (a cache
    the first call filled: ``enum.Flag``'s pseudo-members, ``re``'s compiled patterns) --
    and the older one seldom holds again; the table picks the first link of a key, and a
    call goes on to the older ones only where the newest fails."""
    groups: dict = {}
    for i, key in enumerate(keys):
        groups.setdefault(tuple((p, type(key[p]), key[p]) for p in positions), []).append(i)
    order = [i for members in groups.values() for i in reversed(members)]
    return [entries[i] for i in order] + list(entries[len(keys) :])


def general_first(entries: list) -> list:
    """`entries` in the order the chain tries them: those whose guards fix the values of
    fewer inputs first (CONSTANT_MATCH guards: an int's, a str's, a list's items'), in the
    order they were made among equals.  An entry made once an input's values varied reads
    them as runtime values (`ShapePolicy.value_dynamic`, `length_dynamic`) and takes every
    later value, where each of the entries before it, fixing them, takes its own only: a
    call then runs one guard, not a key's lookup or their failed guards first.  Entries
    fixing one value each keep their order (a keyed run: `keyed_table`).  Exact as any
    order is: a call runs an entry whose guard holds."""
    fixed = [len(_checked_sources(e)) for e in entries]
    return [entries[i] for i in sorted(range(len(entries)), key=fixed.__getitem__)]


def _checked_sources(entry) -> set:
    """The inputs whose value some CONSTANT_MATCH of the entry fixes (a NaN's too): an
    argument, its items and attributes, a global, a cell -- not a computed test of them
    (``items_of_type(xs, int) is True``, ``len(xs) >= 1``), which holds for many values."""
    reads = (LocalSource, ItemSource, AttrSource, GlobalSource, CellSource)
    return {g.source for g in entry.guards if g.kind == GuardKind.CONSTANT_MATCH and type(g.source) in reads}
