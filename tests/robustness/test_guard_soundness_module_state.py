"""Guard soundness, nn.Module state and hooks: hooks added, removed or toggled, train/eval, buffers and
parameters replaced or changed in place, submodules swapped, class constants.

Protocol: `state_sequences` (split by theme from issue 25's extra cases)."""

from __future__ import annotations

import pytest

from .helpers import HAS_TORCH
from .state_sequences import Case, ab, sequence_tests

pytestmark = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")

if HAS_TORCH:
    import torch
    from torch import nn


# -- nn.Module state and hooks ------------------------------------------------------------------


def _hook_toggle(register):
    """setup(v): the hook registered by `register()` is on iff v."""
    handle = {"h": None}

    def setup(v):
        if v and handle["h"] is None:
            handle["h"] = register()
        elif not v and handle["h"] is not None:
            handle["h"].remove()
            handle["h"] = None

    return setup, lambda: setup(False)


def _lin():
    torch.manual_seed(0)
    return nn.Linear(3, 2)


def _module_hook(kind, first):
    m = _lin()
    register = {
        "forward": lambda: m.register_forward_hook(lambda mod, inp, out: out * 3 + 1),
        "pre": lambda: m.register_forward_pre_hook(lambda mod, inp: (inp[0] * -2,)),
        "pre_none": lambda: m.register_forward_pre_hook(lambda mod, inp: (inp[0].mul_(2), None)[1]),
        "kwargs_pre": lambda: m.register_forward_pre_hook(
            lambda mod, args, kwargs: ((args[0] + 5,), kwargs), with_kwargs=True
        ),
        "always": lambda: m.register_forward_hook(lambda mod, inp, out: out - 1, always_call=True),
    }[kind]
    setup, restore = _hook_toggle(register)
    return Case(m, lambda v: (torch.ones(1, 3),), ab(first, not first), setup, restore=restore)


def _child_hook(kind):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
    child = m[1]
    register = {
        "forward": lambda: child.register_forward_hook(lambda mod, inp, out: out + 10),
        "pre": lambda: child.register_forward_pre_hook(lambda mod, inp: (inp[0].abs(),)),
    }[kind]
    setup, restore = _hook_toggle(register)
    return Case(m, lambda v: (torch.linspace(-3, 3, 6).view(2, 3),), ab(False, True), setup, restore=restore)


def _global_pre_hook():
    from torch.nn.modules import module as mm

    m = _lin()
    setup, restore = _hook_toggle(
        lambda: mm.register_module_forward_pre_hook(lambda mod, inp: (inp[0] + 100,))
    )
    return Case(m, lambda v: (torch.ones(1, 3),), ab(False, True), setup, restore=restore)


def _hook_log():
    """A hook with a side effect (a log) appears: the log must grow once per call."""
    m = _lin()
    log = []

    def hook(mod, inp, out):
        log.append(tuple(out.shape))

    setup, restore = _hook_toggle(lambda: m.register_forward_hook(hook))

    def observe():
        n = len(log)
        log.clear()
        return n

    return Case(m, lambda v: (torch.ones(1, 3),), ab(False, True), setup, observe=observe, restore=restore)


def _hook_raises():
    m = _lin()

    def hook(mod, inp, out):
        raise ValueError("hook says no")

    setup, restore = _hook_toggle(lambda: m.register_forward_hook(hook))
    return Case(m, lambda v: (torch.ones(1, 3),), ab(False, True), setup, restore=restore)


class _Branchy(nn.Module if HAS_TORCH else object):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.drop = nn.Dropout(1.0)  # training: all zeros; eval: identity (deterministic)
        self.register_buffer("offset", torch.full((3,), 0.5))
        self.scale = 2.0

    def forward(self, x):
        y = self.drop(self.lin(x)) + self.offset
        return y * self.scale if self.training else y - self.scale


def _branchy():
    torch.manual_seed(0)
    return _Branchy()


def _module_setup(set_state, first, then, make=None):
    m = _branchy()
    return Case(
        m,
        make or (lambda v: (torch.ones(2, 3),)),
        ab(first, then),
        lambda v: set_state(m, v),
    )


def _bn_train_eval():
    bn = nn.BatchNorm1d(3, momentum=0.0)  # momentum 0: running stats stay put in training
    bn.running_mean.fill_(2.0)
    bn.running_var.fill_(4.0)
    return Case(bn, lambda v: (torch.arange(6.0).view(2, 3),), ab(True, False), lambda v: bn.train(v))


def _replace_buffer(kind):
    values = {
        "other_values": (torch.zeros(3), torch.full((3,), 4.0)),
        "other_shape": (torch.zeros(3), torch.full((2, 1), 3.0)),
        "other_dtype": (torch.zeros(3), torch.zeros(3, dtype=torch.float64)),
        "none": (torch.zeros(3), None),
    }[kind]

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", values[0].clone())

        def forward(self, x):
            return x * 2 if self.b is None else x + self.b

    m = M()

    def setup(v):
        new = values[v]
        m.b = None if new is None else new.clone()

    return Case(m, lambda v: (torch.ones(3),), ab(0, 1), setup)


def _submodule_swap(kind):
    torch.manual_seed(0)
    alts = {
        "activation": (nn.ReLU(), nn.Sigmoid()),
        "identity": (nn.Linear(3, 3), nn.Identity()),
        "out_features": (nn.Linear(3, 3), nn.Linear(3, 5)),
        "module_to_function": (nn.Tanh(), torch.neg),  # a plain callable attribute
    }[kind]

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = alts[0]

        def forward(self, x):
            return self.act(x) * 2

    m = M()

    def setup(v):
        if "act" in m._modules:
            del m._modules["act"]
        m.__dict__.pop("act", None)
        m.act = alts[v]

    return Case(m, lambda v: (torch.linspace(-2, 2, 6).view(2, 3),), ab(0, 1), setup)


