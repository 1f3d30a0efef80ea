"""``collections.defaultdict`` captured whole (#28): factories list/int/set/a lambda/None,
``d[k].append``, ``+=``, copies, ``|``, made in the function or passed in, against plain
Python (`container_oracle`: the result's type and factory too)."""

from __future__ import annotations

import copy
from collections import defaultdict

import pytest

from .container_oracle import check, check_sequence


def group(pairs):
    d = defaultdict(list)
    for k, v in pairs:
        d[k].append(v)
    return d


def count(xs):
    d = defaultdict(int)
    for x in xs:
        d[x] += 1
    return d, dict(d), len(d), d["absent"], "absent" in d, sorted(d.items())


def buckets(xs):
    d = defaultdict(set)
    for x in xs:
        d[x % 3].add(x)
    return sorted((k, sorted(v)) for k, v in d.items()), d.default_factory is set


def with_lambda(xs):
    d = defaultdict(lambda: 10)
    for x in xs:
        d[x] -= 1
    return dict(d), d.default_factory()


def no_factory(k):
    d = defaultdict(None, {"a": 1})
    try:
        return d[k]
    except KeyError as e:
        return "missing", e.args


def copies(xs):
    d = defaultdict(list, {"x": [0]}, y=[1])
    for x in xs:
        d["x"].append(x)
    c = d.copy()
    c["z"].append(2)
    merged = d | {"w": 3}
    shallow = copy.copy(d)
    shallow["s"].append(0)
    return d, c, merged, shallow, d == dict(d), repr(defaultdict(int, {"k": 1}))


def bad_factory(x):
    try:
        defaultdict(x)
    except TypeError as e:
        return str(e)
    return "no error"


CASES = [
    (group, ([(1, "a"), (2, "b"), (1, "c")],)),
    (count, ([1, 2, 1, 3, 1],)),
    (buckets, ([1, 2, 3, 4, 5, 6],)),
    (with_lambda, ([1, 1, 2],)),
    (no_factory, ("a",)),
    (no_factory, ("b",)),
    (copies, ([5, 6],)),
    (bad_factory, (3,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda a: getattr(a, "__name__", repr(a)))
def test_made_in_the_function(fn, args):
    check(fn, lambda: args)


def add_outside(d):
    d["new"].append(len(d))
    d["old"].append("x")
    return len(d), d["old"]


def count_outside(d):
    for k in "abca":
        d[k] += 1
    return sorted(d.items())


@pytest.mark.parametrize(
    "fn, make",
    [
        (add_outside, lambda: defaultdict(list, {"old": [1]})),
        (count_outside, lambda: defaultdict(int, {"a": 5})),
        (count_outside, lambda: defaultdict(int)),
    ],
)
def test_passed_in(fn, make):
    check(fn, lambda: (make(),), calls=3)


def test_passed_in_changes_recompile():
    makers = [lambda: (defaultdict(int, {"a": 5}),), lambda: (defaultdict(float, {"a": 1.5}),)]
    makers += [
        lambda: (defaultdict(int, {"b": 2}),),
        lambda: (defaultdict(lambda: 100),),
        lambda: (defaultdict(int),),
    ]
    check_sequence(count_outside, makers)
