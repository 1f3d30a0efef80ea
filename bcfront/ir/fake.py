"""Torch-side helpers for the trace: fake tensors and the symbolic torch state.

Imported only once a tensor or torch object shows up, so pure-Python capture
never imports torch.  Fake tensors (torch's FakeTensorMode) give every proxy
exact dtype, shape, stride, device and requires_grad without running kernels,
and keep view/alias relations between inputs.

A static capture shares one mode (no ShapeEnv) with every other static capture.
A capture with dynamic sizes gets its own mode over a fresh ShapeEnv: the sizes
chosen dynamic are symbols, ints derived from them are SymInts, and the facts the
trace relied on (a branch taken, a specialization) are the ShapeEnv's guards,
which `shape_guards` turns into Python expressions over the inputs.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

import torch
from torch._guards import GuardSource, Source
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.utils._python_dispatch import TorchDispatchMode
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

    def __init__(self, dynamic: bool = False) -> None:
        self.shape_env: ShapeEnv | None = None
        if dynamic:
            self.shape_env = ShapeEnv()
            self.mode = FakeTensorMode(shape_env=self.shape_env, allow_non_fake_inputs=False)
        else:
            self.mode = _shared_mode()
        self._fakes: dict[int, FakeTensor] = {}
        self._keep: list[torch.Tensor] = []
        # the inputs that carry symbols, in the order met: (fake or SymInt, placeholder name)
        self.placeholders: list[tuple[Any, str]] = []
        self._scalar: FakeTensor | None = None

    def release(self) -> None:
        """Forget the real tensors described (the trace is over; their fakes stay memoized)."""
        self._fakes.clear()
        self._keep.clear()

    @property
    def dynamic(self) -> bool:
        return self.shape_env is not None

    def from_real(
        self,
        t: torch.Tensor,
        dims: frozenset[int] = frozenset(),
        name: str = "",
        stride_dims: frozenset[int] = frozenset(),
    ) -> FakeTensor:
        """The fake of input `t`; in a dynamic env, the sizes at `dims` (the strides at
        `stride_dims`) are symbols whose guards will spell the input as `name` (a
        placeholder `shape_guards` replaces)."""
        fake = self._fakes.get(id(t))
        if fake is None and self.shape_env is not None:
            fake = self._symbolic(t, dims, name, stride_dims)
            self._fakes[id(t)] = fake
            self._keep.append(t)
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

    def _symbolic(
        self, t: torch.Tensor, dims: frozenset[int], name: str, stride_dims: frozenset[int]
    ) -> FakeTensor:
        if not dims and not stride_dims:
            return self.mode.from_tensor(t, static_shapes=True)
        sizes = [DimDynamic.DYNAMIC if i in dims else DimDynamic.STATIC for i in range(t.dim())]
        strides = [
            DimDynamic.DYNAMIC if i in stride_dims else DimDynamic.INFER_STRIDE for i in range(t.dim())
        ]
        ctx: StatelessSymbolicContext[Any, Any] = StatelessSymbolicContext(
            dynamic_sizes=sizes, dynamic_strides=strides
        )
        fake = self.mode.from_tensor(t, source=NamedSource(name), symbolic_context=ctx)
        if any(isinstance(d, torch.SymInt) for d in (*fake.shape, *fake.stride())):
            self.placeholders.append((fake, name))
        return fake

    def sym_int(self, value: int, name: str) -> int | torch.SymInt:
        """A symbol for int input `value` (guards spell it `name`); 0 and 1 stay ints."""
        assert self.shape_env is not None
        src = NamedSource(name)
        sym = self.shape_env.create_symbol(value, source=src, dynamic_dim=DimDynamic.DYNAMIC, positive=None)
        out = self.shape_env.create_symintnode(sym, hint=value, source=src)
        if isinstance(out, torch.SymInt):
            self.placeholders.append((out, name))
        return out

    def sym_float(self, value: float, name: str) -> float | torch.SymFloat:
        """A symbol for float input `value` (guards spell it `name`), as torch.compile
        makes a float argument that changes: no specialization, a hint of `value`."""
        assert self.shape_env is not None
        src = NamedSource(name)
        sym = self.shape_env.create_unspecified_symbol(value, source=src, dynamic_dim=DimDynamic.DYNAMIC)
        out = self.shape_env.create_symfloatnode(sym, hint=value, source=src)
        if isinstance(out, torch.SymFloat):
            self.placeholders.append((out, name))
        return out

    def scalar_fake(self) -> FakeTensor:
        """A 0-d int fake: what metadata reads on a symbolic int see (it is no tensor)."""
        if self._scalar is None:
            with self.mode:
                self._scalar = cast(FakeTensor, torch.zeros((), dtype=torch.int64))
        return self._scalar

    def shape_guards(self) -> list[tuple[str, str]]:
        """The ShapeEnv's guards over the placeholders: (Python expression with the
        placeholder names, readable form with symbols ``s0, s1, ...``), simplified and
        deduplicated by torch; empty for a static env."""
        if self.shape_env is None or not self.placeholders:
            return []
        values = [p for p, _ in self.placeholders]
        sources = [NamedSource(n) for _, n in self.placeholders]
        codes = self.shape_env.produce_guards(values, sources)
        names = self.symbol_names()
        return [(c, readable_shape_expr(c, names)) for c in codes]

    def symbol_names(self) -> dict[str, str]:
        """``placeholder.size()[i]`` (and a bare int or float placeholder) -> its symbol, renamed
        ``s0, s1, ...`` in the order the inputs were met (torch's names are hashes)."""
        out: dict[str, str] = {}
        renamed: dict[str, str] = {}

        def sym_name(x: Any) -> str | None:
            if not isinstance(x, (torch.SymInt, torch.SymFloat)):
                return None
            expr = x.node.expr
            if not getattr(expr, "is_Symbol", False):
                return None
            return renamed.setdefault(str(expr), f"s{len(renamed)}")

        for value, name in self.placeholders:
            if isinstance(value, (torch.SymInt, torch.SymFloat)):
                n = sym_name(value)
                if n is not None:
                    out[name] = n
                continue
            for i, d in enumerate(value.shape):
                n = sym_name(d)
                if n is not None:
                    out[f"{name}.size()[{i}]"] = n
        return out

    def run(
        self, fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], state: TorchState
    ) -> Any:
        """Call `fn` on fake arguments under `state`.  Where a meta kernel of torch's cannot
        take symbolic sizes (`META_GAP`: ``baddbmm``'s expands them as ints), the call is
        made again with such ops run as their decompositions (`DecomposedMetaGaps`)."""
        if self.shape_env is None:
            with state.context(), self.mode:
                return fn(*args, **kwargs)
        _QUIET_META_GAPS.depth += 1
        try:
            with state.context(), self.mode:
                try:
                    return fn(*args, **kwargs)
                except RuntimeError as e:
                    if META_GAP not in str(e):
                        raise
            with state.context(), self.mode, DecomposedMetaGaps():  # type: ignore[no-untyped-call]
                return fn(*args, **kwargs)
        finally:
            _QUIET_META_GAPS.depth -= 1


