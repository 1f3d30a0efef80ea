"""`CompiledTritonGraph`: the callable `compile_fx` returns, one specialization per input signature.

Dynamic sizes: example inputs that are fake tensors with symbolic sizes or
symbolic ints (a capture with dynamic shapes) make a *dynamic* compiled graph.
It is lowered once, symbolically (`symsize`): sizes are expressions that the
generated wrapper evaluates at each call, kernels take them as launch arguments,
and the decisions the lowering took on sizes are guards.  A new input signature
that satisfies them reuses that lowering (one guard check per signature); one
that breaks them, or a graph that cannot be lowered symbolically, is specialized
to its concrete sizes as a static graph is (still with sizes lifted into kernel
arguments, so such specializations share compiled kernels).
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_unflatten

from bcfront.errors import BcfrontError

from .codegen import generate
from .frontend import module_state, trace_aten
from .fuse import KernelPlan, schedule
from .lower import lower_program
from .runtime import Launcher, SizedLauncher, cache_root, interpreting, private_dir
from .symsize import Guards, bind_inputs, python_source, read_source, source
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


_LOWERINGS = [0]


def lowerings() -> int:
    """How many host lowerings (trace, lower, fuse, codegen) ran in this process."""
    return _LOWERINGS[0]


class Specialization:
    """Everything compiled for one input signature (`dynamic`: sizes as kernel arguments),
    or, from symbolic example inputs (fakes with symbolic sizes), for every signature
    satisfying `guards` (see `symsize`)."""

    guards: list = []

    def __init__(self, gm, example_inputs, config, dynamic: bool = False):
        _LOWERINGS[0] += 1
        env = _shape_env(example_inputs)
        known = len(env.guards) if env is not None else 0
        if env is not None:
            # bound from the inputs before the trace: it may merge symbols (``a @ b``
            # makes two sizes one), and its guards still name both
            bound = bind_inputs([None] * len(module_state(gm)[1]) + list(example_inputs))
        aten_gm, self.out_spec, self.state = trace_aten(gm, example_inputs, config.attention_max)
        self.aten_graph = aten_gm
        if env is None:
            self._lower(aten_gm, config, dynamic, None)
            return
        names, self.reads = bound
        with Guards(names) as log:
            self._lower(aten_gm, config, True, self.reads)
        # the trace's own decisions (a decomposition branching on a size) count too
        for g in env.guards[known:]:
            log.add(python_source(g.expr, names))
        self.guards = list(log.conditions)
        self.specialized = log.specialized
        self.check = _checker(self.reads, self.guards)

    def _lower(self, aten_gm, config, dynamic, reads):
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
                launch = Launcher if reads is None else SizedLauncher
                launchers[id(st)] = launch(ks, root, autotune=config.autotune)
                numels = tuple(n if isinstance(n, int) else source(n) for n in ks.numels)
                self.kernels.append(TritonKernel(ks.name, ks.ops, ks.source, ks.kind, numels))
        # input mutations are written back with torch's copy_ after the last kernel
        self.fallback_ops = self.fallback_ops + ["aten.copy_"] * len(prog.copy_backs)
        self.mutates = bool(prog.copy_backs)
        self.call, self.wrapper_source = build(prog, steps, launchers, sources, reads)

    def __call__(self, args):
        return tree_unflatten(self.call(self.state + args), self.out_spec)


def _shape_env(inputs):
    """The ShapeEnv of symbolic example inputs (None for concrete ones)."""
    for a in inputs:
        if _is_symbolic(a):
            parts = [*a.shape, *a.stride()] if isinstance(a, torch.Tensor) else [a]
            return next(d for d in parts if isinstance(d, torch.SymInt)).node.shape_env
    return None


def _own_symbols(inputs) -> list:
    """The symbolic example inputs again, over a ShapeEnv of the backend's own (same
    symbolic dimensions, same hints): the lowering's decisions become guards there,
    checked by the backend, and never reach the capture's guards (torch's checks of the
    capture's relations are the capture's own business)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    from bcfront.ir.fake import NamedSource

    env = ShapeEnv(duck_shape=False)
    mode = FakeTensorMode(shape_env=env, allow_non_fake_inputs=True)
    out: list = []
    for k, a in enumerate(inputs):
        src = NamedSource(f"in{k}")
        if isinstance(a, torch.SymInt) and _is_symbolic(a):
            sym = env.create_symbol(_hint(a), source=src, dynamic_dim=DimDynamic.DYNAMIC, positive=None)
            out.append(env.create_symintnode(sym, hint=_hint(a), source=src))
        elif isinstance(a, torch._subclasses.FakeTensor):
            dims = [_is_symbolic(d) for d in a.shape]
            ctx: StatelessSymbolicContext = StatelessSymbolicContext(
                dynamic_sizes=[DimDynamic.DYNAMIC if d else DimDynamic.STATIC for d in dims],
                dynamic_strides=[DimDynamic.INFER_STRIDE] * a.dim(),
            )
            out.append(mode.from_tensor(_concrete(a), source=src, symbolic_context=ctx))
        else:
            out.append(_hint(a) if isinstance(a, torch.SymInt) else a)
    return out


