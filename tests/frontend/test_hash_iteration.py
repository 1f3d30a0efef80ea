"""Iterating a dict, a dict view or a set behaves like CPython's iterators (pure Python).

CPython's dict and set iterators raise when the container changes size between two steps,
read values from the live dict, and stay exhausted once exhausted.  Oracle: the plain
function on an identical copy of the arguments (results, exceptions and messages).
"""

from __future__ import annotations

import pytest

import bcfront


def grow_dict_in_loop(d):
    for k in d:
        d[k + "x"] = 1
    return d


def store_values_while_iterating_values(d):
    out = []
    for v in d.values():
        d["b"] = 9  # an existing key: no size change, the new value is seen
        out.append(v)
    return out


def grow_set_in_loop(s):
    for x in s:
        s.add(x + 1)
    return s


def iterator_taken_before_a_change(d):
    it = iter(d)
    d["z"] = 1
    return next(it)


def rekey_at_equal_size(d):
    for k in d:
        del d[k]
        d[k + "y"] = 1
    return d


def exhausted_iterator_stays_exhausted(d):
    it = iter(d)
    for _ in it:
        pass
    d["q"] = 1
    return list(it)


def items_iterator_across_a_break(d):
    it = iter(d.items())
    a = next(it)
    print(end="")  # a graph break with the iterator live
    return a, next(it), list(it)


def shrink_dict_in_comprehension(d):
    return [d.pop(k) for k in d]


CASES = {
    grow_dict_in_loop: lambda: ({"a": 1},),
    store_values_while_iterating_values: lambda: ({"a": 1, "b": 2},),
    grow_set_in_loop: lambda: ({1},),
    iterator_taken_before_a_change: lambda: ({"a": 1},),
    rekey_at_equal_size: lambda: ({"a": 1},),
    exhausted_iterator_stays_exhausted: lambda: ({"a": 1},),
    items_iterator_across_a_break: lambda: ({"a": 1, "b": 2, "c": 3},),
    shrink_dict_in_comprehension: lambda: ({"a": 1, "b": 2},),
}


def _outcome(fn, args):
    try:
        return "ok", fn(*args), args
    except Exception as e:  # noqa: BLE001 - both must raise alike
        return "raise", type(e), str(e), args


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_matches_cpython(fn):
    cf = bcfront.capture(fn)
    for _ in range(3):  # the first call traces, later ones use the cache
        assert _outcome(cf, CASES[fn]()) == _outcome(fn, CASES[fn]())


def test_a_dict_iterator_from_outside_is_advanced_natively():
    def f(it):
        return next(it), next(it, "end")

    cf = bcfront.capture(f)
    for _ in range(2):
        assert cf(iter({"a": 1})) == ("a", "end")
