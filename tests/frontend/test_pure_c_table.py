"""Every entry of the table of pure C callables really is pure (#30).

`pure_c.TABLE` lets a C callable run at capture time on known arguments.  That is
right only if it is deterministic and changes nothing: called twice on deep
copies of its example arguments it gives equal results (or the same exception),
and leaves the arguments equal to what they were.  The example arguments must
also be of the types the entry is declared pure on.  Then a few calls through
`bcfront.capture` with ``fullgraph=True``, compared with native.
"""

from __future__ import annotations

import copy
import datetime
import posixpath
import re

import pytest

import bcfront
from bcfront.frontend.semantics import pure_c

from .outcomes import assert_same_outcome, quiet_outcome

ENTRIES = list(pure_c.TABLE.values())


def _comparable(x):
    """Match objects compare by identity: compare what they hold."""
    if isinstance(x, re.Match):
        return ("match", x.re, x.string, x.regs)
    if isinstance(x, pure_c.GETTERS):  # compare by identity: compare how they are made
        return ("getter", repr(x.__reduce__()))
    if isinstance(x, (list, tuple)):
        return type(x)(_comparable(i) for i in x)
    if hasattr(type(x), "__next__"):  # a lazy entry's iterator: what it yields, then raises
        return ("iterator", _drained(x))
    return x


def _drained(it):
    items = []
    try:
        items.extend(_comparable(i) for i in it)
    except Exception as e:  # noqa: BLE001 - raised after the items: part of what it yields
        items.append(("raise", type(e), str(e)))
    return items


def _outcome(fn, args, kwargs):
    try:
        return ("ok", _comparable(fn(*args, **kwargs)))
    except Exception as e:  # noqa: BLE001 - the same exception both times
        return ("raise", type(e), str(e))


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: getattr(e.fn, "__qualname__", repr(e.fn)))
def test_entry_is_pure(entry):
    args, kwargs = entry.example, dict(entry.kwargs)
    assert all(pure_c.accepted(a, entry.accepts) for a in (*args, *kwargs.values()))
    before = copy.deepcopy((args, kwargs))
    first = _outcome(entry.fn, copy.deepcopy(args), copy.deepcopy(kwargs))
    second = _outcome(entry.fn, args, kwargs)
    assert first[0] == "ok", first
    assert first == second
    assert (args, kwargs) == before


@pytest.mark.parametrize("entry", list(pure_c.IN_PLACE.values()), ids=lambda e: e.fn.__qualname__)
def test_in_place_entry_changes_only_its_list(entry):
    """`pure_c.IN_PLACE`: the same result and the same list afterwards twice over, its
    other arguments unchanged -- and it does change the list (else it belongs in `TABLE`)."""
    args = entry.example
    before = copy.deepcopy(args)
    first_args, second_args = copy.deepcopy(args), copy.deepcopy(args)
    first = _outcome(entry.fn, first_args, {})
    second = _outcome(entry.fn, second_args, {})
    assert first[0] == "ok", first
    assert (first, first_args) == (second, second_args)
    assert first_args[1:] == before[1:]
    assert type(first_args[0]) is list and first_args[0] != before[0]
    assert all(type(x) in pure_c.ORDERED_KINDS for x in (*before[0], *before[1:]))


@pytest.mark.parametrize("entry", list(pure_c.IN_PLACE.values()), ids=lambda e: e.fn.__qualname__)
def test_in_place_entry_declares_what_it_does_to_the_length(entry):
    """`InPlace.length`, `empty_raises` and `indices` (what `whole_lists` counts on to know
    ``len(xs)`` after the call, to guard the length, to pass an index that is no item)
    against real calls: on its example, on lists of other lengths and kinds, on an empty one."""
    for items in (list(entry.example[0]), [7, 2, 9, 4, 4, 1], [2.5, 0.5], ["b", "a", "c"], [5]):
        kind = type(items[0])
        rest = [a if i + 1 in entry.indices else kind(a) for i, a in enumerate(entry.example[1:])]
        xs = list(items)
        entry.fn(xs, *rest)
        assert len(xs) - len(items) == entry.length, (items, rest)
    for i in entry.indices:
        assert type(entry.example[i]) is int
    rest = list(entry.example[1:])
    if entry.empty_raises:
        with pytest.raises(IndexError):
            entry.fn([], *rest)
    else:
        xs: list = []
        entry.fn(xs, *rest)
        assert len(xs) == entry.length


@pytest.mark.parametrize("entry", list(pure_c.IN_PLACE.values()), ids=lambda e: e.fn.__qualname__)
def test_in_place_entry_raises_on_the_lists_too_short_it_declares(entry):
    """`pure_c.fewest_items` (the length `whole_lists` guards before a call that may raise):
    on lists of 0-5 items, with every number of arguments the entry takes and indices from
    -5 to 5, the call raises IndexError exactly on the lists shorter than it says."""
    arity = len(entry.example)
    for given in range(arity - entry.optional, arity + 1):
        base = list(entry.example[1:given])
        variants = [base]
        for pos in entry.indices:
            if pos < given:
                variants += [[*base[: pos - 1], i, *base[pos:]] for i in range(-5, 6)]
        for rest in variants:
            need = pure_c.fewest_items(entry, rest)
            for n in range(6):
                xs = list(range(n))  # sorted, and a heap
                try:
                    entry.fn(xs, *rest)
                    raised = False
                except IndexError:
                    raised = True
                assert raised == (n < need), (n, rest, need)


def test_item_kinds_are_declared_on_sequences():
    """An entry that says what it does to items (`Pure.items`) takes lists or tuples."""
    for entry in pure_c.TABLE.values():
        if entry.items or entry.any_sequence or entry.spread or entry.item_keywords:
            assert list in entry.accepts and tuple in entry.accepts, entry.fn


PAT = re.compile(r"(\d+)")


def regex(s):
    m = PAT.search(s)
    return PAT.sub("#", s), PAT.split(s), m.group(1), m[0], m.span(), re.sub(r"\s+", " ", s)


def dates(y):
    d = datetime.date(y, 1, 2)
    return d.isoformat(), d.weekday(), d + datetime.timedelta(days=3), d < datetime.date(y, 2, 1)


def paths(p):
    return posixpath.join(p, "b"), posixpath.basename(p), posixpath.splitext(p), posixpath.normpath(p)


def numbers(b):
    return int.from_bytes(b, "big"), bytes.fromhex("0a0b"), int.from_bytes(b, "little", signed=True)


def raising(s):
    return re.compile(s)  # an invalid pattern raises re.error


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize(
    "fn, arg",
    [(regex, "ab12 cd34"), (dates, 2020), (paths, "/a//b.txt"), (numbers, b"\x01\xff"), (raising, "(")],
    ids=lambda x: getattr(x, "__name__", None),
)
def test_pure_calls_capture_whole(fn, arg, fullgraph):
    want = quiet_outcome(fn, arg)
    assert_same_outcome(quiet_outcome(bcfront.capture(fn, fullgraph=fullgraph), arg), want)
