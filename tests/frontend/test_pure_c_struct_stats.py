"""struct's functions and NormalDist's C core are declared pure C callables.

``struct.pack``/``unpack``/``calcsize`` and ``_statistics._normal_dist_inv_cdf`` (behind
``NormalDist.inv_cdf``) depend only on their arguments: on known ones they run at capture
time, so the functions around them capture whole (they broke: "call to ..., which
bcfront cannot see into").  `test_pure_c_table` checks each entry's purity; here, the
captures against CPython, errors included, with ``fullgraph=True``.
"""

from __future__ import annotations

import math
import statistics
import struct

import pytest

import bcfront


def packs(fmt, *values):
    try:
        data = struct.pack(fmt, *values)
    except struct.error as e:
        return "error", str(e)
    return data, struct.unpack(fmt, data), struct.calcsize(fmt)


def inverse_cdf(p, mu, sigma):
    try:
        return statistics.NormalDist(mu, sigma).inv_cdf(p)
    except statistics.StatisticsError as e:
        return "error", str(e)


@pytest.mark.parametrize(
    "fn, args",
    [
        (packs, ("<hI", 1, 2)),
        (packs, ("!2d", 1.5, -2.0)),
        (packs, ("<h", 1 << 20)),
        (inverse_cdf, (0.25, 0.0, 1.0)),
        (inverse_cdf, (0.9, 3, 0.5)),
        (inverse_cdf, (1.5, 0, 1)),
    ],
)
def test_same_as_plain_python_with_no_break(fn, args):
    cf = bcfront.capture(fn, fullgraph=True)
    want = fn(*args)
    assert cf(*args) == want
    assert cf(*args) == want


def correlate(xs, ys):
    return statistics.correlation(xs, ys), statistics.linear_regression(xs, ys)


def sumprod_of_iterators(xs):
    return math.sumprod(map(float, xs), iter(xs))


@pytest.mark.skipif(not hasattr(math, "sumprod"), reason="math.sumprod is new in Python 3.12")
@pytest.mark.parametrize(
    "fn, args", [(correlate, ([1, 2, 3, 4], [2, 4, 5, 9])), (sumprod_of_iterators, ([1, 2],))]
)
def test_sumprod_consumes_its_iterables(fn, args):
    """``math.sumprod`` folds once its iterable arguments are iterated in the trace (it
    broke on a map: "sumprod on non-constant arguments")."""
    cf = bcfront.capture(fn, fullgraph=True)
    assert cf(*args) == fn(*args)
