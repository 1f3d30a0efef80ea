"""The C guard helpers (`bcfront/_cfast.c` through `bcfront.cfast`) against their plain
references: a dict's version tag against the one read from the dict's memory
(`guard_memo._memory_reader`), ``codes_are`` against ``f.__code__ is c`` per function, and a
guard whose inlined functions' code checks are one batch still sees one of them replaced
(oracle: plain Python).  Pure Python."""

from __future__ import annotations

import collections
import math
import os

import pytest

import bcfront
from bcfront.cfast import C
from bcfront.frontend.model import guard_memo

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("BCFRONT_PURE_PYTHON")), reason="BCFRONT_PURE_PYTHON is set: no C paths"
)


@pytest.fixture(autouse=True)
def _built():
    if C is None:  # a missing build must not pass as skips
        pytest.fail("bcfront._cfast is not built: reinstall with a C compiler (pip install -e .)")


class Probe:
    pass


def test_dict_version_reads_the_tag_the_memory_reader_reads():
    plain = guard_memo._memory_reader()
    if plain is None:
        pytest.skip("no memory reader on this interpreter")
    o = Probe()
    d = o.__dict__
    seen = []
    for step in (
        lambda: d.__setitem__("a", 1),
        lambda: d.__setitem__("a", 2),
        lambda: setattr(o, "b", 3),
        lambda: d.pop("a"),
        lambda: d.clear(),
        lambda: d.update(x=1, y=2),
    ):
        step()
        tag = C.dict_version(d)
        if tag >> 63:  # a split dict on 3.13: a fresh tag at each read, from either reader
            assert plain(d) >> 63 and tag not in seen
        else:
            assert tag == plain(d)
        seen.append(tag)
    assert len(set(seen)) > 1


def test_a_store_through_the_object_gives_its_dict_a_new_tag():
    # 3.13 stores an attribute of an object whose dict views its inline values without
    # moving the dict's tag; both readers then give a fresh tag at each read (`_cdict.h`)
    for reader in (C.dict_version, guard_memo._memory_reader()):
        if reader is None:
            continue
        o = Probe()
        o.a = 1
        d = o.__dict__
        for name, value in (("a", 2), ("b", 1), ("a", None)):
            before = reader(d)
            if value is None:
                delattr(o, name)
            else:
                setattr(o, name, value)
            assert reader(d) != before


def test_the_memo_reads_tags_in_c_where_the_probe_passes():
    reader = guard_memo.dict_version_reader()
    assert reader is (C.dict_version if guard_memo._probe(C.dict_version) else None)


def test_dict_version_refuses_what_is_not_a_dict():
    with pytest.raises(TypeError, match="expected a dict"):
        C.dict_version([])


def f1(x):
    return x + 1


def f2(x):
    return x * 2


def f3(x):
    return x - 1


@pytest.mark.parametrize(
    "functions, codes",
    [
        ((f1, f2), (f1.__code__, f2.__code__)),
        ((f1, f2), (f1.__code__, f3.__code__)),
        ((f1,), (f2.__code__,)),
        ((), ()),
        ((len, f1), (None, f1.__code__)),  # not a Python function
        ((f1.__code__,), (f1.__code__,)),
    ],
)
def test_codes_are_answers_as_the_checks_one_by_one(functions, codes):
    plain = all(getattr(f, "__code__", object()) is c for f, c in zip(functions, codes))
    assert C.codes_are(functions, codes) is plain


@pytest.mark.parametrize("args", [((f1,), ()), ([f1], [f1.__code__]), ((f1,),)])
def test_codes_are_refuses_other_shapes(args):
    with pytest.raises(TypeError, match="codes_are"):
        C.codes_are(*args)


def helper_a(x):
    return x + 10


def helper_b(x):
    return x * 3


def uses_helpers(x):
    return helper_a(x) + helper_b(x)


def test_a_replaced_inlined_function_is_seen_through_the_batch():
    original = helper_b.__code__
    cf = bcfront.capture(uses_helpers)
    try:
        assert cf(2) == cf(2) == uses_helpers(2)
        assert "codes_are" in cf.entries[0].guard_source  # the helpers' checks are one batch
        helper_b.__code__ = f3.__code__
        assert cf(2) == cf(2) == uses_helpers(2) == 13
    finally:
        helper_b.__code__ = original


