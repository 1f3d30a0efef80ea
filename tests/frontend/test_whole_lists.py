"""C calls on an outside list whose length varies, made on the list itself (`whole_lists`).

A function handed lists of many lengths (a heap, a sorted buffer) made an entry per length
(the list's length guarded where its items were read) and, past the recompile limit, ran
natively with a warning.  From the third length on, ``heappush``/``insort``/``heapify``/
``list.sort`` and pure calls (``bisect``, ``max``, ``sum``, ``in``, ``count``, ``index``) on a
list of one builtin scalar type are made on the list itself: one entry serves every length.
Oracles: plain Python on copies of the same inputs (results, exceptions, the lists
afterwards), the entry counts, the warnings.
"""

from __future__ import annotations

import bisect
import copy
import heapq
import random
import warnings

import pytest

import bcfront
from bcfront.report import NativeFallbackWarning


def push(xs, x):
    heapq.heappush(xs, x)
    return xs


def push_twice_then_append(xs, x):
    heapq.heappush(xs, x)
    xs.append(x + 1)
    heapq.heappush(xs, x - 1)
    return xs


def insort_then_append(xs, x):
    bisect.insort(xs, x)
    xs.append(x)
    return xs


def find(xs, x):
    return bisect.bisect(xs, x), sum(xs), xs.count(x), bisect.bisect_left(xs, x)


def biggest(xs):
    try:
        return max(xs), min(xs)
    except ValueError as e:
        return str(e)


def where(xs, x):
    try:
        return xs.index(x)
    except ValueError:
        return -1


def push_then_read(xs, x):
    heapq.heappush(xs, x)
    return xs[0], len(xs)


def sort_down(xs):
    xs.sort(reverse=True)
    return xs


def heapify_then_push(xs, x):
    heapq.heapify(xs)
    heapq.heappush(xs, x)
    return xs


def heapify_then_pop(xs):
    heapq.heapify(xs)
    return heapq.heappop(xs), xs


def pop_twice(xs):
    a = heapq.heappop(xs)
    b = heapq.heappop(xs)
    return a + b


def pop_then_branch(xs):
    v = heapq.heappop(xs)
    if v > 50:
        return "big"
    return v


def pop_push_pop(xs, x):
    a = heapq.heappushpop(xs, x)
    heapq.heappush(xs, a + 1)
    return heapq.heapreplace(xs, x), a


def push_then_branch_on_max(xs, x):
    heapq.heappush(xs, x)
    if max(xs) > 60:
        return "big"
    return len(xs)


def total_as_text(xs):
    return type(sum(xs)).__name__


def _lists(n, *, kind=int, seed=0):
    rng = random.Random(seed)
    makers = {int: lambda: rng.randint(0, 99), float: rng.random, str: lambda: rng.choice("abcdef")}
    make = makers[kind]
    return [[make() for _ in range(length)] for length in [rng.randint(0, 9) for _ in range(n)]]


