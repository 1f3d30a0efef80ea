"""Keyed dispatch of the C call (`bcfront.keyed_dispatch.keyed_table`): where a captured
function's entries are specialized on the values of the same positional arguments, the
call picks the first link to run by those arguments' exact types and values instead of
trying every earlier entry's guard.  Oracles: the plain Python function (results), the
plain chain of the same entries (``keyed_dispatch = False``: the path before the table,
the reference), each entry's own guard (the first entry whose guard holds is the one that
must run), and the link frames Python runs (counted with `sys.setprofile`)."""

from __future__ import annotations

import gc
import heapq
import math
import os
import random
import subprocess
import sys
import weakref

import pytest
from frontend.check_programs import needs_c_call

import bcfront
from bcfront import chain_order, keyed_dispatch
from bcfront.capture import CapturedFunction

needs_c_call(globals())


@pytest.fixture(autouse=True)
def creation_order(monkeypatch):
    """The chain in the order the entries were made: the tests here pin the keyed table of
    that chain (`keyed_table` keys whatever chain it is given); the order the chain tries
    the entries in (`general_first`) has its own tests below, which turn it on."""
    monkeypatch.setattr(bcfront.fast_call, "GENERAL_FIRST", False)


def scaled(x, y):
    return x * 2 + y


def described(x):
    return f"{type(x).__name__}:{x!r}"


def mixed(k, tag, seq):
    return (k, tag, len(seq), described(k))


def with_default(x, y=10):
    return (x, y)


def star(*args):
    return ("star", *args)


def kw_default(x, *, k=3, **extra):
    return (x, k, extra)


class Box:
    def __init__(self, k):
        self.k = k

    def scaled(self, x):
        return self.k * x + x


def capture(fn, keyed=True, limit=64):
    # dynamic=False: int arguments specialized per value (with torch imported, a changing one
    # would be symbolic: one entry, nothing to key)
    cf = bcfront.capture(fn, recompile_limit=limit, dynamic=False)
    cf.keyed_dispatch = keyed
    # the Python links, whose frames `links_run` counts (checked links run none: their
    # table is tested in tests/frontend/test_check_program.py)
    cf.checked_links = False
    return cf


def links_run(call, *args):
    """(the call's result, how many exact link frames it ran)."""
    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith("bcfront:exact link"):
            seen.append(frame.f_code)

    sys.setprofile(profile)
    try:
        result = call(*args)
    finally:
        sys.setprofile(None)
    return result, len(seen)


def first_hit(cf, args):
    """The index of the first entry whose guard holds for `args` (what the plain loop runs),
    or None."""
    full = (cf._self, *args) if bound(cf) else args
    for i, e in enumerate(cf._entries):
        if e.guard(*full):
            return i
    return None


def bound(cf) -> bool:
    return cf._self is not sys.modules["bcfront.capture"]._NO_SELF


def picked(cf, args):
    """The index of the entry whose link the C call runs first for `args`, "missed" where it
    goes straight to the miss, None where it is not armed."""
    link = cf._dispatch_pick(*args)
    if link is None:
        return None
    link = getattr(link, "link", link)  # a CheckedLink's Python link
    links = [e.link for e in cf._entries]
    return links.index(link) if link in links else "missed"


def check_pick(cf, args):
    """The pick is exact: no entry before it holds (so skipping their guards changes
    nothing), and where the table has the key, the pick is the entry that holds."""
    pick, hit = picked(cf, args), first_hit(cf, args)
    if pick == "missed":
        assert hit is None, (args, hit)
    else:
        assert pick is not None
        assert hit is None or pick <= hit, (args, pick, hit)
    return pick, hit


# -- the table and the plain chain agree --------------------------------------------------


