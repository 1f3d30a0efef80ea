"""``capture(fn, backend="triton", joint_graph=True)``: a training step whose forward and
backward graphs (from AOT autograd) are compiled by the triton backend, run here on CPU
tensors through Triton's interpreter (``TRITON_INTERPRET=1``, set by the conftest).

Oracle: the same steps run eagerly on a deep copy of the model and its optimizer:
losses, parameters and gradients within float32 rounding (fused kernels reorder sums).
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from frontend.saved_memory import saved_bytes  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import bcfront  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter test (CPU tensors)")


def make():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss


def test_training_step_forward_and_backward_compiled_by_triton():
    model = make()
    ref = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    cf = bcfront.capture(step, backend="triton", joint_graph=True)
    for i in range(3):
        g = torch.Generator().manual_seed(i)
        x, y = torch.randn(5, 6, generator=g), torch.randint(0, 3, (5,), generator=g)
        torch.testing.assert_close(cf(model, opt, x, y), step(ref, ref_opt, x, y))
        for p, q in zip(model.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
            torch.testing.assert_close(p, q)
    report = cf.report()
    assert report.graph_breaks == () and report.recompiles == ()
    assert [g.backend for g in report.graphs] == ["triton"]
    names = [k.name for g in report.graphs for k in g.kernels]
    # triton kernels inside both AOT autograd graphs
    assert any(n.startswith("forward 0: ") for n in names), names
    assert any(n.startswith("backward 0: ") for n in names), names


class _Wide(torch.nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.up, self.down = torch.nn.Linear(width, 4 * width), torch.nn.Linear(4 * width, width)

    def forward(self, x, scale):
        h = torch.tanh(torch.nn.functional.gelu(self.up(x)) * scale)
        return x + self.down(h).sin(), h.amax()


class _Checkpointed(torch.nn.Module):
    """Three blocks under ``checkpoint(use_reentrant=False)`` (or not) and the step's backward."""

    def __init__(self, ckpt=True):
        super().__init__()
        self.blocks = torch.nn.ModuleList([_Wide() for _ in range(3)])
        self.ckpt = ckpt

    def forward(self, x):
        peaks = []
        for block in self.blocks:
            if self.ckpt:
                x, peak = checkpoint(block, x, 0.5, use_reentrant=False)
            else:
                x, peak = block(x, 0.5)
            peaks.append(peak)
        loss = x.pow(2).mean() + torch.stack(peaks).sum()
        loss.backward()
        return loss.detach()


def test_checkpointed_blocks_compiled_by_triton_recompute_their_activations():
    """Activation checkpointing through the triton backend's joint graph: eager's losses and
    gradients, and no more bytes saved for backward than eager checkpointing saves (far fewer
    than without it) -- the recompute marks reach the partition the kernels are made from."""
    torch.manual_seed(0)
    net = _Checkpointed()
    ref, plain = copy.deepcopy(net), copy.deepcopy(net)
    plain.ckpt = False
    cf = bcfront.capture(net, backend="triton", joint_graph=True)
    params = [*net.parameters(), *ref.parameters(), *plain.parameters()]
    for i in range(3):
        x = torch.randn(8, 32, generator=torch.Generator().manual_seed(i))
        for p in params:
            p.grad = None
        want, eager_bytes = saved_bytes(ref, x, params)
        _, plain_bytes = saved_bytes(plain, x, params)
        got, our_bytes = saved_bytes(cf, x, params)  # (the last call's counted: the first two compile)
        torch.testing.assert_close(got, want)
        for p, q in zip(net.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
    assert our_bytes <= eager_bytes < plain_bytes / 4, (our_bytes, eager_bytes, plain_bytes)
    report = cf.report()
    assert report.graph_breaks == () and report.recompiles == ()
    assert {g.backend for g in report.graphs} == {"triton"}
    names = [k.name for g in report.graphs for k in g.kernels]
    assert any(n.startswith("backward 0: ") for n in names), names
