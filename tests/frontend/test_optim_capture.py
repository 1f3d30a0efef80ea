"""A training step with ``opt.step()`` inside a captured function: one graph, no break.

Oracle: the same steps run eagerly on a deep copy of the model and its own optimizer,
on the same batches: losses, parameters, gradients and the optimizer's state must be
bit-for-bit equal after every step.  The step is captured once: a learning rate changed
between calls by a scheduler, and the optimizer state created on the first step, cause
no recompile.
"""

from __future__ import annotations

import copy
import math
import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

OPTIMIZERS = {
    "sgd": lambda ps, fe: torch.optim.SGD(ps, lr=0.05, foreach=fe),
    "sgd_momentum": lambda ps, fe: torch.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01, foreach=fe),
    "sgd_nesterov": lambda ps, fe: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, foreach=fe),
    "adam": lambda ps, fe: torch.optim.Adam(ps, lr=0.01, foreach=fe),
    "adam_amsgrad": lambda ps, fe: torch.optim.Adam(ps, lr=0.01, amsgrad=True, foreach=fe),
    "adamw": lambda ps, fe: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1, foreach=fe),
    "rmsprop": lambda ps, fe: torch.optim.RMSprop(ps, lr=0.01, momentum=0.5, foreach=fe),
    "adagrad": lambda ps, fe: torch.optim.Adagrad(ps, lr=0.05, foreach=fe),
}


def make_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def batch(seed, n=5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 6, generator=g), torch.randint(0, 3, (n,), generator=g)


def assert_same_training_state(model, opt, ref, ref_opt, where):
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        assert torch.equal(p, q), f"{where}: {name}"
        assert (p.grad is None) == (q.grad is None), f"{where}: {name}.grad"
        if q.grad is not None:
            assert torch.equal(p.grad, q.grad), f"{where}: {name}.grad"
    got, want = opt.state_dict(), ref_opt.state_dict()
    assert got["param_groups"] == want["param_groups"], where
    assert got["state"].keys() == want["state"].keys(), where
    for k, st in want["state"].items():
        assert st.keys() == got["state"][k].keys(), where
        for name, v in st.items():
            w = got["state"][k][name]
            assert torch.equal(w, v) if isinstance(v, torch.Tensor) else w == v, f"{where}: state {name}"


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss


def run(step, make_opt, steps=4, schedule=None, make=make_net, data=None):
    model = make()
    ref = copy.deepcopy(model)
    opt, ref_opt = make_opt(model.parameters()), make_opt(ref.parameters())
    sched = schedule(opt) if schedule else None
    ref_sched = schedule(ref_opt) if schedule else None
    cf = bcfront.capture(step)
    for i in range(steps):
        x, y = (data or batch)(i)
        got, want = cf(model, opt, x, y), step(ref, ref_opt, x, y)
        assert torch.equal(got, want), f"step {i}: loss"
        assert_same_training_state(model, opt, ref, ref_opt, f"step {i}")
        if sched:
            sched.step()
            ref_sched.step()
    return cf.report()


def assert_one_graph_no_break(report):
    assert report.graph_breaks == (), [(b.reason, b.message) for b in report.graph_breaks]
    assert len(report.graphs) == 1
    assert report.recompiles == ()


@pytest.mark.parametrize("foreach", [False, True], ids=["single_tensor", "foreach"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_step_matches_eager(name, foreach):
    report = run(train_step, lambda ps: OPTIMIZERS[name](ps, foreach))
    assert_one_graph_no_break(report)


def test_lr_schedule_does_not_recompile():
    def schedule(opt):
        return torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + s))

    report = run(train_step, lambda ps: torch.optim.AdamW(ps, lr=0.01), steps=5, schedule=schedule)
    assert_one_graph_no_break(report)


def accumulate_step(model, opt, x, y):
    """One optimizer step over three micro-batches (shared with the joint-graph tests)."""
    opt.zero_grad()
    total = 0.0
    for xs, ys in zip(x.chunk(3), y.chunk(3)):
        loss = torch.nn.functional.cross_entropy(model(xs), ys) / 3
        loss.backward()
        total = total + loss.detach()
    opt.step()
    return total


def test_gradient_accumulation_over_micro_batches():
    step = accumulate_step
    report = run(step, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), data=lambda i: batch(i, n=9))
    assert_one_graph_no_break(report)


class TinyGPT(torch.nn.Module):
    def __init__(self, vocab=32, d=16, heads=2, n_ctx=8):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Parameter(torch.randn(n_ctx, d) * 0.02)
        self.block = torch.nn.TransformerEncoderLayer(d, heads, 32, dropout=0.0, batch_first=True)
        self.ln = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(n_ctx))

    def forward(self, idx):
        h = self.tok(idx) + self.pos[: idx.shape[1]]
        h = self.block(h, src_mask=self.mask, is_causal=True)
        return self.head(self.ln(h))


