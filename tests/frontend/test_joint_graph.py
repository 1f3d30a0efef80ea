"""``capture(fn, joint_graph=True)``: a training step with ``loss.backward()`` inside, on a
backend that compiles, gets its forward and backward graphs from AOT autograd.

Oracle: the same steps run eagerly on a deep copy of the model and its own optimizer, on
the same batches: losses, parameters, gradients and optimizer state bit for bit equal
(the fx backend runs AOT autograd's aten graphs as they are; the ops are deterministic
on CPU).  Without the option the same graph runs on the eager backend (a note says so).
"""

from __future__ import annotations

import copy
import math

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .test_optim_capture import (  # noqa: E402
    TinyGPT,
    accumulate_step,
    assert_same_training_state,
    batch,
    make_net,
    train_step,
)


def run_joint(step, make_opt, steps=3, make=make_net, data=batch, schedule=None, backend="fx"):
    model = make()
    ref = copy.deepcopy(model)
    opt, ref_opt = make_opt(model.parameters()), make_opt(ref.parameters())
    sched = schedule(opt) if schedule else None
    ref_sched = schedule(ref_opt) if schedule else None
    cf = bcfront.capture(step, backend=backend, joint_graph=True)
    for i in range(steps):
        x, y = data(i)
        got, want = cf(model, opt, x, y), step(ref, ref_opt, x, y)
        assert torch.equal(got, want), f"step {i}: loss"
        assert_same_training_state(model, opt, ref, ref_opt, f"step {i}")
        if sched:
            sched.step()
            ref_sched.step()
    return cf.report()


def kernel_names(report):
    return [k.name for g in report.graphs for k in g.kernels]


def assert_joint(report, backend="fx"):
    assert report.graph_breaks == (), [(b.reason, b.message) for b in report.graph_breaks]
    assert report.recompiles == ()
    assert [g.backend for g in report.graphs] == [backend]
    names = kernel_names(report)
    assert "forward 0" in names and "backward 0" in names, names
    assert names.index("forward 0") < names.index("backward() (autograd engine: runs the backward graphs)")


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True),
        lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1, foreach=True),
        lambda ps: torch.optim.Adagrad(ps, lr=0.05, foreach=False),
    ],
    ids=["sgd_nesterov", "adamw_foreach", "adagrad"],
)
def test_training_step_joint_matches_eager(make_opt):
    report = run_joint(train_step, make_opt)
    assert_joint(report)
    names = kernel_names(report)
    assert any(n.startswith("inference") for n in names)  # the clipping after the backward
    assert any(n.endswith(".step (optimizer step, eager)") for n in names)  # at its place


def test_without_the_option_the_graph_runs_eager():
    model = make_net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    cf = bcfront.capture(train_step, backend="fx")
    cf(model, opt, *batch(0))
    assert [g.backend for g in cf.report().graphs] == ["eager"]
    assert not any(n.startswith("forward") for n in kernel_names(cf.report()))


def test_compiler_gets_forward_and_backward_graphs():
    seen = []

    def compiler(gm, example_inputs):
        seen.append(sorted({str(n.target) for n in gm.graph.nodes if n.op == "call_function"}))
        return gm

    report = run_joint(train_step, lambda ps: torch.optim.SGD(ps, lr=0.1), backend=compiler)
    assert_joint(report, backend="compiler")
    # forward (addmm, tanh, ...), backward (its mm's and tanh_backward), the clipping
    assert any("aten.tanh.default" in ops for ops in seen)
    assert any("aten.tanh_backward.default" in ops for ops in seen)
    assert len(seen) == 3


def test_lr_schedule_no_recompile_and_gpt_with_clipping():
    def make():
        torch.manual_seed(0)
        return TinyGPT()

    def step(model, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss

    def tokens(seed, n=2):
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(0, 32, (n, 8), generator=g)
        return x, torch.roll(x, -1, 1)

    def cosine(opt):
        return torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / 6)))

    report = run_joint(
        step, lambda ps: torch.optim.AdamW(ps, lr=3e-3), steps=4, make=make, data=tokens, schedule=cosine
    )
    assert_joint(report)


def test_gradient_accumulation_gives_one_forward_backward_per_micro_batch():
    step = accumulate_step

    report = run_joint(
        step, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), data=lambda i: batch(i, n=9)
    )
    assert_joint(report)
    names = kernel_names(report)
    assert {"forward 2", "backward 2"} <= set(names)


