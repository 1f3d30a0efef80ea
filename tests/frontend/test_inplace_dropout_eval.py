"""In-place dropout outside training (``nn.Dropout(inplace=True)`` in eval) reaches non-eager backends.

It dispatches nothing and returns its input, so functionalization reads it as that
input; other in-place names that dispatch nothing (``requires_grad_``) still keep
the graph on the eager backend.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import bcfront  # noqa: E402


def _via_dropout_(x, w):
    h = torch.relu(x @ w)
    y = torch.dropout_(h, 0.2, False)
    return y * 2, y is h


def _via_functional(x, w):
    h = torch.tanh(x @ w)
    y = F.dropout(h, 0.5, training=False, inplace=True)
    return y + 1


def _via_module(x, w):
    return torch.nn.Dropout(0.3, inplace=True).eval()(x @ w).sum(0)


def _inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 8, generator=g), torch.randn(8, 6, generator=g)


@pytest.mark.parametrize("fn", [_via_dropout_, _via_functional, _via_module], ids=lambda f: f.__name__)
def test_eval_dropout_inplace_is_functionalized(fn):
    seen = []

    def backend(gm, example_inputs):
        seen.append(gm)
        return gm

    args = _inputs()
    report = bcfront.explain(bcfront.capture(fn, backend=backend), *args)
    notes = [n for f in report.functions for n in f.notes]
    assert not any("functionalization failed" in n for n in notes), notes
    assert seen, "the graph never reached the backend"
    for gm in seen:
        names = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
        assert not any("dropout_" in n for n in names), names
    cf = bcfront.capture(fn, backend=backend)
    got, want = cf(*_inputs()), fn(*_inputs())
    torch.testing.assert_close(got, want)


def test_requires_grad_inplace_still_stays_eager():
    def fn(x):
        y = x * 2
        y.requires_grad_()
        return y

    x = torch.randn(3)
    report = bcfront.explain(bcfront.capture(fn, backend="fx"), x)
    out = bcfront.capture(fn, backend="fx")(x)
    assert out.requires_grad
    torch.testing.assert_close(out, x * 2)
    assert report.graphs
