"""A complex constant of the trace keeps the signs of its zero parts.

A region spells a constant result by its repr where that is a literal giving the same
value; for a complex, ``repr`` read back is not always the same number: ``-1j`` reads
back as ``-(1j)``, real part -0.0, and ``(-0-1j)`` as real part +0.0.  So
``(1j).conjugate()`` came back as ``(-0-1j)``.  Oracle: CPython on the same function,
compared by repr (which shows the signs), on the first and the cached call.
"""

from __future__ import annotations

import pytest

import bcfront

VALUES = [
    1j,
    complex(-0.0, 1),
    complex(0.0, -0.0),
    complex(-0.0, -0.0),
    complex(1, -0.0),
    complex(-0.0, 0.0),
    2 - 1j,
]


def conjugate(z):
    return z.conjugate()


def negated_in_a_tuple(z):
    return (-z, z * 1, "x")


def made_from_parts(x):
    return complex(x, 1).conjugate(), complex(-0.0, x), -complex(x, x)


@pytest.mark.parametrize("z", VALUES, ids=repr)
@pytest.mark.parametrize("fn", [conjugate, negated_in_a_tuple])
def test_complex_results_keep_signed_zeros(fn, z):
    cf = bcfront.capture(fn)
    assert repr(cf(z)) == repr(fn(z))
    assert repr(cf(z)) == repr(fn(z))


@pytest.mark.parametrize("x", [0, 0.0, -0.0, 2])
def test_complex_made_from_parts(x):
    cf = bcfront.capture(made_from_parts)
    assert repr(cf(x)) == repr(made_from_parts(x))
    assert repr(cf(x)) == repr(made_from_parts(x))
