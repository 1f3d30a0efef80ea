"""``operator.and_`` / ``or_`` are not in-place ops: the trailing _ only dodges a keyword."""

from __future__ import annotations

import operator

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def masks(x, keep):
    # transformers' and_masks: result = result & mask(...), inside a try whose handler
    # could see a half-done graph (so writes would have to be functionalized)
    log = []
    try:
        result = x.new_ones((), dtype=torch.bool)
        for m in (x > 0, keep):
            result = operator.and_(result, m)
        result = operator.or_(result, x > 5)
        log.append(1)
    except RuntimeError:
        result = None
    return result, operator.not_(len(log))


@pytest.mark.parametrize("fn", [masks])
def test_keyword_named_operators_capture_in_one_graph(fn):
    x = torch.tensor([-1.0, 2.0, 7.0, 3.0])
    keep = torch.tensor([True, True, False, True])
    want = fn(x, keep)
    got = bcfront.capture(fn, fullgraph=True)(x, keep)
    assert torch.equal(got[0], want[0]) and got[1] == want[1]


def test_in_place_operators_still_write():
    x = torch.tensor([True, False, True])

    def f(a, b):
        a &= b
        return a

    want = f(x.clone(), torch.tensor([True, True, False]))
    a = x.clone()
    got = bcfront.capture(f, fullgraph=True)(a, torch.tensor([True, True, False]))
    assert torch.equal(got, want) and torch.equal(a, want)
