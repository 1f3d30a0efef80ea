"""``opt.step()`` compiled with Inductor under ``joint_graph=True`` (`backends/optim_step.py`).

Oracle: the same training steps run eagerly on a deep copy with torch's own optimizer:
losses, parameters and optimizer state after each step, to float32 rounding (the compiled
update is the same arithmetic, spelled with the step count as a tensor).  The fast tests
hand the update's aten graph to a stand-in spelled as Inductor's entry point that runs it
as it is; one slow test runs Inductor itself.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.backends.optim_step import CompiledStep  # noqa: E402


def compile_fx(gm, example_inputs):  # spelled as Inductor's entry point; runs gm as it is
    return gm


compile_fx.__module__ = "torch._inductor.compile_fx"


def make_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def batch(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(5, 6, generator=g), torch.randint(0, 3, (5,), generator=g)


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


OPTIMIZERS = {
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
    "adam_wd": lambda ps: torch.optim.Adam(ps, lr=1e-2, betas=(0.8, 0.95), weight_decay=0.05),
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-3),
    "sgd_nesterov": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adamw_two_groups": lambda ps: _two_groups(list(ps)),
}


def _two_groups(ps):
    return torch.optim.AdamW(
        [{"params": ps[:2]}, {"params": ps[2:], "lr": 3e-3, "weight_decay": 0.0}], lr=1e-2
    )


def _steps(make_opt, steps=5, backend=compile_fx, schedule=None):
    model = make_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = make_opt(model.parameters()), make_opt(ref.parameters())
    if schedule is not None:
        sched, ref_sched = schedule(opt), schedule(ref_opt)
    cf = bcfront.capture(train_step, backend=backend, joint_graph=True)
    for i in range(steps):
        x, y = batch(i)
        got, want = cf(model, opt, x, y), train_step(ref, ref_opt, x, y)
        torch.testing.assert_close(got, want, msg=f"step {i}: loss")
        for p, q in zip(model.parameters(), ref.parameters()):
            torch.testing.assert_close(p, q, msg=f"step {i}: parameter")
        for p, q in zip(model.parameters(), ref.parameters()):
            for k, v in ref_opt.state.get(q, {}).items():
                torch.testing.assert_close(opt.state[p][k], v, msg=f"step {i}: state {k}")
        if schedule is not None:
            sched.step()
            ref_sched.step()
    return cf


def _from_region(cf) -> list:
    fn = cf.entries[-1].region
    while not hasattr(fn, "__globals__"):
        fn = fn.__wrapped__
    return [v for v in fn.__globals__.values() if isinstance(v, CompiledStep)]


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_compiled_update_matches_torchs_step(name):
    cf = _steps(OPTIMIZERS[name])
    (step,) = _from_region(cf)
    assert step.compiled_calls == 4  # every step but the first (which makes the state)
    report = cf.report()
    assert report.graph_breaks == () and report.recompiles == ()


def test_lr_schedule_changes_no_compiled_update():
    cf = _steps(
        OPTIMIZERS["adamw"], steps=6, schedule=lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 6)
    )
    (step,) = _from_region(cf)
    assert step.compiled_calls == 5 and len(step.cache) == 1
    assert cf.report().recompiles == ()


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: torch.optim.Adam(ps, lr=1e-2, amsgrad=True),
        lambda ps: torch.optim.AdamW(ps, lr=1e-2, maximize=True),
        lambda ps: torch.optim.SGD(ps, lr=0.1),  # no momentum: no state to update
        lambda ps: torch.optim.RMSprop(ps, lr=1e-2),
    ],
    ids=["amsgrad", "maximize", "sgd_plain", "rmsprop"],
)
def test_other_configurations_run_torchs_step(make_opt):
    """Bit for bit eager's: torch's own step runs."""
    model, ref = make_net(), make_net()
    opt, ref_opt = make_opt(model.parameters()), make_opt(ref.parameters())
    cf = bcfront.capture(train_step, backend=compile_fx, joint_graph=True)
    for i in range(3):
        x, y = batch(i)
        assert torch.equal(cf(model, opt, x, y), train_step(ref, ref_opt, x, y))
        for p, q in zip(model.parameters(), ref.parameters()):
            assert torch.equal(p, q)
    assert all(s.compiled_calls == 0 for s in _from_region(cf))


def test_a_missing_grad_runs_torchs_step():
    def step(model, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model[2](torch.tanh(x[:, :8])), y)  # model[0] unused
        loss.backward()
        opt.step()
        return loss

    model, ref = make_net(), make_net()
    opt, ref_opt = OPTIMIZERS["adamw"](model.parameters()), OPTIMIZERS["adamw"](ref.parameters())
    cf = bcfront.capture(step, backend=compile_fx, joint_graph=True)
    for i in range(3):
        x, y = batch(i)
        x = torch.cat([x, x], 1)
        assert torch.equal(cf(model, opt, x, y), step(ref, ref_opt, x, y))
        for p, q in zip(model.parameters(), ref.parameters()):
            assert torch.equal(p, q)
    assert all(s.compiled_calls == 0 for s in _from_region(cf))


@pytest.mark.slow  # Inductor compiles the step: 10-60 s on a 2-core machine
def test_inductor_compiles_the_adamw_update():
    inductor = pytest.importorskip("torch._inductor.compile_fx").compile_fx
    try:
        cf = _steps(OPTIMIZERS["adamw"], steps=4, backend=inductor)
    except Exception as e:  # noqa: BLE001 - no C++ compiler or similar environment problem
        pytest.skip(f"inductor unavailable here: {type(e).__name__}: {e}")
    (step,) = _from_region(cf)
    assert step.compiled_calls == 3
