"""A user's ``torch.autograd.Function`` called in captured code: ``apply`` is one graph node.

Oracle: the same function run eagerly on identical inputs: outputs, first and second order
gradients (bit for bit), in-place writes of ``mark_dirty``.  The captured call must have no
graph break, and a second call must hit the cache.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

from torch.autograd.function import once_differentiable  # noqa: E402

import bcfront  # noqa: E402


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g  # differentiable: double backward works


class ScaleNeeds(torch.autograd.Function):
    """Two tensor inputs and a constant; grads only where ``needs_input_grad`` says."""

    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b * k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g * b * ctx.k if ctx.needs_input_grad[0] else None
        gb = g * a * ctx.k if ctx.needs_input_grad[1] else None
        return ga, gb, None


class ExpOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class SortWithIndex(torch.autograd.Function):
    """Two outputs, the index marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        v, i = x.sort()
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(i)
        return v, i

    @staticmethod
    def backward(ctx, gv, gi):
        (i,) = ctx.saved_tensors
        return torch.zeros_like(gv).scatter(-1, i, gv)


class MulInplace(torch.autograd.Function):
    """Writes its input in place (``mark_dirty``)."""

    @staticmethod
    def forward(ctx, x, k):
        x.mul_(k)
        ctx.mark_dirty(x)
        ctx.k = k
        return x

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


class Cube(torch.autograd.Function):
    """``setup_context``-style: forward without ctx."""

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


def leaf(seed, *shape):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).requires_grad_()


def check_no_break(fn, *args):
    report = bcfront.explain(fn, *args)
    assert report.graph_breaks == [], [(b.reason, b.message) for b in report.graph_breaks]
    assert len(report.graphs) == 1


def grads_of(fn, *leaves):
    out = fn(*leaves)
    gs = torch.autograd.grad(out.sum(), leaves, allow_unused=True)
    return out, gs


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: Square.apply(x.sin()).sum() + 1,
        lambda x: ExpOnce.apply(x * 2).mean(),
        lambda x: SortWithIndex.apply(x.cos())[0].cumsum(-1),
        lambda x: Cube.apply(x) - x,
        lambda x: ScaleNeeds.apply(x, x.detach() + 1, 3.0),
        lambda x: ScaleNeeds.apply(x.detach() * 2, x, 0.5),
    ],
    ids=["saved", "once_differentiable", "non_differentiable", "setup_context", "needs0", "needs1"],
)
def test_function_forward_and_grads_match_eager(fn):
    x = leaf(0, 4, 5)
    check_no_break(fn, x)
    cf = bcfront.capture(fn)
    for step in range(2):
        got, ggot = grads_of(cf, x)
        want, gwant = grads_of(fn, x)
        assert torch.equal(got, want), step
        assert all(torch.equal(a, b) for a, b in zip(ggot, gwant)), step


def test_non_differentiable_output_has_no_grad_fn():
    def fn(x):
        v, i = SortWithIndex.apply(x)
        return v, i + 1

    x = leaf(1, 3, 4)
    check_no_break(fn, x)
    (v, i), (ev, ei) = bcfront.capture(fn)(x), fn(x)
    assert torch.equal(v, ev) and torch.equal(i, ei)
    assert i.requires_grad == ei.requires_grad and v.requires_grad


def test_double_backward_matches_eager():
    def fn(x):
        return Square.apply(x.tanh()).sum()

    x = leaf(2, 6)
    check_no_break(fn, x)
    cf = bcfront.capture(fn)
    (g1,) = torch.autograd.grad(cf(x), x, create_graph=True)
    (gg1,) = torch.autograd.grad(g1.sum(), x)
    (g2,) = torch.autograd.grad(fn(x), x, create_graph=True)
    (gg2,) = torch.autograd.grad(g2.sum(), x)
    assert torch.equal(g1, g2) and torch.equal(gg1, gg2)


def test_once_differentiable_refuses_double_backward_like_eager():
    def fn(x):
        return ExpOnce.apply(x).sum()

    x = leaf(3, 4)
    (g,) = torch.autograd.grad(bcfront.capture(fn)(x), x, create_graph=True)
    with pytest.raises(RuntimeError):
        torch.autograd.grad(g.sum(), x)


def test_mark_dirty_writes_input_in_place():
    def fn(x):
        y = x * 1.5
        z = MulInplace.apply(y, 2.0)
        return z.sum(), y

    a = leaf(4, 5)
    check_no_break(fn, a)
    (s, y) = bcfront.capture(fn)(a)
    (es, ey) = fn(a)
    assert torch.equal(s, es) and torch.equal(y, ey)
    (ga,) = torch.autograd.grad(s, a)
    (ea,) = torch.autograd.grad(es, a)
    assert torch.equal(ga, ea)


def test_function_in_model_with_backward_in_graph():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2))
    ref = copy.deepcopy(net)

    def step(model, x):
        h = Square.apply(model[0](x))
        loss = ExpOnce.apply(model[1](h) * 0.1).sum()
        loss.backward()
        return loss

    x = torch.randn(3, 4)
    report = bcfront.explain(step, copy.deepcopy(net), x)
    assert report.graph_breaks == [], [(b.reason, b.message) for b in report.graph_breaks]
    cf = bcfront.capture(step)
    seen = []
    for i in range(4):
        xi = x + i
        assert torch.equal(cf(net, xi), step(ref, xi))
        for p, q in zip(net.parameters(), ref.parameters()):
            assert torch.equal(p.grad, q.grad)
        seen.append(len(cf.report().recompiles))
    # the second call finds grads where the first found None; from then on, the cache
    assert seen[1] == seen[-1] <= 1


def test_other_backends_run_the_function_on_eager():
    def fn(x):
        y = x * 1.5
        return Square.apply(MulInplace.apply(y, 2.0)).sum(), y

    x = leaf(5, 5)
    cf = bcfront.capture(fn, backend="fx")
    got, want = cf(x), fn(x)
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    report = cf.report()
    assert [g.backend for g in report.graphs] == ["eager"]
    assert any("MulInplace" in n for n in report.notes)
