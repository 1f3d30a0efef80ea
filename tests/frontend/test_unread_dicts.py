"""A big dict from outside read key by key (`model.unread_dicts`): ``linecache.cache``, a
registry, a vocabulary.  Its keys were all guarded and its items all wrapped where the
builder met it, so a lookup of one key in a dict of thousands compiled a check of every
key, and every unrelated key added (``linecache`` grows with every traceback formatted)
made a new entry; past 4,096 items any use broke the graph.  Now only the keys looked up
are guarded (present with their value, or absent), writes are replayed key by key, and the
dict is read whole only where the trace reads it whole.  Oracles: plain Python on copies of
the same inputs (results, exceptions, the dicts' contents and key order afterwards).
"""

from __future__ import annotations

import copy
import warnings

import pytest

import bcfront
from bcfront.explain import reports_of
from bcfront.frontend.model.guard_kinds import GuardKind
from bcfront.frontend.model.unread_dicts import KEYED_MIN

REGISTRY = {f"name{i}": (i, [str(i)]) for i in range(KEYED_MIN * 4)}


def registered(name):
    if name in REGISTRY:
        number, texts = REGISTRY[name]
        return number + 1, texts[0]
    return None


def _guards(cf, kind):
    return [g for e in cf.entries for g in e.guards if g.kind == kind]


