"""Keyed dispatch of the C call: which exact link a call tries first, by its arguments.

A function called with many values of an int or a string gets an entry per value, whose
guards differ in a CONSTANT_MATCH (``type(x) is int and x == 2``), and the k-th entry's link
would run after k-1 failed guards.  Where every entry's guard has such a check of an exact
scalar (int, str, bytes, bool, None, float but NaN) on the same positional arguments, the C
call looks the call's key up -- each of those arguments' exact type and value: 1, 1.0 and
True are equal and hash alike, their types tell them apart -- in a table of the first link
(in chain order) of each key, and calls that link; a key not in it calls what the last link
calls on a miss.  This is exact: every entry before the one picked has another key, so its
constant check fails on this call anyway (-0.0 and 0.0 share a key: the full guard, which
the picked link runs, tells them apart), and the picked link goes on down the chain where
the rest of its guard fails; a key in no entry fails every entry's check.  Entries without
such a check on those arguments (a NaN, a tuple, an argument not specialized) after the
specialized ones: a key not in the table calls the first of them (a function called with
a few values, then with many: its value-dynamic entry, one lookup away); before them or
among them: no table, the plain chain.  The table holds only scalars, types and the
links.  The plain chain stays the reference (``keyed_dispatch = False`` on a captured function;
`tests/test_keyed_dispatch.py`).  `bcfront.fast_call` arms the C call with the table this
module makes.
"""

from __future__ import annotations

import inspect

KEY_TYPES = frozenset({int, str, bytes, bool, type(None), float})  # `key_type` in _cfast.c
KEY_MAX = 8  # most positions a key reads (KEY_MAX in _cfast.c)


def keyed_table(entries, links, code, bound: bool) -> tuple[tuple[int, ...], dict, int | None] | None:
    """The C call's keyed dispatch for `entries` and their exact `links` (chain order):
    ``(positions, table, missed)``, or None where it has none (plain chain).

    The positions are positional arguments (indices into the C call's, the bound self not
    counted; a ``*args`` item counts as the position it is passed at) on which every
    entry's guard has a CONSTANT_MATCH expecting an exact scalar of `KEY_TYPES` (NaN
    excepted), those of them that tell the entries apart (`_telling_positions`).  The
    table maps each entry's key -- each of those arguments' exact type and value -- to the
    first link having it, one level per position: ``{value: {type: next}}`` (1, 1.0 and
    True are equal dict keys; their types are not), made as C reads it (`_compact`).  It
    holds only scalars, types and the links.  None where no such argument tells two
    entries apart (a lookup would only add to the call).

    The table covers the longest run of entries from the first that are all specialized on
    those arguments; the entries after it (a value-dynamic entry, its argument a runtime
    value: `ShapePolicy.value_dynamic`) are where a key not in the table goes, from the
    first of them on (``missed``: its index, None where the table covers every entry and
    a key not in it goes to what the last link calls on a miss).  Exact as well: every
    entry of the run has a key of its own, so each fails such a call's constant check."""
    keys, positions = keyed_run(entries, code, bound)
    if not positions:
        return None
    run = len(keys)
    table: dict = {}
    for key, link in zip(keys, links):
        node = table
        for p in positions:
            v = key[p]
            by_type = node.setdefault(v, {})
            node = by_type.setdefault(type(v), {} if p != positions[-1] else link)  # the first
    return positions, _compact(table), (run if run < len(entries) else None)


def keyed_run(entries, code, bound: bool) -> tuple[list, tuple[int, ...]]:
    """The keys of the longest run of `entries` from the first specialized on positional
    arguments' values, and the positions a table would read (() where none: no table)."""
    if len(entries) < 2:
        return [], ()
    position_of = _argument_positions(code, bound)
    keys = [_scalar_constants(e, position_of) for e in entries]
    run = next((i for i, k in enumerate(keys) if not k), len(keys))  # specialized ones first
    keys = keys[:run]
    if len(keys) < 2:
        return keys, ()
    return keys, _telling_positions(keys, sorted(set(keys[0]).intersection(*keys[1:])))


def _telling_positions(keys, common: list[int]) -> tuple[int, ...]:
    """The fewest of the `common` positions (greedily) that tell the entries' `keys` apart
    as well as all of them do: each one read costs a lookup per call, and a subset is as
    exact (it can only pick an earlier link, whose guard then fails).  () where no position
    tells two entries apart."""

    def classes(ps) -> int:  # how many keys the positions `ps` tell apart
        return len({tuple((type(k[p]), k[p]) for p in ps) for k in keys})

    want = classes(common)
    chosen: list[int] = []
    for p in sorted(common, key=lambda p: -classes([p])):  # the most telling first
        if classes(chosen) == want:
            break
        if classes([*chosen, p]) > classes(chosen):
            chosen.append(p)
    return tuple(sorted(chosen)[:KEY_MAX]) if want > 1 else ()


def _compact(node):
    """A table level made as C reads it: each value's ``{type: next}`` of one type as the
    pair ``(type, next)`` (one pointer compare), every `next` a level in turn (a link, a
    leaf, as it is)."""
    if type(node) is not dict:
        return node
    out = {}
    for v, by_type in node.items():
        nexts = {t: _compact(n) for t, n in by_type.items()}
        out[v] = next(iter(nexts.items())) if len(nexts) == 1 else nexts
    return out


def _argument_positions(code, bound: bool):
    """`position_of(source)`: the index into the C call's positional arguments of the
    argument `source` reads (a positional parameter of the root traced with `code`, or an
    item of its ``*args``), else None."""
    from .frontend.model.sources import ItemSource, LocalSource

    count = code.co_argcount
    where = {LocalSource(n): i - bound for i, n in enumerate(code.co_varnames[:count]) if i >= bound}
    star = None
    if code.co_flags & inspect.CO_VARARGS:
        star = LocalSource(code.co_varnames[count + code.co_kwonlyargcount])

    def position_of(source) -> int | None:
        if type(source) is ItemSource and source.base == star and type(source.key) is int and source.key >= 0:
            p = count + source.key - bound
            return p if p >= 0 else None  # (a bound self as args[0])
        return where.get(source)

    return position_of


def _scalar_constants(entry, position_of) -> dict[int, object]:
    """position -> the exact scalar (not NaN) the entry's CONSTANT_MATCH guard expects of
    the argument there, for the arguments that have one."""
    from .frontend.model.guard_kinds import GuardKind

    found = {}
    for g in entry.guards:
        v = g.expected
        if g.kind == GuardKind.CONSTANT_MATCH and type(v) in KEY_TYPES and v == v:
            p = position_of(g.source)
            if p is not None:
                found[p] = v
    return found
