"""From one call to a cache entry: trace the root frame, then generate guard and region code.

`trace_entry(root_fn, args, kwargs, options)` runs the root function's
bytecode symbolically on the real arguments (wrapped as inputs with
``L[...]`` sources) and returns an `Entry`:

* normally a compiled entry: one generated guard function and one generated
  region function, both with the root function's own signature;
* at a graph break, the entry produced by `breaks.compile_break` (region up
  to the break, the instruction run natively, a captured continuation);
  `fullgraph=True` raises `GraphBreakError` instead.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from ... import report
from ...errors import GraphBreakError, UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from .codegen import Rebuilder, compile_function, function_source
from ..model.frame import Frame
from ..interp.interpreter import bind, builtins_of, run
from ..model.guard_kinds import GuardKind
from ..model.namespace import Namespace, reserved_prefix, signature_params
from ..model.sources import ConstSource, LocalSource, Ref, AttrSource
from .region_errors import errors_observable, guard_graph_errors, trace_with_splits, write_back_last
from ..model.tracer import SymbolicRaise, Tracer
from ..model.values import CellV, ObjectV, TensorV

_counter = itertools.count()
CAPTURE_LOCK = threading.RLock()     # one capture at a time (they share fake-tensor state)



class BindError(TypeError):
    """The call's arguments do not bind to the root's parameters (the native call raises too)."""


@dataclass
class Entry:
    guard: object                      # guard(*args, **kwargs) -> bool
    region: object                     # region(*args, **kwargs) -> result
    guards: list = field(default_factory=list)        # frontend.model.guards.Guard, discovery order
    graphs: list = field(default_factory=list)        # report.GraphInfo
    breaks: list = field(default_factory=list)        # report.GraphBreak
    side_effects: list = field(default_factory=list)  # report.SideEffect
    notes: list = field(default_factory=list)
    guard_source: str = ""
    region_source: str = ""
    children: list = field(default_factory=list)      # CapturedFunctions it calls (continuations)
    native: bool = False
    graph_objects: list = field(default_factory=list)  # ir.graph.Graph


def break_record(e: UnsupportedError, count: int = 1) -> report.GraphBreak:
    stack = tuple(getattr(e, "user_stack", None) or ())
    top = stack[-1] if stack else None
    return report.GraphBreak(
        reason=e.reason, message=e.message,
        filename=top.filename if top else None, lineno=top.lineno if top else None,
        source_line=top.source_line if top else "",
        instruction=getattr(e, "instruction", "") or "", user_stack=stack, count=count)


def raise_fullgraph(e: UnsupportedError):
    b = break_record(e)
    raise GraphBreakError(b.reason, b.message, b.filename, b.lineno, b.user_stack,
                          b.instruction) from None


def trace_entry(cf, root, args, kwargs) -> Entry:
    """Symbolically execute `root(*args, **kwargs)` and build the entry for this call.

    Captures are serialized process-wide: they share fake-tensor state (`fake`).
    """
    with CAPTURE_LOCK:
        return trace_with_splits(lambda split: _trace_entry(cf, root, args, kwargs, split))


def _trace_entry(cf, root, args, kwargs, split=None) -> Entry:
    code = root.__code__
    tx = Tracer(root.__qualname__, root.__globals__, cf.options)
    tx.split = split                 # where to end the region early (`region_errors.Split`)
    tx.graph.reserve(set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars))
    try:
        real_locals = bind(code, args, kwargs, root.__defaults__ or (), root.__kwdefaults__ or {},
                           tuple, dict)
    except TypeError as e:
        raise BindError(str(e)) from None
    root_src = ConstSource(Ref(root, root.__qualname__))
    if not is_continuation(root):
        # the body and defaults can be replaced in place (IPython's autoreload assigns __code__):
        # identity guards, also on None defaults so that adding some later recompiles.  A
        # continuation is private to bcfront: nothing replaces its body.
        for attr in ("__code__", "__defaults__", "__kwdefaults__"):
            tx.guard(GuardKind.ID_MATCH, AttrSource(root_src, attr), getattr(root, attr))
    frame = Frame(code, root.__globals__, builtins_of(root.__globals__), fn=ObjectV(root, root_src))
    tx.frames.append(frame)
    try:
        frame.locals = root_locals(tx, root, real_locals)
        from ...capture import _call_object
        if cf.module_root is not None and root is not _call_object:
            from ..semantics.objects import _guard_global_hooks, _HOOK_DICTS
            _guard_global_hooks(tx)
            tx.guard(GuardKind.NO_HOOKS, LocalSource(code.co_varnames[0]), None, _HOOK_DICTS,
                     example=cf.module_root)
            tx.guard(GuardKind.NOT_PRESENT, AttrSource(LocalSource(code.co_varnames[0]), "__dict__"), None,
                     "forward")                    # an instance-level forward would shadow the class's
    except UnsupportedError as e:
        e.user_stack = getattr(e, "user_stack", None) or tx.user_stack()
        tx.frames.pop()
        return _broken(cf, root, tx, e, frame)
    tx.frames.pop()
    try:
        kind, value = run(tx, frame)
    except UnsupportedError as e:
        return _broken(cf, root, tx, e, frame)
    except SymbolicRaise as e:
        kind, value = "raise", e.exc
    if kind not in ("return", "raise"):
        err = UnsupportedError(BreakReason.UNSUPPORTED_GENERATOR, "the captured function yields")
        return _broken(cf, root, tx, err, frame)
    try:
        return build_entry(cf, root, tx, value, raises=kind == "raise")
    except UnsupportedError as e:
        e.user_stack = getattr(e, "user_stack", None) or (tx.report_frame(frame),)
        return _broken(cf, root, tx, e, frame)


def is_continuation(fn) -> bool:
    return hasattr(fn, "__bcfront_resume__")


def root_locals(tx, root, real_locals) -> dict:
    """The root frame's locals: arguments wrapped as inputs, closure cells.  A continuation's
    cell arguments and function arguments (the region before the break made them, new
    objects per call) are inputs by contents and code, not identity (`cells`)."""
    from ..semantics.cells import by_code_or_wrap, input_cell
    from .resume import CELL_PARAMS
    code = root.__code__
    out = {}
    for name, cell in zip(code.co_freevars, root.__closure__ or ()):
        out[name] = CellV(None, real=cell, name=name)
        tx.by_id[id(cell)] = out[name]        # a closure passed in may share it
    if not is_continuation(root):
        out.update((name, wrap(tx, value, LocalSource(name))) for name, value in real_locals.items())
        return out
    cells = getattr(root, CELL_PARAMS)
    for name in cells:                   # first: functions passed in may hold them
        out[name] = input_cell(tx, real_locals[name], LocalSource(name), name)
    for name, value in real_locals.items():
        if name not in cells:
            out[name] = by_code_or_wrap(tx, value, LocalSource(name))
    return out


def _broken(cf, root, tx, e, frame) -> Entry:
    if cf.fullgraph:
        raise_fullgraph(e)
    from . import breaks
    return breaks.compile_break(cf, root, tx, e, frame)


def refine_first_use(tx, root) -> None:
    """Guards on arguments were made when the frame was set up (at the `def` line); point
    them at the first instruction that loads the argument instead."""
    import dataclasses
    from ...report import UserFrame
    from ..model.frame import decoded
    code = root.__code__
    first: dict[str, int] = {}
    for ins in decoded(code)[0].instructions:
        if ins.opname.startswith("LOAD_FAST") or ins.opname in ("LOAD_DEREF", "LOAD_CLOSURE"):
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            for n in names:
                if isinstance(n, str) and ins.lineno is not None:
                    first.setdefault(n, ins.lineno)
    for key, g in list(tx.guards._guards.items()):
        src = g.source.root if g.source is not None else None
        fu = g.first_use
        if not isinstance(src, LocalSource) or fu is None or fu.lineno != code.co_firstlineno:
            continue
        line = first.get(src.name)
        if line is not None and line != fu.lineno:
            import linecache
            text = linecache.getline(code.co_filename, line).strip()
            tx.guards._guards[key] = dataclasses.replace(
                g, first_use=UserFrame(fu.function, fu.filename, line, text))


def native_entry(cf, root, tx, notes=(), breaks_=()) -> Entry:
    """An entry that runs the function natively whenever the guards collected so far hold."""
    try:
        guard, gsrc = make_guard(root, tx)
    except UnsupportedError:
        guard, gsrc = (lambda *a, **k: True), "# no guards: the signature cannot be spelled"
    entry = Entry(guard, root, list(tx.guards), [], list(breaks_), [], list(notes), gsrc,
                  f"# runs {root.__qualname__} natively", native=True)
    return entry


# -- code generation ------------------------------------------------------------------------------

def _signature(root):
    code = root.__code__
    sig = signature_params(code)
    prefix = reserved_prefix(code)
    if sig is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_SIGNATURE, "a parameter name is not an identifier")
    parts, params = sig
    return parts, params, prefix


def _finish(fn, root):
    fn.__defaults__ = root.__defaults__
    fn.__kwdefaults__ = root.__kwdefaults__
    return fn


def make_guard(root, tx):
    parts, params, prefix = _signature(root)
    ns = Namespace(params, prefix)
    name = f"{prefix}guard"
    src = function_source(name, parts, tx.guards.function_body(ns))
    fn = compile_function(src, ns, name, f"<bcfront guard {root.__qualname__} #{next(_counter)}>")
    return _finish(fn, root), src


class RegionCode:
    """The region function of an entry being built: namespace, rebuild statements, finish().

    `tail` collects the statements after the graph (rebuilding values, replaying
    writes, the break's native instruction...); every tensor the rebuilt values
    use becomes a graph output.
    """

    def __init__(self, root, tx):
        self.root, self.tx = root, tx
        self.parts, params, self.prefix = _signature(root)
        self.ns = Namespace(params, self.prefix)
        self.tail: list[str] = []
        self._outputs: dict[int, object] = {}
        self.rb = Rebuilder(self.ns, self._tensor_name, self.tail, globals_values=tx.globals_values)

    def _tensor_name(self, v: TensorV) -> str:
        if v.node.op != "input":
            self._outputs.setdefault(v.node.index, v.node)
        return v.node.name

    def finish(self, cf, tag: str, breaks=(), children=None) -> Entry:
        """Compile the graph with the backend, assemble and compile guard and region."""
        from ... import backends
        from ..model.effects import records
        tx, root, ns, graph = self.tx, self.root, self.ns, self.tx.graph
        refine_first_use(tx, root)
        graph.outputs = [self._outputs[i] for i in sorted(self._outputs)]
        example = example_inputs(tx)
        head = input_fetches(tx, graph, ns)
        compiled = backends.compile_graph(cf.backend, graph, example)
        if graph.body:
            compiled = write_back_last(graph, example, compiled, errors_observable(tx, graph), tx)
        body: list[str] = []
        compiled.emit(graph, ns, body)
        if body:
            body = guard_graph_errors(body, graph, compiled, root, self.parts, ns)
        from ...timing import time_graph
        body = time_graph(body, ns)     # graph time, read only while explain collects
        name = f"{self.prefix}region"
        src = function_source(name, self.parts, head + body + self.tail)
        region = _finish(compile_function(src, ns, name, f"<bcfront region {root.__qualname__} {tag}>"),
                         root)
        add_distinct_guard(tx)
        if getattr(compiled, "plan", None) is not None:     # functionalized: guard input storage sharing
            from ...ir.functionalize import add_storage_guard
            add_storage_guard(tx, compiled.plan)
        guard, gsrc = make_guard(root, tx)
        graphs = [graph_info(root.__qualname__, graph, compiled)] if graph.body else []
        return Entry(guard, region, list(tx.guards), graphs, list(breaks),
                     records(tx, graph, compiled, example), list(tx.notes) + list(compiled.notes),
                     gsrc, src, children=children if children is not None else [],
                     graph_objects=[graph])


def build_entry(cf, root, tx, result, raises: bool = False) -> Entry:
    """A compiled entry returning (or, with `raises`, raising) `result` after the graph and writes."""
    code = RegionCode(root, tx)
    ns, tail = code.ns, code.tail
    ret = code.rb.expr(result)
    ret_name = ns.fresh("result")
    tail.append(f"    {ret_name} = {ret}")
    tail.extend("    " + p for p in code.rb.replay(tx.mutated))
    tail.extend(state_epilogue(tx, ns))
    tail.append(f"    {'raise' if raises else 'return'} {ret_name}")
    return code.finish(cf, f"#{next(_counter)}")


def state_epilogue(tx, ns) -> list[str]:
    """Torch state the traced code changed and left changed (e.g. a set_grad_enabled call)."""
    if tx.fakes is None or tx.state == tx.entry_state:
        return []
    if tx.state.autocast != tx.entry_state.autocast:
        raise UnsupportedError(BreakReason.AUTOCAST, "the function returns inside an autocast region")
    if tx.state.inference != tx.entry_state.inference:
        raise UnsupportedError(BreakReason.INFERENCE_MODE,
                               "the function returns inside an inference_mode region")
    import torch
    return [f"    {ns.const(torch._C._set_grad_enabled, 'set_grad_enabled')}({tx.state.grad!r})"]


def add_distinct_guard(tx) -> None:
    """When the graph mutates tensors, distinct input tensors must stay distinct objects."""
    if not tx.has_mutation:
        return
    srcs = [v.source for v in tx.input_tensors if v.source is not None]
    if len(srcs) > 1:
        tx.guard(GuardKind.TENSOR_DISTINCT, srcs[0], tuple(srcs))


def input_fetches(tx, graph, ns) -> list[str]:
    """``name = <source>`` for every graph input, reaching through identity-guarded objects."""
    tx.guards.identity_checks(ns, emit=False)
    return [f"    {n.name} = {ns.spell(n.target)}" for n in graph.inputs]


def example_inputs(tx) -> list:
    return [tx.real_tensors[id(v)] for v in tx.input_tensors]


def graph_info(name, graph, compiled) -> report.GraphInfo:
    return report.GraphInfo(
        function=name, backend=compiled.backend, op_count=graph.op_count, code=graph.format(),
        kernels=tuple(report.KernelInfo(getattr(k, "name", str(k)), tuple(getattr(k, "ops", ())),
                                        getattr(k, "source", "")) for k in compiled.kernels),
        fallback_ops=tuple(str(o) for o in compiled.fallback_ops))
