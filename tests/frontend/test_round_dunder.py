"""``round(x[, n])`` of a number that is no constant calls its ``__round__``, as CPython.

``round(Fraction(7, 3), 2)`` or ``round(user_number)`` used to break ("round on
non-constant arguments"): now the trace calls the class's ``__round__`` -- with no
argument when ``ndigits`` is absent or None -- and captures whole.  Oracle: CPython on
the same function; ``fullgraph=True`` shows it captures with no break.
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
