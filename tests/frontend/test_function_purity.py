"""Which user ``autograd.Function`` classes the joint graph may trace (its Python runs
once, at trace time), read from their bytecode: effect-free ones are cleared, with the
globals to guard; anything with an effect or an unguarded read keeps the opaque node.

Oracle: what each class's code does, written next to it.
"""

from __future__ import annotations

import functools
import math

import pytest

torch = pytest.importorskip("torch")

from torch.autograd.function import once_differentiable  # noqa: E402

from bcfront.backends import function_purity  # noqa: E402

SCALE = 2.0
TABLE = [1.0]
WEIGHT = torch.ones(3)
LAYER = torch.nn.Linear(3, 3)


def helper(x):
    return torch.tanh(x) * SCALE


def noisy_helper(x):
    print(x)
    return x


def make(forward, backward=lambda ctx, g: g, **extra):
    return type(
        "F",
        (torch.autograd.Function,),
        {"forward": staticmethod(forward), "backward": staticmethod(backward), **extra},
    )


class Inner(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sin()

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        return g.cos()


def fwd_calls_inner(ctx, x):
    ctx.k = math.pi
    return Inner.apply(x) + helper(x).sum(dim=0, keepdim=True)


def fwd_comprehension(ctx, x):
    parts = [p * 2 for p in x.unbind(0)]
    parts[0] = parts[0] + 1  # a local list: fine
    return torch.stack(parts)


def test_effect_free_functions_are_cleared_with_their_global_reads():
    reads = function_purity.check(make(fwd_calls_inner))
    names = {name for _, name, _ in reads}
    assert {"Inner", "helper", "SCALE"} <= names  # guarded by identity
    assert "torch" not in names and "math" not in names  # modules are not
    assert function_purity.check(make(fwd_comprehension)) == ()


def fwd_print(ctx, x):
    print("x")
    return x


def fwd_global_write(ctx, x):
    global SCALE
    SCALE = 3.0
    return x


def fwd_list(ctx, x):
    TABLE.append(1.0)
    return x


def fwd_tensor(ctx, x):
    return x * WEIGHT


def fwd_module(ctx, x):
    return LAYER(x)


def fwd_attr(ctx, x):
    x.tag = 1
    return x


def fwd_materialize(ctx, x):
    ctx.set_materialize_grads(False)
    return x


def fwd_seed(ctx, x):
    torch.manual_seed(0)
    return x * torch.rand_like(x)


def fwd_noisy_helper(ctx, x):
    return noisy_helper(x)


def closure_forward():
    k = [0]

    def forward(ctx, x):
        k[0] += 1
        return x

    return forward


class Counting(torch.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        Counting.calls += 1
        return x

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.parametrize(
    "cls, why",
    [
        (make(fwd_print), "builtin 'print'"),
        (make(fwd_global_write), "writes 'SCALE'"),
        (make(fwd_list), r"'TABLE' \(list\)"),
        (make(fwd_tensor), r"'WEIGHT' \(Tensor\)"),
        (make(fwd_module), r"'LAYER' \(Linear\)"),
        (make(fwd_attr), "attribute 'tag'"),
        (make(fwd_materialize), "set_materialize_grads"),
        (make(fwd_seed), "'manual_seed', which changes global state"),
        (make(fwd_noisy_helper), "noisy_helper.*print|print.*noisy_helper"),
        (make(closure_forward()), "closure"),
        (Counting, "class Counting"),
        (make(lambda ctx, x: x, jvp=staticmethod(lambda ctx, t: t)), "defines jvp"),
        (make(functools.partial(fwd_print)), "partial"),
    ],
    ids=[
        "print",
        "global_write",
        "global_list",
        "global_tensor",
        "global_module",
        "attr",
        "materialize",
        "seed",
        "helper_prints",
        "closure",
        "class_state",
        "jvp",
        "partial",
    ],
)
def test_functions_with_effects_or_unguarded_reads_are_refused(cls, why):
    with pytest.raises(function_purity.NotTraceable, match=why):
        function_purity.check(cls)


def test_rebinding_a_global_rechecks():
    global SCALE
    cls = make(fwd_calls_inner)
    function_purity.check(cls)
    try:
        SCALE = torch.ones(1)  # now a tensor: state
        with pytest.raises(function_purity.NotTraceable, match="SCALE"):
            function_purity.check(cls)
    finally:
        SCALE = 2.0
    function_purity.check(cls)