def _checker(reads, guards):
    """``check(args)``: do these inputs satisfy a symbolic lowering's guards?"""
    lines = ["def check(args):"]
    lines += [f"    {name} = {read_source(f'args[{k}]', kind, dim)}" for name, k, kind, dim in reads]
    lines.append(f"    return {' and '.join(f'({g})' for g in guards) or 'True'}")
    ns: dict = {}
    exec(compile("\n".join(lines) + "\n", "<bcfront-triton-guards>", "exec"), ns)  # noqa: S102 - generated here
    return ns["check"]


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
        # kernels compute no gradients: with autograd recording, eager runs instead
        self._state_needs_grad = any(t.requires_grad for t in module_state(gm)[1])
        self.dynamic = any(_is_symbolic(a) for a in example_inputs)
        self.symbolic: Specialization | None = None  # one lowering for every size it guards
        self.per_size = ""  # why sizes are (also) lowered one by one
        if self.dynamic:
            try:
                with torch.no_grad():
                    fresh = _own_symbols(example_inputs)
                    self.symbolic = self._current = Specialization(gm, fresh, config, True)
                return
            except Exception as e:  # noqa: BLE001 - not lowerable symbolically: per size, as below
                self.per_size = f"the graph could not be lowered symbolically ({type(e).__name__}: {e})"
            example_inputs = [_concrete(a) for a in example_inputs]
        self._current = self._specialize(example_inputs)

    def _for_symbolic(self, args):
        """The symbolic lowering when these inputs satisfy its guards, else None."""
        sym = self.symbolic
        if sym is None:
            return None
        try:
            if sym.check(sym.state + list(args)):
                return sym
        except Exception:  # noqa: BLE001 - a guard that cannot evaluate here does not hold
            pass
        # a size that decided the lowering (see `symsize`): this size gets its own
        self.per_size = "sizes outside the symbolic lowering's guards: " + " and ".join(sym.guards)
        return None

    def _specialize(self, args):
        key = signature(args, self._aliasing)
        spec = self._specs.get(key)
        if spec is None:
            spec = self._for_symbolic(args)
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
        if not self.dynamic or (not self._specs and self.symbolic is None):
            return Specialization(self._gm, list(args), self._config, self.dynamic)
        try:
            return Specialization(self._gm, list(args), self._config, True)
        except Exception as e:  # noqa: BLE001 - a size this graph's lowering cannot take: run it as it is
            return EagerSpecialization(self._gm, f"the triton backend failed at these sizes ({e})")

    @property
    def specializations(self) -> int:
        """How many input signatures were seen (each served by a lowering; kernels may be shared)."""
        return len(self._specs)

    @property
    def lowerings(self) -> int:
        """How many host lowerings ran for this graph (1 while the symbolic one serves every size)."""
        specs = {id(s) for s in self._specs.values() if isinstance(s, Specialization)}
        return len(specs | ({id(self.symbolic)} if self.symbolic is not None else set()))

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
