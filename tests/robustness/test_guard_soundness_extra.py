"""Guard soundness, the thinner categories: module state and hooks, torch global state, identity
relations between tensor arguments, sizes that keep changing after they became symbolic,
closures/defaults/globals, and exceptions that first appear on a later call.

Each case is a function, a sequence of states `seq`, and per state `v`: `setup(v)` (idempotent:
puts the shared state, a module or a torch flag, in state v), `make(v)` (fresh arguments, built
identically for each side), `ctx(v)` (a context the call runs in) and `observe()` (a global side
effect read after the call, e.g. the RNG stream or a hook's log).  For each state the plain
function runs, then the captured one, on identically rebuilt state; their results or exceptions,
their arguments afterwards (input mutation, aliasing) and what `observe` reads must agree.  The
sequence goes back and forth (capture, cached call, change, change back), and dynamic-size cases
walk through three or more sizes so that a dimension is symbolic before it hits 0, 1, a parity
or a sign change.  `test_extra_case_depends_on_its_state` checks that the plain function's
outcome really changes along the sequence.
"""

from __future__ import annotations

import contextlib
import math
import types
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import pytest

import bcfront
from bcfront.testing.differential import diff

from .helpers import HAS_TORCH, make_namespace, outcome

pytestmark = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")

if HAS_TORCH:
    import torch
    from torch import nn


def _noop(*_a):
    return None


def _no_ctx(_v):
    return contextlib.nullcontext()


@dataclass(frozen=True)
class Case:
    fn: Callable
    make: Callable[[Any], tuple]
    seq: tuple
    setup: Callable[[Any], None] = _noop
    ctx: Callable[[Any], Any] = _no_ctx
    observe: Callable[[], Any] = _noop
    restore: Callable[[], None] = _noop


def _ab(a, b):
    """Capture on a, cached call, change to b, cached call, back to a."""
    return (a, a, b, b, a)


def _one(fn, case: Case, v):
    case.setup(v)
    args = case.make(v)
    with case.ctx(v):
        out = outcome(fn, *args)
    return out, args, case.observe()


def _run(name: str) -> None:
    case = CASES[name]()
    cf = bcfront.capture(case.fn)
    try:
        for i, v in enumerate(case.seq):
            expected = _one(case.fn, case, v)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                actual = _one(cf, case, v)
            internal = [str(w.message) for w in caught if "internal error" in str(w.message)]
            assert not internal, f"{name}, call {i} ({v!r}): internal error: {internal[0]}"
            problem = diff(expected, actual)
            assert problem is None, f"{name}, call {i} ({v!r}): captured differs from plain {problem}"
    finally:
        case.restore()


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
    return Case(m, lambda v: (torch.ones(1, 3),), _ab(first, not first), setup, restore=restore)


def _child_hook(kind):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
    child = m[1]
    register = {
        "forward": lambda: child.register_forward_hook(lambda mod, inp, out: out + 10),
        "pre": lambda: child.register_forward_pre_hook(lambda mod, inp: (inp[0].abs(),)),
    }[kind]
    setup, restore = _hook_toggle(register)
    return Case(m, lambda v: (torch.linspace(-3, 3, 6).view(2, 3),), _ab(False, True), setup, restore=restore)


def _global_pre_hook():
    from torch.nn.modules import module as mm

    m = _lin()
    setup, restore = _hook_toggle(
        lambda: mm.register_module_forward_pre_hook(lambda mod, inp: (inp[0] + 100,))
    )
    return Case(m, lambda v: (torch.ones(1, 3),), _ab(False, True), setup, restore=restore)


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

    return Case(m, lambda v: (torch.ones(1, 3),), _ab(False, True), setup, observe=observe, restore=restore)


def _hook_raises():
    m = _lin()

    def hook(mod, inp, out):
        raise ValueError("hook says no")

    setup, restore = _hook_toggle(lambda: m.register_forward_hook(hook))
    return Case(m, lambda v: (torch.ones(1, 3),), _ab(False, True), setup, restore=restore)


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
        _ab(first, then),
        lambda v: set_state(m, v),
    )


