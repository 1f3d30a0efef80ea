"""A cache entry and how it is built: the generated guard and region functions.

`Entry` is what `capture` keeps per traced call.  `RegionCode` assembles a
region function (graph inputs fetched from their sources, the compiled graph,
then the statements that rebuild values and replay writes) and `finish`es it
into an `Entry` with its guard function (`make_guard`); `build_entry` does so
for a trace that returned or raised, `native_entry` for one that runs the
function natively under the guards collected so far.  `driver` (a whole
trace) and `breaks` (a region cut at a graph break) both build entries here.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass, field

from ... import report
from ...errors import UnsupportedError
from ...ir.int_arith import drop_unused_int_arith, is_int_input
from ...reasons import BreakReason
from ..model.builder import early_runtime_values
from ..model.guard_batches import code_identity
from ..model.guard_kinds import GuardKind, ShapeCheck
from ..model.guards import Guard, single_check_source
from ..model.namespace import Namespace, reserved_prefix, signature_params
from ..model.sources import ConstSource, LocalSource
from ..model.values import ExceptionV, ObjectV, TensorV
from .caller_frames import from_user_frame
from .codegen import DeferredFunction, Rebuilder, compile_function, function_source
from .links import ABSENT, GENERATOR_FLAGS, exact_parameters, link_function
from .region_errors import (
    errors_observable,
    first_writer_index,
    grad_undo,
    guard_graph_errors,
    ints_alone,
    placed_writes,
    split_before_collective,
    write_back_last,
)
from .tracebacks import attach

_counter = itertools.count()


MISS = object()  # what an entry's `fused` function returns where its guard fails


class FusedOnFirstRead:
    """`Entry.fused`: the region's result, or MISS where the guard fails.  Only the generated
    call of `bcfront.fast_call` calls it (not the C call, not the chain links), so an entry
    keeps its source (`Entry.fused_source`, a `codegen.DeferredFunction`) and compiles it
    when first read; then the instance's own attribute hides this descriptor.  Replacing
    guard or region (a test's spy) makes it call them instead: it must not run the old
    ones.  Where compiling fails (a bcfront bug) it is the guard then the region, which is
    what it stands for (`_guard_then_region`, the reference `tests/test_fast_call.py`
    compares it with)."""

    def __get__(self, entry, owner=None):
        if entry is None:
            return self
        deferred = entry.__dict__.get("fused_source")
        fn = None
        if deferred is not None:
            try:
                fn = _finish(deferred.compile(), entry.region)
            except Exception:  # noqa: BLE001 - the plain pair does the same, one frame more
                fn = _guard_then_region(entry)
        object.__setattr__(entry, "fused_source", None)
        object.__setattr__(entry, "fused", fn)
        return fn


@dataclass
class Entry:
    guard: object  # guard(*args, **kwargs) -> bool
    region: object  # region(*args, **kwargs) -> result
    guards: list = field(default_factory=list)  # frontend.guards.Guard, discovery order
    graphs: list = field(default_factory=list)  # report.GraphInfo
    breaks: list = field(default_factory=list)  # report.GraphBreak
    side_effects: list = field(default_factory=list)  # report.SideEffect
    notes: list = field(default_factory=list)
    guard_source: str = ""
    region_source: str = ""
    children: list = field(default_factory=list)  # CapturedFunctions it calls (continuations)
    native: bool = False
    graph_objects: list = field(default_factory=list)  # frontend.graph.Graph
    # `fused` (below, not a field): guard and region in one function (`fused_function`),
    # compiled when first read (`fused_source` until then); None when there is none.
    fused_source: object = field(default=None, repr=False, compare=False)
    # guard and region as one function with the root's own signature that calls the next
    # entry's where its guard fails (`link_function`; `bcfront.fast_call` chains them);
    # None where there is none.  Replacing guard or region drops it.
    link: object = None
    link_names: object = None  # LinkNames: the link's globals that `fast_call` binds

    MISS = MISS
    ABSENT = ABSENT
    fused = FusedOnFirstRead()

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        d = self.__dict__
        if name in ("guard", "region") and (d.get("fused") is not None or d.get("fused_source") is not None):
            object.__setattr__(self, "fused_source", None)  # its code would run the old ones
            object.__setattr__(self, "fused", _guard_then_region(self))
        if name in ("guard", "region") and self.__dict__.get("link") is not None:
            object.__setattr__(self, "link", None)
            owner = self.__dict__.get("owner")  # set by fast_call: its chain has this link
            if owner is not None and owner() is not None:
                owner()._install_call()


def _guard_then_region(entry):
    """`Entry.fused` made of the entry's guard and region as they are now."""
    guard, region = entry.guard, entry.region

    def fused(*args, **kwargs):
        return region(*args, **kwargs) if guard(*args, **kwargs) else MISS

    return fused


def break_record(e: UnsupportedError, count: int = 1) -> report.GraphBreak:
    stack = tuple(getattr(e, "user_stack", None) or ())
    top = stack[-1] if stack else None
    return report.GraphBreak(
        reason=e.reason,
        message=e.message,
        filename=top.filename if top else None,
        lineno=top.lineno if top else None,
        source_line=top.source_line if top else "",
        instruction=getattr(e, "instruction", "") or "",
        user_stack=stack,
        count=count,
    )


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
            from ..model.source_lines import source_line

            text = source_line(code.co_filename, line)
            tx.guards._guards[key] = dataclasses.replace(
                g, first_use=UserFrame(fu.function, fu.filename, line, text)
            )


def entry_guards(tx) -> list:
    """The guards an entry keeps (for explain and diagnosing misses), without the example
    tensors the guard function was built from: an entry must not keep a call's inputs alive."""
    import dataclasses

    from ..model.guards import weak_expected

    return [
        weak_expected(dataclasses.replace(g, example=None) if g.example is not None else g) for g in tx.guards
    ]


def native_entry(cf, root, tx, notes=(), breaks_=()) -> Entry:
    """An entry that runs the function natively whenever the guards collected so far hold."""
    try:
        guard, gsrc = make_guard(root, tx)
    except UnsupportedError:
        guard, gsrc = (lambda *a, **k: True), "# no guards: the signature cannot be spelled"
    entry = Entry(
        guard,
        from_user_frame(root),
        entry_guards(tx),
        [],
        list(breaks_),
        [],
        list(notes),
        gsrc,
        f"# runs {root.__qualname__} natively",
        native=True,
    )
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


def add_shape_guards(tx) -> None:
    """The ShapeEnv's guards of a dynamic capture, as SHAPE guards (once: the trace is
    over, nothing may add a shape guard after this)."""
    env = tx.fakes
    if env is None or not env.dynamic or getattr(tx, "shape_guards_added", False):
        return
    tx.shape_guards_added = True
    _pin_specialized_inputs(tx, env)
    symbols = {}  # symbol -> (source, dim or None)
    for spelled, sym in env.symbol_names().items():
        name, _, dim = spelled.partition(".size()")
        src = tx.shape_inputs.get(name)
        if src is not None:
            symbols[sym] = (src, int(dim.strip("[]")) if dim else None)
    for code, readable in env.shape_guards():
        inputs = tuple((n, s) for n, s in tx.shape_inputs.items() if n in code)
        for n, src in inputs:  # what no symbol names (a stride): the input's own spelling
            readable = readable.replace(n, src.readable())
        named = tuple((k, *v) for k, v in symbols.items() if re.search(rf"\b{k}\b", readable))
        tx.add_guard(Guard(GuardKind.SHAPE, None, readable, ShapeCheck(code, inputs, named)))


def _pin_specialized_inputs(tx, env) -> None:
    """A symbol the trace specialized (``range(x.shape[0])``) is a constant in the ShapeEnv
    now, and its guards leave constants to the input checks: the tensor check takes the
    sizes and strides the fake has after the trace, an int input gets a CONSTANT_MATCH."""
    from ...ir.fake import static_parts

    for value, name in env.placeholders:
        src = tx.shape_inputs.get(name)
        if src is None:
            continue
        if not hasattr(value, "shape"):  # a SymInt or SymFloat input
            node = value.node
            pinned = node.maybe_as_float() if type(value).__name__ == "SymFloat" else node.maybe_as_int()
            if pinned is not None:
                tx.add_guard(Guard(GuardKind.CONSTANT_MATCH, src, pinned))
            continue
        key = (GuardKind.TENSOR_MATCH, src, None)
        g = tx.guards._guards.get(key)
        shape = static_parts(value.shape)
        if g is not None:
            exp = g.expected._replace(shape=shape, stride=static_parts(value.stride()))
            tx.guards._guards[key] = dataclasses.replace(g, expected=exp)
        for d in sorted(tx.strict_marks.get(name, ())):
            if shape[d] is not None and shape[d] > 1:
                tx.notes.append(tx.shape_policy.specialized_mark(src.readable(), d, shape[d]))


def make_guard(root, tx):
    """The guard function of `tx`'s guards and its source."""
    add_shape_guards(tx)
    parts, params, prefix = _signature(root)
    ns = Namespace(params, prefix)
    src = function_source(f"{prefix}guard", parts, tx.guards.function_body(ns))
    tx.guards.sealed = True
    return _compile_guard(src, ns, prefix, root), src


def make_region_guard(root, tx, ns, exact_link: bool = False):
    """`make_guard` for the region whose namespace is `ns`, and also its checks as lines that
    return a name bound to MISS where they fail: ``(guard, source, lines, miss, link_lines)``,
    for the entry's fused and link functions (the lines are spelled in `ns`'s names).  With
    `exact_link`, the checks of the root's own ``__code__`` (`root_code_keys`) are kept
    apart: `lines` make them first, each spelled by its guard's kind, and `link_lines` are
    the rest (the C call makes them); else `link_lines` are `lines`.  One generation of the
    rest for both: they share the guard memo's cell (`guard_memo`)."""
    add_shape_guards(tx)
    parts, _, prefix = _signature(root)
    ns = ns.sibling()
    miss = ns.const(MISS, hint="miss")
    keys = root_code_keys(tx, root) if exact_link else set()
    apart = [g for g in tx.guards if g.key in keys]
    # spelled before the rest: its generation rebases the checked sources
    first = [f"    if not ({single_check_source(g, ns)}):" for g in apart]
    first_lines = [line for check in first for line in (check, f"        return {miss}")]
    link_lines = tx.guards.function_body(ns, miss=miss, skip=keys)
    tx.guards.sealed = True
    lines = [*first_lines, *link_lines]
    src = function_source(f"{prefix}guard", parts, [*lines, "    return True"])
    ns.globals[miss] = False  # the guard function's own copy of the names: it says False
    try:
        fn = _compile_guard(src, ns, prefix, root)
    finally:
        ns.globals[miss] = MISS
    return fn, src, lines, miss, link_lines


def root_code_keys(tx, root) -> set:
    """The keys of `tx`'s guards that `root`'s ``__code__`` is the traced one."""
    keys = set()
    for g in tx.guards:
        found = code_identity(g)
        if found is not None and type(found[0]) is ConstSource and found[0].value.obj is root:
            keys.add(g.key)
    return keys


def _compile_guard(src, ns, prefix, root):
    fn = compile_function(src, ns, f"{prefix}guard", f"bcfront:guard {root.__qualname__} #{next(_counter)}")
    return _finish(fn, root)


def fused_function(root, ns, parts, prefix, guard_lines: list[str], region_body: list[str], region, tag):
    """Guard and region as one function: the checks, then the region's code (one call and
    one argument binding on a cached call instead of two; `bcfront.fast_call`), as a
    `DeferredFunction` (`Entry.fused` compiles it when first read, with the region's
    defaults: the root's now).  None for a region that is a generator or coroutine
    function (its body cannot follow checks)."""
    if region.__code__.co_flags & GENERATOR_FLAGS:
        return None
    name = f"{prefix}entry"
    src = function_source(name, parts, guard_lines + region_body)
    return DeferredFunction(src, ns, name, f"bcfront:entry {root.__qualname__} {tag}")


@dataclass(frozen=True)
class RegionRaise:
    """How a region's code ends raising: its last statements, kept apart from the rest of
    its code (`RegionCode.tail`) so that an exact link ends its own way instead
    (`links.link_function`: ``return raised(name, chain)``)."""

    name: str  # the exception's local
    chain: bool  # chained to the caller's handled exception by the raise
    lines: tuple[str, ...]  # the statements that raise it (`raise_lines`), after the tail


class RegionCode:
    """The region function of an entry being built: namespace, rebuild statements, finish().

    `tail` collects the statements after the graph (rebuilding values, replaying
    writes, the break's native instruction...); every tensor the rebuilt values
    use becomes a graph output.  `raises`: the statements that end it raising, if it
    does (after `tail`).
    """

    def __init__(self, root, tx):
        self.root, self.tx = root, tx
        self.parts, params, self.prefix = _signature(root)
        self.ns = Namespace(params, self.prefix)
        self.tail: list[str] = []
        self.raises: RegionRaise | None = None  # how the code ends raising, if it does
        self._outputs: dict[int, object] = {}
        self.rb = Rebuilder(self.ns, self._tensor_name, self.tail, globals_values=tx.globals_values)
        # no graph: no item changes made among its statements too (`region_errors.placed_writes`)
        self.rb.ends_by_calls = not tx.graph.body
        self.early, self.pure_early = early_reads(tx, self.ns)

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
        drop_unused_int_arith(graph)  # int arithmetic only compared (answered, guarded) at capture
        example = example_inputs(tx)
        head = input_fetches(tx, graph, ns)
        compiled = backends.compile_graph(cf.backend, graph, example, joint=tx.options.joint_graph)
        if graph.body:
            first = first_writer_index(graph, grad_undo(tx, graph)[0])
            observable = errors_observable(tx, graph, first)
            # Python writes alone making it observable: made among the graph's statements
            placed = placed_writes(tx, graph, first) if observable and compiled.backend == "eager" else None
            compiled = write_back_last(graph, example, compiled, observable and placed is None, tx)
            if placed:
                compiled.placed_writes = {i: self.rb.const_writes(ws) for i, ws in placed.items()}
            split_before_collective(tx, graph, compiled)
        body: list[str] = []
        compiled.emit(graph, ns, body)
        if body and not ints_alone(graph, compiled):
            from ...timing import time_graph

            body = guard_graph_errors(body, graph, compiled, root, self.parts, ns)
            body = time_graph(body, ns)  # graph time, read only while explain collects
        name = f"{self.prefix}region"
        ending = list(self.raises.lines) if self.raises is not None else []
        head = unused_ints_unfetched(head, graph, body + self.tail + ending)
        early = unused_pure_calls_dropped(self.early, self.pure_early, head + body + self.tail + ending)
        region_lines = early + head + body + self.tail  # the region's code, but for a raise that ends it
        src = function_source(name, self.parts, region_lines + ending)
        region = _finish(compile_function(src, ns, name, f"bcfront:region {root.__qualname__} {tag}"), root)
        add_distinct_guard(tx)
        add_mutation_alias_guards(tx)
        if getattr(compiled, "plan", None) is not None:  # functionalized: guard input storage sharing
            add_storage_guard(tx, compiled.plan)
        exact = (
            getattr(cf, "exact_links", False)
            and exact_parameters(self.parts, root.__kwdefaults__) is not None
        )
        guard, gsrc, guard_lines, miss, link_lines = make_region_guard(root, tx, ns, exact)
        whole = region_lines + ending
        fused = fused_function(root, ns, self.parts, self.prefix, guard_lines, whole, region, tag)
        link, link_names = link_function(
            root,
            ns,
            self.parts,
            self.prefix,
            link_lines,
            miss,
            region_lines,
            region,
            tag,
            exact,
            self.raises,
        )
        graphs = [graph_info(root.__qualname__, graph, compiled)] if graph.body else []
        children = children if children is not None else []
        site = tx.__dict__.get("own_capture")  # the captures its FSDP call nodes call
        children.extend(c for c in (site.children if site is not None else ()) if c not in children)
        return Entry(
            guard,
            region,
            entry_guards(tx),
            graphs,
            list(breaks),
            records(tx, graph, compiled, example),
            list(tx.notes) + list(compiled.notes),
            gsrc,
            src,
            children=children,
            graph_objects=[graph],
            fused_source=fused,
            link=link,
            link_names=link_names,
        )


def build_entry(cf, root, tx, result, raises: bool = False) -> Entry:
    """A compiled entry returning (or, with `raises`, raising) `result` after the graph and writes."""
    code = RegionCode(root, tx)
    ns, tail = code.ns, code.tail
    if raises:
        code.rb.raising = result
    ret = code.rb.expr(result)
    ret_name = ns.fresh("result")
    tail.append(f"    {ret_name} = {ret}")
    if raises and isinstance(result, ObjectV) and tx.object_tbs.get(id(result.obj)):
        # made outside the trace: the frames its raise in the trace went through (O64)
        entries = ns.const(tx.object_tbs[id(result.obj)], "tb_entries")
        tail.append(f"    {ns.const(attach, 'attach_traceback')}({ret_name}, {entries})")
    tail.extend("    " + p for p in code.rb.replay(tx.mutated))
    tail.extend(state_epilogue(tx, ns))
    if not raises:
        tail.append(f"    return {ret_name}")
        return code.finish(cf, f"#{next(_counter)}")
    chain = not isinstance(result, ExceptionV) or result.outer_context
    made = code.rb.memo.get(id(result))
    local = made is not None and made.isidentifier() and made not in ns.globals and made != ret_name
    holders = [ret_name] + ([made] if local else [])  # (a global's name made local would break it)
    code.raises = RegionRaise(ret_name, chain, tuple(raise_lines(ret_name, chain, ns, holders)))
    return code.finish(cf, f"#{next(_counter)}")


def raise_lines(name: str, chain: bool, ns, holders: list[str]) -> list[str]:
    """The region's last statements: raise `name`.  A ``raise`` sets the exception's
    ``__context__`` to the one the caller handles (CPython's implicit chaining): right for
    an exception the function raised outside its own handlers (`chain`), not for one
    raised inside them, whose context the trace knows and the region set -- kept.  The
    locals that hold the exception (`holders`) are cleared on the way out: the traceback
    keeps this frame, which would keep the exception (and the call's arguments) in a
    cycle only the collector frees."""
    keep = []
    if not chain:
        context = ns.fresh("context")
        keep = [f"    {context} = {name}.__context__"]
    return [
        *keep,
        "    try:",
        f"        raise {name}",
        "    finally:",  # a re-raise: no chaining, no new traceback entry
        *([f"        {name}.__context__ = {context}"] if not chain else []),
        f"        {' = '.join(holders)} = None",
    ]


def state_epilogue(tx, ns) -> list[str]:
    """Torch state the traced code changed and left changed (e.g. a set_grad_enabled call)."""
    if not tx.torch_state_guarded or tx.state == tx.entry_state:
        return []
    if tx.state.autocast != tx.entry_state.autocast:
        raise UnsupportedError(BreakReason.AUTOCAST, "the function returns inside an autocast region")
    if tx.state.inference != tx.entry_state.inference:
        raise UnsupportedError(
            BreakReason.INFERENCE_MODE, "the function returns inside an inference_mode region"
        )
    import torch

    return [f"    {ns.const(torch._C._set_grad_enabled, 'set_grad_enabled')}({tx.state.grad!r})"]


def add_distinct_guard(tx) -> None:
    """When the graph mutates tensors, distinct input tensors must stay distinct objects."""
    if not tx.has_mutation:
        return
    srcs = [v.source for v in tx.input_tensors if v.source is not None]
    if len(srcs) > 1:
        tx.guard(GuardKind.TENSOR_DISTINCT, srcs[0], tuple(srcs))


def add_mutation_alias_guards(tx) -> None:
    """An outside object the trace writes is not any other object from outside it read (of
    its type: two objects of different guarded types cannot be one).  The same object met
    twice is one value (a SAME_OBJECT guard); two values were two objects on this call, and
    ``d1["k"] = 1; return "k" in d2`` is only right while they stay two."""
    if not tx.mutated:
        return
    pinned = {}  # source -> its type, for values whose type (or identity) is guarded
    ids = set()
    for v in tx.by_id.values():
        src = getattr(v, "source", None)
        if src is None or isinstance(v, TensorV):
            continue
        if (GuardKind.ID_MATCH, src, None) in tx.guards:
            ids.add(src)
        elif (GuardKind.TYPE_MATCH, src, None) not in tx.guards and (
            GuardKind.CONSTANT_MATCH,  # a set's: its type and members
            src,
            None,
        ) not in tx.guards:
            continue
        pinned[src] = v.python_type()
    for m in tx.mutated:
        src = getattr(m, "source", None)
        if src not in pinned:
            continue
        for other, t in pinned.items():
            if other != src and t is pinned[src] and not (src in ids and other in ids):
                tx.guard(GuardKind.DISTINCT_OBJECTS, src, None, other)


def add_storage_guard(tx, plan) -> None:
    """When the graph writes input storage, later calls must share storage exactly as this one."""
    if not plan.writebacks:
        return
    vals = [v for v in tx.input_tensors if v.source is not None]
    if not vals:
        return
    from ..model.guard_kinds import StorageLayout
    from ..model.guards import storage_signature

    sig = storage_signature(*(tx.real_tensors[id(v)] for v in vals))
    tx.guard(GuardKind.TENSOR_STORAGE, vals[0].source, StorageLayout(tuple(v.source for v in vals), sig))


def early_reads(tx, ns) -> tuple[list[str], set[str]]:
    """``name = <source>`` for each runtime value the region must read before its writes
    (`builder.early_runtime_values`: an attribute, a list item); every later spelling of
    its source in the region -- a graph input's fetch, a computed value -- is that name.
    And the names of those that are pure calls (`PureCallSource`: a declared pure C call
    on guarded types, which a guard computes where it may raise)."""
    from ..model.sources import PureCallSource

    out, pure = [], set()
    for v in early_runtime_values(tx):
        if v.source in ns.rebased:
            continue
        name = ns.fresh("early")
        out.append(f"    {name} = {ns.spell(v.source)}")
        ns.rebased[v.source] = name
        if type(v.source) is PureCallSource:
            pure.add(name)
    return out, pure


def unused_pure_calls_dropped(early: list[str], pure: set[str], code: list[str]) -> list[str]:
    """`early` without the pure calls whose name `code` reads nowhere (``x in xs`` that only
    chose the branch, at capture, and that the guard computes itself): a call that changes
    nothing and raises nothing is not made for nothing."""
    kept = list(early)
    while True:  # (an early value may be read only by another one, dropped in turn)
        text = "\n".join([*code, *(line.split(" = ", 1)[1] for line in kept)])
        unused = {
            line
            for line in kept
            if line.split(" = ", 1)[0].strip() in pure
            and not re.search(rf"\b{line.split(' = ', 1)[0].strip()}\b", text)
        }
        if not unused:
            return kept
        kept = [line for line in kept if line not in unused]


def input_fetches(tx, graph, ns) -> list[str]:
    """``name = <source>`` for every graph input, reaching through identity-guarded objects."""
    tx.guards.identity_checks(ns, emit=False)
    return [f"    {n.name} = {ns.spell(n.target)}" for n in graph.inputs]


def unused_ints_unfetched(head: list[str], graph, code: list[str]) -> list[str]:
    """`head` without the fetch of an int input that `code` names nowhere (its arithmetic was
    only compared, at capture: `drop_unused_int_arith`)."""
    unused = {n.name for n in graph.inputs if is_int_input(n)}
    if not unused:
        return head
    text = "\n".join(code)
    unused = {name for name in unused if not re.search(rf"\b{name}\b", text)}
    return [line for line in head if line.split(" = ", 1)[0].strip() not in unused]


def example_inputs(tx) -> list:
    return [tx.real_tensors[id(v)] for v in tx.input_tensors]


def graph_info(name, graph, compiled) -> report.GraphInfo:
    return report.GraphInfo(
        function=name,
        backend=compiled.backend,
        op_count=graph.op_count,
        code=graph.format(),
        kernels=tuple(
            report.KernelInfo(
                getattr(k, "name", str(k)), tuple(getattr(k, "ops", ())), getattr(k, "source", "")
            )
            for k in compiled.kernels
        ),
        fallback_ops=tuple(str(o) for o in compiled.fallback_ops),
        nodes=graph_nodes(graph),
    )


def graph_nodes(graph) -> tuple[report.GraphNode, ...]:
    """Every node of `graph` as plain report data (the HTML report draws the dataflow from it)."""
    from ...ir.graph import describe_meta, iter_nodes, node_expr, readable_const

    outs = {id(o) for o in graph.outputs}
    out = []
    for n in graph.nodes:
        if n.op == "input":
            target, expr = n.target.readable(), n.target.readable()
        else:
            target = readable_const(n.target) if n.op == "call" else str(n.target)
            expr = node_expr(n, readable_const)
        loc = n.loc
        out.append(
            report.GraphNode(
                n.name,
                report.node_kind(n.op, target, n.mutates),
                target,
                tuple(a.name for a in iter_nodes((n.args, n.kwargs))),
                describe_meta(n.meta),
                id(n) in outs,
                expr,
                loc.filename if loc else None,
                loc.lineno if loc else None,
                loc.function if loc else "",
            )
        )
    return tuple(out)
