"""A bounded ``lru_cache`` returning the lookup of a memo that fills itself (``quote``'s
``_byte_quoter_factory(safe)``: ``_Quoter(safe).__getitem__``) is traced through (#30): the
fresh memo answers as the cached one does while its ``__missing__`` reads none of its items
(checked on its bytecode) and each call only memoizes (checked call by call); any other use
of it (its identity, ``__self__``, leaving the function) and a ``__missing__`` that does
more than memoize, writes an attribute, reads the memo's items or hands ``self`` on stay
graph breaks (compared under ``fullgraph=False``: the call runs natively).
"""

from __future__ import annotations

import functools
import urllib.parse

import pytest

import bcfront
from bcfront.errors import GraphBreakError

SEEN: list = []


class Memo(dict):
    def __init__(self, base):
        self.base = base

    def __missing__(self, k):
        v = f"{self.base}:{k}"
        self[k] = v
        return v


class Lying(Memo):  # stores something else than it returns
    def __missing__(self, k):
        self[k] = "other"
        return f"{self.base}:{k}"


class Counting(Memo):  # its answers depend on its own history
    def __missing__(self, k):
        self.base += 1
        return self.base


class Logging(Memo):  # writes outside
    def __missing__(self, k):
        SEEN.append(k)
        v = f"{self.base}:{k}"
        self[k] = v
        return v


class Raising(Memo):
    def __missing__(self, k):
        if k < 0:
            raise ValueError(f"negative {k}")
        v = f"{self.base}:{k}"
        self[k] = v
        return v


class ReadingItself(Memo):  # its answers depend on what it holds
    def __missing__(self, k):
        v = len(self)
        self[k] = v
        return v


class Delegating(Memo):  # hands itself to code that may read it
    def __missing__(self, k):
        return super().__missing__(k)


def _factory(cls):
    @functools.lru_cache(maxsize=8)
    def lookup_of(base):
        return cls(base).__getitem__

    return lookup_of


KINDS = (Memo, Lying, Counting, Logging, Raising, ReadingItself, Delegating)
MEMO, LYING, COUNTING, LOGGING, RAISING, READING, DELEGATING = (_factory(c) for c in KINDS)


def memo_lookups(base, keys):
    get = MEMO(base)
    return [get(k) for k in keys] + [get(keys[0]), callable(get), type(get).__name__]


def raising_lookup(base, k):
    try:
        return RAISING(base)(k)
    except ValueError as e:
        return str(e)


def quoted(s):
    return (
        urllib.parse.quote(s),
        urllib.parse.quote(s, safe=""),
        urllib.parse.quote_plus(s),
        urllib.parse.urlencode({"k": s}),
        urllib.parse.quote_from_bytes(s.encode("utf-16")),
    )


def quote_raises(x):
    return urllib.parse.quote(x)


@pytest.mark.parametrize(
    "fn, calls",
    [
        (memo_lookups, [("a", [1, 2, 1]), ("b", [3])]),
        (raising_lookup, [("r", 1), ("r", -1)]),
        (quoted, [("a b/c",), ("é&=?",), ("plain",), ("",)]),
        (quote_raises, [(1,), (b"a b",)]),
    ],
    ids=["memo", "missing-raises", "quote", "quote-raises"],
)
def test_a_cached_memo_lookup_captures_whole(fn, calls):
    cf = bcfront.capture(fn, fullgraph=True)
    for args in calls * 2:  # the second round: cached entries
        want = _outcome(fn, *args)
        assert _outcome(cf, *args) == want


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with the native exception
        return "raise", type(e), str(e)


def lying(k):
    get = LYING("l")
    return get(k), get(k)


def counting(k):
    get = COUNTING(0)
    return get(k), get(k)


def logging(k):
    return LOGGING("g")(k)


def reading(k):
    get = READING("r")
    return get(k), get(k + 1)


def delegating(k):
    return DELEGATING("d")(k)


def identity(base):
    return MEMO(base) is MEMO(base)


def self_of(base):
    return len(MEMO(base).__self__)


def leaves(base):
    return MEMO(base)


@pytest.mark.parametrize(
    "fn, arg, why",
    [
        (lying, 1, "does more than memoize"),
        (logging, 1, "does more than memoize"),
        (counting, 1, "a bounded cache returning an object"),  # self.base += 1: not a memo
        (reading, 1, "a bounded cache returning an object"),  # len(self)
        (delegating, 1, "a bounded cache returning an object"),  # super(): self handed on
        (identity, "i", "`is` between"),
        (self_of, "s", "__self__"),
        (leaves, "x", "cannot be rebuilt"),
    ],
    ids=[
        "stores-another-value",
        "writes-outside",
        "writes-an-attribute",
        "reads-its-items",
        "hands-itself-on",
        "identity",
        "self",
        "leaves",
    ],
)
def test_any_other_use_breaks_and_runs_natively(fn, arg, why):
    with pytest.raises(GraphBreakError, match=why):
        bcfront.capture(fn, fullgraph=True)(arg)
    if fn is leaves:
        assert bcfront.capture(fn)(arg) is fn(arg)  # natively: the very object the cache keeps
        return
    runs = {}
    for mode, run in (("native", fn), ("captured", bcfront.capture(fn))):
        for factory in (MEMO, LYING, COUNTING, LOGGING, READING, DELEGATING):
            factory.cache_clear()  # each run starts from an empty cache
        SEEN.clear()
        runs[mode] = [run(arg) for _ in range(3)], list(SEEN)
    assert runs["captured"] == runs["native"]
