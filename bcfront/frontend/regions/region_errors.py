"""Run-time errors of a compiled region: where eager raises them, with eager's state.

Fake tensors cannot foresee every error (an index out of range, an embedding id
past the table, a factorization of a matrix that is not positive definite).  Such
an error, raised by the graph inside the region, must reach the user's ``except``
and ``finally`` blocks with the writes made before it exactly as eager leaves them.

* `errors_observable(tx, graph, first)`: could anything see a half-done graph?  Yes when a
  node was recorded under a handler of some traced frame (a try; a torch state
  manager's with block does not count: its exit only restores the state;
  `model.node_checks.note_node` is told of every node), or a Python write the region replays after the graph
  precedes a node that may raise at run time (`last_raising`; ``detach``, ``.grad = None``
  and float arithmetic raise nothing the fake run did not: `ir.raise_free`).
* `write_back_last(graph, examples, compiled, observable)`: if so, and the graph
  writes input storage, the eager backend gets the functional graph whose writes
  to inputs come at its end (`functionalize.Plan`); when the in-place graph must
  stay (a tensor that requires grad written under no_grad), the written inputs
  are snapshotted instead when no write records autograd.
* `guard_graph_errors(...)`: wraps the graph's statements; an error before the
  first lasting statement puts back the random generators (and snapshots), then
  reruns the function natively, exactly as eager would run it.
* A write to leaves' ``.grad`` that only replaces the reference (``zero_grad``'s
  ``p.grad = None``, a backward into leaves that have no grad yet:
  `model.node_checks.note_grad_write`) is not lasting: the region keeps the inputs'
  ``.grad`` references and puts them back before a native rerun (`grad_undo`), so a
  training step's forward and backward errors rerun natively like any other.
* A collective (`issues_collective`) is lasting as well: the other ranks took part in it,
  so a native rerun after it would issue it again on this rank alone and the ranks'
  collectives would no longer pair up (gloo then reads one collective's bytes into
  another's buffer).  An error after it propagates; where one could be observed, the
  region is split before it (`split_before_collective`).
* When neither works (a write functionalization cannot express: ``t_``, a write
  through ``unfold``; or a write autograd records on a tensor that requires
  grad), the region is split instead: `write_back_last` raises `SplitAt`, and
  `trace_with_splits` traces the function again with a graph break just before
  that write (`model.node_checks.check_split`, called for every node recorded).  The write then
  runs natively, and the continuation after it is a region of its own, whose
  errors again rerun natively -- inside the user's try, with eager's state.
* The Python writes all of this reads are one list, `replayed_writes` (the log's writes the
  region replays after the graph), and the nodes under a handler one list of body indices
  (`model.node_checks.handled_between`).  Which writes matter is cut two ways, on purpose:
  `errors_observable` and `placed_writes` take those before the last node that may raise
  (`last_raising`: a later write precedes no error), `_after_lasting_work` every one inside
  the graph (before its end), as it asks where the graph may end so that no node follows
  a write -- a raise-free node after one still goes to the continuation.  With the first
  cut it would split before the lasting work (running it natively) wherever the writes
  all follow the last node that may raise; with the second, `errors_observable` would have
  graphs functionalized whose writes precede no error.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from ...ir.graph import WRITEBACK_MARK
from ...ir.int_arith import only_total_int_arith

MAX_SPLITS = 8  # retraces per capture before giving up (then the old note stays)


# -- splitting the region before a write that cannot be undone -------------------------------------


@dataclass(frozen=True, slots=True)
class Split:
    """Where this trace ends its region early: before graph body node `at` (None: nowhere),
    for reason `why`; `enabled`: whether a region may still ask for a (new) split."""

    at: int | None = None
    why: str = ""
    enabled: bool = True


class SplitAt(Exception):
    """Raised while building a region: trace again, breaking before body node `index`."""

    def __init__(self, index: int, why: str):
        super().__init__(index, why)
        self.index, self.why = index, why


def trace_with_splits(trace):
    """``trace(split)`` -> an entry, traced again as long as a region asks for a split (each
    retrace splits earlier, so this ends; after `MAX_SPLITS` the last split stays and no
    new one is asked for)."""
    split = Split()
    for _ in range(MAX_SPLITS):
        try:
            return trace(split)
        except SplitAt as s:
            if split.at is not None and s.index >= split.at:
                break  # (cannot happen: the graph ends before `at`)
            split = Split(s.index, s.why)
    return trace(Split(split.at, split.why, enabled=False))


def _split_or_note(
    tx, graph, node, why: str, compiled, what: str = "in-place write", undone: frozenset = frozenset()
) -> None:
    """Ask for a split before `node` (a body node; None: before the first writer not in
    `undone`), or, when no split may be asked for, say in explain that such an error escapes
    the handler.  `what` names the lasting statement at `node` (an in-place write, a collective)."""
    split = tx.__dict__.get("split") if tx is not None else None
    at = graph.body.index(node) if node is not None and node in graph.body else None
    if at is None:
        first = _first_writer(graph, undone)
        at = next((i for i, n in enumerate(graph.body) if n.name == first), None)
    later = _after_lasting_work(tx, graph, at) if at is not None else None
    if split is not None and split.enabled and later is not None and later != at:
        raise SplitAt(
            later,
            f"the graph ends at a Python write it would otherwise make after later graph "
            f"statements, past {_a(what)} that cannot be undone ({why}), so that a run-time "
            "error after it reaches the function's handlers with eager's state",
        )
    if split is not None and split.enabled and at is not None:
        raise SplitAt(
            at,
            f"the graph ends before {_a(what)} that cannot be undone ({why}), "
            "so that a run-time error after it reaches the function's handlers "
            "with eager's state",
        )
    compiled.notes.append(f"{why}; an error raised after the graph's first {what} propagates as it is")


def _after_lasting_work(tx, graph, at: int) -> int:
    """Where to end the graph for the lasting statement at body index `at`: there, unless
    the region's Python writes all come after it (an LR scheduler's counters, written after
    the backward and the optimizer's step) and no node from it to the first write runs under
    a handler -- then before the first node after the first such write: the lasting work
    stays in the graph, and no node of it follows a write (nothing left to observe)."""
    from ..model.node_checks import handled_between

    if tx is None:
        return at
    positions = [e.position for e in replayed_writes(tx, len(graph.body))]
    if not positions or min(positions) <= at:
        return at
    # a node from `at` on under a handler must end the graph before `at` (only a native
    # run reaches the handler); one after the first write is the continuation's
    return at if handled_between(tx, at, min(positions)) else min(positions)


def _a(what: str) -> str:
    return f"{'an' if what[0] in 'aeiou' else 'a'} {what}"


def _first_grad_write(obs, names) -> object | None:
    """The first body node writing the storage of an input named in `names` (or of a
    synthetic base of inputs sharing storage)."""
    for tr in obs.traces:
        for c in tr.calls:
            for w in c.writes:
                p = obs.prov.get(id(w))
                root = p.root if p is not None else None
                if (
                    root is None
                    or root.kind == "shared"
                    or (root.kind == "input" and root.node.name in names)
                ):
                    return tr.node
    return None


def write_back_last(graph, example_inputs, compiled, observable: bool = True, tx=None):
    """For an eager-backend `compiled` graph that writes input storage (an in-place op on an
    argument, a parameter or a buffer, a batch norm's running statistics): the functional
    graph with the write-back at its end, so that every error fake tensors could not
    foresee (an index out of range, a check only the real kernel makes) happens before
    any lasting write, and the region can rerun the function natively, exactly.
    Without `observable` (no handler could see a half-done graph, see
    `errors_observable`) the in-place graph stays: it fails exactly as eager does.

    When neither the functional graph nor a snapshot can undo the writes, raises
    `SplitAt` if the trace `tx` may still split its region (see the module docstring).

    Sets ``compiled.first_write``: `WRITEBACK_MARK` (functionalized), the name of the first
    node that may write input storage (functionalization failed: that node ends the clean
    prefix), or None (no input storage is written).
    """
    from ...ir.alias_facts import may_write
    from ...ir.functionalize import FunctionalizeError, functionalize

    plan = getattr(compiled, "plan", None)
    if plan is not None:
        compiled.first_write = WRITEBACK_MARK if plan.writebacks else None
        return compiled
    compiled.first_write = None
    if not may_write(graph):
        return compiled
    undone, saved = grad_undo(tx, graph)
    if not observable:
        compiled.first_write = _first_writer(graph, undone)
        compiled.grads_saved = saved
        return compiled
    try:
        plan = functionalize(graph, example_inputs)
    except FunctionalizeError as e:
        if e.node is not None and e.node.name in undone and _undone_first(graph, undone):
            # the .grad writes are put back before a native rerun: what lasts is the first
            # other writer (none: every error reruns natively), after all of them -- a split
            # there leaves no backward reaching history made before it
            compiled.first_write = _first_writer(graph, undone)
            compiled.grads_saved = saved
            if compiled.first_write is not None:
                why = f"functionalization failed ({e})"
                _split_or_note(tx, graph, None, why, compiled, undone=undone)
            return compiled
        compiled.first_write = _first_writer(graph)
        _split_or_note(tx, graph, e.node, f"functionalization failed ({e})", compiled)
        return compiled
    if not plan.writebacks:  # only storage made inside the graph is written
        compiled.observation = plan.observation
        return compiled
    # the written inputs' examples (tensors: a symbolic int input is never written)
    examples = {
        n.name: t for n, t in zip(plan.graph.inputs, plan.example_inputs) if not isinstance(t, (int, float))
    }
    if any(examples[w[0]].requires_grad for w in plan.writebacks):
        # written under no_grad (a clamp_ of a parameter), the tensor keeps its autograd
        # identity in eager; its functional value would be a new, detached tensor.  The
        # in-place graph stays; when no write records autograd, the region snapshots the
        # written inputs and puts them back before a native rerun.
        compiled.first_write = _first_writer(graph)
        compiled.observation = plan.observation
        names = {n.name for n in graph.inputs}
        if all(w[0] in names for w in plan.writebacks) and not _writes_record(graph):
            compiled.restore = tuple(w[0] for w in plan.writebacks)
        else:
            grad = {w[0] for w in plan.writebacks if examples[w[0]].requires_grad}
            _split_or_note(
                tx,
                graph,
                _first_grad_write(plan.observation, grad),
                "the graph writes a tensor that requires grad in place",
                compiled,
            )
        return compiled
    from ...backends import eager

    out = eager.compile_graph(plan.graph)
    out.emit = plan.wrap_emit(out.emit)
    out.plan, out.observation, out.first_write = plan, plan.observation, WRITEBACK_MARK
    out.notes = list(compiled.notes) + out.notes
    return out


def _writes_record(graph) -> bool:
    """Some node that may write runs with grad mode on (autograd may record the write)."""
    import torch

    entry = torch.is_grad_enabled()
    return any((n.state.grad if n.state is not None else entry) for n in graph.body if _node_writes(n))


def first_writer_index(graph, undone: frozenset = frozenset()) -> int:
    """The index of the first body node that may write input storage, other than the
    nodes named in `undone` (see `grad_undo`); len(body): none."""

    body = graph.body
    return next(
        (i for i, n in enumerate(body) if n.name not in undone and _node_writes(n)),
        len(body),
    )


def _first_writer(graph, undone: frozenset = frozenset()) -> str | None:
    i = first_writer_index(graph, undone)
    return graph.body[i].name if i < len(graph.body) else None


def _node_writes(n) -> bool:
    """Body node `n` may write input storage (`alias_facts.may_write` of it alone)."""
    from ...ir.alias_facts import may_write  # (reads only ``.body``)

    return may_write(SimpleNamespace(body=(n,)))  # type: ignore[arg-type]


def _undone_first(graph, undone: frozenset) -> bool:
    """No node writing ``.grad`` comes after the first node that writes lastingly (a split
    there would leave a backward reaching autograd history made before it: a break)."""
    from ...ir.alias_facts import writes_grad

    return not any(writes_grad(n) for n in graph.body[first_writer_index(graph, undone) :])


def grad_undo(tx, graph) -> tuple[frozenset, tuple[str, ...]]:
    """The body nodes a native rerun can undo by putting leaves' ``.grad`` references back
    (`model.node_checks.note_grad_write`): those before the first node that writes
    otherwise, each replacing references only; and the names of the inputs whose ``.grad``
    the region keeps to put back (empty: nothing to undo)."""
    from ..model.node_checks import GRAD_UNDO

    notes = (tx.__dict__.get(GRAD_UNDO) if tx is not None else None) or {}
    undone, saved = [], {}
    for n in graph.body:
        if n.name in notes and notes[n.name] is not None:
            undone.append(n.name)
            saved.update(dict.fromkeys(notes[n.name]))
        elif _node_writes(n):
            break
    return frozenset(undone), tuple(saved)


def issues_collective(n) -> bool:
    """The node issues a collective (a ``_c10d_functional`` op other than its wait): the
    other ranks take part in it, so once it has run the function must not run again
    natively on this rank alone (the ranks' collectives would no longer pair up)."""
    from ...ir.passes import is_collective, target_name

    return is_collective(n) and not target_name(n).startswith("wait_tensor")


def split_before_collective(tx, graph, compiled) -> None:
    """A graph's first collective is a lasting statement (`issues_collective`): an error
    after it propagates as it is, never reruns the function natively.  Where a handler or
    a replayed Python write could see that (`errors_observable`), ask for a split before
    it, as for an in-place write that cannot be undone: the collective then runs natively
    at the break, and the rest in a region of its own."""
    first = next((i for i, n in enumerate(graph.body) if issues_collective(n)), None)
    if first is not None and errors_observable(tx, graph, first):
        why = "a native rerun after a collective would issue it again on this rank alone"
        _split_or_note(tx, graph, graph.body[first], why, compiled, "collective")


def errors_observable(tx, graph, first: int = 0) -> bool:
    """Could a run-time error at body node `first` or later be seen with the graph's in-place
    writes only partly done?  (Before `first`, no node writes lasting state: a failed run
    there is discarded and the function reruns natively.)  Yes when such a node was recorded
    under an exception handler of some frame of the trace, or when a Python write the region
    replays after the graph precedes one that may raise (`last_raising`) -- unless it is undone before
    `first` (transformers sets and resets a flag around its forward): an attribute whose
    final value is the one it has now, not written again after `first`.  Otherwise the error
    reaches the caller just as in eager: the in-place writes before the failing op done, in
    program order, and nothing after it -- so the graph may keep its in-place ops (no
    functional copies)."""
    from ..model.effects import unchanged_targets
    from ..model.node_checks import handled_between

    if handled_between(tx, first):
        return True
    # a write made after the last node that may raise (`ir.raise_free`) precedes no error
    last = last_raising(graph, first)
    writes = replayed_writes(tx)
    if not any(e.position <= last for e in writes):
        return False
    if any(first < e.position <= last for e in writes):
        return True
    # (a target written again later, even after the last node that may raise, has at
    # an error the early value eager holds, not the one it had before the call)
    later = {e.target for e in writes if e.position > first}
    early = {e.target for e in writes if e.position <= first}
    return bool(early & later) or not early <= unchanged_targets(tx)


def last_raising(graph, first: int) -> int:
    """The index of the last body node at or after `first` that may raise at run time
    (`ir.raise_free.may_raise`); ``first - 1`` when none may.  A Python write placed after
    it precedes no run-time error: the replay after the graph makes it in time."""
    from ...ir.raise_free import may_raise

    body = graph.body
    return next((i for i in range(len(body) - 1, first - 1, -1) if may_raise(body[i])), first - 1)


def replayed_writes(tx, before: int | None = None) -> list:
    """The Python writes the region replays after the graph, in the order made: those placed
    before body index `before` (None: all).  A call made after the graph (`deferred_calls`:
    logging) is output, not state: a failed graph past a lasting write skips it, as it
    skips the rest of the function."""
    from ..model.effects import DEFERRED_CALL, LOG

    return [
        e for e in getattr(tx, LOG, ()) if e.kind != DEFERRED_CALL and (before is None or e.position < before)
    ]


_CONST_WRITES = frozenset({"setattr", "global"})


def placed_writes(tx, graph, first: int) -> dict[int, list] | None:
    """Python writes to make inside the graph's statements, so that a run-time error at body
    node `first` (the first lasting write) or later sees them as eager does, when they are
    all that makes such an error observable (`errors_observable`): no node from `first` on
    recorded under a handler, nothing lasting before `first` but ``.grad`` references (no
    seeding, no collective), and each write's value known at capture (`known_write`): a
    constant stored in an attribute or a global (a flag: ``model.train()``), or item
    changes of an outside dict, list or set (a config's ``__dict__``, a scheduler's
    group) that store only constants -- but for those made after the last node that may
    raise (`last_raising`), which precede no error.  Maps a body index to the writes to make
    just before that node, each ``(ObjectV, name, Const)`` or ``(container, None, changes)``:
    at `first` each attribute's value as of there and every item change before it, in
    order, at each later node the writes made just before it.  None where that is not so.
    The region still replays every write's final value after the graph; an error before
    `first` reruns the function natively, which makes these writes itself."""
    from ..model.node_checks import handled_between

    if handled_between(tx, first) or first >= len(graph.body):
        return None
    if any(_draw(x) == "lasting" or issues_collective(x) for x in graph.body[:first]):
        return None
    end = last_raising(graph, first) + 1  # (the writes after it precede no error)
    at_first: dict = {}
    placed: dict[int, list] = {}
    # (one after every node that may raise: only the replay after the graph makes it)
    for e in replayed_writes(tx, end):
        if e.write is None:
            return None
        holder, name, _ = e.write
        if e.position > first:
            if not known_write(e):
                return None
            placed.setdefault(e.position, []).append(e.write)
        elif name is None:  # item changes: every one, in order
            at_first[id(e)] = e
        else:
            at_first.pop((id(holder), name), None)
            at_first[(id(holder), name)] = e  # the last one before `first` counts
    if not all(known_write(e) for e in at_first.values()):
        return None
    if at_first:
        placed[first] = [e.write for e in at_first.values()]
    return placed


def known_write(e) -> bool:
    """The logged write `e` can be made again from what the capture knows: an attribute or
    global given a constant (or deleted), or item changes storing constants alone."""
    from ..model.values import DELETED, Const

    if e.write is None:
        return False
    _, name, value = e.write
    if name is not None:
        return e.kind in _CONST_WRITES and isinstance(value, Const)
    for change in value:
        stored = change.args[2] if change.op == "slice" else change.args
        if not all(isinstance(x, Const) or x is DELETED for x in stored):
            return False
    return True


def ints_alone(graph, compiled) -> bool:
    """The eager graph only computes symbolic Python ints (an int argument that changes from
    call to call) with arithmetic that raises on no ints (`ir.int_arith`): its statements are
    the function's own arithmetic, nothing fake tensors could misjudge, so they need no native
    rerun and no graph clock (`guard_graph_errors`, `timing.time_graph`)."""
    if compiled.backend != "eager" or getattr(compiled, "plan", None) is not None:
        return False
    return only_total_int_arith(graph)


def guard_graph_errors(body: list[str], graph, compiled, root, parts: list[str], ns) -> list[str]:
    """Wrap the graph's statements.  An error fake tensors could not foresee (an index out
    of range, a check only the real kernel makes) must surface where eager raises it,
    inside the function's own try blocks.  While no statement with a lasting effect has
    run, the failed run is discarded and the function runs natively instead, exactly as
    eager would: the graph writes input storage only at its end (`write_back_last`), and
    the random number generators are put back as they were (and, for in-place writes
    no autograd records, the written inputs: `write_back_last` sets ``restore``).  Only
    past a lasting statement (the write-back, an in-place write when functionalization
    failed, a collective, a seeding) does the error propagate as it is.  Leaves' ``.grad``
    references replaced before it (``grads_saved``, see `grad_undo`) are put back too."""
    plan = getattr(compiled, "plan", None)
    emitted = plan.graph if plan is not None else graph
    restore = getattr(compiled, "restore", ())
    stops = _lasting_prefixes(emitted, None if restore else getattr(compiled, "first_write", None))
    draws = _draw_devices(emitted)
    grads = getattr(compiled, "grads_saved", ())
    clean, failed = ns.fresh("clean"), ns.fresh("failed")
    wrapped = [f"    {clean} = True", f"    {failed} = False"]
    if draws is not None:
        rng = ns.fresh("rng")
        wrapped.append(f"    {rng} = {ns.const(rng_save, 'rng_save')}({draws!r})")
    if restore:
        saved = ns.fresh("saved")
        wrapped.append(f"    {saved} = {ns.const(snapshot, 'snapshot')}(({', '.join(restore)},))")
    if grads:
        grad_refs = ns.fresh("grads")
        wrapped.append(f"    {grad_refs} = {ns.const(grads_of, 'grads_of')}(({', '.join(grads)},))")
    wrapped.append("    try:")
    # past the first lasting statement an error propagates: with the Python writes eager
    # made before the failing statement (`placed_writes`)
    placed = _placed_lines(emitted, body, getattr(compiled, "placed_writes", None) or {})
    for line in body:
        if stops and line.strip().startswith(stops):
            indent = line[: len(line) - len(line.lstrip())]
            wrapped.append(f"    {indent}{clean} = False")
            stops = ()
        if placed and line.strip() in placed:
            indent = line[: len(line) - len(line.lstrip())]
            wrapped.extend(f"    {indent}{w}" for w in placed.pop(line.strip()))
        wrapped.append("    " + line)
    wrapped.extend(f"        {w}" for ws in placed.values() for w in ws)  # after the last statement
    wrapped += [f"    except {ns.helper('Exception')}:", f"        if not {clean}:", "            raise"]
    if restore:  # no write recorded autograd: putting the values back undoes it
        wrapped.append(f"        {ns.const(put_back, 'put_back')}(({', '.join(restore)},), {saved})")
    if grads:  # .grad replaced, never written in place: the old references undo it
        wrapped.append(f"        {ns.const(put_grads, 'put_grads')}(({', '.join(grads)},), {grad_refs})")
    if draws is not None:
        wrapped.append(f"        {ns.const(rng_restore, 'rng_restore')}({rng})")
    # the rerun comes after the except block: inside it, its errors would chain the graph's
    # error as __context__ and sys.exc_info() would see it
    wrapped += [
        f"        {failed} = True",
        f"    if {failed}:",
        f"        return {_native_call(root, parts, ns)}",
    ]
    return wrapped


def _placed_lines(graph, body: list[str], placed: dict[int, list[str]]) -> dict[str, list[str]]:
    """`placed` (body index -> statements) keyed by the stripped line they go before: that
    node's statement, or the next emitted one's (a folded node runs nothing); statements
    for no line go last (under the key "")."""
    lines = {line.strip().split(" = ", 1)[0]: line.strip() for line in body if " = " in line}
    out: dict[str, list[str]] = {}
    for index in sorted(placed):
        key = next((lines[n.name] for n in graph.body[index:] if n.name in lines), "")
        out.setdefault(key, []).extend(placed[index])
    return out


def _lasting_prefixes(graph, first_write) -> tuple:
    """Line prefixes of the statements that start lasting effects (see guard_graph_errors)."""
    stops = (
        [] if first_write is None else [first_write if first_write == WRITEBACK_MARK else f"{first_write} = "]
    )
    for n in graph.body if graph is not None else ():
        if _draw(n) == "lasting" or issues_collective(n):
            stops.append(f"{n.name} = ")
    return tuple(stops)


def _draw(n) -> str | None:
    """ "draw": a random draw from a default generator (undone by restoring its state);
    "lasting": seeding, or a draw from a generator passed in; None: not random."""
    from ...ir.passes import is_nondeterministic, target_name

    name = target_name(n).lower()
    if not is_nondeterministic(n) or name.startswith("empty") or name.endswith("empty"):
        return None
    if "seed" in name or "rng" in name or n.kwargs.get("generator") is not None:
        return "lasting"
    return "draw"


def _draw_devices(graph) -> tuple | None:
    """CUDA device indexes whose generators the graph draws from (None: it draws nothing)."""
    if graph is None:
        return None
    found = None
    for n in graph.body:
        if _draw(n) == "draw":
            found = found or set()
            dev = getattr(n.meta, "device", None)
            if dev is not None and dev.type == "cuda":
                found.add(dev.index or 0)
    return None if found is None else tuple(sorted(found))


def rng_save(cuda_devices: tuple) -> list:
    """The states of the CPU generator and of the given CUDA devices' default generators."""
    import torch

    gens = [torch.default_generator] + [torch.cuda.default_generators[i] for i in cuda_devices]
    return [(g, g.get_state()) for g in gens]


def rng_restore(saved: list) -> None:
    for g, state in saved:
        g.set_state(state)


def snapshot(tensors: tuple) -> list:
    return [t.detach().clone() for t in tensors]


def put_back(tensors: tuple, saved: list) -> None:
    import torch

    with torch.no_grad():
        for t, s in zip(tensors, saved):
            t.copy_(s)


def grads_of(tensors: tuple) -> list:
    """Each tensor's ``.grad`` reference (None or the tensor object itself, not a copy)."""
    return [t.grad for t in tensors]


def put_grads(tensors: tuple, grads: list) -> None:
    for t, g in zip(tensors, grads):
        if t.grad is not g:
            t.grad = g


def _native_call(root, parts, ns) -> str:
    """`root(...)` passing the region's own parameters through."""
    call_args = []
    kwonly = False
    for p in parts:
        if p == "/":
            continue
        if p == "*":
            kwonly = True
        elif p.startswith("*"):
            call_args.append(p)
            kwonly = kwonly or not p.startswith("**")
        else:
            call_args.append(f"{p}={ns.local(p)}" if kwonly else ns.local(p))
    return f"{ns.const(root, 'native')}({', '.join(call_args)})"