def items_are_plain(seq, indices, types, values):
    """The reference: the checks the guard spells one by one, in order."""
    return all(type(seq[i]) is t and seq[i] == v for i, t, v in zip(indices, types, values))


class MyInt(int):
    pass


NAN = float("nan")


@pytest.mark.parametrize(
    "seq, indices, types, values",
    [
        ([1, 2, 3], (0, 1, 2), (int, int, int), (1, 2, 3)),
        ([1, 2, 3], (0, 2), (int, int), (1, 4)),
        ((1.5, "a", b"b"), (0, 1, 2), (float, str, bytes), (1.5, "a", b"b")),
        ([True, 2], (0, 1), (int, int), (1, 2)),  # a bool is not an int
        ([MyInt(1), 2], (0, 1), (int, int), (1, 2)),  # nor a subclass
        ([1.0, 2], (0, 1), (int, int), (1, 2)),  # 1.0 == 1, but not an int
        ([1, 2], (-1,), (int,), (2,)),
        ([], (), (), ()),
        ([NAN], (0,), (float,), (NAN,)),  # the same NaN: not equal (identity says nothing)
        ([-0.0, math.inf], (0, 1), (float, float), (0.0, math.inf)),  # -0.0 == 0.0
        ([2.5, 1e308], (0, 1), (float, float), (2.5, 1e307)),
        (["s", b"b", 10**30], (0, 1, 2), (str, bytes, int), ("s", b"b", 10**30)),
    ],
)
def test_items_are_answers_as_the_checks_one_by_one(seq, indices, types, values):
    assert C.items_are(seq, indices, types, values) is items_are_plain(seq, indices, types, values)


def test_items_are_raises_where_the_checks_raise():
    with pytest.raises(IndexError):
        items_are_plain([1], (0, 3), (int, int), (1, 2))
    with pytest.raises(IndexError):
        C.items_are([1], (0, 3), (int, int), (1, 2))
    with pytest.raises(TypeError, match="items_are"):
        C.items_are([1], (0,), (int, int), (1,))


def test_items_are_is_false_for_what_is_not_an_exact_list_or_tuple():
    class L(list):
        pass

    assert C.items_are(L([1]), (0,), (int,), (1,)) is False  # its guard's type check fails too
    assert C.items_are({0: 1}, (0,), (int,), (1,)) is False


def total(xs):
    return sum(xs)


@pytest.mark.parametrize(
    "change", [lambda xs: xs.__setitem__(1, 5), lambda xs: xs.__setitem__(1, 2.0), lambda xs: xs.append(1)]
)
def test_a_changed_item_of_a_list_argument_is_seen_through_the_batch(change):
    cf = bcfront.capture(total)
    xs = [1, 2, 3]
    assert cf(xs) == cf(xs) == 6
    assert "items_are(" in cf.entries[0].guard_source
    change(xs)
    assert cf(xs) == total(xs) and type(cf(xs)) is type(total(xs))


def members_are_plain(s, expected):
    """The reference: the checks `_const_check` spells for a set without the C helper."""
    return (
        type(s) is type(expected)
        and s == expected
        and {(type(k), k) for k in s} == {(type(k), k) for k in expected}
    )


@pytest.mark.parametrize(
    "s, expected",
    [
        ({1, 2, "a"}, {1, 2, "a"}),
        ({1, 2}, {1, 2, 3}),
        ({1, 2, 3}, {1, 2}),
        ({1.0, 2}, {1, 2}),  # equal, but a float for an int
        ({True, 2}, {1, 2}),
        (frozenset({(1, 2), b"x"}), frozenset({(1, 2), b"x"})),
        (set(), set()),
    ],
)
def test_members_are_answers_as_the_plain_set_check(s, expected):
    plain = members_are_plain(s, expected)
    fast = type(s) is type(expected) and C.members_are(s, {k: type(k) for k in expected})
    assert fast is plain


def test_members_are_is_false_for_what_is_not_an_exact_set_and_refuses_other_shapes():
    class S(set):
        pass

    assert C.members_are(S({1}), {1: int}) is False
    assert C.members_are([1], {1: int}) is False
    with pytest.raises(TypeError, match="members_are"):
        C.members_are({1}, [1])


