"""MATCH_CLASS run natively at a graph break (the subject's attributes read by the real
object): a ``match`` whose class pattern needs a value the trace cannot see into -- here a
data-dependent branch right at it -- continues captured, with the same result as Python."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


@dataclass
class Point:
    x: int
    y: int


class Opaque:
    """An object whose attribute read breaks the graph (a branch on tensor data), so the
    MATCH_CLASS reading it is the break instruction, run natively."""

    @property
    def x(self):
        return 3 if torch.ones(1).sum() > 0 else 4


def classify(t, p):
    if t.sum() > 0:  # a break; the match below is in the continuation
        pass
    match p:
        case Point(x=0, y=yy):
            return t + yy, "on the y axis"
        case Point(xx, yy):
            return t * xx + yy, "point"
        case Opaque(x=xx):
            return t * xx, "opaque"
        case int(n):
            return t - n, "int"
        case _:
            return t, "other"


@pytest.mark.parametrize("p", [Point(0, 5), Point(2, 3), Opaque(), 7, "s"], ids=repr)
def test_match_class_after_a_break_matches_python(p):
    run = bcfront.capture(classify)
    t = torch.ones(2)
    got, want = run(t, p), classify(t, p)
    assert torch.equal(got[0], want[0]) and got[1] == want[1]
    assert not bcfront.explain(classify, t, p).native_fallbacks


def test_the_native_helper_follows_python():
    from bcfront.frontend.regions.native import match_class

    assert match_class(Point(1, 2), Point, 2, ()) == (1, 2)
    assert match_class(Point(1, 2), Point, 0, ("y",)) == (2,)
    assert match_class(5, int, 1, ()) == (5,)
    assert match_class("s", int, 0, ()) is None
    assert match_class(Opaque(), Opaque, 0, ("nope",)) is None
    with pytest.raises(TypeError, match="accepts 0 positional sub-patterns"):
        match_class(Opaque(), Opaque, 1, ())
