"""``loss.backward()`` inside a captured function is a graph node, not a graph break.

Oracle: the same steps run eagerly on an identical deep copy of the model, on the same
inputs: the outputs, every parameter's ``.grad`` (None or bit-for-bit equal), the
parameters and the buffers must equal eager's after every step, over several steps
(grads accumulate across calls unless zeroed).  Where the backward can be modelled the
first call must capture with no break; where it cannot (a hook on a leaf, autograd
history from before the graph, ``create_graph``), the break names why and the results
are still eager's.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

F = torch.nn.functional


def make_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(6, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(), torch.nn.Linear(16, 3)
    ).train()


def batch(seed, n=5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 6, generator=g), torch.randint(0, 3, (n,), generator=g)


def assert_same_state(mod, ref, where):
    for (name, p), q in zip(mod.named_parameters(), ref.parameters()):
        assert torch.equal(p, q), f"{where}: parameter {name}"
        assert (p.grad is None) == (q.grad is None), f"{where}: {name}.grad None or not"
        if q.grad is not None:
            assert torch.equal(p.grad, q.grad), f"{where}: {name}.grad"
            assert p.grad.stride() == q.grad.stride(), f"{where}: {name}.grad layout"
    for (name, b), c in zip(mod.named_buffers(), ref.buffers()):
        assert torch.equal(b, c), f"{where}: buffer {name}"


def assert_same(got, want, where):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor) and torch.equal(got, want), where
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for g, w in zip(got, want):
            assert_same(g, w, where)
    else:
        assert got == want, where


def run_steps(step, steps=3, between=None, backend="eager", make=make_net):
    """Run `step(model, x, y)` captured and eagerly for `steps` batches; returns the reports
    of the first call and of all calls."""
    mod = make()
    ref = copy.deepcopy(mod)
    cf = bcfront.capture(lambda x, y: step(mod, x, y), backend=backend)
    with bcfront.explain.collect() as every:
        for i in range(steps):
            x, y = batch(i)
            if i == 0:
                with bcfront.explain.collect() as first_call:
                    got = cf(x, y)
                first = first_call.report()
            else:
                got = cf(x, y)
            want = step(ref, x, y)
            assert_same(got, want, f"step {i}: output")
            assert_same_state(mod, ref, f"step {i}")
            if between is not None:
                between(mod)
                between(ref)
    return first, every.report()


def no_breaks(report):
    assert not report.graph_breaks, [(b.reason.value, b.message) for b in report.graph_breaks]
    assert report.graphs


def breaks(report):
    return [(b.reason.value, b.message) for b in report.graph_breaks]


# -- captured whole ---------------------------------------------------------------------------


def train_step(net, x, y):
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    return loss.detach()


def test_training_step_captures_whole_and_accumulates_like_eager():
    """forward, loss, backward: one graph; grads accumulate over calls; batch-norm buffers."""
    first, _ = run_steps(train_step)
    no_breaks(first)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_between_steps(set_to_none):
    """zero_grad between steps (outside): None grads are set, zeroed ones accumulated into;
    after the first call the same entry serves every step."""
    first, every = run_steps(train_step, steps=4, between=lambda m: m.zero_grad(set_to_none=set_to_none))
    no_breaks(first)
    # set_to_none: every call sees None grads; otherwise calls 2.. see tensors (one recompile)
    assert len(every.recompiles) == (0 if set_to_none else 1), every.recompiles


def test_two_backward_calls_accumulate_micro_batches():
    def step(net, x, y):
        half = x.shape[0] // 2
        l1 = F.cross_entropy(net(x[:half]), y[:half]) / 2
        l1.backward()
        l2 = F.cross_entropy(net(x[half:]), y[half:]) / 2
        l2.backward()
        return l1.detach() + l2.detach()

    first, _ = run_steps(step)
    no_breaks(first)


def test_retain_graph_then_backward_again():
    def step(net, x, y):
        loss = F.cross_entropy(net(x), y)
        loss.backward(retain_graph=True)
        (loss * 3).backward()
        return loss.detach()

    first, _ = run_steps(step)
    no_breaks(first)


def test_grad_read_after_backward_drives_a_manual_update():
    """p.grad read after the backward is the tensor the backward wrote (the update under
    no_grad uses it); the grad returned is the parameter's .grad object itself."""

    def step(net, x, y):
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.1 * p.grad
        return loss.detach(), net[0].weight.grad

    def zero(m):
        m.zero_grad(set_to_none=True)

    mod = make_net()
    cf = bcfront.capture(lambda x, y: step(mod, x, y))
    x, y = batch(0)
    _, g = cf(x, y)
    assert g is mod[0].weight.grad
    first, _ = run_steps(step, between=zero)
    no_breaks(first)


def test_no_grad_parts_of_the_forward():
    """A target computed under no_grad and a detached term: only the rest has grads."""

    def step(net, x, y):
        with torch.no_grad():
            target = net(x).softmax(-1)  # a soft target from the same net, without history
        out = net(x)
        loss = F.kl_div(out.log_softmax(-1), target, reduction="batchmean") + out.detach().mean()
        loss.backward()
        return loss.detach()

    first, _ = run_steps(step)
    no_breaks(first)


def test_autograd_backward_with_several_roots_and_gradients():
    def step(net, x, y):
        out = net(x)
        a, b = out[:, 0], out[:, 1:]
        torch.autograd.backward([a, b], [torch.ones_like(a), torch.full_like(b, 0.5)])
        return out.detach()

    first, _ = run_steps(step)
    no_breaks(first)


