"""``round(x[, n])`` and ``divmod(a, b)`` of numbers that are no constants call their
special methods, as CPython.

``round(Fraction(7, 3), 2)``, ``divmod(Fraction(7, 3), 2)`` or the same on a user number
used to break ("round on non-constant arguments"): now the trace calls the class's
``__round__`` -- with no argument when ``ndigits`` is absent or None -- and
``__divmod__``/``__rdivmod__`` (then CPython's TypeError), and captures whole.  Oracle:
CPython on the same function; ``fullgraph=True`` shows it captures with no break.
"""

from __future__ import annotations

import fractions

import pytest

import bcfront


class Rounds:
    def __init__(self, v):
        self.v = v

    def __round__(self, n=None):
        return ("rounded", self.v, n)

    def __divmod__(self, other):
        return ("divmod", self.v, other)

    def __rdivmod__(self, other):
        return ("rdivmod", self.v, other)


class Plain:
    pass


def round_it(x, *n):
    return round(x, *n)


def round_fraction(a, b, *n):
    return round(fractions.Fraction(a, b), *n)


@pytest.mark.parametrize(
    "fn, args",
    [
        (round_fraction, (7, 3)),
        (round_fraction, (7, 3, 2)),
        (round_fraction, (-5, 2, None)),
        (round_it, (Rounds(1),)),
        (round_it, (Rounds(1), 3)),
        (round_it, (Rounds(1), None)),
    ],
)
def test_round_calls_dunder_round(fn, args):
    cf = bcfront.capture(fn, fullgraph=True)
    want = fn(*args)
    assert cf(*args) == want
    assert cf(*args) == want


def divmod_it(a, b):
    try:
        return divmod(a, b)
    except TypeError as e:
        return str(e)


def divmod_made_plain(x):
    try:
        return divmod(Plain(), x)
    except TypeError as e:
        return str(e)


def divmod_fraction(a, b, c):
    return divmod(fractions.Fraction(a, b), c), divmod(c, fractions.Fraction(a, b))


@pytest.mark.parametrize(
    "fn, args",
    [
        (divmod_fraction, (7, 3, 2)),
        (divmod_fraction, (-7, 3, 0.5)),
        (divmod_it, (Rounds(1), 5)),
        (divmod_it, (5, Rounds(1))),
        (divmod_made_plain, (5,)),
    ],
)
def test_divmod_calls_dunder_divmod(fn, args):
    cf = bcfront.capture(fn, fullgraph=True)
    want = fn(*args)
    assert cf(*args) == want
    assert cf(*args) == want
