"""Higher-order gradients through captured training code, user ``autograd.Function``s included.

``loss.backward(create_graph=True)`` inside the captured function is one node with no
break: the grads it leaves carry autograd history, a later backward through them (a
gradient penalty) reaches the Function's own ``backward`` (differentiable: eager's
double backward; ``once_differentiable``: eager's error).  With ``joint_graph=True`` such
a graph stays off AOT autograd (its backward graphs are not differentiable), and tensors
handed out with history no ``backward()`` in the graph consumed are computed eagerly, so the
caller may differentiate through them as often and as deep as eager allows.

Oracle: the same function run eagerly on a deep copy, same inputs: results, ``.grad`` of
parameters and inputs, second-order grads, bit for bit; errors with eager's type and text.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .test_autograd_function import Cube, ExpOnce, Square  # noqa: E402

OPTIONS = {"default": {}, "fx_joint": {"backend": "fx", "joint_graph": True}}


def _lin():
    torch.manual_seed(0)
    return torch.nn.Linear(3, 3)


def penalty_step(lin, x, fn):
    loss = fn.apply(torch.tanh(lin(x))).sum()
    loss.backward(create_graph=True)
    gp = sum(p.grad.pow(2).sum() for p in lin.parameters()) + x.grad.pow(2).sum()
    lin.zero_grad()
    x.grad = None
    gp.backward()
    return loss.detach(), gp.detach()


@pytest.mark.parametrize("fn", [Square, Cube], ids=["save_for_backward", "setup_context"])
@pytest.mark.parametrize("option", list(OPTIONS))
def test_create_graph_backward_through_a_function_matches_eager(option, fn):
    lin, x = _lin(), torch.randn(2, 3)
    ref = copy.deepcopy(lin)
    cf = bcfront.capture(penalty_step, **OPTIONS[option])
    for i in range(4):
        xa, xb = (x + i).requires_grad_(), (x + i).requires_grad_()
        got, want = cf(lin, xa, fn), penalty_step(ref, xb, fn)
        assert all(torch.equal(a, b) for a, b in zip(got, want)), i
        for p, q in zip(lin.parameters(), ref.parameters()):
            assert torch.equal(p.grad, q.grad), i
        assert torch.equal(xa.grad, xb.grad), i
        if i == 1:  # the first call found no .grad, the second one the penalty's: then cached
            recompiles = len(cf.report().recompiles)
    report = cf.report()
    assert report.graph_breaks == (), [(b.reason, b.message) for b in report.graph_breaks]
    assert len(report.recompiles) == recompiles
    if option == "fx_joint":
        assert any("create_graph=True" in n for n in report.notes), report.notes


def once_step(lin, x):
    loss = ExpOnce.apply(lin(x)).sum()
    loss.backward(create_graph=True)
    gp = sum(p.grad.pow(2).sum() for p in lin.parameters())
    gp.backward()  # the grads have no history: eager raises
    return gp


@pytest.mark.parametrize("option", list(OPTIONS))
def test_once_differentiable_double_backward_raises_like_eager(option):
    lin, x = _lin(), torch.randn(2, 3)
    cf = bcfront.capture(once_step, **OPTIONS[option])
    with pytest.raises(RuntimeError) as eager:
        once_step(copy.deepcopy(lin), x)
    for _ in range(2):
        with pytest.raises(RuntimeError) as got:
            cf(lin, x)
        assert str(got.value) == str(eager.value)


def returns_history(lin, x):
    loss = lin(x).pow(2).sum()
    loss.backward()
    return Square.apply(torch.tanh(lin(x)) * x)


def _grads_of_grads(out, x):
    (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.pow(2).sum(), x, retain_graph=True)
    (gg2,) = torch.autograd.grad(g.pow(2).sum(), x)  # the graph retained: a second time
    return g.detach(), gg, gg2


@pytest.mark.parametrize("option", list(OPTIONS))
def test_history_handed_out_after_backward_differentiates_like_eager(option):
    lin, x = _lin(), torch.randn(2, 3)
    ref = copy.deepcopy(lin)
    cf = bcfront.capture(returns_history, **OPTIONS[option])
    for i in range(4):
        xa, xb = (x - i).requires_grad_(), (x - i).requires_grad_()
        got = _grads_of_grads(cf(lin, xa), xa)
        want = _grads_of_grads(returns_history(ref, xb), xb)
        assert all(torch.equal(a, b) for a, b in zip(got, want)), i
        for p, q in zip(lin.parameters(), ref.parameters()):
            assert torch.equal(p.grad, q.grad), i
        if i == 1:  # the first call found no .grad: then cached
            recompiles = len(cf.report().recompiles)
    report = cf.report()
    assert report.graph_breaks == () and len(report.recompiles) == recompiles
    if option == "fx_joint":
        names = [k.name for g in report.graphs for k in g.kernels]
        assert "forward 0" in names and "backward 0" in names, names  # before the backward: compiled
        assert any("history leaves the graph" in n for n in names), names


def aux_before_backward(lin, x):
    aux = Square.apply(torch.tanh(x) * 3)  # not part of the loss: its history is handed out
    loss = lin(x).pow(2).sum()
    loss.backward()
    return aux


@pytest.mark.parametrize("option", list(OPTIONS))
def test_history_handed_out_before_backward_differentiates_like_eager(option):
    lin, x = _lin(), torch.randn(2, 3)
    ref = copy.deepcopy(lin)
    cf = bcfront.capture(aux_before_backward, **OPTIONS[option])
    for i in range(3):
        xa, xb = (x + i).requires_grad_(), (x + i).requires_grad_()
        got = _grads_of_grads(cf(lin, xa), xa)
        want = _grads_of_grads(aux_before_backward(ref, xb), xb)
        assert all(torch.equal(a, b) for a, b in zip(got, want)), i
    assert cf.report().graph_breaks == ()