def test_leaf_made_in_the_graph_gets_its_grad():
    def step(net, x, y):
        w = torch.ones(6, requires_grad=True)
        (net(x * w)).pow(2).sum().backward()
        return w.grad, w.grad is not None

    first, _ = run_steps(step)
    no_breaks(first)


def test_backward_under_no_grad_and_of_a_non_scalar_with_gradient():
    def step(net, x, y):
        out = net(x)
        with torch.no_grad():
            out.backward(torch.ones_like(out))
        return out.detach()

    first, _ = run_steps(step)
    no_breaks(first)


def test_other_backends_run_the_graph_eagerly():
    """fx cannot take the backward node: the graph runs on the eager backend, with a note."""
    first, _ = run_steps(train_step, backend="fx")
    no_breaks(first)
    notes = [n for f in first.functions for n in f.notes]
    assert any("writes .grad outside the graph" in n for n in notes), notes


def test_temporary_saved_by_autograd_is_not_written_in_place():
    """`a` does not require grad but ``w * a`` saved it for w's grad: the eager backend must
    not reuse its buffer for the later ``a + 3`` (eager's backward would then fail)."""
    w = torch.randn(8, 8, requires_grad=True)
    x = torch.randn(8, 8)

    def f(x, w):
        a = x + 1
        y = w * a
        b = a + 3
        y.sum().backward()
        return b

    w2 = w.detach().clone().requires_grad_()
    got = bcfront.capture(f)(x, w)
    want = f(x, w2)
    assert torch.equal(got, want) and torch.equal(w.grad, w2.grad)


# -- what still breaks, and stays right --------------------------------------------------------


def test_a_hook_on_a_parameter_breaks_and_runs_once():
    calls = {"captured": 0, "eager": 0}

    def hook(key):
        def h(g):
            calls[key] += 1
            return g * 2  # the hook changes the grad: it must run, once per backward

        return h

    net = make_net()
    ref = copy.deepcopy(net)
    net[0].weight.register_hook(hook("captured"))
    ref[0].weight.register_hook(hook("eager"))
    cf = bcfront.capture(lambda x, y: train_step(net, x, y))
    with bcfront.explain.collect() as run:
        for i in range(3):
            x, y = batch(i)
            assert_same(cf(x, y), train_step(ref, x, y), f"step {i}")
            assert_same_state(net, ref, f"step {i}")
    assert calls == {"captured": 3, "eager": 3}
    assert ("autograd", "a hook on a leaf tensor runs Python during backward()") in breaks(run.report())


def test_history_from_before_the_graph_breaks():
    """The root's history starts outside the captured function: its leaves are unknown."""
    net = make_net()
    ref = copy.deepcopy(net)

    def f(h):
        (h * 2).sum().backward()
        return h.detach()

    x, _ = batch(0)
    with bcfront.explain.collect() as run:
        bcfront.capture(f)(net(x))
    f(ref(x))
    assert_same_state(net, ref, "after")
    assert ("autograd", "backward() reaches autograd history made outside the graph") in breaks(run.report())


def test_second_backward_without_retain_graph_raises_like_eager():
    def step(net, x):
        loss = net(x).sum()
        loss.backward()
        loss.backward()

    net = make_net()
    ref = copy.deepcopy(net)
    x, _ = batch(0)
    with pytest.raises(RuntimeError) as want:
        step(ref, x)
    with bcfront.explain.collect() as run, pytest.raises(RuntimeError) as got:
        bcfront.capture(step)(net, x)
    assert str(got.value) == str(want.value)
    assert_same_state(net, ref, "after the error")
    assert [r for r, _ in breaks(run.report())] == ["torch-error"]


def test_create_graph_is_one_graph():
    """The grads carry history (a gradient penalty through them): modelled, no break
    (`tests/frontend/test_joint_higher_order.py` has the Functions and the joint option)."""

    def step(net, x, y):
        loss = F.cross_entropy(net(x), y)
        loss.backward(create_graph=True)
        penalty = sum(p.grad.pow(2).sum() for p in net.parameters())
        net.zero_grad()
        penalty.backward()
        return loss.detach(), penalty.detach()

    first, every = run_steps(step, steps=3)
    no_breaks(first)
    no_breaks(every)


# -- assigning .grad ---------------------------------------------------------------------------


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_inside_the_step(set_to_none):
    """zero_grad at the start of the step, then backward, a clipped manual update and
    ``p.grad = None`` at its end: all one graph, each write where eager makes it."""

    def step(net, x, y):
        net.zero_grad(set_to_none=set_to_none)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(p.grad, alpha=-0.1)
        return loss.detach(), norm

    first, every = run_steps(step)
    no_breaks(first)


def test_grad_assigned_then_accumulated_into():
    def step(net, x, y):
        for p in net.parameters():
            p.grad = torch.ones_like(p)
        F.cross_entropy(net(x), y).backward()
        net[0].bias.grad = None
        return net[0].bias.grad is None

    first, _ = run_steps(step)
    no_breaks(first)


def test_grad_of_the_wrong_shape_raises_like_eager():
    net = make_net()

    def f(net):
        net[0].bias.grad = torch.ones(3)

    with pytest.raises(RuntimeError) as want:
        f(copy.deepcopy(net))
    with bcfront.explain.collect() as run, pytest.raises(RuntimeError) as got:
        bcfront.capture(f)(net)
    assert str(got.value) == str(want.value) and net[0].bias.grad is None
    assert [r for r, _ in breaks(run.report())] == ["torch-error"]  # checked on the fakes
