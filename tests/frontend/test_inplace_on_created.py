"""In-place writes into tensors the graph made itself, where errors are observable.

When a handler could see a half-done graph (a Python write replayed after the
graph precedes a node, or the graph runs inside ``try``), the region's graph is
functionalized so that it writes nothing before its end.  A write into a
tensor the graph created (``torch.arange(n)`` then ``+=``, folded into a
constant at capture or not) writes no outside storage: it must functionalize,
never split the region ("write-before-error"), and a folded constant must never
be mutated across calls.  ``n += t`` on a Python number writes nothing at all:
it is ``n + t`` (issue #24, t5's ``relative_buckets = 0; relative_buckets +=
torch.where(...)`` in ``_relative_position_bucket``).  Oracle: eager PyTorch on
the same inputs; break counts from `bcfront.explain`.
"""

from __future__ import annotations

import math

import pytest

import bcfront

torch = pytest.importorskip("torch")


class Box:
    pass


def number_plus_equals(x):
    b = 0
    b += torch.where(x > 0, x, 2 * x)
    b *= 3
    b -= x
    return b


def arange_plus_equals(x):
    b = torch.arange(x.shape[0])
    b += (x > 0).long()
    return b * 2


def folded_then_written(x):
    b = torch.arange(x.shape[0]) * 2 + 1  # input-independent: folded at capture
    c = b * 3  # reads b before the write
    b += (x > 0).long()
    return b, c


def view_of_created_written(x):
    b = torch.zeros(2, x.shape[0])
    b[0] += x
    b[1].add_(x * 2)
    return b


def method_writes_on_created(x):
    b = torch.ones(x.shape[0])
    b.mul_(x).clamp_(min=0)
    return b


def t5_relative_position_bucket(x, bidirectional=True, num_buckets=32, max_distance=128):
    q = x.shape[0]
    relative_position = torch.arange(q)[None, :] - torch.arange(q)[:, None]
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, if_large)
    return relative_buckets + x.long()


def t5_decoder_bucket(x):
    return t5_relative_position_bucket(x, bidirectional=False)


def _observable_by_write(fn):
    def f(x, box):
        box.seen = 1  # a Python write replayed after the graph, before its nodes
        return fn(x)

    f.__name__ = f"{fn.__name__}_after_write"
    return f


def _observable_by_try(fn):
    def f(x, box):
        try:
            return fn(x)
        except IndexError:
            return None

    f.__name__ = f"{fn.__name__}_in_try"
    return f


FNS = [
    number_plus_equals,
    arange_plus_equals,
    folded_then_written,
    view_of_created_written,
    method_writes_on_created,
    t5_relative_position_bucket,
    t5_decoder_bucket,
]


def _equal(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _equal(x, y)
    else:
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("wrap", [_observable_by_write, _observable_by_try, None])
@pytest.mark.parametrize("fn", FNS)
def test_writes_into_created_tensors_functionalize(fn, wrap):
    f = wrap(fn) if wrap is not None else (lambda x, box: fn(x))
    with torch.no_grad():
        rep = bcfront.explain(f, torch.randn(6), Box())
        assert [b.reason for b in rep.graph_breaks] == []
        cf = bcfront.capture(f)
        for seed in range(3):  # a folded constant written in place would leak into later calls
            x = torch.randn(6, generator=torch.Generator().manual_seed(seed))
            _equal(cf(x, Box()), f(x, Box()))


def write_then_unrelated_constant(x):
    b = torch.arange(x.shape[0])
    c = b.view(2, -1)  # a view of b, which is written below: never folded
    b += (x > 0).long()
    d = torch.ones(x.shape[0]) * 3 + 1  # input-independent and unrelated to b: folded
    return c.sum() + d + x


def test_folding_goes_on_past_a_written_constant():
    """A node computed from a written one runs per call; the nodes after it still fold."""
    rep = bcfront.explain(write_then_unrelated_constant, torch.randn(6))
    assert any("input-independent" in n for f in rep.functions for n in f.notes)
    cf = bcfront.capture(write_then_unrelated_constant)
    for seed in range(3):
        x = torch.randn(6, generator=torch.Generator().manual_seed(seed))
        _equal(cf(x), write_then_unrelated_constant(x))
