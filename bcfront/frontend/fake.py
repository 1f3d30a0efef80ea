"""Torch-side helpers for the trace: fake tensors and the symbolic torch state.

Imported only once a tensor or torch object shows up, so pure-Python capture
never imports torch.  Fake tensors (torch's FakeTensorMode, static shapes)
give every proxy exact dtype, shape, stride, device and requires_grad without
running kernels, and keep view/alias relations between inputs.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch
from torch._subclasses.fake_tensor import FakeTensorMode


@dataclass(frozen=True, slots=True)
class TorchState:
    """The ambient torch state a node runs under (grad mode, autocast stack)."""
    grad: bool
    autocast: tuple = ()        # ((device_type, dtype, enabled, cache_enabled), ...) innermost last

    @staticmethod
    def current() -> "TorchState":
        return TorchState(torch.is_grad_enabled(), ())

    def describe(self) -> str:
        parts = ["grad enabled" if self.grad else "no_grad"]
        for dev, dtype, enabled, _ in self.autocast:
            parts.append(f"autocast({dev!r}, {dtype}, enabled={enabled})")
        return ", ".join(parts)

    @contextlib.contextmanager
    def context(self):
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.set_grad_enabled(self.grad))
            for dev, dtype, enabled, cache in self.autocast:
                stack.enter_context(torch.autocast(dev, dtype=dtype, enabled=enabled,
                                                   cache_enabled=cache))
            yield


class FakeEnv:
    """One FakeTensorMode per capture; real tensors map to fakes by identity."""

    def __init__(self):
        self.mode = FakeTensorMode(allow_non_fake_inputs=False)
        self._fakes: dict[int, object] = {}
        self._keep: list = []

    def from_real(self, t):
        fake = self._fakes.get(id(t))
        if fake is None:
            fake = self.mode.from_tensor(t, static_shapes=True)
            self._fakes[id(t)] = fake
            self._keep.append(t)
        return fake

    def run(self, fn, args, kwargs, state: TorchState):
        """Call `fn` on fake arguments under `state`."""
        with state.context(), self.mode:
            return fn(*args, **kwargs)


def is_tensor(obj) -> bool:
    return isinstance(obj, torch.Tensor)
