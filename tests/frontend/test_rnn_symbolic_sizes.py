"""Ops whose fake kernel takes no symbolic sizes (aten ``lstm``) at a new shape.

The second shape a function sees makes the changing sizes symbolic; aten ``lstm``'s fake
kernel calls ``numel()`` on its inputs and rejects them, which was a torch-error graph
break around every ``nn.LSTM`` (timm's Sequencer) at the recapture.  The fake run now
retries on views with every size pinned (a ShapeEnv guard each): the op stays in the
graph, each new size is a capture of its own, and explain says why.  Oracle: eager
torch on the same modules and inputs (outputs; for the training step, the gradients).
"""

from __future__ import annotations

import pytest
import torch

import bcfront

SHAPES = [(2, 3), (3, 6), (1, 5), (3, 6)]  # (batch, sequence length)


def _modules():
    torch.manual_seed(0)
    return {
        "lstm": torch.nn.LSTM(4, 5, batch_first=True),
        "lstm2_bi": torch.nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True),
        "gru": torch.nn.GRU(4, 5, batch_first=True),
        "gru2": torch.nn.GRU(4, 5, num_layers=2, batch_first=True),
    }


@pytest.mark.parametrize("name", sorted(_modules()))
def test_rnn_at_new_shapes_matches_eager_without_breaks(name):
    rnn = _modules()[name]

    def fn(x):
        out, h = rnn(x)
        return out.relu().sum(-1), h[0] if isinstance(h, tuple) else h

    cf = bcfront.capture(fn)
    for b, t in SHAPES:
        x = torch.randn(b, t, 4)
        torch.testing.assert_close(cf(x), fn(x))
    breaks = [(br.reason.value, br.message) for e in cf.entries for br in e.breaks]
    assert not breaks, breaks
    assert not any(e.native for e in cf.entries)


def test_lstm_training_step_at_new_shapes_matches_eager():
    torch.manual_seed(0)
    lstm, head = torch.nn.LSTM(4, 5, batch_first=True), torch.nn.Linear(5, 2)
    params = [*lstm.parameters(), *head.parameters()]

    def step(x):
        loss = head(lstm(x)[0][:, -1]).square().mean()
        loss.backward()
        return loss.detach()

    cf = bcfront.capture(step)
    for b, t in SHAPES:
        x = torch.randn(b, t, 4)
        for p in params:
            p.grad = None
        got = cf(x), [p.grad.clone() for p in params]
        for p in params:
            p.grad = None
        exp = step(x), [p.grad.clone() for p in params]
        torch.testing.assert_close(got, exp)
    breaks = [(br.reason.value, br.message) for e in cf.entries for br in e.breaks]
    assert not breaks, breaks


def test_explain_names_the_specialized_sizes():
    lstm = _modules()["lstm"]
    cf = bcfront.capture(lambda x: lstm(x)[0])
    cf(torch.randn(2, 3, 4))
    cf(torch.randn(3, 6, 4))
    notes = [n for e in cf.entries for n in e.notes]
    assert any("lstm" in n and "no symbolic sizes" in n for n in notes), notes