def keys_are_plain(d, keys, key_types):
    """The reference: the check `_dict_keys_check` spells without the C helper."""
    return list(d) == keys and list(map(type, d)) == key_types


class Reversed(dict):
    def __iter__(self):  # a subclass's own iteration order: what list(d) sees
        return reversed(list(dict.__iter__(self)))


def _moved():
    d = collections.OrderedDict(a=1, b=2)
    d.move_to_end("a")  # its order is not the dict's own
    return d


@pytest.mark.parametrize(
    "d, keys, key_types",
    [
        ({"a": 1, "b": 2}, ["a", "b"], [str, str]),
        ({"a": 1, "b": 2}, ["b", "a"], [str, str]),
        ({"a": 1}, ["a", "b"], [str, str]),
        ({1: 0}, [1], [int]),
        ({1.0: 0}, [1], [int]),  # an equal key of another type
        ({True: 0}, [1], [int]),
        ({NAN: 0}, [NAN], [float]),  # the same NaN: the lists compare it by identity
        ({float("nan"): 0}, [NAN], [float]),  # another NaN: not equal
        ({}, [], []),
        ({MyInt(1): 0}, [1], [MyInt]),  # a key held by its number, its type apart (dict_sources)
        ({1: 0}, [1], [MyInt]),
        (Reversed(a=1, b=2), ["b", "a"], [str, str]),
        (Reversed(a=1, b=2), ["a", "b"], [str, str]),
        (_moved(), ["b", "a"], [str, str]),
        (collections.defaultdict(int, {(1, 2): 3}), [(1, 2)], [tuple]),
    ],
)
def test_keys_are_answers_as_the_plain_keys_check(d, keys, key_types):
    assert C.keys_are(d, keys, key_types) is keys_are_plain(d, keys, key_types)


def test_keys_are_raises_where_the_plain_check_raises_and_refuses_other_shapes():
    class Broken(dict):
        def __iter__(self):
            raise ValueError("no iteration")

    for fn in (keys_are_plain, C.keys_are):
        with pytest.raises(ValueError, match="no iteration"):
            fn(Broken(a=1), ["a"], [str])
    with pytest.raises(TypeError, match="keys_are"):
        C.keys_are({}, ("a",), [str])


def keys_of(d):
    return [k for k in d]


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("c", 3),
        lambda d: d.pop("a"),
        lambda d: (d.pop("a"), d.__setitem__("a", 1)),  # the same keys in another order
        lambda d: (d.pop(1), d.__setitem__(1.0, 0)),  # an equal key of another type
    ],
)
def test_a_changed_key_of_a_dict_argument_is_seen_through_the_c_check(change):
    cf = bcfront.capture(keys_of)
    d = {"a": 1, "b": 2, 1: 0}
    assert cf(d) == cf(d) == keys_of(d)
    assert "keys_are(" in cf.entries[0].guard_source
    change(d)
    got, want = cf(d), keys_of(d)
    assert got == want and [type(k) for k in got] == [type(k) for k in want]


LIMITS = {1, 2, 3}


def within(x):
    return x in LIMITS


@pytest.mark.parametrize(
    "change",
    [lambda s: s.add(4), lambda s: s.discard(3), lambda s: (s.discard(1), s.add(1.0)), lambda s: s.clear()],
)
def test_a_changed_module_set_is_seen_through_the_c_check(change):
    saved = set(LIMITS)
    cf = bcfront.capture(within)
    try:
        assert cf(1) == cf(1) is True
        assert "members_are(" in cf.entries[0].guard_source
        change(LIMITS)
        for x in (1, 1.0, 4):
            got, want = cf(x), within(x)
            assert got == want and type(got) is type(want)
    finally:
        LIMITS.clear()
        LIMITS.update(saved)