def test_keyed_and_plain_chain_run_the_same_entry_on_many_calls():
    rng = random.Random(30)
    keyed, plain = capture(mixed, limit=100), capture(mixed, keyed=False, limit=100)
    values = [0, 1, 2, 1.0, True, False, "1", "a", b"1", None, 0.0, -0.0, 2.5]
    seqs = [(), [1], "ab"]
    skipped = 0
    for _ in range(400):
        args = (rng.choice(values), rng.choice(["p", "q"]), rng.choice(seqs))
        if keyed._entries:
            pick, hit = check_pick(keyed, args)
            skipped += pick if type(pick) is int else 0
            assert picked(plain, args) == 0  # the plain chain: from the first
        want = mixed(*args)
        assert keyed(*args) == want
        assert plain(*args) == want
        assert CapturedFunction.__call__(keyed, *args) == want  # the plain loop too
        assert len(keyed._entries) == len(plain._entries)  # same misses: same recompiles
    assert skipped > 1000  # entries the table skipped
    assert keyed_dispatch.keyed_table(keyed._entries, [e.link for e in keyed._entries], mixed.__code__, False)


def test_a_keyed_call_runs_one_link_where_the_chain_runs_one_per_earlier_entry():
    keyed, plain = capture(scaled), capture(scaled, keyed=False)
    for cf in (keyed, plain):
        for i in range(5):
            cf(i, 1)
    for i in range(5):
        assert links_run(keyed, i, 1) == (scaled(i, 1), 1)
        assert links_run(plain, i, 1) == (scaled(i, 1), i + 1)  # the path before the table


def test_fifty_distinct_ints_then_recalled_take_their_own_entries():
    cf = capture(scaled, limit=64)
    for i in range(50):
        assert cf(i, 1) == scaled(i, 1)
    assert len(cf._entries) == 50
    recompiles = len(cf.recompiles)
    for i in reversed(range(50)):
        assert picked(cf, (i, 1)) == i
        assert links_run(cf, i, 1) == (scaled(i, 1), 1)
    assert len(cf._entries) == 50 and len(cf.recompiles) == recompiles
    assert picked(cf, (50, 1)) == "missed"  # a value no entry has: straight to the miss


@pytest.mark.filterwarnings("ignore::bcfront.report.NativeFallbackWarning")
def test_past_the_default_recompile_limit_calls_run_natively_and_stay_right():
    cf = bcfront.capture(scaled, dynamic=False)
    limit = cf.recompile_limit
    for i in range(50):
        assert cf(i, 1) == scaled(i, 1)
    assert len(cf._entries) == limit < 50
    for i in range(50):
        assert cf(i, 1) == scaled(i, 1)
        assert picked(cf, (i, 1)) == (i if i < limit else "missed")
    assert len(cf._entries) == limit


def test_keys_of_mixed_types_are_told_apart_by_type():
    cf = capture(described)
    values = [1, 1.0, True, "1", b"1", None, 0, False, 0.0]
    for v in values:
        cf(v)
    assert len(cf._entries) == len(values)
    for i, v in enumerate(values):
        assert picked(cf, (v,)) == i
        assert links_run(cf, v) == (described(v), 1)
    assert len(cf._entries) == len(values)


def test_signed_zeros_share_a_key_and_the_full_guard_tells_them_apart():
    cf = capture(described)
    cf(0.0)
    cf(-0.0)
    cf(1.0)
    assert len(cf._entries) == 3
    assert picked(cf, (-0.0,)) == 0  # the first of the key; its guard fails, the next holds
    assert links_run(cf, -0.0) == (described(-0.0), 2)
    assert links_run(cf, 0.0) == (described(0.0), 1)
    assert len(cf._entries) == 3


def test_one_key_with_different_other_guards_goes_on_down_the_chain():
    cf = capture(mixed)
    calls = [(1, "p", ()), (1, "p", [1]), (2, "p", ()), (1, "p", "ab")]
    for args in calls:
        cf(*args)
    assert len(cf._entries) == 4
    for i, args in enumerate(calls):
        pick, hit = check_pick(cf, args)
        assert hit == i and pick == (0 if args[0] == 1 else 2)
        assert cf(*args) == mixed(*args)
    assert len(cf._entries) == 4