def _sequential_index():
    seq = nn.Sequential(nn.ReLU(), nn.ReLU())
    alts = (nn.ReLU(), nn.Tanh())
    return Case(seq, lambda v: (torch.linspace(-2, 2, 5),), ab(0, 1), lambda v: seq.__setitem__(1, alts[v]))


def _module_dict_key():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"a": nn.ReLU()})

        def forward(self, x):
            return [name for name in self.heads], sum(h(x) for h in self.heads.values())

    m = M()

    def setup(v):
        if v and "b" not in m.heads:
            m.heads["b"] = nn.Tanh()
        elif not v and "b" in m.heads:
            del m.heads["b"]

    return Case(m, lambda v: (torch.linspace(-1, 1, 4),), ab(False, True), setup)


def _parameter(kind):
    m = _lin()
    w0 = m.weight.detach().clone()

    def setup(v):
        with torch.no_grad():
            if kind == "requires_grad":
                m.weight.requires_grad_(v)
                m.bias.requires_grad_(v)
            elif kind == "shape":
                m.weight = nn.Parameter(w0.clone() if v else torch.ones(4, 3))
                m.bias = nn.Parameter(torch.zeros(2) if v else torch.zeros(4))
            elif kind == "bias_none":
                m.bias = nn.Parameter(torch.ones(2)) if v else None
            elif kind == "data_assigned":
                m.weight.data = w0.clone() if v else w0 * -5
            elif kind == "dtype":
                m.to(torch.float32 if v else torch.float64)

    make = (
        (lambda v: (torch.ones(1, 3, dtype=torch.float32 if v else torch.float64),))
        if kind == "dtype"
        else None
    )
    return Case(m, make or (lambda v: (torch.ones(1, 3),)), ab(True, False), setup)


def _class_constant():
    class M(nn.Module):
        K = 2

        def forward(self, x):
            return x * self.K

    m = M()
    return Case(m, lambda v: (torch.ones(2),), ab(2, 7), lambda v: setattr(M, "K", v))


def _whole_module_requires_grad():
    m = _lin()
    return Case(
        lambda x: m(x).requires_grad, lambda v: (torch.ones(1, 3),), ab(True, False), m.requires_grad_
    )


def _hook_on_called_module():
    """The module is not the root: a captured function calls it; a hook appears on it."""
    m = _lin()
    setup, restore = _hook_toggle(lambda: m.register_forward_hook(lambda mod, inp, out: out.neg()))
    return Case(lambda x: m(x) + 1, lambda v: (torch.ones(1, 3),), ab(False, True), setup, restore=restore)


MODULE_CASES = {
    "hook_on_module_called_by_function": _hook_on_called_module,
    "hook_forward_added": lambda: _module_hook("forward", False),
    "hook_forward_removed": lambda: _module_hook("forward", True),
    "hook_pre_added": lambda: _module_hook("pre", False),
    "hook_pre_removed": lambda: _module_hook("pre", True),
    "hook_pre_in_place_returns_none": lambda: _module_hook("pre_none", False),
    "hook_pre_with_kwargs_added": lambda: _module_hook("kwargs_pre", False),
    "hook_always_call_added": lambda: _module_hook("always", False),
    "hook_child_forward_added": lambda: _child_hook("forward"),
    "hook_child_pre_added": lambda: _child_hook("pre"),
    "hook_global_pre_added": _global_pre_hook,
    "hook_with_side_effect_added": _hook_log,
    "hook_that_raises_added": _hook_raises,
    "training_flip": lambda: _module_setup(lambda m, v: m.train(v), True, False),
    "eval_to_train": lambda: _module_setup(lambda m, v: m.train(v), False, True),
    "child_only_eval": lambda: _module_setup(lambda m, v: m.drop.train(v), True, False),
    "batchnorm_train_eval": _bn_train_eval,
    "buffer_in_place": lambda: _module_setup(lambda m, v: m.offset.fill_(v), 0.5, -3.0),
    "plain_float_attribute": lambda: _module_setup(lambda m, v: setattr(m, "scale", v), 2.0, -1.5),
    "buffer_other_values": lambda: _replace_buffer("other_values"),
    "buffer_other_shape": lambda: _replace_buffer("other_shape"),
    "buffer_other_dtype": lambda: _replace_buffer("other_dtype"),
    "buffer_to_none": lambda: _replace_buffer("none"),
    "submodule_activation_swapped": lambda: _submodule_swap("activation"),
    "submodule_to_identity": lambda: _submodule_swap("identity"),
    "submodule_out_features": lambda: _submodule_swap("out_features"),
    "submodule_to_plain_function": lambda: _submodule_swap("module_to_function"),
    "sequential_item_replaced": _sequential_index,
    "module_dict_key_added": _module_dict_key,
    "parameter_requires_grad_flipped": lambda: _parameter("requires_grad"),
    "parameter_replaced_other_shape": lambda: _parameter("shape"),
    "parameter_bias_to_none": lambda: _parameter("bias_none"),
    "parameter_data_assigned": lambda: _parameter("data_assigned"),
    "module_converted_to_float64": lambda: _parameter("dtype"),
    "module_class_constant": _class_constant,
    "module_requires_grad_off": _whole_module_requires_grad,
}


CASES = {f"module_{k}": v for k, v in MODULE_CASES.items()}
test_extra_case_is_never_stale, test_extra_case_depends_on_its_state = sequence_tests(CASES)
