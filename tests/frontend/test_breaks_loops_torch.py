"""Data-dependent loops in tensor code stay captured across iterations (torch).

``while <tensor condition>:`` breaks at the condition on every iteration.  The
continuation of the loop body re-enters itself as a tail call and hits its
cached entry (tensor shapes do not change), so 10,000 iterations run compiled
code each time, without the stack growing.  Oracle: eager PyTorch.
"""

from __future__ import annotations

import contextlib
import io
import sys

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .test_breaks_cells import walk  # noqa: E402


def count_down(x):
    while x.sum() > 0:
        x = x - 1
    return x * 2


def halve_and_log(x, w):
    steps = []
    while x.norm() > 1:
        x = (x @ w) / 2
        steps.append(x.shape[0])  # a Python list grows: its length is guarded
    return x, len(steps)


def test_ten_thousand_iterations_stay_captured():
    cf = bcfront.capture(count_down, backend="eager")
    x = torch.full((4,), 10_000.0)  # 10,000 iterations, a break each
    assert torch.equal(cf(x.clone()), count_down(x.clone()))  # captures (needs a deep stack)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(250)  # cached calls: a frame per iteration would overflow
    try:
        assert torch.equal(cf(x.clone()), count_down(x.clone()))
    finally:
        sys.setrecursionlimit(old)
    funcs = walk(cf)
    assert not any(e.native for f in funcs for e in f.entries)
    conts = funcs[1:]
    assert conts and all(len(f.entries) <= 2 for f in conts), [len(f.entries) for f in conts]
    # every iteration ran a captured entry of a continuation (none ran natively)
    assert sum(f.calls for f in conts) >= 2 * 10_000


def test_loop_with_python_state_matches_eager():
    cf = bcfront.capture(halve_and_log, backend="eager")
    w = torch.eye(3) * 0.9
    for scale in (1.0, 30.0, 30.0, 0.1):
        x = torch.ones(3) * scale
        with contextlib.redirect_stdout(io.StringIO()):
            got, ref = cf(x.clone(), w), halve_and_log(x.clone(), w)
        assert torch.allclose(got[0], ref[0]) and got[1] == ref[1]


def test_one_break_graph_count():
    """Two iterations: the compiler duplicates the loop condition (before the loop, and at
    the end of the body), so two break sites, each a data-dependent branch; identical
    breaks on later iterations are merged into them."""
    cf = bcfront.capture(count_down, backend="eager")
    report = bcfront.explain(cf, torch.full((2,), 1.5))
    assert [b.reason for b in report.graph_breaks] == ["data-dependent-branch"] * 2
    assert all(b.source_line.startswith("while x.sum() > 0") for b in report.graph_breaks)
