"""Modules whose methods live in torch outside ``torch.nn.modules``, called in captured code.

A Python function of torch is recorded as one op on fake copies of its arguments,
but a module cannot be an op argument: ``_WeightNorm.forward(self, g, v)`` (the
parametrization that ``nn.utils.parametrizations.weight_norm`` installs, which
Wav2Vec2's positional convolution uses) was a graph break ("a torch call received
Object(_WeightNorm)").  Such a call is traced.  Oracle: the same module run eagerly
on the same inputs (outputs; for a training step the gradients of the parametrization's
``original0``/``original1``).
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

import bcfront  # noqa: E402


def weight_normed_conv() -> nn.Module:
    torch.manual_seed(0)
    conv = nn.Conv1d(4, 4, 3, padding=1, groups=2)
    conv = nn.utils.parametrizations.weight_norm(conv, name="weight", dim=2)
    return nn.Sequential(conv, nn.GELU())


def test_weight_norm_forward_is_one_graph():
    mod = weight_normed_conv()
    ref = copy.deepcopy(mod)
    cf = bcfront.capture(mod, fullgraph=True)
    with torch.no_grad():
        for shape in ((2, 4, 5), (2, 4, 5), (3, 4, 7)):
            x = torch.randn(shape)
            torch.testing.assert_close(cf(x), ref(x))


def test_weight_norm_training_gradients_match_eager():
    mod = weight_normed_conv()
    ref = copy.deepcopy(mod)

    def step(m, x):
        loss = m(x).square().mean()
        loss.backward()
        return loss.detach()

    cf = bcfront.capture(step)
    x = torch.randn(2, 4, 5)
    with bcfront.explain.collect() as run:
        got = cf(mod, x)
    torch.testing.assert_close(got, step(ref, x))
    assert not run.report().graph_breaks
    for (name, p), (_, q) in zip(mod.named_parameters(), ref.named_parameters()):
        assert p.grad is not None, name
        torch.testing.assert_close(p.grad, q.grad, msg=name)
