"""Guard soundness, torch global state: grad mode, inference mode, autocast, default dtype, matmul
precision, deterministic flags, the RNG stream and generators.

Protocol: `state_sequences` (split by theme from issue 25's extra cases)."""

from __future__ import annotations

import contextlib

import pytest

from .helpers import HAS_TORCH
from .state_sequences import Case, ab, sequence_tests

pytestmark = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")

if HAS_TORCH:
    import torch


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
    return Case(fn, lambda v: (torch.ones(3),), ab(*seeds), torch.manual_seed, observe=lambda: torch.rand(1))


def _default_dtype(fn, make=lambda v: (torch.ones(2),)):
    return Case(
        fn,
        make,
        ab(torch.float32, torch.float64),
        torch.set_default_dtype,
        restore=_saved(torch.get_default_dtype, torch.set_default_dtype),
    )


def _flag(get, set_, fn, a, b):
    return Case(fn, lambda v: (torch.ones(3),), ab(a, b), set_, restore=_saved(get, set_))


def _grad_ctx(fn):
    w = torch.ones(3, requires_grad=True)
    return Case(lambda x: fn(x * w), lambda v: (torch.ones(3),), ab(True, False), ctx=torch.set_grad_enabled)


def _make_inference():
    with torch.inference_mode():
        return torch.ones(3)


@contextlib.contextmanager
def _both(on):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=on), torch.set_grad_enabled(not on):
        yield


def _inference_tensor_arg(x):
    return x.is_inference(), x * 2


TORCH_STATE_CASES = {
    "inference_tensor_argument": lambda: Case(
        _inference_tensor_arg,
        lambda v: (torch.ones(3) if not v else _make_inference(),),
        ab(False, True),
    ),
    "autocast_and_no_grad_together": lambda: Case(
        _mm,
        lambda v: (torch.ones(2, 3, requires_grad=True),),
        ab(False, True),
        ctx=lambda v: _both(v),
    ),
    "autocast_context_around_call": lambda: Case(
        _mm,
        lambda v: (torch.ones(2, 3),),
        ab(False, True),
        ctx=lambda v: torch.autocast("cpu", dtype=torch.bfloat16, enabled=v),
    ),
    "autocast_enabled_argument": lambda: Case(
        _autocast_arg, lambda v: (torch.ones(2, 3), v), ab(True, False)
    ),
    "autocast_dtype_argument": lambda: Case(
        _autocast_dtype_arg, lambda v: (torch.ones(2, 3), v), ab(torch.bfloat16, torch.float16)
    ),
    "inference_mode_around_call": lambda: Case(
        _inference_read, lambda v: (torch.ones(3),), ab(False, True), ctx=torch.inference_mode
    ),
    "inference_mode_argument": lambda: Case(_inference_arg, lambda v: (torch.ones(3), v), ab(False, True)),
    "grad_enabled_branch": lambda: _grad_ctx(_grad_branch),
    "grad_enabled_requires_grad": lambda: _grad_ctx(lambda y: (y.requires_grad, y.grad_fn is None)),
    "grad_enabled_argument": lambda: Case(
        _grad_arg, lambda v: (torch.ones(3, requires_grad=True), v), ab(True, False)
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
        ab(False, True),
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
        _seed_arg, lambda v: (torch.ones(2), v), ab(0, 7), observe=lambda: torch.rand(1)
    ),
    "rng_generator_seed_argument": lambda: Case(_generator_arg, lambda v: (torch.ones(2), v), ab(0, 7)),
}


CASES = {f"torch_{k}": v for k, v in TORCH_STATE_CASES.items()}
test_extra_case_is_never_stale, test_extra_case_depends_on_its_state = sequence_tests(CASES)