def _bn_train_eval():
    bn = nn.BatchNorm1d(3, momentum=0.0)  # momentum 0: running stats stay put in training
    bn.running_mean.fill_(2.0)
    bn.running_var.fill_(4.0)
    return Case(bn, lambda v: (torch.arange(6.0).view(2, 3),), _ab(True, False), lambda v: bn.train(v))


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

    return Case(m, lambda v: (torch.ones(3),), _ab(0, 1), setup)


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

    return Case(m, lambda v: (torch.linspace(-2, 2, 6).view(2, 3),), _ab(0, 1), setup)


def _sequential_index():
    seq = nn.Sequential(nn.ReLU(), nn.ReLU())
    alts = (nn.ReLU(), nn.Tanh())
    return Case(seq, lambda v: (torch.linspace(-2, 2, 5),), _ab(0, 1), lambda v: seq.__setitem__(1, alts[v]))


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

    return Case(m, lambda v: (torch.linspace(-1, 1, 4),), _ab(False, True), setup)


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
    return Case(m, make or (lambda v: (torch.ones(1, 3),)), _ab(True, False), setup)


def _class_constant():
    class M(nn.Module):
        K = 2

        def forward(self, x):
            return x * self.K

    m = M()
    return Case(m, lambda v: (torch.ones(2),), _ab(2, 7), lambda v: setattr(M, "K", v))


def _whole_module_requires_grad():
    m = _lin()
    return Case(
        lambda x: m(x).requires_grad, lambda v: (torch.ones(1, 3),), _ab(True, False), m.requires_grad_
    )


def _hook_on_called_module():
    """The module is not the root: a captured function calls it; a hook appears on it."""
    m = _lin()
    setup, restore = _hook_toggle(lambda: m.register_forward_hook(lambda mod, inp, out: out.neg()))
    return Case(lambda x: m(x) + 1, lambda v: (torch.ones(1, 3),), _ab(False, True), setup, restore=restore)


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


# -- torch global state -------------------------------------------------------------------------


def _saved(get, set_):
    before = get()
    return lambda: set_(before)


def _mm(x):
    return x @ x.t(), (x @ x.t()).dtype


def _autocast_arg(x, enabled):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled):
        y = x @ x.t()
    return y.dtype, y.float()


def _autocast_dtype_arg(x, dt):
    with torch.autocast("cpu", dtype=dt):
        return (x @ x.t()).dtype


def _inference_read(x):
    y = x * 2
    return y.is_inference(), torch.is_inference_mode_enabled(), y.requires_grad


def _inference_arg(x, on):
    with torch.inference_mode(on):
        y = x + 1
    return y.is_inference()


def _grad_branch(x):
    if torch.is_grad_enabled():
        return x * 2
    return x - 2


def _grad_arg(x, on):
    with torch.set_grad_enabled(on):
        y = x * 3
    return y.requires_grad, y.detach()


def _anomaly(x):
    return x + (10 if torch.is_anomaly_enabled() else 0)


def _matmul_precision(x):
    return x * (1 if torch.get_float32_matmul_precision() == "highest" else 2)


def _warn_only(x):
    return x + int(torch.is_deterministic_algorithms_warn_only_enabled())


def _rand(x):
    return torch.rand(3) + x


def _randn_like(x):
    return torch.randn_like(x) * 2


def _rand_twice(x):
    return torch.rand(3) + torch.rand(3) + x


def _seed_arg(x, s):
    torch.manual_seed(s)
    return torch.rand(2) + x


def _generator_arg(x, s):
    g = torch.Generator().manual_seed(s)
    return torch.rand(2, generator=g) + x


def _dropout_fn(x):
    return torch.nn.functional.dropout(x, 0.5, training=True)


def _seeded(fn, seeds=(0, 1)):
    return Case(fn, lambda v: (torch.ones(3),), _ab(*seeds), torch.manual_seed, observe=lambda: torch.rand(1))


def _default_dtype(fn, make=lambda v: (torch.ones(2),)):
    return Case(
        fn,
        make,
        _ab(torch.float32, torch.float64),
        torch.set_default_dtype,
        restore=_saved(torch.get_default_dtype, torch.set_default_dtype),
    )


def _flag(get, set_, fn, a, b):
    return Case(fn, lambda v: (torch.ones(3),), _ab(a, b), set_, restore=_saved(get, set_))


def _grad_ctx(fn):
    w = torch.ones(3, requires_grad=True)
    return Case(lambda x: fn(x * w), lambda v: (torch.ones(3),), _ab(True, False), ctx=torch.set_grad_enabled)


def _make_inference():
    with torch.inference_mode():
        return torch.ones(3)


