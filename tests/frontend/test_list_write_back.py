"""The write-back of an outside list whose items the trace read (`regions.write_replay`).

The region used to store the whole new contents (``xs[:] = [1.5, 2.5, 3.5]``): every item
a constant made anew, where natively an item that stays in place is the very object it was
(``a = xs[0]; f(xs); a is xs[0]`` is True natively).  Now only what changed is stored: the
changed items and the new tail, or the cut past a shorter length.  Oracles: plain Python on
copies of the same inputs (results, contents, and the identity of every item afterwards),
each call cached and not.
"""

from __future__ import annotations

import copy
import heapq

import pytest

import bcfront


def read_then_append(xs, v):
    return xs[0] + len(xs), xs.append(v)


def heap_push(xs, v):
    heapq.heappush(xs, v)
    return xs


def heap_pop(xs):
    return heapq.heappop(xs), xs


def set_one(xs):
    xs[1] = xs[0] * 2
    return xs


def shorten(xs):
    del xs[1:]
    return xs[0]


def reverse_in_place(xs):
    xs.reverse()
    return xs[0]


def swap_ends(xs):
    xs[0], xs[-1] = xs[-1], xs[0]
    return len(xs)


def append_two(xs, v):
    xs.append(v)
    xs.append([v])
    return xs[0]


def pop_three(xs):
    return xs.pop(), xs.pop(), xs.pop(), xs


def pop_six(xs):
    return [xs.pop() for _ in range(6)], xs


CASES = [
    (append_two, ([1.5, 2.5], 3.5)),
    (pop_three, ([1.5, 2.5, 3.5, 4.5],)),
    (pop_six, ([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5],)),
    (read_then_append, ([1.5, 2.5], 3.5)),
    (heap_push, ([1.5, 5.5, 3.5], 2.5)),
    (heap_pop, ([1.5, 5.5, 3.5, 7.5],)),
    (set_one, ([1.5, 2.5, 3.5],)),
    (shorten, ([1.5, 2.5, 3.5],)),
    (reverse_in_place, ([1.5, 2.5, 3.5, 4.5],)),
    (swap_ends, ([1.5, 2.5, 3.5],)),
]


def _run(fn, args):
    """fn's result, then each list argument's items and which of them are the objects the
    list held at that index before the call."""
    args = copy.deepcopy(args)
    before = [list(a) for a in args if type(a) is list]
    result = fn(*args)
    after = [a for a in args if type(a) is list]
    same = [[i < len(b) and x is b[i] for i, x in enumerate(a)] for a, b in zip(after, before)]
    return repr(result), [list(a) for a in after], same


@pytest.mark.parametrize("fn, args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_items_left_in_place_stay_the_same_objects(fn, args):
    cf = bcfront.capture(fn, fullgraph=True)
    want = _run(fn, args)
    for _ in range(3):  # the capture, then cached calls
        assert _run(cf, args) == want
    assert len(cf.entries) == 1


def _identities(fn, args):
    """fn's result, then for each item of each list argument afterwards the index of the
    object the list held before the call (None: a new one)."""
    args = copy.deepcopy(args)
    before = [list(a) for a in args if type(a) is list]
    result = fn(*args)
    after = [a for a in args if type(a) is list]
    where = [[next((j for j, y in enumerate(b) if y is x), None) for x in a] for a, b in zip(after, before)]
    return repr(result), repr([list(a) for a in after]), where


MUTABLE_ITEMS = [
    (reverse_in_place, ([[1], [2], [3], [4]],)),
    (swap_ends, ([(1,), (2,), (3,)],)),
    (shorten, ([{"a": 1}, {"b": 2}],)),
]


@pytest.mark.parametrize("fn, args", MUTABLE_ITEMS, ids=[fn.__name__ for fn, _ in MUTABLE_ITEMS])
def test_moved_items_that_are_not_scalars_are_the_objects_moved(fn, args):
    cf = bcfront.capture(fn, fullgraph=True)
    want = _identities(fn, args)
    for _ in range(3):
        assert _identities(cf, args) == want


@pytest.mark.parametrize(
    "fn, args, made",
    [
        (heap_push, ([1.5, 5.5, 3.5], 2.5), ["___list_append"]),
        (append_two, ([1.5, 2.5], 3.5), ["___list_append", "___list_append"]),
        (heap_pop, ([1.5, 5.5, 3.5, 7.5],), ["___list_pop"]),
        (pop_three, ([1.5, 2.5, 3.5, 4.5],), ["___list_pop"] * 3),
        (pop_six, ([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5],), []),  # more than a few: one slice store
    ],
    ids=["heap_push", "append_two", "heap_pop", "pop_three", "pop_six"],
)
def test_a_few_items_added_or_taken_at_the_end_are_appended_or_popped(fn, args, made):
    # as the C code the trace stands for does it, without a new list stored in a slice
    cf = bcfront.capture(fn, fullgraph=True)
    cf(*copy.deepcopy(args))
    region = cf.entries[0].region_source
    calls = [name for name in region.replace("(", " ").split() if name in ("___list_append", "___list_pop")]
    assert calls == made
    assert ("] = [" in region) == (not made)
