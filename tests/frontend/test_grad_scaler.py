"""A mixed-precision step with ``torch.amp.GradScaler`` in captured code.

``GradScaler.scale(self, loss)`` and its kin are Python functions of torch that take a
Python object (the scaler): they are traced, not recorded as one op on fakes (which no
scaler can be).  Oracle: the same step run eagerly on identical inputs: the loss, the
parameters and their gradients, the scaler's scale and growth tracker after each step,
with a step skipped for nan gradients (an inf input) and the scale grown and backed off.  The
``found_inf.item()`` that decides the skip stays a (data-dependent) break, as in
torch.compile; the forward, the scaled backward and the unscale are in graphs.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

import bcfront  # noqa: E402


class AmpStep(nn.Module):
    def __init__(self, init_scale: float):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=2)

    def forward(self, x, y):
        self.opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(self.net(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.detach().float()


@pytest.mark.parametrize("bad_call", [None, 1])
def test_grad_scaler_step_is_eagers_and_mostly_in_graphs(bad_call):
    torch.manual_seed(0)
    step = AmpStep(2.0**16)
    ref = copy.deepcopy(step)
    cf = bcfront.capture(step)
    scales = []
    with bcfront.explain.collect() as run:
        for i in range(4):
            g = torch.Generator().manual_seed(i)
            x, y = torch.randn(4, 16, generator=g), torch.randint(0, 10, (4,), generator=g)
            if i == bad_call:
                x[0, 0] = float("inf")  # nan gradients: the step is skipped, the scale backs off
            torch.testing.assert_close(cf(x, y), ref(x, y), rtol=0, atol=0, equal_nan=True)
            for p, q in zip(step.parameters(), ref.parameters()):
                torch.testing.assert_close(p, q, rtol=0, atol=0)
                torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0, equal_nan=True)
            torch.testing.assert_close(step.scaler.get_scale(), ref.scaler.get_scale())
            torch.testing.assert_close(step.scaler._growth_tracker, ref.scaler._growth_tracker)
            scales.append(ref.scaler.get_scale())
    if bad_call is not None:
        assert scales[bad_call] == 2.0**15  # (eager did skip that step)
    assert scales[-1] > scales[-2]  # (and grew the scale)
    rep = run.report()
    assert not any("a torch call received" in b.message for b in rep.graph_breaks), rep.graph_breaks
    root = max(rep.functions, key=lambda f: f.ops_in_graphs + f.ops_native)
    assert root.ops_in_graphs >= 0.9 * (root.ops_in_graphs + root.ops_native)