def _run(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the oracle compares the exception
        return ("raised", type(e), str(e))


def test_a_lookup_guards_that_key_alone_and_ignores_the_others():
    cf = bcfront.capture(registered)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile limit, no native fallback
        assert cf("name3") == registered("name3") == (4, "3")
        assert not _guards(cf, GuardKind.DICT_KEYS)
        for i in range(50):  # keys added elsewhere: the entry still holds
            REGISTRY[f"other{i}"] = (i, ["x"])
            assert cf("name3") == (4, "3")
        assert len(cf.entries) == 1
        REGISTRY["name3"] = (10, ["ten"])  # the key read changes: its guard fails
        assert cf("name3") == registered("name3") == (11, "ten")
        assert cf("missing") is None is registered("missing")
        REGISTRY["missing"] = (0, ["now"])  # guarded absent, then added
        assert cf("missing") == registered("missing") == (1, "now")
    for i in range(50):
        del REGISTRY[f"other{i}"]
    REGISTRY["name3"] = (3, ["3"])
    del REGISTRY["missing"]


def read_then_write(d, k):
    v = d.get(k, 0)
    d[k] = v + 1
    d["tail"] = k
    old = d.pop("name0", None)
    d.setdefault("fresh", k)
    if "name1" in d:
        del d["name1"]
        d["name1"] = "moved"  # deleted and stored again: now last
    return v, old


def written_then_read_whole(d, k):
    d[k] = -1
    del d["name2"]
    return len(d), list(d)[-3:], sum(1 for x in d.values() if x == -1)


def written_then_raises(d, k):
    d[k] = "written"
    return d["absent key"]


def true_for_one(d, k):
    return d[True], d.get(1.0), (1, 2) in d


def sized_after_writes(d, k):
    before = len(d)
    d[k] = 0  # new or not: the length says
    d.pop("name3", None)
    del d["name4"]
    d["name4"] = 4  # deleted and stored again: the length as before
    return before, len(d), bool(d), dict.__len__(d)


def updated(d, k):
    """``update`` from a dict, from pairs (the last one failing), and by keywords."""
    d.update({k: "from a dict", "name7": 7})
    d.update(name8="kw", name9=None)
    try:
        d.update([(k, "pair"), ("name1", 1), ("bad",)])
    except ValueError:
        pass
    return d.get(k), d.get("name1"), d.get("name8")


CASES = [
    read_then_write,
    written_then_read_whole,
    written_then_raises,
    true_for_one,
    sized_after_writes,
    updated,
]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_an_argument_dict_written_and_read_matches_python(fn):
    base = {f"name{i}": i for i in range(KEYED_MIN * 2)}
    base[1] = "one"
    base[(1, 2)] = "pair"
    cf = bcfront.capture(fn)
    for k in ("name5", "new", "name5", 1, "name0"):
        mine, theirs = copy.deepcopy(base), copy.deepcopy(base)
        assert _run(cf, mine, k) == _run(fn, theirs, k)
        assert list(mine.items()) == list(theirs.items())  # contents and order


def test_the_region_replays_only_the_keys_written():
    d = {f"name{i}": i for i in range(KEYED_MIN * 2)}
    for fn in (read_then_write, updated):
        cf = bcfront.capture(fn)
        cf(dict(d), "name5")
        region = cf.entries[0].region_source
        assert ".clear()" not in region and ".update(" not in region  # not the whole dict again
        assert not _guards(cf, GuardKind.DICT_KEYS)  # nor read whole


VOCAB = {f"tok{i}": i for i in range(5000)}  # past the container limit


def encode(words):
    return [VOCAB.get(w, -1) for w in words]


def vocab_total():
    return sum(VOCAB.values())


def test_a_dict_past_the_container_limit_is_looked_up_without_a_break():
    cf = bcfront.capture(encode)
    words = ["tok1", "nope", "tok4999"]
    assert cf(words) == encode(words) == [1, -1, 4999]
    assert not reports_of(cf)[0].graph_breaks
    assert bcfront.capture(lambda: len(VOCAB))() == 5000  # its length alone: guarded, no break
    cs = bcfront.capture(vocab_total)  # read whole: a break that says why, the right answer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cs() == vocab_total()
    breaks = reports_of(cs)[0].graph_breaks
    assert breaks and "5000" in str(breaks[0])


def test_a_small_dict_is_still_read_whole():
    small = {f"k{i}": i for i in range(KEYED_MIN)}

    def look(d):
        return d["k1"]

    cf = bcfront.capture(look)
    assert cf(small) == 1
    assert _guards(cf, GuardKind.DICT_KEYS)


# -- keys a DICT_KEYS guard cannot compare: looked up key by key all the same ----------------------

CACHE = {(str, "a+", 0): "A", (bytes, b"b", 2): "B", (str, "c", 0): "C"}  # ``re._cache``'s shape


def cached(pattern, flags):
    try:
        return CACHE[type(pattern), pattern, flags]
    except KeyError:
        pass
    made = pattern.upper() if isinstance(pattern, str) else pattern.decode().upper()
    CACHE[type(pattern), pattern, flags] = made
    return made


def test_a_dict_keyed_by_tuples_holding_classes_is_read_key_by_key():
    saved = dict(CACHE)
    cf = bcfront.capture(cached)
    try:
        for pattern, flags in [("a+", 0), ("a+", 0), (b"b", 2), ("z", 0), ("z", 0), ("c", 1)]:
            assert cf(pattern, flags) == cached(pattern, flags)
        assert CACHE[str, "z", 0] == "Z" and CACHE[str, "c", 1] == "C"
        reports = reports_of(cf)
        assert not any(r.graph_breaks for r in reports), [r.graph_breaks for r in reports]
        assert not any(r.native_fallbacks for r in reports)
    finally:
        CACHE.clear()
        CACHE.update(saved)


def _as_list(x):
    return "list", len(x)


def _as_dict(x):
    return "dict", sorted(x)


DISPATCH = {list.__repr__: _as_list, dict.__repr__: _as_dict, _as_list: _as_dict}  # ``pprint``'s


def dispatched(x):
    handler = DISPATCH.get(type(x).__repr__, None)
    return handler(x) if handler is not None else repr(x)


def dispatch_keys():
    return list(DISPATCH)


def test_a_dispatch_keyed_by_descriptors_and_functions_is_read_key_by_key():
    cf = bcfront.capture(dispatched)
    for x in ([1, 2], {"b": 1, "a": 2}, 3, [4], "s"):
        assert cf(x) == dispatched(x)
    assert not any(r.graph_breaks for r in reports_of(cf))
    cs = bcfront.capture(dispatch_keys)  # read whole: a break that names the key
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cs() == dispatch_keys()
    (brk,) = reports_of(cs)[0].graph_breaks
    assert brk.reason.value == "unsupported-dict" and "read whole" in brk.message, brk


def test_a_length_read_guards_the_length_not_the_keys():
    cf = bcfront.capture(sized_after_writes)
    base = {f"name{i}": i for i in range(KEYED_MIN * 2)}
    for extra in ("name5", "new", "name3"):
        mine, theirs = dict(base), dict(base)
        assert cf(mine, extra) == sized_after_writes(theirs, extra)
        assert list(mine.items()) == list(theirs.items())
    assert not _guards(cf, GuardKind.DICT_KEYS)
    assert _guards(cf, GuardKind.LENGTH)
    bigger = {**base, "more": 1}  # another length: its guard fails, and the answer follows
    assert cf(dict(bigger), "x") == sized_after_writes(dict(bigger), "x")


# -- sys.modules: read key by key, never whole ----------------------------------------------------


def registers(name, module):
    """Looks a module up, registers one and drops another, as a plugin loader does."""
    import sys

    before = name in sys.modules
    sys.modules[name] = module
    got = sys.modules.get(name) is module
    dropped = sys.modules.pop(name + "_old", None)
    return before, got, dropped is not None, sys.modules.setdefault(name + "_x", module) is module


def test_sys_modules_writes_are_replayed_as_python_makes_them():
    import sys
    import types

    # oracle: plain Python on the real sys.modules, the same calls in the same state
    names = ["bcf_unread_mod_a", "bcf_unread_mod_b"]
    cf = bcfront.capture(registers)
    try:
        for name in names * 2:
            for capture in (False, True):
                for n in (name, name + "_old", name + "_x"):
                    sys.modules.pop(n, None)
                sys.modules[name + "_old"] = types.ModuleType(name + "_old")
                module = types.ModuleType(name)
                got = (cf if capture else registers)(name, module)
                after = [
                    (n in sys.modules, sys.modules.get(n) is module)
                    for n in (name, name + "_old", name + "_x")
                ]
                if not capture:
                    want, want_after = got, after
                else:
                    assert got == want == (False, True, True, True)
                    assert after == want_after == [(True, True), (False, False), (True, True)]
        assert not reports_of(cf)[0].graph_breaks
        assert not _guards(cf, GuardKind.DICT_KEYS)
    finally:
        for name in names:
            for n in (name, name + "_old", name + "_x"):
                sys.modules.pop(n, None)


def all_module_names():
    import sys

    return sorted(sys.modules)[:3]


def test_sys_modules_read_whole_is_a_break_that_names_it():
    cf = bcfront.capture(all_module_names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cf() == all_module_names()
    breaks = reports_of(cf)[0].graph_breaks
    assert breaks and "sys.modules read whole" in str(breaks[0])
    assert not _guards(cf, GuardKind.DICT_KEYS)