@contextlib.contextmanager
def _both(on):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=on), torch.set_grad_enabled(not on):
        yield


TORCH_STATE_CASES = {
    "inference_tensor_argument": lambda: Case(
        _inference_tensor_arg,
        lambda v: (torch.ones(3) if not v else _make_inference(),),
        _ab(False, True),
    ),
    "autocast_and_no_grad_together": lambda: Case(
        _mm,
        lambda v: (torch.ones(2, 3, requires_grad=True),),
        _ab(False, True),
        ctx=lambda v: _both(v),
    ),
    "autocast_context_around_call": lambda: Case(
        _mm,
        lambda v: (torch.ones(2, 3),),
        _ab(False, True),
        ctx=lambda v: torch.autocast("cpu", dtype=torch.bfloat16, enabled=v),
    ),
    "autocast_enabled_argument": lambda: Case(
        _autocast_arg, lambda v: (torch.ones(2, 3), v), _ab(True, False)
    ),
    "autocast_dtype_argument": lambda: Case(
        _autocast_dtype_arg, lambda v: (torch.ones(2, 3), v), _ab(torch.bfloat16, torch.float16)
    ),
    "inference_mode_around_call": lambda: Case(
        _inference_read, lambda v: (torch.ones(3),), _ab(False, True), ctx=torch.inference_mode
    ),
    "inference_mode_argument": lambda: Case(_inference_arg, lambda v: (torch.ones(3), v), _ab(False, True)),
    "grad_enabled_branch": lambda: _grad_ctx(_grad_branch),
    "grad_enabled_requires_grad": lambda: _grad_ctx(lambda y: (y.requires_grad, y.grad_fn is None)),
    "grad_enabled_argument": lambda: Case(
        _grad_arg, lambda v: (torch.ones(3, requires_grad=True), v), _ab(True, False)
    ),
    "default_dtype_factory": lambda: _default_dtype(lambda x: torch.tensor([1.5, 2.5]) + x.sum()),
    "default_dtype_branch": lambda: _default_dtype(
        lambda x: x * (2 if torch.get_default_dtype() == torch.float64 else 3)
    ),
    "default_dtype_int_tensor_times_float": lambda: _default_dtype(
        lambda x: x * 0.5, lambda v: (torch.arange(3),)
    ),
    "default_dtype_arange": lambda: _default_dtype(lambda x: torch.arange(0.0, 2.0, 0.5).dtype),
    "anomaly_detection": lambda: _flag(
        torch.is_anomaly_enabled, torch.autograd.set_detect_anomaly, _anomaly, False, True
    ),
    "float32_matmul_precision": lambda: _flag(
        torch.get_float32_matmul_precision,
        torch.set_float32_matmul_precision,
        _matmul_precision,
        "highest",
        "high",
    ),
    "deterministic_warn_only": lambda: Case(
        _warn_only,
        lambda v: (torch.ones(3),),
        _ab(False, True),
        lambda v: torch.use_deterministic_algorithms(v, warn_only=v),
        restore=_saved(
            lambda: (
                torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled(),
            ),
            lambda s: torch.use_deterministic_algorithms(s[0], warn_only=s[1]),
        ),
    ),
    "rng_seed_rand": lambda: _seeded(_rand),
    "rng_seed_randn_like": lambda: _seeded(_randn_like),
    "rng_stream_consumed_twice": lambda: _seeded(_rand_twice),
    "rng_seed_dropout": lambda: _seeded(_dropout_fn, (3, 4)),
    "rng_manual_seed_argument": lambda: Case(
        _seed_arg, lambda v: (torch.ones(2), v), _ab(0, 7), observe=lambda: torch.rand(1)
    ),
    "rng_generator_seed_argument": lambda: Case(_generator_arg, lambda v: (torch.ones(2), v), _ab(0, 7)),
}


# -- identity relations between tensor arguments -------------------------------------------------


def _two(same, make, derive=None):
    """(a, b): the same tensor twice, or b derived from a (a view), or two equal tensors."""
    a = make()
    if same:
        return (a, a if derive is None else derive(a))
    return (a, make() if derive is None else derive(make()).clone())


def _add_then_read(a, b):
    a.add_(1)
    return b * 2


def _is_same(a, b):
    return a is b, a.data_ptr() == b.data_ptr()


def _mul_then_read(a, b):
    a.mul_(2)
    return b.clone()


