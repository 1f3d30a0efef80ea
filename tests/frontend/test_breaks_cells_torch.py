"""Tensor code breaking while closures share the function's cells (torch).

Oracle: eager PyTorch on identical inputs, over several calls taking both
sides of a data-dependent branch.  The function must stay compiled (graph
before the break, continuation captured, no native fallback) and the
continuation must not recompile when only the tensor values change.
"""

from __future__ import annotations

import contextlib
import io

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .test_breaks_cells import walk  # noqa: E402
from .test_torch_semantics import assert_same  # noqa: E402


def scaled_by_closure(x):
    scale = x.abs().sum()
    f = lambda t: t * scale  # noqa: E731
    if x.mean() > 0:  # data-dependent: a break
        scale = scale + 1
    return f(x), scale


def nonlocal_accumulate(x):
    acc = torch.zeros_like(x)

    def add(t):
        nonlocal acc
        acc = acc + t

    add(x.sin())
    print("mid", acc.shape)  # I/O: a break
    add(x * 2)
    return acc


def closure_item_steers(x):
    w = x * 3
    g = lambda: (w * 2).sum()  # noqa: E731
    k = 1 if g() > 0 else -1  # data-dependent: a break while g shares w's cell
    w = w + k
    return g(), k


CASES = {
    "scaled_by_closure": (scaled_by_closure, 2),  # graph before, graph of the side taken
    "nonlocal_accumulate": (nonlocal_accumulate, 2),
    "closure_item_steers": (closure_item_steers, 2),
}


def _inputs(seed):
    x = torch.randn(5, generator=torch.Generator().manual_seed(seed))
    return x + (2 if seed % 2 else -2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_closure_break_matches_eager_and_stays_compiled(name):
    fn, n_graphs = CASES[name]
    cf = bcfront.capture(fn, backend="eager")
    for seed in (1, 2, 3, 4, 1, 2):
        x = _inputs(seed)
        with contextlib.redirect_stdout(io.StringIO()) as out_ref:
            expected = fn(x.clone())
        with contextlib.redirect_stdout(io.StringIO()) as out_cap:
            actual = cf(x.clone())
        assert_same(actual, expected, f"{name} seed {seed}")
        assert out_cap.getvalue() == out_ref.getvalue()
    funcs = walk(cf)
    assert len(funcs) >= 2, "no continuation"
    for f in funcs:
        assert not any(e.native for e in f.entries), f"{f.__qualname__}: {f.entries[0].notes}"
        # tensor values change, shapes do not: one entry each (cells are per-call objects)
        assert len(f.entries) == 1, f"{f.__qualname__}: {[r.reason for r in f.recompiles]}"
    with contextlib.redirect_stdout(io.StringIO()):
        report = bcfront.explain(bcfront.capture(fn, backend="eager"), _inputs(1))
    assert len(report.graphs) == n_graphs
    assert len(report.graph_breaks) == 1
