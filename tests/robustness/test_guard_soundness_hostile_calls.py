"""Issue 25's crashes and misreports: a module property read under capture
(``torch.backends.cudnn.deterministic``), hooks whose body breaks (no runaway nested
captures, no RecursionError), a user backend that raises (a named error with its cause),
partial objects' attributes, and sources deep enough to recurse when hashed."""

from __future__ import annotations

import functools

import pytest

import bcfront
from bcfront.frontend.model.sources import AttrSource, LocalSource

from .helpers import HAS_TORCH, assert_agree


def _partial_attributes(x):
    p = functools.partial(max, 1)
    return x, type(p).__qualname__, hasattr(p, "__qualname__"), p.func.__qualname__


def test_partial_attributes_behave_natively():
    assert_agree(bcfront.capture(_partial_attributes), _partial_attributes, 3, where="partial")


def test_deep_source_hashes_without_recursion():
    src = LocalSource("x")
    for i in range(20000):
        src = AttrSource(src, f"a{i % 7}")
    assert hash(src) == hash(src) and src == src


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_cudnn_flags_are_read_and_never_stale(lenient):
    import torch

    def f(x):
        return x + int(torch.backends.cudnn.deterministic) + 2 * int(torch.backends.cudnn.benchmark)

    cf, x = bcfront.capture(f), torch.ones(1)
    before = torch.backends.cudnn.deterministic
    try:
        for flag in (False, True, False):
            torch.backends.cudnn.deterministic = flag
            assert torch.equal(cf(x), f(x))
    finally:
        torch.backends.cudnn.deterministic = before


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_hooks_whose_body_breaks_capture_once(lenient):
    import torch

    seen = []

    def hook(mod, inp, out):
        seen.append(len(seen))  # a side effect that must happen once per call
        print(end="")  # breaks the graph
        return out + 1

    m = torch.nn.Sequential(*[torch.nn.Linear(2, 2) for _ in range(3)])
    for sub in m:
        sub.register_forward_hook(hook)
    cf, x = bcfront.capture(m), torch.ones(2)
    out = assert_agree(cf, m, x, where="hooks whose body breaks")  # no internal error
    assert len(seen) == 6  # three hooks, run once per call (captured, then plain)
    assert out is not None


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_hook_calling_another_captured_function():
    import torch

    inner = bcfront.capture(lambda t: t * 2)
    m = torch.nn.Linear(2, 2)
    m.register_forward_hook(lambda mod, inp, out: inner(out))
    assert_agree(bcfront.capture(m), m, torch.ones(2), where="hook calls a capture")


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_a_raising_backend_is_named_with_its_cause():
    import torch

    from bcfront import BackendCompilerFailed

    def my_backend(gm, example_inputs):
        raise ValueError("boom")

    cf = bcfront.capture(lambda x: x + 1, backend=my_backend)
    with pytest.raises(BackendCompilerFailed, match="my_backend.*ValueError: boom") as info:
        cf(torch.ones(1))
    assert isinstance(info.value.__cause__, ValueError)


def _caller_name(x):
    import sys

    return x + 1, sys._getframe(1).f_code.co_name


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_getframe_of_the_caller_is_the_users(lenient):
    import torch

    cf = bcfront.capture(_caller_name)

    def user_caller(f):
        return f(torch.ones(1))[1]

    assert user_caller(cf) == user_caller(_caller_name) == "user_caller"


def _warns_in_catch_warnings(x):
    import warnings

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        warnings.warn("hi", stacklevel=1)
    return x + 1, w[0].lineno


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_catch_warnings_inside_the_function_captures():
    import torch

    assert_agree(
        bcfront.capture(_warns_in_catch_warnings), _warns_in_catch_warnings, torch.ones(1), where="warn"
    )