def _outcome_of(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - compared with the reference's
        return ("raises", type(e))


WORDS = frozenset({"a", "b"})


@pytest.mark.parametrize(
    "method, descriptor",
    [
        (WORDS.__contains__, frozenset.__contains__),
        (frozenset({"c"}).__contains__, frozenset.__contains__),  # bound to its own self
        (WORDS.isdisjoint, frozenset.__contains__),  # another C function
        (WORDS.__contains__, set.__contains__),  # a descriptor of another type: raises
        ({1}.__contains__, set.__contains__),
        ((1).__add__, int.__add__),  # a method-wrapper: the plain way
        ((1).__add__, int.__sub__),
        (len, frozenset.__contains__),  # a builtin function: its self is a module
        ("x".join, str.join),
    ],
)
def test_bound_to_answers_as_the_plain_comparison(method, descriptor):
    from bcfront.frontend.model.sources import bound_descriptor  # the reference

    assert _outcome_of(C.bound_to, method, descriptor) == _outcome_of(bound_descriptor, method, descriptor)


def _kw_callee(a, *, k=1, j=2):
    return a * k + j


def calls_kw_callee(x):
    return _kw_callee(x) + _kw_callee(x, j=0)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("k", 5),  # in place: the same dict, a new tag
        lambda d: d.pop("j"),
        lambda d: _kw_callee.__setattr__("__kwdefaults__", {"k": 3, "j": 2}),  # another dict
    ],
)
def test_a_changed_kwdefaults_dict_is_seen_by_the_memo(change):
    saved = dict(_kw_callee.__kwdefaults__)
    cf = bcfront.capture(calls_kw_callee)
    try:
        assert cf(2) == cf(2) == calls_kw_callee(2)
        change(_kw_callee.__kwdefaults__)
        for _ in range(2):
            assert _outcome_of(cf, 2) == _outcome_of(calls_kw_callee, 2)
    finally:
        _kw_callee.__kwdefaults__ = saved


def _plain_unchanged(cell, *dicts):
    """The reference of ``dicts_unchanged``: the plain memo's tuple of tags, compared."""
    tags = tuple(C.dict_version(d) for d in dicts)
    if tags == cell[0]:
        return True
    cell[1] = tags
    return False


def test_dicts_unchanged_answers_as_the_plain_tuple_of_tags():
    a, b = {"x": 1}, Probe().__dict__
    fresh = C.dict_version(b) != C.dict_version(b)  # 3.13's split dict: never the same twice
    c_cell, plain_cell = [None, None], [None, None]
    steps = [
        lambda: None,
        lambda: a.__setitem__("x", 2),
        lambda: None,
        lambda: b.__setitem__("y", 1),
        lambda: a.__setitem__("x", 2.0),  # an equal value stored: a new tag all the same
        lambda: a.pop("x"),
        lambda: None,
    ]
    answers = []
    for step in steps:
        step()
        got, want = C.dicts_unchanged(c_cell, a, b), _plain_unchanged(plain_cell, a, b)
        assert got is want
        answers.append(got)
        c_cell[0], plain_cell[0] = c_cell[1], plain_cell[1]  # as a guard whose checks passed
    assert answers == ([False] * 7 if fresh else [False, False, True, False, False, False, True])


def test_dicts_unchanged_refuses_what_is_not_a_dict_and_a_bad_cell():
    with pytest.raises(TypeError, match="expected a dict"):
        C.dicts_unchanged([None, None], {}, [])
    with pytest.raises(TypeError, match="cell must be a list of two items"):
        C.dicts_unchanged([None], {})


def _uses_globals(x):
    return len(x) + abs(x[0]) + max(x)


@pytest.mark.parametrize("memo", ["c", "plain"])
def test_a_rebound_global_is_seen_through_either_memo(memo, monkeypatch):
    """The C memo (one call) and the plain one (a tuple of tags; forced by hiding the C
    module from `guard_memo`, with its threshold lowered to reach it) see a global rebound
    after the memo filled, and a change undone."""
    if memo == "plain":
        monkeypatch.setattr(guard_memo, "C", None)
        monkeypatch.setattr(guard_memo, "MIN_MEMOIZED", 1)
    cf = bcfront.capture(_uses_globals)
    src_test = "___dicts_unchanged(" if memo == "c" else "if ___tags"
    for _ in range(3):
        assert cf([3, 1]) == _uses_globals([3, 1])
    if guard_memo.dict_version_reader() is not None:  # (none where the probe fails)
        assert src_test in cf.entries[-1].guard_source
    g = _uses_globals.__globals__
    try:
        g["abs"] = lambda v: 100
        for _ in range(2):
            assert cf([3, 1]) == _uses_globals([3, 1]) == 105
    finally:
        del g["abs"]
    for _ in range(2):
        assert cf([3, 1]) == _uses_globals([3, 1]) == 8
