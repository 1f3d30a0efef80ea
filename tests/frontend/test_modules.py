"""nn.Module capture: __call__ semantics (hooks), parameters as inputs, train/eval, mutation."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import bcfront  # noqa: E402

from .corpus_torch import MLP, ConvBN  # noqa: E402


def _pair(model):
    ref = copy.deepcopy(model)
    return bcfront.capture(model, backend="eager"), model, ref


def test_forward_hooks_run_like_eager():
    calls = []
    torch.manual_seed(0)
    m = MLP()
    m.fc1.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    m.fc2.register_forward_hook(lambda mod, args, out: out + 1)
    m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or None)
    cf = bcfront.capture(m)
    x = torch.randn(3, 16)
    ref = copy.deepcopy(m)  # hooks are copied with the module
    expected = ref(x)
    got = cf(x)
    torch.testing.assert_close(got, expected)
    assert len(calls) == 2  # the copy's hook and the capture's both logged
    entry = cf.entries[0]
    assert not entry.native and not entry.breaks


def test_adding_a_hook_recompiles():
    torch.manual_seed(0)
    m = MLP()
    cf = bcfront.capture(m)
    x = torch.randn(2, 16)
    torch.testing.assert_close(cf(x), m(x))
    h = m.fc2.register_forward_hook(lambda mod, args, out: out * 0)
    assert torch.count_nonzero(cf(x)) == 0
    h.remove()
    torch.testing.assert_close(cf(x), m(x))
    assert len(cf.entries) == 2


def test_train_eval_toggle_recompiles():
    torch.manual_seed(0)
    cf, m, ref = _pair(ConvBN().train())
    x = torch.randn(2, 3, 6, 6)
    torch.testing.assert_close(cf(x), ref(x))
    m.eval()
    ref.eval()
    torch.testing.assert_close(cf(x), ref(x))
    torch.testing.assert_close(m.bn.running_mean, ref.bn.running_mean)
    assert len(cf.entries) == 2
    assert any("training" in r.source for r in cf.recompiles)


def test_replaced_parameter_and_submodule():
    torch.manual_seed(0)
    m = MLP()
    cf = bcfront.capture(m)
    x = torch.randn(2, 16)
    cf(x)
    with torch.no_grad():
        m.fc1.weight.mul_(2)  # in place: same entry, new values
    torch.testing.assert_close(cf(x), m(x))
    assert len(cf.entries) == 1
    m.fc2 = nn.Linear(32, 16)  # a new submodule: recompiles
    torch.testing.assert_close(cf(x), m(x))
    assert len(cf.entries) == 2


def test_default_dtype_is_guarded():
    def f(n):
        return torch.zeros(n) + 1

    cf = bcfront.capture(f)
    assert cf(2).dtype == torch.float32
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert cf(2).dtype == torch.float64
    finally:
        torch.set_default_dtype(old)
    assert len(cf.entries) == 2


def test_module_attribute_written_in_forward_is_replayed():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            self.steps += 1
            self.last = x.sum()
            return self.lin(x)

    m = Counter()
    cf = bcfront.capture(m)
    x = torch.randn(2, 4)
    for _ in range(3):
        torch.testing.assert_close(cf(x), m.lin(x))
    assert m.steps == 3
    torch.testing.assert_close(m.last, x.sum())
    assert {s.target for s in cf.report().side_effects} >= {"L['self'].steps", "L['self'].last"}


def test_instance_level_forward_override_is_respected():
    torch.manual_seed(0)
    m = MLP()
    cf = bcfront.capture(m)
    x = torch.randn(2, 16)
    torch.testing.assert_close(cf(x), m(x))
    m.forward = lambda inp: inp * 3
    torch.testing.assert_close(cf(x), x * 3)


# -- hook dicts replaced wholesale after capture (not through register_*_hook) ----------------------


class _Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)

    def forward(self, x):
        return self.inner(x) * 2


def _hook_for(attr, log):
    """A hook of the kind `attr` holds that logs its call and (forward kinds) changes the value."""
    if attr == "_forward_hooks":
        return lambda mod, args, out: log.append(attr) or out * 3
    if attr == "_forward_pre_hooks":
        return lambda mod, args: log.append(attr) or (args[0] + 1,)
    return lambda mod, grad_in, grad_out: log.append(attr) or None  # a backward hook


_HOOK_ATTRS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks")


@pytest.mark.parametrize("where", ["root", "submodule"])
@pytest.mark.parametrize("attr", _HOOK_ATTRS)
def test_replaced_hook_dict_is_never_stale(where, attr):
    """After capture the hook dict is replaced (``m._forward_hooks = OrderedDict(...)``), emptied
    by replacement, refilled in place: every call runs exactly the hooks eager runs."""
    import collections

    torch.manual_seed(0)
    m = _Two()
    owner = m if where == "root" else m.inner
    cf = bcfront.capture(m)
    log: list = []

    def replace(entries):
        setattr(owner, attr, collections.OrderedDict(entries))

    changes = [
        lambda: None,
        lambda: replace({0: _hook_for(attr, log)}),
        lambda: replace({0: lambda *a: log.append("other") or None}),
        lambda: replace({}),
        lambda: getattr(owner, attr).__setitem__(5, _hook_for(attr, log)),  # in place, new dict
        lambda: replace({}),
    ]
    for i, change in enumerate(changes):
        change()
        x = torch.randn(2, 3, requires_grad=True)
        x_ref = x.detach().clone().requires_grad_()
        del log[:]
        got = cf(x)
        got.sum().backward()
        ran_captured = list(log)
        del log[:]
        expected = m(x_ref)
        expected.sum().backward()
        torch.testing.assert_close(got, expected, msg=lambda s: f"step {i}: {s}")  # noqa: B023 - assert_close calls msg at once
        torch.testing.assert_close(x.grad, x_ref.grad)
        assert ran_captured == log, f"step {i}: hooks {ran_captured} vs eager {log}"


def test_replacing_an_empty_hook_dict_keeps_the_entry():
    """A replaced but still empty dict is re-read each call and costs no recompile."""
    import collections

    m = _Two()
    cf = bcfront.capture(m)
    x = torch.randn(2, 3)
    cf(x)
    m.inner._forward_hooks = collections.OrderedDict()
    m._forward_pre_hooks = collections.OrderedDict()
    torch.testing.assert_close(cf(x), m(x))
    assert len(cf.entries) == 1
