"""A slice whose bound is a symbolic size, live across a graph break, is rebuilt from the
graph's int outputs (a KV cache written at ``self.pos : self.pos + T`` for growing T), not a
native fallback."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.report import NativeFallbackWarning  # noqa: E402
from tests.models import zoo  # noqa: E402


def test_kv_cache_slices_with_symbolic_bounds_survive_the_break():
    torch.manual_seed(0)
    captured, eager = zoo.CachedAttention(), zoo.CachedAttention()
    eager.load_state_dict(captured.state_dict())
    run = bcfront.capture(captured)
    gen = torch.Generator().manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NativeFallbackWarning)
        for t in (1, 2, 1, 3, 2):  # (self.pos, an int attribute, recompiles on every call)
            x = torch.randn(2, t, zoo.D, generator=gen)
            torch.testing.assert_close(run(x), eager(x))
    assert captured.pos == eager.pos
    assert torch.equal(captured.cache, eager.cache)


def test_a_slice_with_a_symbolic_stop_returned_is_a_real_slice():
    def fn(x):
        s = slice(0, x.shape[0])
        return x[s] * 2, s

    run = bcfront.capture(fn, dynamic=True)
    for n in (3, 5, 7):
        x = torch.arange(float(n))
        got, s = run(x)
        assert s == slice(0, n) and torch.equal(got, x * 2)
