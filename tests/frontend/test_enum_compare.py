"""Enum members compare, hash and test membership without a graph break: plain Enums, and
``str``/``int`` mixins (``class Action(str, Enum)``, as transformers' deprecation helper
uses) whose ``==`` is the builtin's.  A member passed in is guarded by identity, so another
member recompiles.  Oracle: the plain function; ``fullgraph=True`` shows there is no break.
"""

from __future__ import annotations

import enum

import pytest

import bcfront


class Action(str, enum.Enum):
    NONE = "none"
    NOTIFY = "notify"
    RAISE = "raise"


class Level(int, enum.Enum):
    LOW = 1
    HIGH = 2


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Shade(enum.Enum):  # a user __eq__ is inlined, not folded
    DARK = 1
    LIGHT = 2

    def __eq__(self, other):
        return isinstance(other, Shade) and self.value % 2 == other.value % 2

    __hash__ = enum.Enum.__hash__


def str_mixin(a):
    action = Action.NONE
    if a != Action.NONE:
        action = Action.RAISE if a == "raise" else Action.NOTIFY
    return (
        action == Action.RAISE,
        action != Action.NOTIFY,
        a == "notify",
        "none" == a,
        a in (Action.RAISE, Action.NOTIFY),
        a in ["raise", "x"],
        a in {Action.NONE: 0},
        "raise" in {Action.RAISE},
        {Action.RAISE: 1, Action.NOTIFY: 2}.get(a),
        hash(a) == hash(a.value),
    )


def int_mixin(a):
    return a == 1, a != Level.HIGH, a < Level.HIGH, a >= 1, a in (1, 5), hash(a) == hash(int(a.value))


def plain(a):
    return (
        a == Color.RED,
        a != Color.GREEN,
        a == 1,
        a in (Color.GREEN,),
        a in {Color.RED: "r"},
        hash(a) == hash(a),
        a is Color.RED,
    )


def user_eq(a):
    return a == Shade.DARK, a != Shade.LIGHT


CASES = [
    (str_mixin, [Action.NONE, Action.NOTIFY, Action.RAISE, Action.NOTIFY]),
    (int_mixin, [Level.LOW, Level.HIGH, Level.LOW]),
    (plain, [Color.RED, Color.GREEN, Color.RED]),
    (user_eq, [Shade.DARK, Shade.LIGHT]),
]


@pytest.mark.parametrize("fn, members", CASES, ids=[c[0].__name__ for c in CASES])
def test_enum_members_compare_without_break(fn, members):
    cf = bcfront.capture(fn, fullgraph=True)
    for m in members:  # each member is its own entry (identity guard), reused when it comes back
        assert cf(m) == fn(m)


def test_enum_member_is_guarded_by_identity():
    report = bcfront.explain(plain, Color.RED)
    assert not report.graph_breaks
    assert any(g.kind.name == "ID_MATCH" and "Color.RED" in g.expr for g in report.guards), report.guards
    cf = bcfront.capture(plain)
    assert cf(Color.RED) == plain(Color.RED)
    assert cf(Color.GREEN) == plain(Color.GREEN)


def test_enum_compare_inside_a_tensor_function():
    torch = pytest.importorskip("torch")

    def f(x, mode):
        if mode == Action.RAISE:
            return x * 2
        if mode in (Action.NOTIFY, "none"):
            return x + 1
        return x

    cf = bcfront.capture(f, fullgraph=True)
    x = torch.arange(3.0)
    for mode in (Action.RAISE, Action.NOTIFY, Action.NONE, Action.RAISE):
        torch.testing.assert_close(cf(x, mode), f(x, mode))
