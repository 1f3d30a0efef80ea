"""Subset and superset comparisons of sets and frozensets match CPython (pure Python)."""

from __future__ import annotations

import pytest

import bcfront


def orderings(xs, ys):
    a, b = set(xs), set(ys)
    return (
        a <= b,
        a < b,
        a >= b,
        a > b,
        frozenset(xs) <= b,
        a <= frozenset(ys),
        {1} <= {1, 2},
        {True} < {1, 2},
        a > frozenset(),
    )


@pytest.mark.parametrize("xs, ys", [([1], [1, 2]), ([1, 2], [1, 2]), ([3], [1]), ([], []), ([1, 2], [2])])
def test_set_orderings_match_cpython(xs, ys):
    cf = bcfront.capture(orderings)
    assert cf(xs, ys) == orderings(xs, ys)
    assert cf(list(xs), list(ys)) == orderings(xs, ys)
