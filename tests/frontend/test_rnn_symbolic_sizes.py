"""Ops whose fake kernel takes no symbolic sizes (aten ``lstm``) at a new shape.

The second shape a function sees makes the changing sizes symbolic; aten ``lstm``'s fake
kernel calls ``numel()`` on its inputs and rejects them, which was a torch-error graph
break around every ``nn.LSTM`` (timm's Sequencer) at the recapture.  The fake run now
retries with torch's Python decomposition of the op (sizes kept symbolic) or, where none
runs, on views with every size pinned (a ShapeEnv guard each, noted in explain): the op
stays in the graph.  Oracle: eager
torch on the same modules and inputs (outputs; for the training step, the gradients).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

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


def test_the_graph_keeps_the_op():
    """The decomposition only gives the fake run its output's metadata: the graph at the
    recapture still calls ``lstm`` itself (eager's kernel, eager's numbers)."""
    lstm = _modules()["lstm"]
    cf = bcfront.capture(lambda x: lstm(x)[0])
    with bcfront.explain.collect() as run:
        for b, t in SHAPES:
            x = torch.randn(b, t, 4)
            torch.testing.assert_close(cf(x), lstm(x)[0], rtol=0, atol=0)
    report = run.report()
    assert not report.graph_breaks
    assert all("lstm" in g.code for g in report.graphs), [g.code for g in report.graphs]


class _RowsThenColumns(torch.nn.Module):
    """timm's Sequencer2d block: an LSTM over the rows, then one over the columns of a
    (batch, height, width, channels) map; the second LSTM's input is a reshape whose sizes
    read as ints but stay symbolic inside (a kernel rejects them all the same)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.rows = torch.nn.LSTM(4, 3, batch_first=True, bidirectional=True)
        self.cols = torch.nn.LSTM(4, 3, batch_first=True, bidirectional=True)

    def forward(self, x):
        b, h, w, c = x.shape
        r = self.rows(x.reshape(-1, w, c))[0].reshape(b, h, w, -1)
        v = x.permute(0, 2, 1, 3)
        col = self.cols(v.reshape(-1, h, c))[0].reshape(b, w, h, -1).permute(0, 2, 1, 3)
        return torch.cat([r, col], dim=-1).mean((1, 2))


def test_sequencer_block_at_new_shapes_matches_eager():
    m = _RowsThenColumns().eval()
    cf = bcfront.capture(m)
    with torch.no_grad():
        for b, s in [(2, 4), (3, 5), (2, 6)]:
            x = torch.randn(b, s, s, 4)
            torch.testing.assert_close(cf(x), m(x))
    breaks = [(br.reason.value, br.message) for e in cf.entries for br in e.breaks]
    assert not breaks, breaks