def test_a_nan_argument_misses_and_its_entry_after_the_keyed_ones_takes_the_misses():
    cf = capture(described)
    cf(1.0)
    cf(2.0)
    assert picked(cf, (2.0,)) == 1
    nan = float("nan")
    assert picked(cf, (nan,)) == "missed"
    assert cf(nan) == described(nan)
    assert len(cf._entries) == 3  # a NaN entry: its guard is x != x, no key
    assert check_pick(cf, (2.0,)) == (1, 1)  # still keyed: the NaN entry is after the others
    assert check_pick(cf, (nan,)) == (2, 2)  # not in the table (nan != nan): the NaN entry
    assert check_pick(cf, (3.0,)) == (2, None)  # no entry: from the NaN one (which misses)
    assert cf(float("nan")) == described(nan) and cf(2.0) == described(2.0)
    assert len(cf._entries) == 3
    assert math.isnan(cf._entries[2].guards[1].expected)


def test_a_bound_method_keys_on_its_arguments_not_its_self():
    box = Box(3)
    cf = capture(box.scaled)
    for i in range(6):
        assert cf(i) == box.scaled(i)
    assert len(cf._entries) == 6
    for i in range(6):
        assert picked(cf, (i,)) == i
        assert links_run(cf, i) == (box.scaled(i), 1)


def test_star_args_items_are_keyed_where_passed():
    cf = capture(star)
    calls = [(1,), (2,), (3, "a"), (3, "b")]
    for args in calls:
        assert cf(*args) == star(*args)
    for args in calls:
        check_pick(cf, args)
        assert cf(*args) == star(*args)
    assert picked(cf, (2,)) == 1
    assert picked(cf, ()) == 0  # fewer arguments than the key reads: the plain chain
    assert cf() == star() and len(cf._entries) == 5


def test_a_call_leaving_a_keyed_default_out_takes_the_plain_chain():
    cf = capture(with_default)
    for args in [(1, 5), (1, 6), (1,)]:
        assert cf(*args) == with_default(*args)
    assert picked(cf, (1, 6)) == 1
    assert picked(cf, (1,)) == 0  # y not passed: its default's key is not read
    assert links_run(cf, 1) == (with_default(1), 3)
    assert links_run(cf, 1, 10) == (with_default(1, 10), 1)  # the same entry, passed


def _recording_miss(cf, seen: list):
    """`cf._miss`, recording the arguments it is given."""
    plain_miss = cf._miss

    def miss(args, kwargs):
        seen.append((args, kwargs))
        return plain_miss(args, kwargs)

    return miss


def test_a_keyed_miss_passes_keyword_only_defaults_as_the_last_link_does():
    seen: dict = {True: [], False: []}
    for keyed in (True, False):
        cf = capture(kw_default, keyed=keyed)
        for i in range(3):
            assert cf(i) == kw_default(i)
        assert picked(cf, (1,)) == (1 if keyed else 0)
        cf._miss = _recording_miss(cf, seen[keyed])
        assert picked(cf, (7,)) == ("missed" if keyed else 0)
        assert cf(7) == kw_default(7)
    assert seen[True] == seen[False] == [((7,), {"k": 3})]


# -- arming ---------------------------------------------------------------------------------


def test_the_table_follows_the_entries():
    cf = capture(scaled)
    cf(0, 1)
    assert picked(cf, (0, 1)) == 0  # one entry: no table
    cf(1, 1)
    cf(2, 1)
    assert picked(cf, (2, 1)) == 2  # the new entries are in it
    cf._entries[1].region = lambda x, y: "spy"  # drops its link: no exact chain, no table
    assert picked(cf, (2, 1)) is None
    assert cf(2, 1) == scaled(2, 1) and cf(1, 1) == "spy"
    cf.reset()
    assert picked(cf, (2, 1)) is None
    for i in range(3):
        cf(i, 1)
    assert picked(cf, (2, 1)) == 2 and cf(2, 1) == scaled(2, 1)