def _run(fn, argss):
    """`fn` captured and plain on copies of each argument tuple: the captured function and
    the fallback warnings; asserts equal results (or exceptions) and equal arguments after."""
    cf = bcfront.capture(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for args in argss:
            mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
            assert _outcome(cf, mine) == _outcome(fn, theirs), args
            assert mine == theirs, args
    return cf, [w for w in caught if issubclass(w.category, NativeFallbackWarning)]


def _settled(cf, fn, argss) -> bool:
    """More calls on lists of new lengths and values: right, and no new entry."""
    before = len(cf.entries)
    for args in argss:
        mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
        assert _outcome(cf, mine) == _outcome(fn, theirs) and mine == theirs, args
    return len(cf.entries) == before


def _outcome(f, args):
    try:
        return ("ok", f(*args))
    except Exception as e:  # noqa: BLE001 - the same exception both ways
        return ("raise", type(e), str(e))


@pytest.mark.parametrize("fn", [push, push_twice_then_append, insort_then_append, heapify_then_push])
def test_in_place_calls_on_lists_of_every_length_are_a_few_entries(fn):
    argss = [(sorted(xs) if fn is insort_then_append else xs, i) for i, xs in enumerate(_lists(40))]
    cf, fallbacks = _run(fn, argss)
    assert fallbacks == []
    # a few lengths and values of x specialized (x a symbol once torch is imported), then
    # one entry for every length and x -- it was an entry per length, then native
    assert len(cf.entries) <= 6
    assert _settled(cf, fn, [(sorted(xs), i + 100) for i, xs in enumerate(_lists(30, seed=9))])


def test_pure_calls_on_lists_of_every_length_are_a_few_entries():
    argss = [(sorted(xs), i % 50) for i, xs in enumerate(_lists(40))]
    cf, fallbacks = _run(find, argss)
    assert fallbacks == [] and len(cf.entries) <= 6
    assert _settled(cf, find, [(sorted(xs), i + 100) for i, xs in enumerate(_lists(30, seed=9))])


@pytest.mark.parametrize("fn", [heapify_then_pop, pop_twice, pop_then_branch])
def test_calls_that_take_an_item_out_are_made_first_by_the_region(fn):
    """``heappop``'s item, made by the region first (its list is not empty: guarded); an
    empty list misses that entry and raises as natively; a branch on the item breaks."""
    argss = [(xs,) for xs in _lists(40, seed=10)]
    cf, fallbacks = _run(fn, argss)
    assert fallbacks == []
    assert _settled(cf, fn, [([*xs, 1, 2],) for xs in _lists(20, seed=11)])


def test_heappushpop_and_heapreplace_on_lists_of_every_length():
    cf, fallbacks = _run(pop_push_pop, [([*xs, 3], 40) for xs in _lists(40, seed=12)] + [([], 4)])
    assert fallbacks == []
    assert _settled(cf, pop_push_pop, [([*xs, 5], 40) for xs in _lists(20, seed=13)])


@pytest.mark.parametrize("kind", [int, float, str])
def test_max_and_min_of_an_empty_list_raise_where_natively(kind):
    argss = [(xs,) for xs in _lists(30, kind=kind, seed=1)]
    assert any(not xs for (xs,) in argss)
    cf, fallbacks = _run(biggest, argss)
    assert fallbacks == []


def test_the_sum_of_an_empty_list_of_floats_is_an_int_as_natively():
    rng = random.Random(15)
    argss = [([rng.random() for _ in range(n)],) for n in (2, 3, 4, 5, 0, 1, 0)]
    cf, fallbacks = _run(total_as_text, argss)  # the third length makes the whole-list entry
    assert fallbacks == []


def test_index_on_lists_of_every_length_and_one_that_raises():
    argss = [([*xs, 7], 7) for xs in _lists(30, seed=2)] + [([8, 1, 2], 7), ([], 7)]
    cf, fallbacks = _run(where, argss)  # the guard computes index: a raise misses
    assert fallbacks == []
    assert _settled(cf, where, [([*xs, 7], 7) for xs in _lists(20, seed=8)])


def test_reading_the_items_after_an_in_place_call_breaks_there_and_is_right():
    argss = [(xs, 50) for xs in _lists(30, seed=3)]
    cf, _ = _run(push_then_read, argss)
    reasons = {b.reason for e in cf.entries for b in e.breaks}
    assert "unread-items" in reasons


def test_a_pure_call_after_an_in_place_one_sees_the_list_after_it():
    """``max(xs)`` after ``heappush(xs, 95)``: a guard computing it on the list as the
    call began would take the wrong branch; the trace reads the list there (a break)."""
    argss = [(xs, 95 if i % 2 else 1) for i, xs in enumerate(_lists(30, seed=14))]
    _run(push_then_branch_on_max, argss)


def test_list_sort_with_reverse_on_lists_of_every_length():
    cf, fallbacks = _run(sort_down, [(xs,) for xs in _lists(30, seed=4)])
    assert fallbacks == []


class Loud:
    """An item whose comparisons are Python code: never an item a call runs on unread."""

    calls = 0

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        Loud.calls += 1
        return self.v < other.v

    def __eq__(self, other):
        return type(other) is Loud and self.v == other.v

    def __repr__(self):
        return f"Loud({self.v})"


def test_items_of_another_kind_after_the_whole_list_entry_are_not_run_unread():
    argss = [(xs, 5) for xs in _lists(12, seed=5)]
    argss += [([1.5, 2.5], 5), ([1, 2.5], 5), (["a", "b"], 5), ([3, 1, 2], 2.5)]
    cf, _ = _run(push, argss)  # mixed kinds: TypeError or a float heap, as natively
    Loud.calls = 0
    mine, theirs = [Loud(1), Loud(3)], [Loud(1), Loud(3)]
    cf(mine, Loud(2))
    captured_calls = Loud.calls
    Loud.calls = 0
    push(theirs, Loud(2))
    assert mine == theirs and captured_calls == Loud.calls


def every_fifth(history, v):
    history.append(v)
    if len(history) % 5 == 0:
        return "log", len(history)
    return "skip"


def test_the_length_of_a_growing_list_is_known_at_run_time():
    """``len(history)`` after an append: the length the region finds plus one -- an entry
    per answer of the branch, not one per length (then native from the 8th)."""
    cf = bcfront.capture(every_fifth)
    mine, theirs = [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(40):
            assert cf(mine, i) == every_fifth(theirs, i) and mine == theirs
    assert not [w for w in caught if issubclass(w.category, NativeFallbackWarning)]
    assert len(cf.entries) <= 5


def test_the_length_of_a_list_of_losses_divides_a_tensor_in_the_graph():
    torch = pytest.importorskip("torch")

    def step(history, x):
        y = x * 2
        history.append(y.detach())
        return y.sum() / len(history), len(history)

    cf = bcfront.capture(step)
    mine, theirs = [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(20):
            x = torch.full((3,), float(i))
            got, want = cf(mine, x), step(theirs, x)
            assert torch.equal(got[0], want[0]) and got[1] == want[1] and len(mine) == len(theirs)
    assert not [w for w in caught if issubclass(w.category, NativeFallbackWarning)]
    assert len(cf.entries) <= 3
    assert all(not e.breaks for e in cf.entries)


def test_dynamic_false_reads_the_items_as_before():
    cf = bcfront.capture(push, dynamic=False, recompile_limit=64)
    for xs in _lists(20, seed=6):
        assert cf(list(xs), 5) == push(list(xs), 5)
    assert not any("items_of_type" in e.guard_source for e in cf.entries)
    assert len(cf.entries) > 3


# -- the length after in-place calls (`pure_c.InPlace.length`), ``list.insert``/``list.pop``


def push_then_len(xs, x):
    heapq.heappush(xs, x)
    return len(xs)


def len_around_pops(xs):
    n0 = len(xs)
    a = heapq.heappop(xs)
    n1 = len(xs)
    b = xs.pop()
    return n0, n1, len(xs), a + b


def pop_then_len_then_push(xs, x):
    v = heapq.heappop(xs)
    n = len(xs)
    heapq.heappush(xs, x)
    bisect.insort(xs, x)
    return v, n, len(xs)


def insort_append_len(xs, x):
    bisect.insort(xs, x)
    xs.append(x)
    heapq.heappush(xs, x)
    return len(xs)


def insert_then_pop(xs, i, x):
    xs.insert(i, x)
    xs.insert(0, x + 1)
    return xs.pop(), len(xs)


def pop_at(xs, x):
    a = xs.pop(0)
    xs.insert(1, x)
    b = xs.pop(-2)
    return a, b, xs.pop(2), len(xs)


def pop_at_logged(xs, log):
    log.append(xs.pop(0))  # (made after the graph: a raise before it, made first, loses it)
    return xs.pop(2), len(xs)


def pop_at_a_runtime_index(xs, i):
    return xs.pop(i), len(xs)


def pop_all_but_one(xs):
    out = 0
    while len(xs) > 1:
        out += xs.pop()
    return out


def _explained(fn, argss):
    """`_run` under `bcfront.explain.collect`: the captured function, its graph breaks and
    its native fallbacks, as the report counts them."""
    with bcfront.explain.collect() as run:
        cf, fallbacks = _run(fn, argss)
    report = run.report()
    return cf, report.graph_breaks, report.native_fallbacks, fallbacks


@pytest.mark.parametrize(
    "fn, make",
    [
        (push_then_len, lambda rng, xs: (xs, rng.randint(0, 99))),
        # (an empty list raises at the first pop as natively; one of one item at the second,
        # a break where its entry is made: the trace reads the list to raise there)
        (len_around_pops, lambda rng, xs: ([*xs, 5] if len(xs) == 1 else xs,)),
        (pop_then_len_then_push, lambda rng, xs: (xs, rng.randint(0, 99))),
        (insort_append_len, lambda rng, xs: (sorted(xs), rng.randint(0, 99))),
        (insert_then_pop, lambda rng, xs: (xs, rng.randint(-9, 9), rng.randint(0, 99))),
        # (an empty list raises at the first pop as natively; see the test after for the rest)
        (pop_at, lambda rng, xs: ([*xs, 1, 2, 3, 4] if 0 < len(xs) < 4 else xs, rng.randint(0, 99))),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_the_length_after_in_place_calls_is_known_and_pop_and_insert_leave_items_unread(fn, make):
    """``len(xs)`` after ``heappush``/``heappop``/``insort``/``append``/``insert``/``pop``:
    the length the region finds plus each call's declared change -- it read the items (a
    break) where a call had changed them; ``xs.insert``/``xs.pop()`` read them (an entry per
    length, native past the limit).  200 lists of 0-8 ints, empty ones raising as natively."""
    rng = random.Random(fn.__name__)
    argss = [make(rng, xs) for xs in _lists(200, seed=21)]
    cf, breaks, native, fallbacks = _explained(fn, argss)
    assert fallbacks == [] and native == []
    assert breaks == [], breaks
    # (the first lengths, an empty list that raises, x specialized: then one entry for all)
    assert len(cf.entries) <= 6
    assert _settled(cf, fn, [make(rng, xs) for xs in _lists(30, seed=22)])


def test_pops_at_indices_raise_on_the_lists_too_short_as_natively():
    """``xs.pop(2)`` after the list lost an item: the entry made on a long list guards the
    length the pops need (`pure_c.fewest_items`); a shorter list misses it and raises."""
    rng = random.Random(28)
    argss = [(xs, rng.randint(0, 99)) for xs in _lists(80, seed=29)]
    assert {len(xs) for xs, _ in argss} >= {0, 1, 2, 3, 4, 9}
    _run(pop_at, argss)
    _run(pop_at_logged, [(xs, []) for xs, _ in argss])


def test_a_pop_at_an_index_known_only_at_run_time_is_traced_as_before():
    """``xs.pop(i)`` of an index that changes: which lengths raise depends on it -- the call
    reads the list (an entry per length), right on every list and index, raising as natively."""
    rng = random.Random(26)
    _run(pop_at_a_runtime_index, [(xs, rng.randint(-9, 9)) for xs in _lists(40, seed=27)])


def test_pops_in_a_loop_on_the_length_stay_right():
    """``while len(xs) > 1: xs.pop()``: each answer of the loop's test is guarded (a few
    entries per length the loop runs), right on every list."""
    argss = [(xs,) for xs in _lists(60, seed=23)]
    _run(pop_all_but_one, argss)


def member_branch(xs, x):
    if x in xs:
        return "seen", xs.count(x)
    return "new"


def test_a_branch_on_x_in_xs_is_one_entry_per_answer():
    """``x in xs`` (``operator.contains``, the table's entry) on the list itself: a branch on
    it guards the answer -- two entries past the first lengths, no fallback, no break."""
    rng = random.Random(24)
    argss = [(xs, rng.randint(0, 99)) for xs in _lists(200, seed=25)]
    cf, breaks, native, fallbacks = _explained(member_branch, argss)
    assert fallbacks == [] and native == [] and breaks == []
    whole = [e for e in cf.entries if "items_of_type" in e.guard_source]
    assert len(whole) == 2 and len(cf.entries) <= 4


def insort_then_pop_at(xs, x):
    bisect.insort(xs, x)
    return xs.pop(4)


@pytest.mark.parametrize("fn, extra", [(heapify_then_pop, False), (insort_then_pop_at, True)])
def test_an_in_place_call_raising_on_a_short_list_raises_there_without_a_break(fn, extra):
    """``heappop`` of an empty heap, ``pop(4)`` of a short list after an insort, once the length
    has varied: the region makes the calls before it and raises what the call raises natively
    (its length guarded) -- no graph break with the call run natively in a stand-in frame;
    the list afterwards as natively (the insort made)."""
    rng = random.Random(33)
    argss = [((xs, rng.randint(0, 99)) if extra else (xs,)) for xs in _lists(40, seed=34)]
    assert any(len(xs) < (4 if extra else 1) for xs, *_ in argss)  # some calls raise
    cf, warned = _run(fn, argss)
    assert not warned
    assert [b.reason.value for e in cf.entries for b in e.breaks] == []
    assert _settled(cf, fn, argss)


def seen_or_added(xs, x):
    if x in xs:
        return "seen", xs.count(x)
    xs.append(x)
    return len(xs)


def test_a_pure_call_that_only_chose_the_branch_is_not_made_again_by_the_region():
    # ``x in xs`` on a whole list: its answer chose the branch at capture, and the guard
    # computes it; the region, which reads it nowhere, does not compute it a second time
    cf = bcfront.capture(seen_or_added)
    rng = random.Random(3)
    for _ in range(40):
        xs, x = [rng.randint(0, 9) for _ in range(rng.randint(0, 7))], rng.randint(0, 9)
        want, got = list(xs), list(xs)
        assert cf(got, x) == seen_or_added(want, x) and got == want
    whole = [e for e in cf._entries if "___items_of_type" in e.guard_source]
    assert len(whole) >= 2  # (one per answer of ``x in xs``; with torch, x may be a symbol too)
    for e in whole:
        assert "contains" in e.guard_source and "contains" not in e.region_source
    assert any("count" in e.region_source for e in whole)  # (a value the region returns)
