"""Concurrency: one captured function called from several threads at once.

Every thread has its own input signature (a shape, or a list length) and
calls the captured function many times, checking each result against the
plain function in the same thread.  The threads start together (a barrier)
and the interpreter's switch interval is lowered so that captures, guard
checks and cached calls interleave.  Afterwards the cache must be consistent:
no more entries than distinct signatures (two threads missing at once must
not both append an entry for the same signature), every entry still serves
some signature, and single-threaded calls are still right.
"""

from __future__ import annotations

import sys
import threading

import pytest

import bcfront
from bcfront.testing.differential import diff

from .helpers import HAS_TORCH

THREADS = 6
ROUNDS = 25


def _hammer(cf, fn, make_args, signatures):
    """Run the threads; return the list of problems found (empty when all agreed)."""
    problems: list[str] = []
    barrier = threading.Barrier(len(signatures))

    def worker(sig):
        try:
            barrier.wait()
            for r in range(ROUNDS):
                expected = fn(*make_args(sig, r))
                actual = cf(*make_args(sig, r))
                problem = diff(expected, actual)
                if problem:
                    problems.append(f"signature {sig}, round {r}: {problem}")
                    return
        except Exception as e:  # noqa: BLE001 - any escape is a finding
            problems.append(f"signature {sig}: {type(e).__name__}: {e}")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=worker, args=(s,)) for s in signatures]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not any(t.is_alive() for t in threads), "a thread did not finish (deadlock?)"
    finally:
        sys.setswitchinterval(old)
    return problems


def _check_cache(cf, fn, make_args, signatures):
    entries = getattr(cf, "entries", None)
    if entries is not None:
        assert len(entries) <= len(signatures), (
            f"{len(entries)} cache entries for {len(signatures)} distinct signatures: "
            "concurrent misses appended duplicate entries"
        )
        limit = getattr(cf, "recompile_limit", None)
        assert limit is None or len(entries) <= limit, (
            f"{len(entries)} cache entries exceed the recompile limit {limit}"
        )
    for sig in signatures:  # single-threaded, after the storm
        problem = diff(fn(*make_args(sig, 99)), cf(*make_args(sig, 99)))
        assert problem is None, f"after the threads, signature {sig}: {problem}"


def py_fn(xs, scale):
    total = 0
    for i, x in enumerate(xs):
        total += x * scale if i % 2 else x - scale
    return total, len(xs), [x + 1 for x in xs]


def _py_args(sig, r):
    # Values depend only on the signature: python ints are specialized, so new values
    # per round would be new signatures.
    return [sig * i - 2 for i in range(sig)], 3


def test_threads_pure_python():
    cf = bcfront.capture(py_fn)
    signatures = list(range(1, THREADS + 1))  # list lengths: one guard per length
    problems = _hammer(cf, py_fn, _py_args, signatures)
    assert not problems, "\n".join(problems)
    _check_cache(cf, py_fn, _py_args, signatures)


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("with_break", [False, True], ids=["one-graph", "graph-break"])
def test_threads_tensor_shapes(with_break):
    import torch

    def fn(x, w):
        y = torch.relu(x @ w) * x.shape[0]
        if with_break and bool(y.sum() > 0):  # data-dependent: a graph break
            y = y - 1
        return y.sum(0), y.shape

    def make_args(sig, r):
        gen = torch.Generator().manual_seed(1000 * sig + r)
        return torch.randn(sig, 4, generator=gen), torch.randn(4, 3, generator=gen)

    cf = bcfront.capture(fn)
    signatures = list(range(1, THREADS + 1))  # batch sizes
    problems = _hammer(cf, fn, make_args, signatures)
    assert not problems, "\n".join(problems)
    _check_cache(cf, fn, make_args, signatures)