def test_a_table_serves_only_the_chain_it_was_made_for():
    cf = capture(scaled)
    for i in range(3):
        cf(i, 1)
    other = cf._entries[0].link
    cf._dispatch_key((0,), {2: (int, other)}, other, cf._entries[2].link)  # made for another first
    assert picked(cf, (2, 1)) == 0  # ignored: the first link
    assert cf(2, 1) == scaled(2, 1)


def test_the_last_key_is_remembered_by_identity_and_forgotten_with_its_table():
    # the C call remembers the objects of the last key the table had, and their pick: the
    # same objects again skip the lookups (exact scalars are immutable); equal objects, a new
    # table, or a key the table lacks take the lookups
    cf = capture(scaled)
    big = [10**20 + i for i in range(3)]  # ints not cached by CPython: distinct objects
    for x in big:
        cf(x, 1)
    assert picked(cf, (big[2], 1)) == 2
    assert picked(cf, (big[2], 1)) == 2  # remembered
    assert picked(cf, (10**20 + 1, 1)) == 1  # an equal object, not the same one
    first, other = cf._entries[0].link, cf._entries[1].link
    cf._dispatch_key((0,), {big[1]: (int, other)}, first, first)  # a new table: big[1] -> entry 1
    assert picked(cf, (big[1], 1)) == 1
    cf._dispatch_key((0,), {big[1]: (int, first)}, first, first)  # the same key, another pick
    assert picked(cf, (big[1], 1)) == 0
    assert cf(big[1], 1) == scaled(big[1], 1)
    missing = 10**30 + 7  # not in the table: never held
    held = sys.getrefcount(missing)
    assert picked(cf, (missing, 1)) == 0  # (a call would capture it: the guard holds its value)
    assert sys.getrefcount(missing) == held


def test_the_table_holds_only_scalars_types_and_links():
    cf = capture(mixed)
    for args in [(1, "p", ()), (2.5, "p", ()), ("s", "p", ()), (b"b", "p", ()), (None, "p", ())]:
        cf(*args)
    links = [e.link for e in cf._entries]
    positions, table, _ = keyed_dispatch.keyed_table(cf._entries, links, mixed.__code__, False)
    assert positions == (0,)
    for value, by_type in table.items():
        assert type(value) in keyed_dispatch.KEY_TYPES
        pairs = [by_type] if type(by_type) is tuple else list(by_type.items())
        for t, link in pairs:
            assert t is type(value) and link in links


def test_the_table_does_not_keep_its_captured_function_alive():
    cf = capture(scaled)
    for i in range(3):
        cf(i, 1)
    assert picked(cf, (2, 1)) == 2
    ref = weakref.ref(cf)
    del cf
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize(
    "args, error",
    [
        (((), {}, print, print), ValueError),
        (((9,) * 9, {}, print, print), ValueError),
        (((-1,), {}, print, print), ValueError),
        (((0,), {}, 1, print), TypeError),
        (((0,), [], print, print), TypeError),
        (((0,), {}), TypeError),
    ],
)
def test_bad_key_arguments_are_refused(args, error):
    cf = capture(scaled)
    cf(0, 1)
    with pytest.raises(error):
        cf._dispatch_key(*args)