# what torch raises where a kernel it runs on fakes reads a symbolic size as an int
META_GAP = "expected to contain only concrete integers"


class _QuietMetaGaps(logging.Filter):
    """Drops the fake mode's error log of a `META_GAP` inside `FakeEnv.run`, which retries
    the call with `DecomposedMetaGaps` (torch logs every failed meta kernel)."""

    depth = 0

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (self.depth and exc is not None and META_GAP in str(exc))


_QUIET_META_GAPS = _QuietMetaGaps()
logging.getLogger("torch._subclasses.fake_tensor").addFilter(_QUIET_META_GAPS)


class DecomposedMetaGaps(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Inside a fake mode: an aten op whose meta kernel fails on symbolic sizes (`META_GAP`)
    runs as its decomposition in ``torch._decomp`` (for its output's metadata only: the
    graph keeps the op, and the real run calls it)."""

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        try:
            return func(*args, **kwargs)
        except RuntimeError as e:
            from torch._decomp import decomposition_table

            decomposed = decomposition_table.get(func)
            if META_GAP not in str(e) or decomposed is None:
                raise
            return decomposed(*args, **kwargs)


@dataclass(frozen=True)
class NamedSource(Source):
    """A torch guard source spelled as a bare name: the ShapeEnv writes its guards over
    these names, which the guard builder replaces by the inputs' own spellings."""

    placeholder: str = ""

    @property
    def _name_template(self) -> str:
        return self.placeholder

    @property
    def guard_source(self) -> GuardSource:
        return GuardSource.LOCAL


def static_parts(dims: Sequence[Any]) -> tuple[int | None, ...]:
    """Sizes or strides of a fake: ints where they are constants, None where symbolic."""
    out: list[int | None] = []
    for d in dims:
        if isinstance(d, torch.SymInt):
            out.append(d.node.maybe_as_int())
        else:
            out.append(int(d))
    return tuple(out)


def int_hint(n: object) -> int | None:
    """The value int or SymInt `n` (a size, a stride, an index) has in the example the
    trace runs on: an int as it is, a SymInt's constant or else its ShapeEnv hint; None for
    anything else and for a SymInt with no hint (an unbacked one)."""
    if type(n) is int:
        return n
    if not isinstance(n, torch.SymInt):
        return None
    node = n.node
    hint = node.maybe_as_int()
    if hint is None:
        hint = node.hint
    return int(hint) if hint is not None else None


def readable_shape_expr(code: str, names: Mapping[str, str]) -> str:
    """`code` (a ShapeEnv guard over placeholder names) with each input size written as
    its symbol: ``2 <= __in0.size()[1]`` -> ``2 <= s0``."""
    for spelled in sorted(names, key=len, reverse=True):
        code = code.replace(spelled, names[spelled])
    return code


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
