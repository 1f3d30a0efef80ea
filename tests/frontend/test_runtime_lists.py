"""Lists and tuples whose items change from call to call (runtime items, read by C calls).

A list argument whose items vary has runtime items (`semantics.runtime_values`): their types
are guarded, their values only where the trace reads them.  A C call that runs nobody's
Python code on them (``max``, ``sorted``, ``bisect.bisect``, ``xs.count(x)``...) used to be
traced item by item -- its comparisons guarded the items' order, or its fold read every
item -- one entry per list until the recompile limit.  Such a call is now computed by the
region on the items, its result a runtime value in turn.  Each result is compared with the
plain Python call on a copy of the same arguments (result, its type, or the exception and
its message), and the arguments afterwards too.
"""

from __future__ import annotations

import bisect
import copy
import random
import warnings

import bcfront
from bcfront.frontend.model.guard_kinds import GuardKind
from bcfront.frontend.model.sources import ItemSource, PureCallSource


def _outcome(fn, args):
    try:
        r = fn(*args)
        return ("ok", repr(r), type(r), repr(args))  # (repr: a nan equals itself)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return ("raise", type(e), str(e), repr(args))


def _same(cf, fn, calls, fallbacks=False):
    """Calls `cf` and `fn` on copies of each argument tuple: the same outcome, the
    arguments left alike; no native fallback unless `fallbacks`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if fallbacks else "error")
        for args in calls:
            assert _outcome(cf, copy.deepcopy(args)) == _outcome(fn, copy.deepcopy(args)), args
    if not fallbacks:
        assert cf.report().native_fallbacks == ()


def _items_read(cf, entry=-1) -> bool:
    """Whether the entry guards the value of an item of an argument (reads it)."""
    return any(
        g.kind == GuardKind.CONSTANT_MATCH and isinstance(g.source, ItemSource)
        for g in cf.entries[entry].guards
    )


def _sorted_lists(seed, n=30, size=5):
    rng = random.Random(seed)
    return [(sorted(rng.sample(range(100), size)), rng.randrange(100)) for _ in range(n)]


def find(xs, x):
    return bisect.bisect(xs, x)


def find_left(xs, x):
    return bisect.bisect_left(xs, x) + bisect.bisect_right(xs, x)


def test_bisect_of_a_changing_list_is_computed_not_read():
    for fn in (find, find_left):
        cf = bcfront.capture(fn)
        _same(cf, fn, _sorted_lists(0))
        assert len(cf.entries) <= 4  # the first lists' entries, then one for every list
        assert not _items_read(cf)
        # ints among ints: bisect raises on none, the guard computes nothing
        assert not any(isinstance(g.source, PureCallSource) for g in cf.entries[-1].guards)


def first_big(xs):
    return max(xs) if xs else None


def test_max_of_a_changing_list_makes_no_entry_per_ordering():
    rng = random.Random(1)
    cf = bcfront.capture(first_big)
    _same(cf, first_big, [(rng.sample(range(100), 5),) for _ in range(30)])
    assert len(cf.entries) <= 4  # (an item becomes a runtime value on its third value)
    assert not _items_read(cf)


def stats(xs):
    return min(xs), max(xs), sum(xs), sorted(xs), sorted(xs)[0] + 1, any(xs), all(xs)


def queries(xs, x):
    return xs.count(x), bisect.bisect_right(xs, x, 1), max(xs) > x, x in xs


def index_of(xs, x):
    return xs.index(x)


def of_a_tuple(t):
    return max(t), min(t), t.count(t[0]), t.index(t[1])


def test_pure_calls_on_runtime_items_equal_plain_python():
    rng = random.Random(2)
    ints = [([rng.randrange(-50, 50) for _ in range(5)],) for _ in range(30)]
    for fn in (stats, of_a_tuple):
        calls = [(tuple(a[0]),) if fn is of_a_tuple else a for a in ints]
        cf = bcfront.capture(fn)
        _same(cf, fn, calls)
        assert len(cf.entries) <= 4, fn
        assert not _items_read(cf)
    cf = bcfront.capture(queries)
    _same(cf, queries, [(a[0], rng.randrange(-50, 50)) for a in ints])
    assert len(cf.entries) <= 6  # also one per answer of ``x in xs``: the branch's guard
    cf = bcfront.capture(index_of)  # present: computed; absent: its ValueError, read
    _same(cf, index_of, [(a[0], a[0][i % 5]) for i, a in enumerate(ints)] + [([1, 2], 3), ([5], 6)])


def test_raising_calls_and_mixed_items_raise_as_natively():
    rng = random.Random(3)
    values = [0, 1, 2.5, -1.0, True, False, 7, "a", "b", None]
    calls = [([rng.choice(values) for _ in range(rng.randrange(0, 4))],) for _ in range(60)]
    calls += [([],), ([1, "a"],), (["a", 1],), ([1.5, True, 2],), ([float("nan"), 1.0],)]
    for fn in (stats, first_big):
        cf = bcfront.capture(fn)
        _same(cf, fn, calls, fallbacks=True)


def test_bools_and_floats_mixed_in():
    rng = random.Random(4)
    pools = [
        [rng.choice([rng.randrange(9), rng.random() * 9, True, False]) for _ in range(4)] for _ in range(40)
    ]
    for fn in (stats, first_big):
        cf = bcfront.capture(fn)
        _same(cf, fn, [(p,) for p in pools], fallbacks=True)
    cf = bcfront.capture(queries)
    _same(cf, queries, [(p, rng.choice([1, 2.0, True])) for p in pools], fallbacks=True)


def test_a_list_the_caller_mutates_between_calls():
    xs = [5, 1, 4]
    cf = bcfront.capture(stats)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(30):
            for j in range(len(xs)):
                xs[j] = (i * 7 + j * 5) % 11
            if i == 15:
                xs.append(i)
            assert cf(xs) == stats(list(xs))
    assert len(cf.entries) <= 6  # (three for 3 items, at most three for 4)


def replaced_then_max(xs, x):
    xs[0] = x
    ys = xs + [x - 1]
    return max(xs), sorted(ys), xs


def appended_then_sorted(xs, x):
    xs.append(x)
    out = sorted(xs)
    xs.append(out[0])
    return out, min(xs), xs


def test_the_trace_mutating_the_list_before_the_call():
    rng = random.Random(5)
    for fn in (replaced_then_max, appended_then_sorted):
        cf = bcfront.capture(fn)
        _same(cf, fn, [([rng.randrange(50) for _ in range(4)], rng.randrange(50)) for _ in range(30)])
        assert len(cf.entries) <= 4, fn


class Num:
    calls = 0

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        Num.calls += 1
        return self.v < other.v

    def __gt__(self, other):
        Num.calls += 1
        return self.v > other.v

    def __eq__(self, other):
        return isinstance(other, Num) and self.v == other.v

    __hash__ = None  # type: ignore[assignment]


def keyed(xs):
    return max(xs, key=lambda v: -v), min(xs, default=-1), sorted(xs, key=abs)


def big_num(xs):
    return max(xs).v


def test_key_arguments_and_python_comparisons_keep_todays_behaviour():
    rng = random.Random(6)
    cf = bcfront.capture(keyed)
    _same(cf, keyed, [([rng.randrange(-9, 9) for _ in range(4)],) for _ in range(20)], fallbacks=True)
    cf = bcfront.capture(big_num)
    for _ in range(10):
        vals = [rng.randrange(50) for _ in range(4)]
        Num.calls = 0
        expected = big_num([Num(v) for v in vals])
        native_calls, Num.calls = Num.calls, 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert cf([Num(v) for v in vals]) == expected
        assert Num.calls == native_calls  # each user comparison ran, as natively


def picked_kind(xs):
    m = max(xs)
    return isinstance(m, float), m, min(xs)


def test_the_type_of_an_item_picked_from_mixed_numbers_is_checked():
    # an int and a float item: max is either, the trace's isinstance answers for one
    rng = random.Random(7)
    calls = [([rng.randrange(10), rng.randrange(10) + 0.5],) for _ in range(30)]
    cf = bcfront.capture(picked_kind)
    _same(cf, picked_kind, calls)
    assert len(cf.entries) <= 6
