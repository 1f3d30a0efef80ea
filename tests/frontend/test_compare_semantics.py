"""Comparisons, %-formatting and repetition mixing built and constant values match CPython (pure Python).

A tuple or list built in the function compares with a constant one item by item
(``t.shape == (2, 2)`` is the common case); a user subclass of a builtin compares through
the builtin's C method; ``str % container`` formats.  Oracle: the plain function.
"""

from __future__ import annotations

import enum

import pytest

import bcfront


class MyInt(int):
    pass


class Color(enum.IntEnum):
    RED = 1


def built_vs_constant_sequences(a, xs):
    return (
        (a, 2) == (1, 2),
        tuple(xs) != (1, 2),
        (a, 2) in [(1, 2)],
        (a, 2) < (1, 3),
        [(a,)] == [(1,)],
        [(a, 1)].count((1, 1)),
        min([(a, 2), (1, 1)]),
        [a] == (1,),
        (a, 2) == [1, 2],
        (a, 1) in {(1, 1)},
    )


def index_of_a_built_tuple(a, xs):
    return [(a, 1)].index((1, 1))


def builtin_subclasses(m, a):
    return m == a, MyInt(a) == a, m < 5, Color.RED == a, a != Color.RED


def percent_formatting(a, xs):
    return "%s" % [a], "%(k)s" % {"k": a}, "%s-%s" % (a, xs), b"%d" % a


CASES = [
    (built_vs_constant_sequences, [(1, [1, 2]), (2, [1, 3])]),
    (index_of_a_built_tuple, [(1, []), (2, [])]),
    (builtin_subclasses, [(MyInt(1), 1), (MyInt(2), 1)]),
    (percent_formatting, [(1, [2]), (3, [])]),
]


def _outcome(fn, args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - both must raise alike
        return "raise", type(e), str(e)


@pytest.mark.parametrize("fn, calls", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_matches_cpython(fn, calls):
    cf = bcfront.capture(fn)
    for args in calls + calls:
        assert _outcome(cf, args) == _outcome(fn, args)


def test_shape_equals_a_constant_tuple():
    torch = pytest.importorskip("torch")

    def f(t):
        return t.shape == (2, 2), t.size() != (2, 3), t.shape[1:] == (2,), (2, 2) == t.shape

    cf = bcfront.capture(f)
    for t in (torch.ones(2, 2), torch.ones(2, 3), torch.ones(2, 2)):
        assert cf(t) == f(t)


def repeat_by_a_count(a, xs):
    return xs * a, [0] * a, a * (1, 2), tuple(xs) * a


def test_sequences_repeat_by_any_int_bools_included():
    cf = bcfront.capture(repeat_by_a_count)
    for args in ((True, [1, 2]), (False, [1]), (2, [3]), (True, [1, 2])):
        assert _outcome(cf, args) == _outcome(repeat_by_a_count, args)
