"""A graph break inside the ``with`` block of a ``@contextmanager`` in the root frame: the
continuation needs the context manager's generator, suspended at its ``yield``.  Most are
rebuilt there (tests/frontend/test_contextmanager_breaks.py); one that cannot be (its
generator has cell variables) makes the capture trace again with a break at the ``with``
itself, so the context manager is entered natively and the continuation holds the real one
-- instead of the whole function running natively."""

from __future__ import annotations

import contextlib

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402

LOG: list = []


@contextlib.contextmanager
def tagged(tag):
    LOG.append(("enter", tag))
    try:
        yield tag
    finally:
        LOG.append(("exit", tag))


def body(x):
    y = x * 2
    with tagged("a") as t:
        y = y + 1
        if y.sum() > 0:  # data-dependent: a break inside the with block
            y = y * 3
        y = y - 1
    return y * 5, t


@contextlib.contextmanager
def with_cell(tag):
    def note(what):  # a closure over `tag`: the generator has a cell, not rebuilt
        LOG.append((what, tag))

    note("enter")
    try:
        yield tag
    finally:
        note("exit")


def body_cell(x):
    y = x * 2
    with with_cell("c") as t:
        if y.sum() > 0:  # data-dependent: a break inside the with block
            y = y * 3
    return y, t


def raising(x):
    with tagged("b"):
        if x.sum() > 0:
            raise ValueError("positive")
    return x


def run(fn, *xs):
    out = []
    for x in xs:
        LOG.clear()
        try:
            r = fn(x)
            out.append(("ok", r[0].tolist() if isinstance(r, tuple) else r.tolist(), list(LOG)))
        except ValueError as e:
            out.append(("raise", str(e), list(LOG)))
    return out


@pytest.mark.parametrize("fn", [body, raising, body_cell])
def test_a_break_inside_a_contextmanager_block_continues_captured(fn):
    xs = (torch.ones(2), -torch.ones(2), torch.ones(2))
    assert run(bcfront.capture(fn), *xs) == run(fn, *xs)
    report = bcfront.explain(fn, -torch.ones(2))  # (an exception raised in the trace through
    assert not report.native_fallbacks  # the real __exit__ still runs that continuation natively)
    assert BreakReason.DATA_DEPENDENT_BRANCH in [b.reason for b in report.graph_breaks]


class Criteria(list):
    """A list subclass (transformers' StoppingCriteriaList)."""


def loop_over_subclass(x, items):
    total = x
    for k in items:  # the iterator crosses the break below: an outside list subclass's
        if (total * k).sum() > 0:  # data-dependent: a break in every iteration
            total = total + k
        else:
            total = total - k
    return total


def test_an_iterator_over_an_outside_list_subclass_crosses_a_break():
    items = Criteria([1, 2, 3])
    xs = (torch.ones(2), -torch.ones(2))
    cf = bcfront.capture(loop_over_subclass)
    for x in xs:
        assert torch.equal(cf(x, items), loop_over_subclass(x, items))
    report = bcfront.explain(loop_over_subclass, torch.ones(2), items)
    assert not report.native_fallbacks
