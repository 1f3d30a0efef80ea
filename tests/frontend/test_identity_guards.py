"""Identity between objects passed in is a fact about one call: `is`, `==` by identity and
membership answered in the trace are guarded, so a later call whose arguments alias
differently recompiles instead of reusing a stale answer.  Oracle: the plain function
(pure Python; runs on 3.11-3.13).
"""

from __future__ import annotations

import operator

import pytest

import bcfront


class Plain:  # object.__eq__: equality is identity
    pass


def is_(a, b):
    return a is b, a is not b


def eq_by_identity(a, b):
    return a == b, a != b


def member(a, b):
    return a in [b], a in (b, 0), [a].count(b)


def operator_is(a, b):
    return operator.is_(a, b), operator.is_not(a, b)


def nested(a, b):
    return a[0] is b[0], a is b, a[0] == b[0]


def tuples_again(a, b):
    return a is b, (a, 1) is (b, 1)


@pytest.mark.parametrize("fn", [is_, eq_by_identity, member, operator_is])
@pytest.mark.parametrize(
    "make",
    [lambda: [1], lambda: Plain(), lambda: (1, [2]), lambda: {"k": 1}],
    ids=["list", "object", "tuple", "dict"],
)
def test_identity_of_arguments_is_not_reused_when_aliasing_changes(fn, make):
    cf = bcfront.capture(fn)
    x, y = make(), make()
    for a, b in ((x, y), (x, x), (y, x), (y, y), (make(), make()), (x, y)):
        assert cf(a, b) == fn(a, b), (a, b)


def test_identity_through_containers():
    cf = bcfront.capture(nested)
    o, p = Plain(), Plain()
    lo = [o]
    for a, b in (([o], [p]), ([o], [o]), (lo, lo), ([p], [o]), ([o], [p]), (lo, [o])):
        assert cf(a, b) == nested(a, b)


def test_same_tuple_passed_twice():
    cf = bcfront.capture(tuples_again)
    t, u = (1, [2]), (1, [2])
    for a, b in ((t, t), (t, u), (t, t), (u, u)):
        assert cf(a, b) == tuples_again(a, b)


def test_guard_text_names_both_sources():
    cf = bcfront.capture(is_)
    cf([1], [1])
    exprs = {g.kind: g.expr for g in cf.report().guards}
    assert exprs.get("DISTINCT_OBJECTS") == "L['b'] is not L['a']", exprs
