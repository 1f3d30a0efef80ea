"""``capture(fn, joint_graph=True)``: a user's ``torch.autograd.Function`` in the training
step is traced by AOT autograd into the joint graph (its ``forward`` into the forward
graph, its ``backward`` into the backward graph) when its Python has no other effect;
otherwise it stays an opaque autograd node between compiled segments.

Oracle: the same steps run eagerly on a deep copy of the model and its optimizer, on the
same batches: losses, parameters, gradients and optimizer state bit for bit equal (the fx
backend runs AOT autograd's aten graphs as they are).  Python side effects of the
Function (a counter) happen as often as in eager.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .test_autograd_function import Cube, ExpOnce, MulInplace, ScaleNeeds, SortWithIndex, Square  # noqa: E402
from .test_joint_graph import assert_joint, kernel_names, run_joint  # noqa: E402
from .test_optim_capture import batch, make_net, train_step  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.a, self.b = torch.nn.Linear(6, 8), torch.nn.Linear(8, 3)
        self.body = body

    def forward(self, x):
        return self.b(self.body(torch.tanh(self.a(x))))


def net_with(body):
    def make():
        torch.manual_seed(0)
        return Net(body)

    return make


def sgd(ps):
    return torch.optim.SGD(ps, lr=0.1, momentum=0.9)


def backward_sources(report):
    return "\n".join(k.source for g in report.graphs for k in g.kernels if k.name.startswith("backward "))


BODIES = {
    "saved_tensors": (lambda h: Square.apply(h), "aten.mul"),
    "once_differentiable": (lambda h: ExpOnce.apply(h * 0.5), "aten.mul"),
    "mark_non_differentiable": (lambda h: SortWithIndex.apply(h)[0], "aten.scatter"),
    "mark_dirty": (lambda h: MulInplace.apply(h * 1.0, 3.0), "aten.mul"),
    "setup_context": (lambda h: Cube.apply(h), "aten.mul"),
    "needs_input_grad": (lambda h: ScaleNeeds.apply(h, h.detach() + 1, 2.0), "aten.mul"),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_function_traced_into_the_joint_graph(name):
    body, backward_op = BODIES[name]
    report = run_joint(train_step, sgd, make=net_with(body))
    assert_joint(report)
    names = kernel_names(report)
    # one segment: the Function no longer splits the forward into two
    assert "forward 1" not in names, names
    assert any("traced into the joint graph" in n for n in report.notes), report.notes
    assert backward_op in backward_sources(report)


class Counted(torch.autograd.Function):
    """Python effects in forward and backward: kept opaque, runs its Python every step."""

    calls = [0, 0]

    @staticmethod
    def forward(ctx, x):
        Counted.calls[0] += 1
        return x * 2

    @staticmethod
    def backward(ctx, g):
        Counted.calls[1] += 1
        return g * 2


class Printing(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        print("forward", tuple(x.shape))
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.parametrize("fn", [Counted, Printing], ids=["counter", "print"])
def test_function_with_effects_stays_opaque(fn, capsys):
    report = run_joint(train_step, sgd, make=net_with(fn.apply))
    assert_joint(report)
    names = kernel_names(report)
    assert any(n.startswith(f"{fn.__qualname__}.apply (opaque") for n in names), names
    assert not any("traced into the joint graph" in n for n in report.notes)
    # a captured step (cache hit) runs the Function's Python once, as eager does
    model = net_with(fn.apply)()
    opt = sgd(model.parameters())
    cf = bcfront.capture(train_step, backend="fx", joint_graph=True)
    cf(model, opt, *batch(0))
    before, _ = list(Counted.calls), capsys.readouterr()
    cf(model, opt, *batch(1))
    if fn is Counted:
        assert [b - a for a, b in zip(before, Counted.calls)] == [1, 1]
    else:
        assert capsys.readouterr().out == "forward (5, 8)\n"
    assert not cf.report().recompiles


K = 2.0


class ScaleByGlobal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * K

    @staticmethod
    def backward(ctx, g):
        return g * K


def test_global_read_by_a_traced_function_is_guarded():
    global K

    def step(model, x):
        loss = ScaleByGlobal.apply(model(x)).sum()
        loss.backward()
        return loss

    model = make_net()
    ref = copy.deepcopy(model)
    cf = bcfront.capture(step, backend="fx", joint_graph=True)
    x = torch.randn(4, 6)
    try:
        for k in (2.0, 2.0, 5.0):
            K = k
            model.zero_grad()
            ref.zero_grad()
            assert torch.equal(cf(model, x), step(ref, x)), k
            for p, q in zip(model.parameters(), ref.parameters()):
                assert torch.equal(p.grad, q.grad), k
    finally:
        K = 2.0
    assert any("traced into the joint graph" in n for n in cf.report().notes)
    assert len(cf.report().recompiles) == 1


def test_function_aot_cannot_compile_falls_back_to_opaque():
    def no_scatter(gm, example_inputs):
        if any("scatter" in str(n.target) for n in gm.graph.nodes):
            raise RuntimeError("no scatter here")
        return gm

    report = run_joint(
        train_step, sgd, make=net_with(BODIES["mark_non_differentiable"][0]), backend=no_scatter
    )
    assert_joint(report, backend="no_scatter")
    assert any("SortWithIndex kept opaque" in n for n in report.notes), report.notes
    assert any(n.startswith("SortWithIndex.apply (opaque") for n in kernel_names(report))


def test_double_backward_through_a_function_matches_eager():
    def step(model, x):
        y = Square.apply(model(x)).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        loss = g.pow(2).sum()
        loss.backward()
        return loss

    model = make_net()
    ref = copy.deepcopy(model)
    x = torch.randn(4, 6, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    cf = bcfront.capture(step, backend="fx", joint_graph=True)
    assert torch.equal(cf(model, x), step(ref, x2))
    for p, q in zip(model.parameters(), ref.parameters()):
        assert torch.equal(p.grad, q.grad)
    assert torch.equal(x.grad, x2.grad)
