"""Backend registry: turn a captured `Graph` into code the region function runs.

``resolve(spec)`` accepts ``"auto"``, ``"eager"``, ``"fx"``, ``"triton"`` or a
callable ``(gm: torch.fx.GraphModule, example_inputs) -> callable`` (any graph
compiler, e.g. TorchInductor's ``compile_fx``).  Every backend returns a
`CompiledGraph`, which emits the region's statements for the graph: the eager
backend emits straight-line torch calls, the others one call of a compiled
callable.  ``"triton"`` is imported lazily from ``bcfront.backends.triton``
(``compile_fx(gm, example_inputs)`` with ``.kernels``/``.fallback_ops``); if
it is missing or fails, the graph runs on the eager backend and the entry
records a note.  ``"auto"`` picks triton for CUDA inputs, eager otherwise.
"""

from __future__ import annotations

from . import checkpoints
from .compiled import CompiledGraph

NAMES = ("auto", "eager", "fx", "triton")


def check(spec) -> None:
    """Validate a backend spec at capture() time (TypeError/ValueError for bad ones)."""
    if callable(spec):
        return
    if not isinstance(spec, str) or spec not in NAMES:
        raise ValueError(
            f"unknown backend {spec!r}; expected one of {', '.join(NAMES)} "
            "or a callable (gm, example_inputs) -> callable"
        )


def name_of(spec) -> str:
    if isinstance(spec, str):
        return spec
    return getattr(spec, "__name__", None) or type(spec).__name__


def compile_graph(spec, graph, example_inputs, joint: bool = False) -> CompiledGraph:
    """Compile `graph` with the backend `spec` (see module docstring); `joint`: a graph
    with a backward goes through AOT autograd in pieces (`backends/joint.py`)."""
    from ..ir.passes import sink_waits
    from . import eager

    sink_waits(graph)  # collectives' waits at their first use (`semantics.collectives`)
    if spec == "eager" or not graph.body:
        return eager.compile_graph(graph)
    if spec == "auto":
        if any(getattr(t, "is_cuda", False) for t in example_inputs):
            return _joint(graph, example_inputs, "triton") if joint else _triton(graph, example_inputs)
        return eager.compile_graph(graph)
    if joint:
        return _joint(graph, example_inputs, spec)
    if spec == "triton":
        return _triton(graph, example_inputs)
    try:
        if spec == "fx":
            return _fx(graph, example_inputs, None, "fx")
        return _fx(graph, example_inputs, spec, name_of(spec))
    except NotImplementedError as e:  # a graph FX export does not cover: run it eagerly
        out = eager.compile_graph(graph)
        out.notes.append(f"{name_of(spec)} backend cannot take this graph ({e}); ran eager")
        return out


def _joint(graph, example_inputs, spec) -> CompiledGraph:
    """A graph with a backward as AOT-autograd segments around eager statements; any other
    graph, or one the joint path fails on, as without the option (with a note why)."""
    from . import joint

    plain = (lambda: _triton(graph, example_inputs)) if spec == "triton" else None
    if not joint.has_backward(graph):
        return plain() if plain else compile_graph(spec, graph, example_inputs)
    try:
        if spec == "triton":
            from .triton import compile_fx

            return joint.compile_joint(graph, compile_fx, "triton")
        return joint.compile_joint(graph, None if spec == "fx" else spec, name_of(spec))
    except Exception as e:  # noqa: BLE001 - AOT autograd or the compiler refused a segment: today's path
        out = plain() if plain else compile_graph(spec, graph, example_inputs)
        out.notes.append(f"joint graph not built ({type(e).__name__}: {e}); the graph took the usual path")
        return out


def _fx(graph, example_inputs, compiler, name) -> CompiledGraph:
    """Non-eager backends get the functionalized (pure) graph; the region does the writes."""
    from . import fx

    return compile_functional(graph, example_inputs, lambda g, ex: fx.compile_graph(g, ex, compiler, name))


def compile_functional(graph, example_inputs, compile_pure) -> CompiledGraph:
    """Functionalize `graph`, compile the pure graph with ``compile_pure(graph, examples)``
    (a `CompiledGraph`) and wrap its emit with the plan; on `FunctionalizeError` the
    graph stays on the eager backend, with a note saying why."""
    from ..ir.functionalize import functionalize
    from ..ir.inverses import FunctionalizeError

    notes = []
    if has_symbolic_inputs(graph):
        # functionalization re-runs the graph on the example's (static) sizes; a graph with
        # symbolic sizes and no write is pure already and goes as it is, with its symbols
        if not any(n.mutates for n in graph.body):
            return compile_pure(graph, symbolic_examples(graph, example_inputs))
        specialize_inputs(graph)
        notes.append(
            "a graph with symbolic sizes and in-place writes was specialized to this call's sizes "
            "(functionalization needs them)"
        )
    try:
        plan = functionalize(graph, example_inputs)
    except FunctionalizeError as e:
        from . import eager

        out = eager.compile_graph(graph)
        out.notes.append(f"functionalization failed ({e}); the graph ran on the eager backend")
        return out
    compiled = compile_pure(plan.graph, plan.example_inputs)
    compiled.emit = plan.wrap_emit(compiled.emit)
    compiled.plan = plan
    compiled.notes.extend(notes)
    # (the pure graph's nodes are new ones: the checkpointed runs are not marked there)
    compiled.notes.extend(
        checkpoints.kept_note(o.region, "the graph was functionalized for this backend")
        for o in checkpoints.outlined(graph)
    )
    return compiled


def _symbols_of(meta) -> list:
    """The symbolic numbers among an input's sizes and strides (or the input itself)."""
    dims = getattr(meta, "shape", None)
    parts = [meta] if dims is None else [*dims, *meta.stride()]
    return [d for d in parts if type(d).__name__ == "SymInt" and d.node.maybe_as_int() is None]


def has_symbolic_inputs(graph) -> bool:
    """Whether some input of `graph` has a symbolic size or is a symbolic int."""
    return any(_symbols_of(n.meta) for n in graph.inputs)


def specialize_inputs(graph) -> None:
    """Pin every symbol of the inputs to this call's value: the ShapeEnv guards each
    (``s0 == 4``), so the entry serves these sizes only (the guards are produced after
    the backend ran)."""
    for n in graph.inputs:
        for d in _symbols_of(n.meta):
            int(d)


def symbolic_examples(graph, example_inputs) -> list:
    """The inputs a compiler sees for a symbolic graph: the fake tensors and SymInts of
    its placeholders (a compiler that fakifies real examples would specialize them)."""
    return [n.meta for n in graph.inputs]


def _triton(graph, example_inputs) -> CompiledGraph:
    from . import eager

    try:
        from .triton import compile_fx
    except Exception as e:  # noqa: BLE001 - the backend is optional; fall back to eager with a note
        out = eager.compile_graph(graph)
        out.notes.append(f"triton backend unavailable ({type(e).__name__}: {e}); ran eager")
        return out
    try:
        out = _fx(graph, example_inputs, compile_fx, "triton")
    except Exception as e:  # noqa: BLE001 - the backend failed on this graph; fall back to eager with a note
        out = eager.compile_graph(graph)
        out.notes.append(f"triton backend failed ({type(e).__name__}: {e}); ran eager")
    return out
