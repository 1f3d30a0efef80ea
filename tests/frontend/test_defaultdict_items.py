"""A defaultdict's missing key runs its C ``__missing__`` (default_factory), never a KeyError.

statistics.pvariance (3.12+) counts with ``defaultdict(int)``; a continuation that modelled it
as a plain dict raised KeyError.  Oracle: plain Python."""

from __future__ import annotations

from collections import defaultdict

import pytest

import bcfront


def counts(xs):
    p = defaultdict(int)
    for x in xs:
        p[x] += 1
    return dict(p)


def grouped(xs):
    p = defaultdict(list)
    for x in xs:
        p[x % 2].append(x)
    return dict(p)


@pytest.mark.parametrize("fn", [counts, grouped])
def test_defaultdict_default_factory_runs(fn):
    cf = bcfront.capture(fn)
    for xs in ([1, 2, 1], [3, 3, 3, 4], []):
        assert cf(xs) == fn(xs)