def test_pure_python_path_is_unchanged():
    code = (
        "import bcfront\n"
        "from bcfront import fast_call\n"
        "from bcfront.capture import CapturedFunction\n"
        "def scaled(x, y):\n"
        "    return x * 2 + y\n"
        "cf = bcfront.capture(scaled, recompile_limit=64, dynamic=False)\n"
        "assert [cf(i, 1) for i in range(20)] == [scaled(i, 1) for i in range(20)]\n"
        "assert [cf(i, 1) for i in range(20)] == [scaled(i, 1) for i in range(20)]\n"
        "assert not fast_call.HAVE_C and len(cf._entries) == 20\n"
        "assert type(cf).__call__ is not CapturedFunction.__call__\n"
        "cf._dispatch_key(None)\n"
        "print('ok')\n"
    )
    tree = os.path.dirname(os.path.dirname(bcfront.__file__))  # this bcfront, not another
    path = os.pathsep.join(p for p in (tree, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "BCFRONT_PURE_PYTHON": "1", "PYTHONPATH": path}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# -- entries after the specialized ones ----------------------------------------------------


def tagged(s):
    return s.upper() + "!"


def test_a_value_dynamic_entry_is_tried_first_where_no_table_picks_among_them(monkeypatch):
    # a str argument: two entries specialized on its value, then (its third value) one
    # entry where it is a runtime value (`ShapePolicy.value_dynamic`).  Keyed, the table
    # picks: "a" and "b" their own entries (a repeated value keeps its entry), any other the
    # dynamic one, one lookup away; not keyed, the chain tries the dynamic entry first
    # (`chain_order.chain_order`): every value runs one guard
    monkeypatch.setattr(bcfront.fast_call, "GENERAL_FIRST", True)
    for keyed in (True, False):
        cf = bcfront.capture(tagged)  # dynamic: automatic
        cf.keyed_dispatch = keyed
        cf.checked_links = False  # the Python links, whose frames `links_run` counts
        for s in ["a", "b", "c"]:
            assert cf(s) == tagged(s)
        assert len(cf._entries) == 3
        for s in ["a", "b", "c", "d", "zz", ""]:
            want = {"a": 0, "b": 1}.get(s, 2) if keyed else 2
            assert picked(cf, (s,)) == want and cf._entries[want].guard(s)
            assert links_run(cf, s) == (tagged(s), 1)
        assert len(cf._entries) == 3
    assert chain_order.general_first(cf._entries) == [cf._entries[i] for i in (2, 0, 1)]


def pushed(xs, x):
    heapq.heappush(xs, x)
    return len(xs)


def test_a_whole_list_entry_made_after_by_value_ones_is_tried_first(monkeypatch):
    # heappush on lists of varying lengths and values: two entries by the list's values,
    # then (its third length) one on the whole list (`semantics.whole_lists`), tried first
    monkeypatch.setattr(bcfront.fast_call, "GENERAL_FIRST", True)
    cf = bcfront.capture(pushed)
    cf.checked_links = False
    cf.keyed_dispatch = False  # (keyed, a new x is one lookup from it too: the plain chain's order)
    rng = random.Random(5)
    for n in (3, 5, 2, 4, 6, 0, 3):
        xs = [rng.randint(0, 99) for _ in range(n)]
        want, got, x = list(xs), list(xs), rng.randint(0, 99)
        assert cf(got, x) == pushed(want, x) and got == want
    assert len(cf._entries) == 3
    for n in (3, 5, 7):
        xs = [rng.randint(0, 99) for _ in range(n)]
        want, got = list(xs), list(xs)
        assert links_run(cf, got, 50) == (pushed(want, 50), 1) and got == want
    assert chain_order.general_first(cf._entries)[0] is cf._entries[2]


def popped_and_put(xs, i, x):
    v = xs.pop()
    xs.insert(i, x)
    return v, len(xs)


def test_an_entry_fixing_fewer_values_is_tried_before_ones_fixing_more(monkeypatch):
    # x always 5, i and the list varying: every entry fixes x, the by-value ones the items
    # too; the one made last fixes x alone (the list whole, i a runtime value) and takes
    # every later call at its first guard
    monkeypatch.setattr(bcfront.fast_call, "GENERAL_FIRST", True)
    cf = bcfront.capture(popped_and_put)
    cf.checked_links = False
    cf.keyed_dispatch = False
    rng = random.Random(8)

    def args():
        return [rng.randint(0, 99) for _ in range(rng.randint(1, 8))], rng.randint(-9, 9), 5

    for _ in range(12):
        xs, i, x = args()
        want, got = list(xs), list(xs)
        assert cf(got, i, x) == popped_and_put(want, i, x) and got == want
    made = len(cf._entries)
    first = chain_order.general_first(cf._entries)[0]
    assert first is cf._entries[-1] and made >= 3
    for _ in range(5):
        xs, i, x = args()
        want, got = list(xs), list(xs)
        assert links_run(cf, got, i, x) == (popped_and_put(want, i, x), 1) and got == want
    assert len(cf._entries) == made


def test_a_key_not_in_the_table_goes_to_the_value_dynamic_entry_after_it():
    # the chain in the order the entries were made (the reference of `general_first`): the
    # specialized entries keyed, and a key not in the table one lookup from the dynamic
    # entry after them, not two failed guards
    keyed, plain = bcfront.capture(tagged), bcfront.capture(tagged)  # dynamic: automatic
    plain.keyed_dispatch = False
    for cf in (keyed, plain):
        cf.checked_links = False  # the Python links, whose frames `links_run` counts
        for s in ["a", "b", "c"]:
            assert cf(s) == tagged(s)
    assert len(keyed._entries) == 3
    links = [e.link for e in keyed._entries]
    assert keyed_dispatch.keyed_table(keyed._entries, links, tagged.__code__, False)
    for s in ["a", "b", "c", "d", "zz", ""]:
        pick, hit = check_pick(keyed, (s,))
        assert pick == hit  # "a", "b": their own entries; any other: the dynamic one, at once
        assert links_run(keyed, s) == (tagged(s), 1)
        assert links_run(plain, s)[0] == tagged(s)
    assert links_run(plain, "zz") == (tagged("zz"), 3)  # the chain: two failed guards first
    assert len(keyed._entries) == len(plain._entries) == 3


def test_entries_specialized_after_an_unspecialized_one_keep_the_plain_chain():
    # the unspecialized entry first (a tuple argument), then int ones: no table, since the
    # first entry could hold for any key
    cf = capture(mixed)
    cf((1, 2), "p", ())
    for k in [1, 2, 3]:
        cf(k, "p", ())
    links = [e.link for e in cf._entries]
    assert keyed_dispatch.keyed_table(cf._entries, links, mixed.__code__, False) is None
    for args in [((1, 2), "p", ()), (2, "p", ()), (9, "p", ())]:
        assert picked(cf, args) == 0
        assert cf(*args) == mixed(*args)


@pytest.mark.parametrize("keys", [[1, 2.5, "a", True, None, -2], list(range(12))])  # hashed; too many
def test_a_first_argument_hashing_as_no_key_misses_as_the_lookup_would(keys):
    # a table of at most 8 keys at its first position keeps their hashes: while its misses
    # are the more, an argument hashing as none of them misses without the dict's lookup
    # (`_cfast.c` keyed_pick);
    # oracle: the lookup for every argument (`_key_filters(False)`), and the plain loop
    from bcfront.cfast import C

    cf = capture(described)
    for k in keys:
        cf(k)
    assert len(cf._entries) == len(keys)
    # equal across types (1 == 1.0 == True), hash collisions (hash(-1) == hash(-2),
    # hash(2**61) == hash(1)), a NaN, values no entry has
    args = [*keys, 1, 1.0, 0, False, -1, 2**61, 2**61 + 1, math.nan, "b", b"a", 2.5000001, 99]
    for v in range(1000, 1050):  # misses the more: the filter serves (while hits are the more, not)
        assert picked(cf, (v,)) == "missed"
    picks = {}
    for on in (True, False):
        was = C._key_filters(on)
        try:
            picks[on] = [check_pick(cf, (a,)) for a in args]
        finally:
            C._key_filters(was)
    assert picks[True] == picks[False]
    assert any(p == "missed" for p, _ in picks[True]) and any(type(p) is int for p, _ in picks[True])
    assert [cf(a) for a in args] == [described(a) for a in args]


MEMO: dict = {}


def memoized_double(k):
    """A cache its first call with a key fills: a later call with the key fails the first
    entry's guard (which pins the cache's keys) and makes another entry of the same key."""
    if k in MEMO:
        return MEMO[k], "cached"
    MEMO[k] = k * 2
    return k * 2, "made"


def test_of_entries_of_one_key_the_newest_is_picked_first(monkeypatch):
    # (as enum.Flag's pseudo-members or re's compiled patterns: in a fresh process the stale
    # first entries of each key were tried, and failed, before the one that holds on every
    # call -- enum.Flag's corpus entry ran 1.85x native, now 0.21x)
    monkeypatch.setattr(bcfront.fast_call, "GENERAL_FIRST", True)
    MEMO.clear()
    cf = bcfront.capture(memoized_double)
    cf.checked_links = False  # the Python links, whose frames `links_run` counts
    made = []
    for k in (1, 1, 2, 2, 1):  # the cache's keys: {}, {1}, {1}, {1, 2}, {1, 2}
        assert cf(k) == memoized_double_plain(k, made)
    assert len(cf._entries) == 5
    order = chain_order.chain_order(cf._entries, memoized_double.__code__, False, True)
    assert order == [cf._entries[i] for i in (4, 1, 0, 3, 2)]  # each key's newest first
    for k in (1, 2, 1, 2):
        assert picked(cf, (k,)) == {1: 4, 2: 3}[k]
        assert links_run(cf, k) == ((k * 2, "cached"), 1)  # one guard: the one that holds
    assert len(cf._entries) == 5
    MEMO.clear()  # the oldest entries hold again: found down the chain, no new entry
    for k in (1, 2):
        assert cf(k) == (k * 2, "made")
    assert MEMO == {1: 2, 2: 4} and len(cf._entries) == 5


def memoized_double_plain(k, made):
    """What `memoized_double` returns on a cache kept aside (`made`: its keys)."""
    if k in made:
        return k * 2, "cached"
    made.append(k)
    return k * 2, "made"


def test_a_table_that_only_misses_sends_calls_to_the_general_entry_and_warms_up_again():
    # a caller passing new values each call (a heap's items, a counter): the table's
    # lookups all miss, so once cold most calls go to the value-dynamic entry without one
    # (`_cfast.c` keyed_pick: KEY_COLD misses, 16 for each hit), one in 64 still looks, and
    # a key that comes back often turns it on again.  Oracles: plain Python, and the lookup
    # on every call (`_key_filters(False)`), which picks the key's own entry
    from bcfront.cfast import C

    cf = bcfront.capture(tagged)
    cf.checked_links = False  # the Python links, which `picked` names
    for s in ["a", "b", "c"]:
        assert cf(s) == tagged(s)
    assert len(cf._entries) == 3
    general = 2
    assert picked(cf, ("a",)) == 0  # warm: the key's own entry
    for i in range(200):  # new values: misses
        assert cf(f"new{i}") == tagged(f"new{i}")
    picks = [picked(cf, ("b",)) for _ in range(64)]
    assert picks.count(general) == 63 and picks.count(1) == 1  # cold: one look in 64
    assert [cf(s) for s in ["a", "b", "zz"]] == [tagged(s) for s in ["a", "b", "zz"]]
    was = C._key_filters(False)
    try:  # the reference: it looks every time
        assert [picked(cf, (s,)) for s in ["a", "b"] * 32] == [0, 1] * 32
    finally:
        C._key_filters(was)
    for _ in range(64 * 20):  # "a" and "b" back, in turn: each look hits, until it is warm
        picked(cf, ("a",)), picked(cf, ("b",))
    assert [picked(cf, (s,)) for s in ["a", "b"] * 32] == [0, 1] * 32
    assert len(cf._entries) == 3