def _zero_then_sum(a, b):
    a.zero_()
    return b.sum()


def _out_alias(a, b):
    torch.add(a, 1, out=b)
    return a.clone()


def _list_alias(lst):
    lst[0].add_(1)
    return lst[1] + 0


def _dict_alias(d):
    d["a"].sub_(3)
    return d["b"] * 1


def _attr_alias(o1, o2):
    o1.t.add_(5)
    return o2.t + 0


def _global_alias(ns_get):
    def f(x):
        x.add_(1)
        return ns_get() + 0

    return f


def _pair_case(fn, make, derive=None, seq=(False, False, True, True, False)):
    return Case(fn, lambda v: _two(v, make, derive), seq)


def _ones3():
    return torch.ones(3)


def _overlap_views(same):
    base = torch.arange(4.0)
    if same:
        return (base[:3], base[1:])
    return (torch.arange(4.0)[:3], torch.arange(4.0)[1:])


class _Holder:
    def __init__(self, t):
        self.t = t


def _holders(same):
    t = torch.zeros(2)
    return (_Holder(t), _Holder(t if same else torch.zeros(2)))


def _global_alias_case():
    box = {"G": None}

    def make(same):
        x = torch.zeros(2)
        box["G"] = x if same else torch.zeros(2)
        return (x,)

    return Case(_global_alias(lambda: box["G"]), make, (False, False, True, True, False))


IDENTITY_CASES = {
    "same_tensor_twice_add_then_read": lambda: _pair_case(_add_then_read, _ones3),
    "same_tensor_twice_is": lambda: _pair_case(_is_same, _ones3),
    "same_tensor_twice_first_is_same": lambda: _pair_case(
        _add_then_read, _ones3, seq=(True, True, False, False, True)
    ),
    "overlapping_views_of_one_base": lambda: Case(
        _mul_then_read, _overlap_views, (False, False, True, True, False)
    ),
    "flat_view_vs_copy": lambda: _pair_case(_zero_then_sum, lambda: torch.ones(2, 2), lambda a: a.view(-1)),
    "transpose_view_vs_copy": lambda: _pair_case(
        _add_then_read, lambda: torch.arange(6.0).view(2, 3), lambda a: a.t()
    ),
    "row_view_vs_copy": lambda: _pair_case(_add_then_read, lambda: torch.ones(2, 2), lambda a: a[0]),
    "detach_shares_storage": lambda: _pair_case(_mul_then_read, _ones3, lambda a: a.detach()),
    "out_argument_aliases_input": lambda: _pair_case(_out_alias, _ones3),
    "list_with_same_tensor_twice": lambda: Case(
        _list_alias,
        lambda v: ([t := torch.ones(2), t if v else torch.ones(2)],),
        (False, False, True, True, False),
    ),
    "dict_with_same_tensor_twice": lambda: Case(
        _dict_alias,
        lambda v: ({"a": (t := torch.ones(2)), "b": t if v else torch.ones(2)},),
        (False, False, True, True, False),
    ),
    "objects_holding_one_tensor": lambda: Case(_attr_alias, _holders, (False, False, True, True, False)),
    "argument_is_also_a_global": _global_alias_case,
}


# -- dynamic sizes ------------------------------------------------------------------------------


def _parity(x):
    if x.shape[0] % 2 == 0:
        return x * 2
    return x - 1


def _loop_bound(x):
    acc = x.new_zeros(x.shape[1:])
    for i in range(x.shape[0]):
        acc = acc + x[i] * i
    return acc


def _compare_const(x):
    return x.sum() * (1 if x.size(0) > 4 else -1), x.size(0) >= 4


def _size_is_one(x):
    if x.size(0) == 1:
        return x.squeeze(0)
    return x.sum(0)


def _mean_by_numel(x):
    return x.sum() / x.numel(), x.numel() == 0


def _strides(v):
    return v.stride(), v.is_contiguous(), v.sum(0)


def _growing_buffer_view(k):
    buf = torch.arange(3.0 * k).view(3, k)
    return (buf[:, :2],)


def _growing_buffer_offset(n):
    buf = torch.arange(float(n))
    return (buf[n - 2 :],)


def _offset_and_sum(v):
    return v.storage_offset(), v * 1


def _int_sign(x, n):
    return x * n, n > 0, abs(n)


def _ones_n(x, n):
    return torch.ones(n) * x.sum()


