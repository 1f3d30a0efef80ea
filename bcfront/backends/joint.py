"""Joint forward/backward graphs for non-eager backends (``capture(fn, joint_graph=True)``).

A graph with ``loss.backward()`` inside holds nodes no pure graph can (the backward node,
``.grad`` reads and writes, an optimizer step, a user's ``autograd.Function``): whole, it
runs on the eager backend.  With the option, the graph is cut at those nodes (the
*barriers*) into segments of plain tensor work, and each segment goes to torch's AOT
autograd, as TorchDynamo hands its graphs to it: ``aot_module_simplified`` traces the
segment's forward together with its backward (a joint graph, partitioned into a forward
and a backward graph) and the backend compiles both.  No autodiff of our own: the
derivative formulas, the saved tensors and the input mutations are AOT autograd's.

At run time the region calls the compiled segments and runs the barriers in between as
eager statements: the backward node calls ``torch.autograd.backward``, whose engine runs
the compiled backward graphs (the segments' outputs carry AOT autograd's node) and
accumulates into each leaf's ``.grad`` as eager does (``AccumulateGrad``).  Segments that
compute nothing differentiable (gradient clipping after the backward) get AOT autograd's
inference graph.  Inductor's ``compile_fx`` runs AOT autograd itself, so it gets the
segment's graph directly, as from ``torch.compile``.

Two kinds of graph stay off AOT autograd, whose compiled backward runs once and is not
differentiable: one whose backward has ``create_graph=True`` (all of it: `compile_joint`
raises), and the segments whose autograd history leaves the region unconsumed by any of
its backwards (`_live_history`: they run eagerly, so the caller's own backward through
them is eager's).  With Inductor, ``opt.step()`` runs `optim_step.CompiledStep`.

Segments take and return SymInts and SymFloats (changing sizes and floats) as TorchDynamo
hands them to AOT autograd (`joint_numbers`); a part doing number arithmetic only runs as
eager statements.  `compile_joint` raises (the caller keeps today's path, with a note)
when a segment passes other values, or AOT autograd or the compiler fails on it.  The
report lists the parts as kernels: ``forward N``, ``backward N``, ``inference N`` (their
aten code) and the barriers (``backward()``, ``<Optimizer>.step``...).
"""

from __future__ import annotations

import copy
import operator
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch

from ..ir.alias_facts import opaque_effect, writes_grad
from ..ir.graph import Graph, map_nodes
from . import function_purity, joint_numbers
from .compiled import CompiledGraph

_APPLY = getattr(torch.autograd.Function.apply, "__func__", None)


def has_backward(graph) -> bool:
    """Whether `graph` runs ``torch.autograd.backward`` (what the joint option is for)."""
    return any(n.op == "call" and n.target is torch.autograd.backward for n in graph.body)


def is_barrier(n, trace_functions: bool = True) -> bool:
    """A node that runs at its place as an eager statement, between compiled segments:
    it writes or reads ``.grad`` (AOT autograd traces on fakes, whose ``.grad`` is not the
    real one), or runs Python no pure graph holds.  A user's ``autograd.Function`` that
    `function_purity` clears is traced by AOT autograd instead (`trace_functions`)."""
    if trace_functions and traced_function(n) is not None:
        return False
    if writes_grad(n) or opaque_effect(n) or (n.op == "getattr" and n.target == "grad"):
        return True
    return n.op == "call" and _code_names_grad(n.target)


def traced_function(n):
    """The ``autograd.Function`` class of an ``apply`` node AOT autograd may trace, else None."""
    if n.op != "call" or getattr(n.target, "__func__", None) is not _APPLY:
        return None
    cls = n.target.__self__
    try:
        function_purity.check(cls)
    except function_purity.NotTraceable:
        return None
    return cls


