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
