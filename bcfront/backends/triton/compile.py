"""`CompiledTritonGraph`: the callable `compile_fx` returns, one specialization per input signature.

Dynamic sizes: example inputs that are fake tensors with symbolic sizes or
symbolic ints (a capture with dynamic shapes) make a *dynamic* compiled graph.
It is first specialized to the examples' hint sizes (so that a graph the backend
cannot take fails here, at compile time), and then, like a static one, once per
new input signature at run time, which is exact for that size by construction.
Its kernels lift every size, stride and numel into launch arguments
(``generate(lift_ints=True)``), so the specializations of different sizes
produce the same kernel sources and share the compiled kernels: only the cheap
host-side lowering runs again for a new size, no kernel compiles.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_unflatten

from bcfront.errors import BcfrontError

from .codegen import generate
from .frontend import trace_aten
from .fuse import KernelPlan, schedule
from .lower import lower_program
from .runtime import Launcher, cache_root, interpreting, private_dir
from .wrapper import TritonKernel, build


def signature(args, aliasing: bool = False) -> tuple:
    """What a compiled specialization depends on: layouts of tensors, values of
    scalars and, for graphs that mutate inputs, which inputs share storage."""
    key = []
    storages: dict = {}
    for a in args:
        if isinstance(a, torch.Tensor):
            entry = (tuple(a.shape), a.stride(), a.dtype, a.device)
            if aliasing:
                ptr = a.untyped_storage().data_ptr()
                entry += (storages.setdefault((a.device, ptr), len(storages)),)
            key.append(entry)
        elif isinstance(a, (bool, int, float, str, type(None))):
            key.append((type(a), a))
        else:
            key.append((type(a), id(a)))
    return tuple(key)


def _shares_storage(args) -> bool:
    seen = set()
    for a in args:
        if isinstance(a, torch.Tensor) and a.numel():
            key = (a.device, a.untyped_storage().data_ptr())
            if key in seen:
                return True
            seen.add(key)
    return False


class EagerSpecialization:
    """Runs the graph as it is.  Used when inputs alias each other and the graph
    mutates one of them: functionalization assumes distinct inputs, so fused
    kernels could read values the mutation should have changed."""

    def __init__(self, gm, reason: str):
        self.gm = gm
        self.kernels, self.fallback_ops = [], [reason]
        self.wrapper_source = "# runs the captured graph eagerly: " + reason
        self.mutates = True

    def __call__(self, args):
        return self.gm(*args)


class Specialization:
    """Everything compiled for one input signature (`dynamic`: sizes as kernel arguments)."""

    def __init__(self, gm, example_inputs, config, dynamic: bool = False):
        aten_gm, self.out_spec, self.state = trace_aten(gm, example_inputs, config.attention_max)
        self.aten_graph = aten_gm
        prog, self.fallback_ops = lower_program(aten_gm)
        _check_device(prog)
        steps = schedule(prog, fuse=config.fuse)
        root = cache_root(config.cache_dir)
        private_dir(private_dir(root) / "kernels")  # refuse an unsafe cache up front
        sources, launchers, self.kernels = {}, {}, []
        interpret = interpreting()
        for st in steps:
            if isinstance(st, KernelPlan):
                ks = generate(
                    st,
                    prog.arena,
                    prog.layouts,
                    interpret=interpret,
                    persistent_max=config.persistent_max,
                    looped_rblock=config.looped_rblock,
                    lift_ints=dynamic,
                )
                sources[id(st)] = ks
                launchers[id(st)] = Launcher(ks, root, autotune=config.autotune)
                self.kernels.append(TritonKernel(ks.name, ks.ops, ks.source, ks.kind, ks.numels))
        # input mutations are written back with torch's copy_ after the last kernel
        self.fallback_ops = self.fallback_ops + ["aten.copy_"] * len(prog.copy_backs)
        self.mutates = bool(prog.copy_backs)
        self.call, self.wrapper_source = build(prog, steps, launchers, sources)

    def __call__(self, args):
        return tree_unflatten(self.call(self.state + args), self.out_spec)


def _is_symbolic(a) -> bool:
    """A symbolic int, or a (fake) tensor with a symbolic size or stride."""
    parts = [*a.shape, *a.stride()] if isinstance(a, torch.Tensor) else [a]
    return any(isinstance(d, torch.SymInt) and d.node.maybe_as_int() is None for d in parts)


def _hint(d) -> int:
    """The value a symbolic int had where it was captured (a plain int as it is)."""
    if not isinstance(d, torch.SymInt):
        return d
    v = d.node.maybe_as_int()
    v = d.node.hint if v is None else v
    if v is None:
        raise BcfrontError(f"the triton backend needs a size hint for {d}")
    return int(v)


def _concrete(a):
    """A real example for a fake input (zeros of its hint sizes and strides), or a hint int;
    reading the hints adds no guard: the run-time specializations are per size anyway."""
    if isinstance(a, torch.SymInt):
        return _hint(a)
    if not isinstance(a, torch._subclasses.FakeTensor):
        return a
    shape, stride = [_hint(d) for d in a.shape], [_hint(d) for d in a.stride()]
    return torch.empty_strided(shape, stride, dtype=a.dtype, device=a.device).zero_()


def _check_device(prog) -> None:
    dev = prog.device
    if dev is None or dev.type == "cuda":
        return
    if dev.type == "cpu" and interpreting():
        return
    raise BcfrontError(
        f"the triton backend runs on CUDA tensors (or CPU tensors under "
        f"TRITON_INTERPRET=1), not on {dev.type}"
    )


class CompiledTritonGraph:
    """Callable with the same inputs and outputs as the graph it was built from."""

    def __init__(self, gm, example_inputs, config):
        self._gm = gm
        self._config = config
        self._specs: dict = {}
        self._aliasing = False
        from .frontend import module_state

        # kernels compute no gradients: with autograd recording, eager runs instead
        self._state_needs_grad = any(t.requires_grad for t in module_state(gm)[1])
        self.dynamic = any(_is_symbolic(a) for a in example_inputs)
        if self.dynamic:
            example_inputs = [_concrete(a) for a in example_inputs]
        self._current = self._specialize(example_inputs)

    def _specialize(self, args):
        key = signature(args, self._aliasing)
        spec = self._specs.get(key)
        if spec is None:
            with torch.no_grad():
                spec = self._build(args)
            if spec.mutates and not self._aliasing:
                # from now on the storage sharing between inputs is part of the key
                self._aliasing = True
                self._specs.clear()
                key = signature(args, True)
            if spec.mutates and _shares_storage(getattr(spec, "state", []) + list(args)):
                spec = EagerSpecialization(self._gm, "inputs share storage and the graph mutates one")
            self._specs[key] = spec
        return spec

    def _build(self, args):
        if not self.dynamic or not self._specs:
            return Specialization(self._gm, list(args), self._config, self.dynamic)
        try:
            return Specialization(self._gm, list(args), self._config, True)
        except Exception as e:  # noqa: BLE001 - a size this graph's lowering cannot take: run it as it is
            return EagerSpecialization(self._gm, f"the triton backend failed at these sizes ({e})")

    @property
    def specializations(self) -> int:
        """How many input signatures were compiled (each a lowering; kernels may be shared)."""
        return len(self._specs)

    @property
    def kernels(self) -> list:
        return self._current.kernels

    @property
    def fallback_ops(self) -> list:
        return self._current.fallback_ops

    @property
    def wrapper_source(self) -> str:
        return self._current.wrapper_source

    def __call__(self, *args):
        if torch.is_grad_enabled() and (
            self._state_needs_grad or any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        ):
            return self._gm(*args)
        spec = self._specs.get(signature(args, self._aliasing))
        if spec is None:
            spec = self._current = self._specialize(args)
        return spec(list(args))
