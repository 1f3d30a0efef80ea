"""Torch-side helpers for the trace: fake tensors and the symbolic torch state.

Imported only once a tensor or torch object shows up, so pure-Python capture
never imports torch.  Fake tensors (torch's FakeTensorMode, static shapes)
give every proxy exact dtype, shape, stride, device and requires_grad without
running kernels, and keep view/alias relations between inputs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.utils.weak import WeakIdKeyDictionary

# an autocast region: (device_type, dtype, enabled, cache_enabled)
Autocast: TypeAlias = tuple[str, torch.dtype, bool, bool]
# what a fake must still agree with: shape, stride, storage offset, dtype, device, requires_grad
TensorMeta: TypeAlias = tuple[tuple[int, ...], tuple[int, ...], int | torch.SymInt, torch.dtype, str, bool]
# a real tensor's metadata, its type and its storage address
Signature: TypeAlias = tuple[TensorMeta, type, int]


@dataclass(frozen=True, slots=True)
class TorchState:
    """The ambient torch state a node runs under (grad mode, autocast stack, inference mode)."""

    grad: bool
    autocast: tuple[Autocast, ...] = ()  # innermost last
    inference: bool = False

    @staticmethod
    def current() -> TorchState:
        return TorchState(torch.is_grad_enabled(), (), torch.is_inference_mode_enabled())

    def describe(self) -> str:
        parts = ["grad enabled" if self.grad else "no_grad"]
        if self.inference:
            parts.append("inference_mode")
        for dev, dtype, enabled, _ in self.autocast:
            parts.append(f"autocast({dev!r}, {dtype}, enabled={enabled})")
        return ", ".join(parts)

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            if self.inference or torch.is_inference_mode_enabled():
                stack.enter_context(torch.inference_mode(self.inference))  # sets grad mode too
            stack.enter_context(torch.set_grad_enabled(self.grad))
            for dev, dtype, enabled, cache in self.autocast:
                stack.enter_context(torch.autocast(dev, dtype=dtype, enabled=enabled, cache_enabled=cache))
            yield


class FakeEnv:
    """Fake tensors for one capture.

    All captures share one FakeTensorMode, and a real tensor keeps its fake across
    captures (a recompile of the same model does not re-describe its parameters) as
    long as the real tensor's metadata and storage are unchanged and the fake still
    agrees with them (a trace may have changed a fake in place, e.g. requires_grad_).
    Captures are serialized (`driver.CAPTURE_LOCK`), so the shared mode is never
    entered from two threads at once.
    """

    def __init__(self) -> None:
        self.mode = _shared_mode()
        self._fakes: dict[int, FakeTensor] = {}
        self._keep: list[torch.Tensor] = []

    def from_real(self, t: torch.Tensor) -> FakeTensor:
        fake = self._fakes.get(id(t))
        if fake is None:
            sig = _signature(t)
            # (the ignore: torch's WeakIdKeyDictionary is unannotated)
            hit: tuple[FakeTensor, Signature] | None
            hit = _FAKES.get(t)  # type: ignore[no-untyped-call]
            if hit is not None and hit[1] == sig and _meta(hit[0]) == sig[0]:
                fake = hit[0]
            else:
                fake = self.mode.from_tensor(t, static_shapes=True)
                if _meta(fake)[:3] != sig[0][:3]:
                    # an earlier trace changed the memo's fake in place (``x.unsqueeze_(0)``)
                    # and was rolled back or retraced, so the real tensor never changed: the
                    # memo's fake no longer describes it -- describe it anew
                    _forget(self.mode, t)
                    fake = self.mode.from_tensor(t, static_shapes=True)
                if fake.requires_grad != t.requires_grad:
                    # the mode's own memo keeps the fake of the tensor as first seen; its
                    # requires_grad may have been assigned since (``t.requires_grad = True``, O26)
                    fake.requires_grad_(t.requires_grad)
                _FAKES[t] = (fake, sig)
            self._fakes[id(t)] = fake
            self._keep.append(t)
        return fake

    def run(
        self, fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], state: TorchState
    ) -> Any:
        """Call `fn` on fake arguments under `state`."""
        with state.context(), self.mode:
            return fn(*args, **kwargs)


_MODE: FakeTensorMode | None = None
# real tensor -> (fake, signature); tensors compare by id
_FAKES: WeakIdKeyDictionary = WeakIdKeyDictionary()


def _shared_mode() -> FakeTensorMode:
    global _MODE
    if _MODE is None:
        _MODE = FakeTensorMode(allow_non_fake_inputs=False)
    return _MODE


def _forget(mode: FakeTensorMode, t: torch.Tensor) -> None:
    """Drop the fake tensor mode's memo entry for real tensor `t`."""
    conv = mode.fake_tensor_converter
    tensor_ids = conv.meta_converter.describer.lookup_tensor
    tid = tensor_ids.get(t)  # type: ignore[no-untyped-call]  # unannotated WeakIdKeyDictionary
    if tid is not None:
        conv.tensor_memo.pop(tid, None)


def _meta(t: torch.Tensor) -> TensorMeta:
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.dtype, str(t.device), t.requires_grad)


def _signature(t: torch.Tensor) -> Signature:
    """What must be unchanged for a real tensor's cached fake to stand for it again."""
    return (_meta(t), type(t), t.untyped_storage().data_ptr())


def is_tensor(obj: object) -> bool:
    return isinstance(obj, torch.Tensor)