def test_gpt_adamw_cosine_schedule_and_clipping():
    def make():
        torch.manual_seed(0)
        return TinyGPT()

    def step(model, opt, x, y):
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss

    def schedule(opt):
        return torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / 6)))

    def tokens(seed, n=2):
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(0, 32, (n, 8), generator=g)
        return x, torch.roll(x, -1, 1)

    def adamw(ps):
        return torch.optim.AdamW(ps, lr=3e-3, weight_decay=0.1)

    report = run(step, adamw, steps=4, schedule=schedule, make=make, data=tokens)
    assert report.graph_breaks == (), [(b.reason, b.message) for b in report.graph_breaks]
    assert report.recompiles == ()


def test_step_hook_breaks_and_runs_like_eager(lenient):
    calls = []
    model = make_net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.register_step_post_hook(lambda *a: calls.append(1))
    x, y = batch(0)
    report = bcfront.explain(train_step, model, opt, x, y)
    assert calls == [1]
    assert any("hook" in b.message for b in report.graph_breaks)


def test_other_backends_run_the_step_on_eager():
    model = make_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    cf = bcfront.capture(train_step, backend="fx")
    x, y = batch(0)
    assert torch.equal(cf(model, opt, x, y), train_step(ref, ref_opt, x, y))
    assert_same_training_state(model, opt, ref, ref_opt, "fx")
    assert [g.backend for g in cf.report().graphs] == ["eager"]


@pytest.mark.parametrize("with_scheduler", [False, True], ids=["plain", "scheduler_wrapped"])
def test_capture_opt_step_as_the_root(with_scheduler):
    model = make_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = torch.optim.Adam(model.parameters(), lr=0.05), torch.optim.Adam(ref.parameters(), lr=0.05)
    if with_scheduler:
        torch.optim.lr_scheduler.StepLR(opt, 2)
        torch.optim.lr_scheduler.StepLR(ref_opt, 2)
    cf = bcfront.capture(opt.step)
    for i in range(3):
        x, y = batch(i)
        for m in (model, ref):
            m.zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
        cf()
        ref_opt.step()
        assert_same_training_state(model, opt, ref, ref_opt, f"step {i}")
    assert_one_graph_no_break(cf.report())


def test_torch_helper_writing_a_dict_argument_is_traced():
    # _update_param_group_val writes pg["lr"]: run as one op on a fake copy, the write was lost
    from torch.optim.lr_scheduler import _update_param_group_val

    def set_lr(pg, v):
        _update_param_group_val(pg, "lr", v)

    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    bcfront.capture(set_lr)(opt.param_groups[0], 0.05)
    assert opt.param_groups[0]["lr"] == 0.05


def step_then_schedule(model, opt, sched, x, y):
    loss = train_step(model, opt, x, y)
    sched.step()
    return loss


def test_scheduler_step_inside_the_captured_function():
    step = step_then_schedule
    model = make_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 10)
    ref_sched = torch.optim.lr_scheduler.CosineAnnealingLR(ref_opt, 10)
    cf = bcfront.capture(step)
    for i in range(3):
        x, y = batch(i)
        assert torch.equal(cf(model, opt, sched, x, y), step(ref, ref_opt, ref_sched, x, y)), f"step {i}"
        assert opt.param_groups[0]["lr"] == ref_opt.param_groups[0]["lr"], f"step {i}: lr"
        assert_same_training_state(model, opt, ref, ref_opt, f"step {i}")


def test_scheduler_step_after_the_optimizer_step_sees_it_ran():
    """The scheduler's first ``step()`` warns unless ``opt._opt_called`` says the optimizer
    stepped; the optimizer's step node sets it for real, and the trace must read it so too:
    no warning (eager gives none), the same schedule state as eager.  Its counters change
    every step (symbols, not one entry per step), so its writes are not constants the graph
    could make among its statements: the graph ends at the first of them, after the
    backward and the optimizer's step -- every tensor op stays in the graph."""
    step = step_then_schedule
    model = make_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = torch.optim.AdamW(model.parameters()), torch.optim.AdamW(ref.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + s))
    ref_sched = torch.optim.lr_scheduler.LambdaLR(ref_opt, lambda s: 1.0 / (1 + s))
    cf = bcfront.capture(step)
    for i in range(12):
        x, y = batch(i)
        with warnings.catch_warnings(record=True) as want_warned:
            warnings.simplefilter("always")
            want = step(ref, ref_opt, ref_sched, x, y)
        with warnings.catch_warnings(record=True) as got_warned:
            warnings.simplefilter("always")
            got = cf(model, opt, sched, x, y)
        assert torch.equal(got, want), f"step {i}"
        assert [str(w.message) for w in got_warned] == [str(w.message) for w in want_warned], f"step {i}"
        assert (sched._step_count, sched.last_epoch, sched._last_lr) == (
            ref_sched._step_count,
            ref_sched.last_epoch,
            ref_sched._last_lr,
        ), f"step {i}"
        assert getattr(opt, "_opt_called", None) == getattr(ref_opt, "_opt_called", None)
        assert_same_training_state(model, opt, ref, ref_opt, f"step {i}")
    report = cf.report()
    assert [b.reason.value for b in report.graph_breaks] in ([], ["write-before-error"])
    assert report.ops_native == 0 and report.native_fallbacks == ()
    assert len(cf.entries) <= 3  # not one per step