def _code_names_grad(fn) -> bool:
    """A Python function (a helper the trace calls whole, e.g. ``_clip_grads_with_norm_``)
    whose code, or a code nested in it, reads an attribute named ``grad``."""
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    code = getattr(fn, "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        if "grad" in c.co_names:
            return True
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return False


@dataclass
class _Piece:
    graph: Graph  # the node(s) of this piece; inputs/outputs as the rest of the graph needs
    fn: object = None  # the compiled segment (None: a barrier, emitted eagerly)
    parts: list = field(default_factory=list)  # the kernels it shows in the report
    notes: list = field(default_factory=list)  # what the report should say about it
    as_tensors: tuple = ()  # inputs passed as 0-d float64 tensors (`joint_numbers.tensorify_floats`)
    symbols: list = field(
        default_factory=list
    )  # size symbols passed after them (`joint_numbers.symbol_inputs`)


def compile_joint(graph, compiler, name: str) -> CompiledGraph:
    """`graph` as compiled segments around eager barriers (see the module doc).

    `compiler`: None (the segments' aten graphs run as ``GraphModule`` code), Inductor's
    ``compile_fx`` (handed the segment whole), or any ``(gm, example_inputs) -> callable``
    (handed AOT autograd's forward and backward graphs)."""
    from . import eager

    for n in graph.body:
        if n.op == "call" and n.target is torch.autograd.backward and n.kwargs.get("retain_graph"):
            # AOT autograd's backward may donate its saved buffers (torch's
            # ``functorch.config.donated_buffer``): a second backward is an error there
            raise NotImplementedError("backward(retain_graph=True) runs the backward graph twice")
        if n.op == "call" and n.target is torch.autograd.backward and n.kwargs.get("create_graph"):
            # the grads must be differentiable: eager autograd's own (opaque Functions included)
            raise NotImplementedError("backward(create_graph=True): AOT autograd's backward graphs run once")
    traced = sorted({c.__qualname__ for n in graph.body if (c := traced_function(n)) is not None})
    try:
        pieces, counter = _compile_pieces(graph, compiler, trace_functions=True)
    except Exception as e:  # AOT autograd refused a traced Function: keep them opaque
        if not traced:
            raise
        pieces, counter = _compile_pieces(graph, compiler, trace_functions=False)
        why = f"{type(e).__name__}: {e}".splitlines()[0][:200]
        notes = [
            f"autograd.Function {', '.join(traced)} kept opaque (AOT autograd could not trace it: {why})"
        ]
        traced = []
    else:
        notes = []
    if compiler is not None and _is_inductor(compiler):
        _compile_optimizer_steps(pieces, compiler)
    kernels = [
        k
        for p in pieces
        for k in (
            p.parts
            if p.parts
            else [_barrier_kernel(n) for n in p.graph.body if not _unpacks(n, p.graph.body)]
        )
    ]
    out: CompiledGraph | None = None

    def emit(g, ns, lines, indent="    "):
        first_write = getattr(out, "first_write", None)
        for p in pieces:
            if first_write is not None and any(n.name == first_write for n in p.graph.body):
                # the region's error guard marks "no lasting write yet" off at this line
                lines.append(f"{indent}{first_write} = None")
            if p.fn is None:
                eager.emit_graph(p.graph, ns, lines, indent)
            else:
                _emit_call(p, ns, lines, indent)

    out = CompiledGraph(name, emit, tuple(kernels))
    n_seg = sum(p.fn is not None for p in pieces)
    n_eager = len(kernels) - sum(len(p.parts) for p in pieces if p.fn is not None)
    out.notes.append(
        f"joint graph: {n_seg} segment(s) through AOT autograd ({counter['forward']} with a backward "
        f"graph), {n_eager} eager statement(s) between them"
    )
    if traced:
        out.notes.append(f"autograd.Function {', '.join(traced)} traced into the joint graph")
    out.notes.extend(note for p in pieces for note in p.notes)
    out.notes.extend(notes)
    return out


def _compile_pieces(graph, compiler, trace_functions: bool):
    pieces = _split(graph, trace_functions)
    counter = {"forward": 0, "inference": 0}
    live = _live_history(graph)
    available = set(graph.inputs)  # what each part may read: the inputs, earlier parts' outputs
    for i, p in enumerate(pieces):
        available.update(pieces[i - 1].graph.outputs if i else ())
        if p.fn is None and p.graph.body and not is_barrier(p.graph.body[0], trace_functions):
            if any(n in live for n in p.graph.body):
                p.parts.append(
                    SimpleNamespace(name=f"eager {i} (history leaves the graph)", ops=(), source="")
                )
                p.notes.append(_LIVE_NOTE)
                continue
            if not any(isinstance(n.meta, torch.Tensor) for n in p.graph.body):
                continue  # Python number arithmetic only (a scheduler's counters): eager statements
            joint_numbers.recompute_sizes(p.graph, graph.body, available)
            p.fn = _compile_segment(p, compiler, counter, graph.inputs)
    return pieces, counter


_LIVE_NOTE = (
    "a part hands out tensors whose autograd history no backward() here consumed: it runs "
    "eagerly, so a later backward through them (retain_graph, create_graph, higher-order grads, a "
    "Function's own double backward) is eager's; AOT autograd's compiled backward is not "
    "differentiable and runs once"
)


def _live_history(graph) -> set:
    """Nodes whose autograd history reaches a tensor the region hands out with history
    (returned, stored) and that no ``backward()`` in the graph consumed: the caller may
    differentiate through them in any way eager allows, which AOT autograd's compiled
    backward does not (it runs once, ``create_graph=False``).  A node a backward's roots
    depend on had its history freed by that backward, in eager as here."""
    consumed: set = set()
    for n in graph.body:
        if n.op == "call" and n.target is torch.autograd.backward:
            map_nodes(n.args, consumed.add)
    for n in reversed(graph.body):  # everything the roots were computed from
        if n in consumed:
            map_nodes((n.args, n.kwargs), consumed.add)
    live = {n for n in graph.outputs if _has_history(n) and n not in consumed}
    for n in reversed(graph.body):
        if n in live:
            map_nodes((n.args, n.kwargs), lambda a: live.add(a) if a not in consumed else None)
    return {n for n in graph.body if n in live and _has_history(n)}


def _has_history(n) -> bool:
    return isinstance(n.meta, torch.Tensor) and n.meta.requires_grad


def _compile_optimizer_steps(pieces, compiler) -> None:
    """Each ``opt.step()`` barrier runs through `optim_step.CompiledStep` (the update compiled
    by Inductor, torch's step where it does not apply): a copy of the node with that target."""
    from .optim_step import CompiledStep

    for p in pieces:
        if p.fn is not None:
            continue
        for i, n in enumerate(p.graph.body):
            if n.op == "call" and str(getattr(n.target, "__module__", "")).endswith(".optim_models"):
                n = p.graph.body[i] = copy.copy(n)
                n.target = CompiledStep(n.target, compiler)


def _split(graph, trace_functions: bool) -> list[_Piece]:
    """Runs of plain nodes and single barrier nodes, in order, each with the inputs it reads
    from before it and the outputs read after it (or by the region)."""
    runs: list[list] = []

    def is_barrier_here(n):
        return is_barrier(n, trace_functions)

    for n in graph.body:
        # consecutive barriers make one eager piece (one grad-mode block, not one each); a
        # barrier's tuple result is taken apart at its place
        barrier = is_barrier_here(n) or bool(runs and is_barrier_here(runs[-1][0]) and _unpacks(n, runs[-1]))
        if runs and barrier == is_barrier_here(runs[-1][0]):
            runs[-1].append(n)
        else:
            runs.append([n])
    later_uses: set = set(graph.outputs)
    needed: list[set] = []
    for run in reversed(runs):  # what each run must output: read by a later run or the region
        needed.append(set(later_uses))
        for n in run:
            map_nodes((n.args, n.kwargs), later_uses.add)
    needed.reverse()
    pieces: list[_Piece] = []
    for run, later in zip(runs, needed):
        inside = set(run)
        used: list = []
        for n in run:
            map_nodes((n.args, n.kwargs), used.append)
        sub = Graph(f"{graph.name}_part{len(pieces)}")
        sub.inputs = [x for x in dict.fromkeys(used) if x not in inside]
        sub.body = list(run)
        sub.outputs = [n for n in run if n in later]
        sub.checkpoints = graph.checkpoints  # (those whose nodes all are in this run: `checkpoints.outlined`)
        pieces.append(_Piece(sub))
    return pieces


def _callable_applies(gm):
    """FX spells a bound ``MyFunction.apply`` as ``torch.autograd.function.apply`` in the
    module's code (it takes the target for a torch global): give it a plain function."""
    changed = False
    for fxn in gm.graph.nodes:
        target = fxn.target
        if fxn.op == "call_function" and getattr(target, "__func__", None) is _APPLY:
            cls = target.__self__

            def apply(*args, __apply=target, **kwargs):
                return __apply(*args, **kwargs)

            apply.__module__, apply.__name__ = __name__, f"{cls.__name__}_apply"
            apply.__qualname__ = apply.__name__
            fxn.target, changed = apply, True
    if changed:
        gm.recompile()
    return gm


def _unpacks(n, run: list) -> bool:
    return n.op == "call" and n.target is operator.getitem and bool(n.args) and n.args[0] in run


def _compile_segment(p: _Piece, compiler, counter: dict, graph_inputs):
    """The segment through AOT autograd (or Inductor's ``compile_fx``, which runs it), its
    SymInt and SymFloat inputs as TorchDynamo passes them (`joint_numbers`)."""
    from .fx import to_fx

    sub = p.graph
    joint_numbers.check_values(sub)
    inductor = compiler is not None and _is_inductor(compiler)
    if inductor:  # Inductor takes sizes as TorchDynamo gives them: a SymInt input per symbol
        p.symbols = joint_numbers.symbol_inputs(sub, graph_inputs)
    gm = _callable_applies(to_fx(sub, tagged=True))
    examples = [n.meta for n in sub.inputs]
    if inductor:  # the others take SymFloats as they are (AOT autograd's default partitioner saves them)
        p.as_tensors = joint_numbers.tensorify_floats(gm, examples)
    joint_numbers.add_symbol_placeholders(gm, examples, p.symbols)
    try:
        with joint_numbers.float_scope(examples, keep=p.as_tensors):
            fn = _compile_aot(p, gm, examples, compiler, counter)
    except Exception as e:
        if not (p.as_tensors and joint_numbers.is_restart(e)):
            raise
        # TorchDynamo would restart with the float specialized; here the graph takes the usual path
        names = ", ".join(sub.inputs[i].name for i in p.as_tensors)
        raise NotImplementedError(
            f"AOT autograd's tensorify pass could not make float input(s) {names} tensors (a float "
            "used in a size?): Inductor cannot take them"
        ) from e
    pinned = joint_numbers.pinned_floats(examples, p.as_tensors)
    if pinned:
        p.notes.append(
            f"float input(s) {', '.join(sub.inputs[i].name for i in pinned)} specialized to this "
            "call's value (Inductor takes them as tensors; AOT autograd's tensorify pass left them "
            "Python numbers for an op it does not convert): each new value compiles again"
        )
    return fn


def _compile_aot(p: _Piece, gm, examples: list, compiler, counter: dict):
    from torch._functorch import config as functorch_config
    from torch._functorch.aot_autograd import aot_module_simplified, make_boxed_func

    sub = p.graph
    trains = torch.is_grad_enabled() and any(
        isinstance(n.meta, torch.Tensor) and n.meta.requires_grad for n in sub.outputs
    )
    kind = "forward" if trains else "inference"
    index = counter[kind]
    counter[kind] += 1
    if compiler is not None and _is_inductor(compiler):
        p.parts.append(_kernel(f"{kind} {index} (Inductor: its own AOT autograd)", gm))
        random = sorted({_name(n.target) for n in sub.body if _name(n.target) in _RANDOM_OPS})
        if random and not _inductor_falls_back_random():
            p.notes.append(
                f"Inductor draws its own random numbers ({', '.join(random)}): for the same seed they "
                "differ from eager's; torch._inductor.config.fallback_random = True draws eager's"
            )
        # its backward compiled now too: one Inductor fails on (a size it cannot bind)
        # sends the graph down the usual path here, not out of the user's backward()
        with functorch_config.patch(force_non_lazy_backward_lowering=True):
            return compiler(gm, examples)

    def part(label):
        def compile_part(g, ex):
            p.parts.append(_kernel(f"{label} {index}", g))
            fn = g if compiler is None else compiler(g, ex)
            for k in getattr(fn, "kernels", None) or ():  # the triton backend's kernels
                p.parts.append(
                    SimpleNamespace(name=f"{label} {index}: {k.name}", ops=tuple(k.ops), source=k.source)
                )
            return fn if getattr(fn, "_boxed_call", False) else make_boxed_func(fn)

        return compile_part

    # the backward compiled now, not at its first run: it shows in the report, and a
    # compiler failing on it sends the graph down the usual path at capture time
    with functorch_config.patch(force_non_lazy_backward_lowering=True):
        return aot_module_simplified(
            gm, examples, fw_compiler=part(kind), bw_compiler=part("backward"), inference_compiler=part(kind)
        )


_RANDOM_OPS = frozenset(
    {
        *("dropout", "dropout_", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d"),
        *("dropout3d", "rand", "randn", "rand_like", "randn_like", "randint", "randint_like"),
        *("bernoulli", "bernoulli_", "normal", "normal_", "uniform_", "multinomial", "randperm"),
        *("exponential_", "rrelu", "native_dropout"),
    }
)


def _name(target) -> str:
    return target if isinstance(target, str) else getattr(target, "__name__", "")


def _inductor_falls_back_random() -> bool:
    from torch._inductor import config

    return bool(config.fallback_random)


def _is_inductor(compiler) -> bool:
    return getattr(compiler, "__module__", "") == "torch._inductor.compile_fx" and (
        getattr(compiler, "__name__", "") == "compile_fx"
    )


def _kernel(label: str, gm) -> SimpleNamespace:
    ops = tuple(str(n.target) for n in gm.graph.nodes if n.op in ("call_function", "call_method"))
    return SimpleNamespace(name=label, ops=ops, source=gm.code)


def _barrier_kernel(n) -> SimpleNamespace:
    if n.target is torch.autograd.backward:
        label = "backward() (autograd engine: runs the backward graphs)"
    elif n.op == "getattr":
        label = f"{n.args[0].name}.grad (read)"
    elif n.target is setattr:
        label = f"{n.args[0].name}.grad = ... (write)"
    elif getattr(n.target, "__func__", None) is _APPLY:
        cls = n.target.__self__
        label = f"{cls.__qualname__}.apply (opaque autograd.Function: {_why_opaque(cls)})"
    elif str(getattr(n.target, "__module__", "")).endswith(".optim_models"):
        label = f"{getattr(n.target, '__name__', 'step')} (optimizer step, eager)"
    elif str(getattr(n.target, "__module__", "")).endswith(".optim_step"):
        label = f"{n.target.step.__name__} (optimizer step: Inductor after the first step, else eager)"
    else:
        label = f"{getattr(n.target, '__qualname__', n.target)} (eager)"
    return SimpleNamespace(name=label, ops=(str(getattr(n.target, "__name__", n.target)),), source="")


def _why_opaque(cls) -> str:
    try:
        function_purity.check(cls)
    except function_purity.NotTraceable as e:
        return str(e)
    return "AOT autograd could not trace it"


def _emit_call(p: _Piece, ns, lines: list, indent: str) -> None:
    wrap = ns.const(joint_numbers.as_float64, "as_float64") if p.as_tensors else ""
    ins = ", ".join(
        [f"{wrap}({n.name})" if i in p.as_tensors else n.name for i, n in enumerate(p.graph.inputs)]
        + [f"{tensor.name}.{kind}({d})" for _, tensor, kind, d in p.symbols]
    )
    outs = ", ".join(n.name for n in p.graph.outputs)
    call = f"{ns.const(p.fn, 'joint_segment')}({ins})"
    if not p.graph.outputs:
        lines.append(f"{indent}{call}")
    else:
        lines.append(f"{indent}{outs}, = {call}" if len(p.graph.outputs) == 1 else f"{indent}{outs} = {call}")
