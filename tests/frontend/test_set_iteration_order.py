"""A set made in the trace iterates in CPython's hash-table order, not in insertion order.

``list({3, 1, x})`` is ``[1, 2, 3]`` natively; the trace iterated a set's items in the
order they were added (``[3, 1, 2]``), and a set it returned was rebuilt in yet another
order.  The table's order depends on the items' hashes and on how the set was built (one
add at a time, a set or dict merged after one resize, items discarded, ``|``/``&``...):
the trace now records that history and replays it on a real set (`set_order`).  Oracle:
CPython on the same function -- the order of iteration, ``repr`` and the returned set's
own iteration -- on the first and the cached call, for int keys that collide in small
tables and for str keys (hashed per process).
"""

from __future__ import annotations

import pytest

import bcfront


def literal(a, b, c):
    return list({a, b, c, 1})


def constant_literal(a):
    return list({"alpha", "beta", "gamma", "delta", "eps", "zeta"}) + [a]


def from_list(xs):
    return list(set(xs))


def from_dict(xs):
    return list(set(dict.fromkeys(xs)))


def from_set(xs):
    s = set(xs)
    return list(set(s)), list(s.copy()), list(frozenset(s))


def comprehension(xs):
    return [v for v in {x * 8 for x in xs}]


def adds_and_discards(xs):
    s = set()
    for x in xs:
        s.add(x)
    s.discard(xs[0])
    s.add(xs[0] * 2)
    s.update([1000, 8], "ab")
    t = set(xs)
    t.clear()
    t.update(xs[::-1])
    return list(s), repr(s), list(t)


def algebra(xs, ys):
    a, b = set(xs), set(ys)
    c = set(xs)
    c |= b
    d = set(ys)
    d -= a
    return [list(a | b), list(a & b), list(a - b), list(a ^ b), list(c), list(d), list(a.union(ys))]


def returned(xs):
    return set(xs), frozenset(xs), {x * 2 for x in xs}


def joined(words):
    return ",".join({w.upper() for w in words}), sorted({w for w in words}) == sorted(set(words))


INTS = [17, 1, 9, 33, 25, 2, 8, 64, 41]
WORDS = ["pear", "fig", "kiwi", "plum", "lime", "date", "sloe", "yuzu"]

CASES = [
    (literal, (3, 9, 17)),
    (literal, ("b", "a", "c")),
    (constant_literal, (0,)),
    (from_list, (INTS,)),
    (from_list, (WORDS,)),
    (from_dict, (INTS,)),
    (from_dict, (WORDS,)),
    (from_set, (INTS,)),
    (from_set, (WORDS,)),
    (comprehension, (INTS,)),
    (adds_and_discards, (INTS,)),
    (adds_and_discards, (WORDS,)),
    (algebra, (INTS, [9, 2, 100, 8, 7])),
    (algebra, (WORDS, ["fig", "apple", "sloe"])),
    (returned, (INTS,)),
    (returned, (WORDS,)),
    (joined, (WORDS,)),
]


def _ordered(r):
    """`r` with every set shown as the list of its items in its iteration order."""
    if isinstance(r, (set, frozenset)):
        return (type(r).__name__, list(r))
    if isinstance(r, (tuple, list)):
        return [_ordered(x) for x in r]
    return r


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_iteration_order_same_as_plain_python(fn, args):
    cf = bcfront.capture(fn)
    want = _ordered(fn(*args))
    assert _ordered(cf(*args)) == want
    assert _ordered(cf(*args)) == want
