"""Index expressions (`bcfront.backends.triton.index`) against brute-force evaluation.

The canonicalizing rewrites (floor-div and modulo splitting, div/mod pair
merging, nested div/mod) must never change a value for any variable inside its
range; the oracle is Python integer arithmetic over every point.
"""

from __future__ import annotations

import itertools

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bcfront.backends.triton import index as ix  # noqa: E402

SIZES = {"a": 3, "b": 4, "c": 6}


def _points():
    names = sorted(SIZES)
    for vals in itertools.product(*(range(SIZES[n]) for n in names)):
        yield dict(zip(names, vals))


@st.composite
def affines(draw, depth=2):
    e = ix.lift(draw(st.integers(0, 5)))
    for name in draw(st.lists(st.sampled_from(sorted(SIZES)), max_size=3)):
        e = e + ix.var(name) * draw(st.integers(1, 7))
    if depth and draw(st.booleans()):
        inner = draw(affines(depth=depth - 1))
        den = draw(st.integers(1, 12))
        op = draw(st.sampled_from([ix.floordiv, ix.mod]))
        e = e + op(inner, den, SIZES) * draw(st.integers(1, 5))
    return e


@settings(max_examples=150, deadline=None)
@given(affines(), st.integers(1, 16), st.sampled_from(["div", "mod"]))
def test_div_mod_rewrites_preserve_values(e, den, which):
    f = ix.floordiv(e, den, SIZES) if which == "div" else ix.mod(e, den, SIZES)
    for env in _points():
        v = ix.evaluate(e, env)
        assert ix.evaluate(f, env) == (v // den if which == "div" else v % den)


@settings(max_examples=100, deadline=None)
@given(affines(), affines(), st.sampled_from(sorted(SIZES)), affines(depth=0))
def test_substitution_preserves_values(e, g, name, h):
    """Substituting a variable by an expression in its range equals evaluating at its value
    (the rewrites used the range, so the replacement must respect it)."""
    h = ix.mod(h, SIZES[name])
    s = ix.substitute(e, {name: h})
    for env in _points():
        env2 = dict(env, **{name: ix.evaluate(h, env)})
        assert ix.evaluate(s, env) == ix.evaluate(e, env2)


@pytest.mark.parametrize("sizes", [(3, 4, 6), (1, 5, 1, 7), (8,), (2, 1)])
def test_unravel_then_ravel_is_identity(sizes):
    n = 1
    for s in sizes:
        n *= s
    x = ix.var("x")
    rng = {"x": n}
    parts = ix.unravel(x, sizes, rng)
    strides = []
    acc = 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= s
    flat = ix.strided(parts, strides[::-1])
    assert flat == x  # canonical form: exactly `x` again
    for v in range(n):
        assert [ix.evaluate(p, {"x": v}) for p in parts] == [
            (v // st_) % s for s, st_ in zip(sizes, strides[::-1])
        ]


def test_reshape_round_trip_simplifies():
    """view [6, 20] -> [2, 3, 4, 5] -> back: the index is the plain variables again."""
    rng = {"i0": 6, "i1": 20}
    flat = ix.strided([ix.var("i0"), ix.var("i1")], [20, 1])
    parts = ix.unravel(flat, (2, 3, 4, 5), rng)
    back = ix.strided(parts, (60, 20, 5, 1))
    assert back == flat


def test_bounds_and_free_vars():
    e = ix.var("a") * 2 - 3 + ix.mod(ix.var("c"), 4, SIZES)
    lo, hi = ix.bounds(e, SIZES)
    values = [ix.evaluate(e, env) for env in _points()]
    assert lo <= min(values) and max(values) <= hi
    assert ix.free_vars(e) == {"a", "c"}
    assert ix.bounds(ix.var("zz"), SIZES) is None


def test_printing_is_python():
    e = ix.floordiv(ix.var("x") * 3 + 1, 2, {"x": 10}) + ix.mod(ix.var("y"), 5) * 4 - 2
    text = str(e)
    for x in range(10):
        for y in range(7):
            assert eval(text, {"x": x, "y": y}) == ix.evaluate(e, {"x": x, "y": y})