def _py_loop_n(x, n):
    out = x
    for _ in range(n):
        out = out + 1
    return out


def _slice_n(x, n):
    return x[:n]


def _floordiv_n(x, n):
    return x * (12 // n)


def _view_n(x, n):
    return x.view(n, -1)


def _square(x):
    return x.shape[0] == x.shape[1], x.sum()


def _broadcast_from_other(x, y):
    return torch.zeros(y.shape[0]) + x


def _size_str(x):
    return f"n={x.shape[0]}", str(x.shape)


def _area(x):
    return x.shape[0] * x.shape[1] > 10, x.mean()


def _truthy_n(x, n):
    if n:
        return x * n
    return x - 1


def _float_arg(x, s):
    return x * s, math.copysign(1.0, s)


def _sizes(fn, sizes, make=lambda n: torch.arange(float(n))):
    return Case(fn, lambda v: (make(v),), tuple(sizes))


def _int_arg(fn, values, make=lambda: torch.arange(12.0)):
    return Case(fn, lambda v: (make(), v), tuple(values))


def _flat_view(v):
    return v.view(-1)


def _size_as_fill(x):
    return torch.full((2,), x.shape[0]) * x.sum()


def _index_n(x, n):
    return x[n] * 2


def _inference_tensor_arg(x):
    return x.is_inference(), x * 2


DYNAMIC_CASES = {
    "growing_buffer_view_needs_contiguity": lambda: Case(_flat_view, _growing_buffer_view, (3, 4, 2, 5)),
    "size_used_as_fill_value": lambda: _sizes(_size_as_fill, [2, 3, 4, 0, 1]),
    "int_arg_tensor_index_sign": lambda: _int_arg(_index_n, [1, 2, 3, -1, 0, -12]),
    "parity_branch": lambda: _sizes(_parity, [2, 4, 6, 7, 8, 3]),
    "size_as_loop_bound": lambda: _sizes(_loop_bound, [2, 3, 5, 1, 0], lambda n: torch.ones(n, 2)),
    "size_compared_to_constant": lambda: _sizes(_compare_const, [2, 3, 4, 5, 6, 4]),
    "size_hits_one": lambda: _sizes(_size_is_one, [3, 4, 1, 5], lambda n: torch.ones(n, 2)),
    "size_hits_zero": lambda: _sizes(_mean_by_numel, [2, 3, 0, 5]),
    "growing_buffer_stride": lambda: Case(_strides, _growing_buffer_view, (3, 4, 5, 2, 6)),
    "growing_buffer_offset": lambda: Case(_offset_and_sum, _growing_buffer_offset, (3, 4, 6, 2, 5)),
    "square_relation": lambda: Case(
        _square, lambda v: (torch.ones(*v),), ((2, 2), (3, 3), (3, 4), (4, 4), (5, 2))
    ),
    "size_of_other_tensor_broadcast": lambda: Case(
        _broadcast_from_other,
        lambda v: (torch.ones(v[0]), torch.ones(v[1])),
        ((3, 3), (4, 4), (1, 4), (4, 1), (4, 5)),
    ),
    "size_formatted_in_string": lambda: _sizes(_size_str, [2, 3, 4, 1]),
    "size_product_compared": lambda: Case(
        _area, lambda v: (torch.ones(*v),), ((2, 3), (3, 3), (3, 4), (1, 11))
    ),
    "int_arg_changes_sign": lambda: _int_arg(_int_sign, [2, 3, 4, -1, 0, 1]),
    "int_arg_factory_size": lambda: _int_arg(_ones_n, [2, 3, 0, 1, 4]),
    "int_arg_python_loop": lambda: _int_arg(_py_loop_n, [2, 3, 0, -2, 1]),
    "int_arg_slice_bound": lambda: _int_arg(_slice_n, [1, 2, 3, -1, 0, 20]),
    "int_arg_divides_then_zero": lambda: _int_arg(_floordiv_n, [2, 3, 4, 0, 1]),
    "int_arg_view_then_invalid": lambda: _int_arg(_view_n, [1, 2, 4, 5, 3, 0]),
    "int_arg_truthiness": lambda: _int_arg(_truthy_n, [3, 4, 0, 5, -1]),
    "float_arg_sign_and_zero": lambda: _int_arg(_float_arg, [0.5, 1.5, -0.0, 0.0, -2.0]),
}


# -- closures, defaults, globals ------------------------------------------------------------------


def _defaults_case(kind):
    def f(x, k=2, *, m=3):
        return x * k + m

    orig = (f.__defaults__, f.__kwdefaults__)

    def setup(v):
        if kind == "positional":
            f.__defaults__ = (v,)
        else:
            f.__kwdefaults__ = {"m": v}

    def restore():
        f.__defaults__, f.__kwdefaults__ = orig

    return Case(f, lambda v: (torch.ones(2),), _ab(2, 5), setup, restore=restore)


def _mutable_default():
    def f(x, acc=[1]):  # noqa: B006 - the mutable default is the state
        return x * len(acc)

    acc = f.__defaults__[0]
    return Case(f, lambda v: (torch.ones(2),), _ab(1, 3), lambda v: acc.__setitem__(slice(None), [0] * v))


def _cell_case(first, then, fn):
    def outer():
        val = first

        def f(x):
            return fn(x, val)

        def set_(v):
            nonlocal val
            val = v

        return f, set_

    f, set_ = outer()
    return Case(f, lambda v: (torch.ones(3),), _ab(first, then), set_)


def _cell_list():
    items = [1]

    def f(x):
        return x * sum(items), len(items)

    return Case(f, lambda v: (torch.ones(2),), _ab(1, 3), lambda v: items.__setitem__(slice(None), [2] * v))


def _global_case(source, key, values, make=lambda v: (torch.ones(2),)):
    ns = make_namespace(source, torch=torch)

    def setup(v):
        if v is _MISSING:
            ns.pop(key, None)
        else:
            ns[key] = v

    return Case(ns["f"], make, tuple(values), setup)


_MISSING = object()

_GLOBAL_SRC = """
    def f(x):
        return x * G
"""


def _callee_defaults():
    def helper(x, k=2):
        return x * k

    def f(x):
        return helper(x) + 1

    return Case(f, lambda v: (torch.ones(2),), _ab(2, 9), lambda v: setattr(helper, "__defaults__", (v,)))


def _callee_code():
    def helper(x):
        return x + 1

    def other(x):
        return x - 1

    codes = {0: helper.__code__, 1: other.__code__}

    def f(x):
        return helper(x) * 2

    return Case(f, lambda v: (torch.ones(2),), _ab(0, 1), lambda v: setattr(helper, "__code__", codes[v]))


def _global_counter():
    ns = make_namespace(
        """
        COUNT = 0
        def f(x):
            global COUNT
            COUNT += 1
            return x * COUNT
        """
    )
    return Case(
        ns["f"],
        lambda v: (torch.ones(2),),
        (0, 0, 5, 5, 0),
        lambda v: ns.__setitem__("COUNT", v),
        observe=lambda: ns["COUNT"],
    )


def _cfg_module_attr():
    cfg = types.ModuleType("extra_cfg")
    ns = make_namespace(
        """
        def f(x):
            return x * cfg.factor
        """,
        cfg=cfg,
    )

    def setup(v):
        if v is _MISSING:
            cfg.__dict__.pop("factor", None)
        else:
            cfg.factor = v

    return Case(ns["f"], lambda v: (torch.ones(2),), (2, 2, _MISSING, 3, _MISSING), setup)


CLOSURE_CASES = {
    "positional_default_replaced": lambda: _defaults_case("positional"),
    "keyword_default_replaced": lambda: _defaults_case("keyword"),
    "mutable_default_mutated": _mutable_default,
    "cell_int_rebound": lambda: _cell_case(2, 5, lambda x, v: x * v),
    "cell_tensor_rebound": lambda: _cell_case(torch.ones(3), torch.full((2, 1), 3.0), lambda x, v: x + v),
    "cell_module_rebound": lambda: _cell_case(nn.ReLU(), nn.Tanh(), lambda x, m: m(x - 0.5)),
    "cell_list_mutated": _cell_list,
    "global_bool_flag": lambda: _global_case(
        """
        def f(x):
            if FLAG:
                return x.exp()
            return x.neg()
        """,
        "FLAG",
        _ab(True, False),
    ),
    "global_tensor_dtype": lambda: _global_case(
        _GLOBAL_SRC, "G", _ab(torch.ones(2), torch.ones(2, dtype=torch.float64))
    ),
    "global_tensor_requires_grad": lambda: _global_case(
        """
        def f(x):
            return (x * G).requires_grad
        """,
        "G",
        _ab(torch.ones(2), torch.ones(2, requires_grad=True)),
    ),
    "global_function_to_none": lambda: _global_case(
        """
        def f(x):
            return H(x)
        """,
        "H",
        _ab(torch.relu, None),
    ),
    "global_deleted": lambda: _global_case(_GLOBAL_SRC, "G", _ab(3, _MISSING)),
    "global_dict_key_removed": lambda: _global_case(
        """
        def f(x):
            return x * D["k"]
        """,
        "D",
        _ab({"k": 2}, {"j": 2}),
    ),
    "global_list_shrinks": lambda: _global_case(
        """
        def f(x):
            return x * L[2]
        """,
        "L",
        _ab([1, 2, 3], [1, 2]),
    ),
    "global_rebound_by_the_function": _global_counter,
    "module_attribute_deleted": _cfg_module_attr,
    "callee_default_replaced": _callee_defaults,
    "callee_code_replaced": _callee_code,
}


# -- exceptions that appear on a later call -------------------------------------------------------


def _check_positive(x, n):
    if n < 0:
        raise ValueError(f"negative: {n}")
    return x * n


def _key_of(x, d):
    return x * d["w"]


class _O:
    k = None


def _attr_of(x, o):
    return x * o.k


def _index(x, i):
    return x[i]


def _mm_dtypes(x, y):
    return torch.mm(x, y)


def _item_div(x):
    return 1 // int(x.sum().item())


def _assert_size(x):
    assert x.shape[0] < 4, "too long"
    return x * 2


def _exc_attr_case():
    def make(v):
        o = _O()
        if v:
            o.k = 3
        return (torch.ones(2), o)

    return Case(_attr_of, make, _ab(True, False))


EXCEPTION_CASES = {
    "raise_on_negative_int": lambda: _int_arg(_check_positive, [2, 3, -1, 4], lambda: torch.ones(2)),
    "missing_dict_key": lambda: Case(_key_of, lambda v: (torch.ones(2), {v: 2}), _ab("w", "v")),
    "attribute_none_later": _exc_attr_case,
    "tensor_index_out_of_range": lambda: _int_arg(_index, [1, 2, 3, 5, -2], lambda: torch.arange(4.0)),
    "shape_mismatch_later": lambda: Case(
        lambda x, y: x + y, lambda v: (torch.ones(3), torch.ones(v)), (3, 3, 1, 2, 3)
    ),
    "dtype_mismatch_later": lambda: Case(
        _mm_dtypes, lambda v: (torch.ones(2, 2), torch.ones(2, 2, dtype=v)), _ab(torch.float32, torch.int64)
    ),
    "item_then_zero_division": lambda: _sizes(_item_div, [2, 3, 1, 0], lambda n: torch.ones(n)),
    "assert_on_size": lambda: _sizes(_assert_size, [1, 2, 3, 5, 2]),
}


CASES: dict[str, Callable[[], Case]] = {
    **{f"module_{k}": v for k, v in MODULE_CASES.items()},
    **{f"torch_{k}": v for k, v in TORCH_STATE_CASES.items()},
    **{f"identity_{k}": v for k, v in IDENTITY_CASES.items()},
    **{f"dynamic_{k}": v for k, v in DYNAMIC_CASES.items()},
    **{f"closure_{k}": v for k, v in CLOSURE_CASES.items()},
    **{f"exception_{k}": v for k, v in EXCEPTION_CASES.items()},
}

# case name -> reason, for cases that expose an open bug (strict xfail; docs/known-bugs.md).
OPEN_BUGS: dict[str, str] = {}


def _params():
    return [
        pytest.param(
            n, marks=(pytest.mark.xfail(strict=True, reason=OPEN_BUGS[n]),) if n in OPEN_BUGS else ()
        )
        for n in sorted(CASES)
    ]


@pytest.mark.parametrize("name", _params())
def test_extra_case_is_never_stale(name):
    _run(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_extra_case_depends_on_its_state(name):
    """Along the sequence the plain function's outcome really changes (else no staleness shows)."""
    case = CASES[name]()
    try:
        seen = [_one(case.fn, case, v) for v in case.seq]
    finally:
        case.restore()
    assert any(diff(seen[0], s) is not None for s in seen[1:]), f"{name}: the sequence changes nothing"
