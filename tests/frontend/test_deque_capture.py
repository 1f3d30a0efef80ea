"""``collections.deque`` captured whole (#28): made in the function or passed in, every
method, ``maxlen``, indexing and iteration, against plain Python (`container_oracle`)."""

from __future__ import annotations

import copy
import io
from collections import defaultdict, deque

import pytest

from .container_oracle import check, check_sequence


def made_and_mutated(xs):
    q = deque(xs)
    q.append(9)
    q.appendleft(0)
    a, b = q.pop(), q.popleft()
    q.extend([5, 6])
    q.extendleft([7, 8])
    q.rotate(2)
    q.rotate(-1)
    return q, a, b, q[0], q[-1], len(q), bool(q), 5 in q, q.count(5), q.index(6)


def bounded(xs):
    q = deque(xs, maxlen=3)
    q.append(10)
    q.appendleft(-1)
    q.extend(range(4))
    return q, q.maxlen, list(q), [x * 2 for x in q], list(reversed(q))


def edits(xs):
    q = deque(xs)
    q[0] = "first"
    del q[-1]
    q.insert(1, "ins")
    q.remove("ins")
    q.reverse()
    r = q.copy()
    r.clear()
    return q, r, q == deque(q), q != r, q + deque([1]), q * 2, not r


def as_queue(n):
    """Breadth-first order over a small tree, the idiom deque is for."""
    tree = {0: [1, 2], 1: [3], 2: [4, 5], 3: [], 4: [], 5: []}
    q, order = deque([0]), []
    while q:
        v = q.popleft()
        order.append(v * n)
        q.extend(tree[v])
    return order, q


def raises(kind):
    q = deque([1], maxlen=1)
    if kind == 0:
        q.pop()
        return q.pop()
    if kind == 1:
        return q[5]
    if kind == 2:
        return q.insert(0, 2)
    for x in q:
        q.append(x)
    return q


def protocols(xs):
    q = deque(xs)
    kinds = isinstance(q, deque), type(q) is deque, q == list(q), list(q) == q
    return kinds, sorted(q), sum(q), max(q), tuple(q), list(enumerate(q)), str(q), f"{q}", copy.copy(q)


def inplace_ops(xs):
    q = deque(xs)
    q += [7]
    q *= 2
    return q, repr(deque([1, 2], 4))


@pytest.mark.parametrize(
    "fn, args",
    [
        (made_and_mutated, ([1, 2, 3],)),
        (made_and_mutated, ([4, 5, 6, 7],)),
        (bounded, ([1, 2, 3, 4],)),
        (edits, (["a", "b", "c"],)),
        (as_queue, (2,)),
        (inplace_ops, ([1, 2],)),
        (protocols, ([3, 1, 2],)),
    ]
    + [(raises, (k,)) for k in range(4)],
    ids=lambda a: getattr(a, "__name__", repr(a)),
)
def test_made_in_the_function(fn, args):
    check(fn, lambda: args)


def mutate_outside(q):
    q.append(len(q))
    q.appendleft("head")
    q.popleft()
    q.rotate(1)
    return q[0], len(q)


def read_outside(q):
    return [x for x in q], sum(q), q.maxlen, q[-1]


@pytest.mark.parametrize("fn", [mutate_outside, read_outside])
@pytest.mark.parametrize(
    "make", [lambda: deque([1, 2, 3]), lambda: deque([4, 5], maxlen=2)], ids=["free", "bounded"]
)
def test_passed_in(fn, make):
    check(fn, lambda: (make(),), calls=3)


def test_passed_in_changes_recompile():
    makers = [lambda: (deque([1, 2, 3]),), lambda: (deque([1, 2, 3], maxlen=3),), lambda: (deque([9]),)]
    makers += [lambda: (deque(["a", "b"], maxlen=5),), lambda: (deque([1, 2, 3]),)]
    check_sequence(mutate_outside, makers)


def escape_into_outside(holder, out):
    """Containers made here stored on outside objects: real ones after the call."""
    q = deque([1, 2], maxlen=3)
    q.append(len(out))
    d = defaultdict(list)
    d["k"].append(q)
    s = io.StringIO()
    print("made", file=s)
    holder["q"], holder["d"] = q, d
    out.append(s)
    return holder["q"] is q


def test_escape_into_outside_objects():
    check(escape_into_outside, lambda: ({}, [1]), calls=3)
