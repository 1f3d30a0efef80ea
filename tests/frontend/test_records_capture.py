"""``namedtuple`` and ``dataclasses`` captured whole (#28): creation, ``_replace``,
``_asdict``, ``_fields``, ``fields``, ``asdict``, ``replace``, made in the function or
passed in, against plain Python (`container_oracle`: exact types of the results)."""

from __future__ import annotations

import dataclasses
from collections import namedtuple

import pytest

from .container_oracle import check

Point = namedtuple("Point", "x y")


@dataclasses.dataclass
class Box:
    a: int
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Frozen:
    u: int
    v: str = "v"


def records(n):
    p = Point(n, n + 1)
    q = p._replace(x=0)
    return p, q, q._asdict(), Point._fields, p.x + q.y, tuple(p), Point._make([1, 2])


def data(n):
    b = Box(n)
    b.tags.append("t")
    f = Frozen(n)
    try:
        f.u = 3
    except dataclasses.FrozenInstanceError as e:
        err = type(e).__name__
    return (
        dataclasses.asdict(b),
        [f.name for f in dataclasses.fields(b)],
        dataclasses.replace(b, a=7),
        dataclasses.replace(f, v="w"),
        dataclasses.astuple(f),
        b == Box(n, ["t"]),
        err,
    )


@pytest.mark.parametrize("fn", [records, data])
def test_made_in_the_function(fn):
    check(fn, lambda: (3,))


def from_outside(p, b):
    b.tags.append(p.x)
    return p._replace(y=b.a), dataclasses.asdict(b), p._asdict()


def test_passed_in():
    check(from_outside, lambda: (Point(1, 2), Box(5, ["a"])), calls=3)
