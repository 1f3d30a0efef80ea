"""``functools.cmp_to_key`` and sorting by user comparisons, calling an Enum class, and
``functools.cached_property`` (#28), each compared with plain Python under
``fullgraph=False`` and ``fullgraph=True``.  Torch-free: runs on 3.11-3.13.
"""

from __future__ import annotations

import enum
import functools

import pytest

import bcfront

# -- cmp_to_key and user comparisons ------------------------------------------------------

CALLS: list = []


def _cmp(a, b):
    CALLS.append((a, b))  # the comparisons, in order: CPython's sort makes the same ones
    return (a > b) - (a < b)


def cmp_to_key_sorts(x):
    CALLS.clear()
    xs = [3, 1, x, 2, 5, 4, x + 1]
    key = functools.cmp_to_key(_cmp)
    ys = list(xs)
    ys.sort(key=key, reverse=True)
    out = sorted(xs, key=key), ys, min(xs, key=key), max(xs, key=key)
    return out, list(CALLS)


class _Ver:
    def __init__(self, major, minor):
        self.major, self.minor = major, minor

    def __lt__(self, other):
        CALLS.append("lt")
        return (self.major, self.minor) < (other.major, other.minor)

    def __repr__(self):
        return f"v{self.major}.{self.minor}"


def user_lt(x):
    CALLS.clear()
    vs = [_Ver(1, x), _Ver(0, 9), _Ver(1, 0), _Ver(0, x)]
    return sorted(vs), sorted(vs, key=lambda v: (v.minor, v)), min(vs), len(CALLS)


def _bad_cmp(a, b):
    if 7 in (a, b):
        raise ValueError("no sevens")
    return a - b


def cmp_raises(x):
    xs = [5, 1, 4, 7, x, 2]
    try:
        xs.sort(key=functools.cmp_to_key(_bad_cmp))
    except ValueError as e:
        return str(e), xs  # as the sort left them: the same permutation as CPython's
    return xs


# -- calling an Enum class ----------------------------------------------------------------


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def enum_calls(x):
    c = Color(x)
    try:
        Color(x + 10)
    except ValueError as e:
        err = str(e)
    rw = Perm.R | Perm.W
    return (
        c,
        Color(Color.BLUE),
        Color["GREEN"],
        c.value,
        c.name,
        [m.name for m in Color],
        len(Color),
        err,
        rw,
        Perm(x),
        Perm(6) == rw,
        Perm.R in rw,
        list(Perm),
        Level(x).name,
        Level(x) == x,
    )


# -- functools.cached_property -----------------------------------------------------------


class _Lazy:
    def __init__(self, n):
        self.n = n

    @functools.cached_property
    def square(self):
        CALLS.append(self.n)
        return self.n * self.n


def cached_made_inside(x):
    CALLS.clear()
    o = _Lazy(x)
    first, second = o.square, o.square
    return first, second, o.__dict__, list(CALLS)


OUTSIDE = _Lazy(3)


def cached_from_outside(x):
    return OUTSIDE.square + x


CASES = [cmp_to_key_sorts, user_lt, cmp_raises, enum_calls, cached_made_inside]


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_same_as_plain_python(fn, fullgraph):
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    for x in (1, 2):
        want = repr(fn(x))
        assert repr(cf(x)) == want
    assert [b for e in cf.entries for b in e.breaks] == []


@pytest.mark.parametrize("fullgraph", [False, True])
def test_cached_property_of_an_outside_object(fullgraph):
    """The first call computes and stores into ``__dict__`` (replayed after the region);
    the next reads the stored value, as Python does: computed once in all."""
    CALLS.clear()
    OUTSIDE.__dict__.pop("square", None)
    cf = bcfront.capture(cached_from_outside, fullgraph=fullgraph)
    assert cf(1) == 10
    assert OUTSIDE.__dict__["square"] == 9
    OUTSIDE.__dict__["square"] = 100  # the stored value is what a later read sees
    assert cf(2) == 102
    assert CALLS == [3]
