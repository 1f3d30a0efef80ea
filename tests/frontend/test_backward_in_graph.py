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


# -- run-time errors after .grad writes --------------------------------------------------------


class Flag:
    def __init__(self):
        self.active = False


def _flag_then_backward(lin, table, flag):
    def fn(x, ids):
        try:
            loss = lin(x).sum()
        finally:
            flag.active = True  # left set: an error after it must see it set
        loss.backward()
        return table.index_select(0, ids)  # an index past the table: only the real kernel knows

    return fn


def test_error_after_a_backward_into_fresh_grads_reruns_it_once():
    """A backward into leaves without a grad only replaces ``.grad`` references: the region
    puts them back before rerunning natively after a run-time error, so the error comes
    with eager's state (the flag set, the grads accumulated once), and the pending flag
    write needs no graph break before the backward."""
    torch.manual_seed(0)
    lin, table = torch.nn.Linear(3, 2), torch.randn(4, 2)
    ref_lin, ref_flag, flag = copy.deepcopy(lin), Flag(), Flag()
    fn, ref = _flag_then_backward(lin, table, flag), _flag_then_backward(ref_lin, table, ref_flag)
    x = torch.randn(5, 3)
    good, bad = torch.tensor([0, 3]), torch.tensor([1, 9])
    cf = bcfront.capture(fn)
    with bcfront.explain.collect() as run:
        assert torch.equal(cf(x, good), ref(x, good))
    assert not breaks(run.report())
    for p, q in ((lin, ref_lin), (flag, ref_flag)):
        if isinstance(p, Flag):
            p.active = q.active = False
        else:
            p.zero_grad(set_to_none=True)
            q.zero_grad(set_to_none=True)
    with pytest.raises(IndexError) as want:
        ref(x, bad)
    with pytest.raises(IndexError) as got:
        cf(x, bad)
    assert str(got.value) == str(want.value) and flag.active is ref_flag.active is True
    for p, q in zip(lin.parameters(), ref_lin.parameters()):
        assert torch.equal(p.grad, q.grad)  # once, not twice


def test_error_after_a_backward_into_existing_grads_sees_the_flag_set():
    """Accumulated in place into grads the leaves already have, the backward is the first
    lasting write: an error after it propagates, so the flag left set before it is set
    among the graph's statements, just before the backward (no split)."""
    torch.manual_seed(0)
    lin, table = torch.nn.Linear(3, 2), torch.randn(4, 2)
    ref_lin, flag, ref_flag = copy.deepcopy(lin), Flag(), Flag()
    x = torch.randn(2, 3)
    lin(x).sum().backward()  # grads exist before the call
    ref_lin(x).sum().backward()
    fn, ref = _flag_then_backward(lin, table, flag), _flag_then_backward(ref_lin, table, ref_flag)
    x5 = torch.randn(5, 3)
    with bcfront.explain.collect() as run, pytest.raises(IndexError) as got:
        bcfront.capture(fn)(x5, torch.tensor([7]))
    with pytest.raises(IndexError) as want:
        ref(x5, torch.tensor([7]))
    assert not breaks(run.report()) and str(got.value) == str(want.value)
    assert flag.active is ref_flag.active is True
    for p, q in zip(lin.parameters(), ref_lin.parameters()):
        assert torch.equal(p.grad, q.grad)


def test_zero_grad_then_step_under_a_reset_flag_is_one_graph():
    """The usual loop -- ``zero_grad``, a forward under a try/finally (transformers sets and
    resets an output collector so), backward, ``optimizer.step`` -- is one graph: the
    ``p.grad = None`` writes come back on a rerun, the optimizer's writes come after every
    handler."""
    flag = Flag()

    def make_step(net):
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            flag.active = True
            try:
                loss = F.cross_entropy(net(x), y)
            finally:
                flag.active = False
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    torch.manual_seed(0)  # (no batch norm: its running statistics are written in the forward)
    mod = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    ref = copy.deepcopy(mod)
    cf, ref_step = bcfront.capture(make_step(mod)), make_step(ref)
    with bcfront.explain.collect() as run:
        for i in range(3):
            x, y = batch(i)
            assert_same(cf(x, y), ref_step(x, y), f"step {i}")
            assert_same_state(mod, ref, f"step {i}")
    assert not breaks(run.report())


def test_a_lasting_write_before_the_backward_splits_before_zero_grad():
    """A batch norm's running statistics, written in the forward under the try, last: the
    region still splits before ``zero_grad`` (as it did), never inside the forward, whose
    backward would then reach autograd history made before the split (an ``autograd``
    break).  (The continuation splits again before its backward: the running statistics'
    write-back cannot move past a backward.)"""
    flag = Flag()
    net = make_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        try:
            loss = F.cross_entropy(net(x), y)
        finally:
            flag.active = True
        loss.backward()
        opt.step()
        return loss.detach()

    report = bcfront.explain(step, *batch(0))
    assert [r for r, _ in breaks(report)] == ["write-before-error"] * 2
    assert [b.source_line.strip() for b in report.graph_breaks] == ["opt.zero_grad()", "loss.backward()"]


def _toggled_step(net, table, eval_before_error):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def step(x, ids):
        net.train()
        opt.zero_grad()
        loss = net(x).sum()
        loss.backward()
        opt.step()  # the first lasting write
        if eval_before_error:
            net.eval()
        y = table.index_select(0, ids)  # an index past the table: only the real kernel knows
        net.eval()
        return y

    return step


@pytest.mark.parametrize("eval_before_error", [False, True])
def test_train_and_eval_around_a_step_is_one_graph_and_errors_see_eager_flags(eval_before_error):
    """``net.train()`` ... ``opt.step()`` ... ``net.eval()``: the flags' writes are made among
    the graph's statements once it is past its first lasting write (the optimizer's), at
    their place in program order, so an error after it sees the flags as eager leaves them
    -- and the step needs no graph break."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).eval()
    ref, table = copy.deepcopy(net), torch.randn(4, 3)
    cf = bcfront.capture(_toggled_step(net, table, eval_before_error))
    ref_step = _toggled_step(ref, table, eval_before_error)
    x = batch(0)[0]
    with bcfront.explain.collect() as run:
        assert torch.equal(cf(x, torch.tensor([0, 3])), ref_step(x, torch.tensor([0, 3])))
    assert not breaks(run.report())
    assert_same_state(net, ref, "good call")
    with pytest.raises(IndexError) as want:
        ref_step(x, torch.tensor([9]))
    with pytest.raises(IndexError) as got:
        cf(x, torch.tensor([9]))
    assert str(got.value) == str(want.value)
    assert [m.training for m in net.modules()] == [m.training for m in ref.modules()]
    assert ref.training is not eval_before_error  # (the flags the error sees differ by case)
    assert_same_state(net, ref, "failed call")
