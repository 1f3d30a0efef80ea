"""``collections.Counter`` captured whole (#28): counting, ``update``/``subtract``,
``most_common``, arithmetic, missing keys counting 0, made in the function or passed in,
against plain Python (`container_oracle`)."""

from __future__ import annotations

import heapq  # noqa: F401 - most_common(n) imports it; as in any program that ran it once
from collections import Counter

import pytest

from .container_oracle import check


def counting(text):
    c = Counter(text)
    c.update("ab")
    c.update({"z": 2})
    c.subtract("a")
    return c, c["missing"], "missing" in c, c.most_common(2), c.most_common(), c.total()


def arithmetic(text):
    a, b = Counter(text), Counter("aab")
    return a + b, a - b, a & b, a | b, +Counter({"x": -1, "y": 2}), -Counter({"x": -1})


def mutations(text):
    c = Counter()
    for ch in text:
        c[ch] += 1
    del c[text[0]]
    c["q"] -= 2
    return c, c == Counter(dict(c)), len(c)


@pytest.mark.parametrize("fn", [counting, arithmetic, mutations])
@pytest.mark.parametrize("text", ["abracadabra", "mississippi"])
def test_made_in_the_function(fn, text):
    check(fn, lambda: (text,))


def update_outside(c):
    c["x"] += 1
    c.update("xy")
    return c.most_common(1), c["never"]


@pytest.mark.parametrize("make", [lambda: Counter("xyz"), lambda: Counter()], ids=["full", "empty"])
def test_passed_in(make):
    check(update_outside, lambda: (make(),), calls=3)