def test_batch_norm_buffers_written_in_the_forward():
    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Conv2d(2, 4, 3),
            torch.nn.BatchNorm2d(4),
            torch.nn.ReLU(),
            torch.nn.Flatten(),
            torch.nn.Linear(64, 3),
        )

    def images(seed):
        g = torch.Generator().manual_seed(seed)
        return torch.randn(4, 2, 6, 6, generator=g), torch.randint(0, 3, (4,), generator=g)

    model_buffers = []

    def make_and_keep():
        m = make()
        model_buffers.append(m)
        return m

    report = run_joint(train_step, lambda ps: torch.optim.SGD(ps, lr=0.1), make=make_and_keep, data=images)
    assert_joint(report)
    (got,) = model_buffers
    want = make()
    opt = torch.optim.SGD(want.parameters(), lr=0.1)
    for i in range(3):
        train_step(want, opt, *images(i))
    for (name, b), c in zip(got.named_buffers(), want.buffers()):
        assert torch.equal(b, c), name


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_autograd_function_traced_into_the_segment():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(6, 8), torch.nn.Linear(8, 3)

        def forward(self, x):
            return self.b(Scale.apply(torch.tanh(self.a(x))))

    def make():
        torch.manual_seed(0)
        return Net()

    report = run_joint(train_step, lambda ps: torch.optim.SGD(ps, lr=0.1), make=make)
    assert_joint(report)
    assert "forward 1" not in kernel_names(report)  # AOT autograd traced Scale: one segment
    assert any("Scale traced" in n for n in report.notes)


def test_retain_graph_keeps_the_usual_path():
    def step(model, x, y):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward(retain_graph=True)
        (loss * 2).backward()
        return loss

    model = make_net()
    ref = copy.deepcopy(model)
    cf = bcfront.capture(step, backend="fx", joint_graph=True)
    x, y = batch(0)
    assert torch.equal(cf(model, x, y), step(ref, x, y))
    for p, q in zip(model.parameters(), ref.parameters()):
        assert torch.equal(p.grad, q.grad)
    report = cf.report()
    assert [g.backend for g in report.graphs] == ["eager"]
    assert any("retain_graph" in n for n in report.notes)


def test_compiler_failure_keeps_the_usual_path():
    def broken(gm, example_inputs):
        raise RuntimeError("cannot")

    model = make_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    cf = bcfront.capture(train_step, backend=broken, joint_graph=True)
    x, y = batch(0)
    assert torch.equal(cf(model, opt, x, y), train_step(ref, ref_opt, x, y))
    assert_same_training_state(model, opt, ref, ref_opt, "broken compiler")
    report = cf.report()
    assert [g.backend for g in report.graphs] == ["eager"]
    assert any("joint graph not built" in n for n in report.notes)


def test_hook_on_a_parameter_breaks_like_today(lenient):
    def step(model, x, y):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    model = make_net()
    ref = copy.deepcopy(model)
    model[0].weight.register_hook(lambda g: g * 2)
    ref[0].weight.register_hook(lambda g: g * 2)
    cf = bcfront.capture(step, backend="fx", joint_graph=True)
    x, y = batch(0)
    assert torch.equal(cf(model, x, y), step(ref, x, y))
    for p, q in zip(model.parameters(), ref.parameters()):
        assert torch.equal(p.grad, q.grad)
    assert any("hook" in b.message for b in cf.report().graph_breaks)


def test_option_is_checked():
    with pytest.raises(TypeError):
        bcfront.capture(train_step, joint_graph="yes")


class NoisyScale(torch.autograd.Function):
    """Draws from the global generator in forward (traced into the joint graph)."""

    @staticmethod
    def forward(ctx, x):
        noise = torch.rand_like(x)
        ctx.save_for_backward(noise)
        return x * noise

    @staticmethod
    def backward(ctx, g):
        (noise,) = ctx.saved_tensors
        return g * noise


def make_dropout_net():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(6, 16), torch.nn.Linear(16, 3)
            self.drop = torch.nn.Dropout(0.3)

        def forward(self, x):
            h = self.drop(torch.tanh(self.a(x)))
            return self.b(NoisyScale.apply(torch.nn.functional.dropout(h, 0.2)))

    torch.manual_seed(0)
    return Net()


def test_dropout_and_random_draws_match_eager_for_the_same_seed():
    model = make_dropout_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    cf = bcfront.capture(train_step, backend="fx", joint_graph=True)
    for i in range(3):
        x, y = batch(i)
        torch.manual_seed(100 + i)
        got = cf(model, opt, x, y)
        got_next = torch.rand(4)  # the generator advanced as far as eager's
        torch.manual_seed(100 + i)
        want = train_step(ref, ref_opt, x, y)
        assert torch.equal(got, want), f"step {i}: loss"
        assert torch.equal(got_next, torch.rand(4)), f"step {i}: generator state"
        assert_same_training_state(model, opt, ref, ref_opt, f"step {i}")
    report = cf.report()
    assert_joint(report)
    assert "forward 1" not in kernel_names(report)  # NoisyScale traced, not a barrier


def test_inductor_random_numbers_are_named_in_a_note():
    def compile_fx(gm, example_inputs):  # spelled as Inductor's entry point; runs gm as it is
        return gm

    compile_fx.__module__ = "torch._inductor.compile_fx"
    model = make_dropout_net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    cf = bcfront.capture(train_step, backend=compile_fx, joint_graph=True)
    cf(model, opt, *batch(0))
    notes = [n for n in cf.report().notes if "own random numbers" in n]
    assert len(notes) == 1 and "dropout" in notes[0] and "fallback_random" in notes[0], cf.report().notes
