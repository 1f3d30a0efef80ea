"""``torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False)``: `fn` traced inline.

Activation checkpointing (transformers' ``gradient_checkpointing_enable()``, a user's own
``checkpoint(block, x, use_reentrant=False)``) runs `fn` once in the forward, keeps none of
its activations, and runs it again in backward to remake them, under the random state the
forward saw (``preserve_rng_state``), so the recomputation equals the forward and
the RNG is left as one run of `fn` leaves it.  Values and gradients are therefore those of
a single run of `fn`: that is what the graph records, `fn`'s tensor work inline.  The
memory policy is kept by the backend: the nodes `fn`'s run made are recorded as a
`backends.checkpoints.Region` of the graph, which the eager backend runs through torch's
own ``checkpoint`` (and the fx backend's joint graph through TorchDynamo's
``tag_activation_checkpoint``), so the backward recomputes them as eager does; where a
backend cannot (a functionalized graph), a note says the activations are kept.

Only where a single run is what eager computes: ``use_reentrant=False`` (the reentrant
variant drops the gradients of parameters when no input requires grad),
``preserve_rng_state`` true or a `fn` that draws no random number (otherwise the
recomputation draws others), the default ``context_fn`` (its contexts would wrap what
runs, untraced), ``determinism_check`` and ``debug`` constants (passed on), and a `fn`
that writes nothing outside itself: the recomputation would write it again (batch norm's
running statistics, a counter), up to where it stops early (the last saved tensor
remade: an attribute set and reset after it stays set), so a write to a Python object or
in place to a tensor made before the call falls back to torch's call (a break naming
why), as does a `fn` that breaks the graph (its native part would run once, not
checkpointed, the rest traced) and any other keyword.
"""

from __future__ import annotations

import torch
import torch.utils.checkpoint as torch_checkpoint

from ...backends.checkpoints import Region
from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import Const, ObjectV, TensorV, Value
from . import dispatch

CHECKPOINT = torch_checkpoint.checkpoint
while hasattr(CHECKPOINT, "__wrapped__"):  # (torch._disable_dynamo's wrapper)
    CHECKPOINT = CHECKPOINT.__wrapped__

# checkpoint's own keywords (the others are `fn`'s)
_OWN = ("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop")


def is_checkpoint(fn) -> bool:
    return fn is CHECKPOINT


_MISSING = object()


def _known(v: Value):
    """The Python object `v` stands for where the trace knows it (a constant, an outside object)."""
    if isinstance(v, Const):
        return v.value
    return v.obj if isinstance(v, ObjectV) else _MISSING


def _same(a, b) -> bool:
    return a is b or (type(a) is str and type(b) is str and a == b)


def _unkept(kwargs: dict) -> str | None:
    """Why checkpoint's keywords make the traced call other than eager's (None: they do not)."""
    if _known(kwargs.get("use_reentrant", Const(None))) is not False:
        return (
            "without use_reentrant=False (the reentrant variant gives the parameters no "
            "gradient when no input requires grad)"
        )
    for name in ("preserve_rng_state", "debug"):
        if name in kwargs and type(_known(kwargs[name])) is not bool:
            return f"with a {name} that is no known bool"
    if "determinism_check" in kwargs and type(_known(kwargs["determinism_check"])) is not str:
        return "with a determinism_check that is no known string"
    if "context_fn" in kwargs and _known(kwargs["context_fn"]) is not torch_checkpoint.noop_context_fn:
        return "with a context_fn (its contexts wrap the forward and the recomputation, not traced)"
    return None


def _random_inside(tx, cp) -> bool:
    from ...ir.passes import is_nondeterministic

    return any(is_nondeterministic(n) for n in tx.graph.body[cp.nodes :])


def _storages(nodes) -> set:
    out = set()
    for n in nodes:
        meta = getattr(n, "meta", None)
        if isinstance(meta, torch.Tensor):
            try:
                out.add(meta.untyped_storage()._cdata)
            except (RuntimeError, NotImplementedError):  # (no storage: a sparse or nested meta)
                continue
    return out


def _written_outside(tx, cp) -> bool:
    """A node made since `cp` writes in place to a tensor that was there before it."""
    new = tx.graph.body[cp.nodes :]
    writes = [n for n in new if n.mutates]
    if not writes:
        return False
    old = _storages([*tx.graph.inputs, *tx.graph.body[: cp.nodes]])
    for n in writes:
        target = n.kwargs.get("out", n.args[0] if n.args else None)
        meta = getattr(target, "meta", None)
        if not isinstance(meta, torch.Tensor):
            return True  # (what it writes is unknown here: assume the worst)
        try:
            if meta.untyped_storage()._cdata in old:
                return True
        except (RuntimeError, NotImplementedError):
            return True
    return False


def _stack(tx) -> tuple:
    return tuple((f, f.cur.offset if f.cur is not None else -1) for f in tx.frames)


class _Watch:
    """The Python writes and the graph nodes made while `fn` is traced, each with the
    trace's frames (and their instructions) at that moment."""

    def __init__(self, tx):
        self.tx, self.writes, self.nodes = tx, [], []

    def write(self, tx, value) -> None:
        self.writes.append((value, _stack(tx), len(tx.graph.body)))

    def __enter__(self):
        tx, graph = self.tx, self.tx.graph
        add = graph.add
        self.outer = graph.__dict__.get("add")  # (a watch of an enclosing checkpoint call)

        def watched_add(*args, **kwargs):
            node = add(*args, **kwargs)
            self.nodes.append((len(graph.body) - 1, _stack(tx)))
            return node

        graph.add = watched_add  # (an instance attribute over the method, for this call only)
        tx.write_watchers = (*tx.write_watchers, self.write)
        return self

    def __exit__(self, *exc) -> None:
        if self.outer is None:
            del self.tx.graph.add
        else:
            self.tx.graph.add = self.outer
        self.tx.write_watchers = tuple(w for w in self.tx.write_watchers if w is not self.write)


def _restored(tx, cp, written) -> bool:
    """Every outside object `fn` wrote has its attributes back as they were before."""
    before: dict = {}
    for obj, attr, old in tx.journal.log[cp.journal :]:
        if attr == "overlay":
            before.setdefault(id(obj), old)
    for v in written:
        if type(v) is not ObjectV or id(v) not in before:
            return False
        old, real = before[id(v)], getattr(v.obj, "__dict__", None)
        for name, value in v.overlay.items():
            if name in old:
                if value is old[name]:
                    continue
                was = _known(old[name])
            elif real is not None and name in real:
                was = real[name]
            else:
                return False
            if was is _MISSING or _known(value) is not was:
                return False
    return True


def _handlers_running_line(frame, offset: int) -> set:
    """The exception handlers of `frame` whose code (up to its RERAISE) runs the line of
    the instruction at `offset`: a ``finally`` holding that statement."""
    bc = frame.bc
    line = bc.at(offset).positions[0]
    out = set()
    for target in {e.target for e in bc.exception_table}:
        i = bc.index_of(target)
        for ins in bc.instructions[i : i + 64]:
            if ins.positions[0] == line and ins.offset != offset:
                out.add(target)
                break
            if ins.opname == "RERAISE":
                break
    return out


def _undone_on_stop(tx, watch: _Watch, base: int) -> bool:
    """Every write `fn` made is undone by its end, and undone on an exception from any node
    made between the write and its undoing too: eager's recomputation, stopped early by an
    exception at a node, then leaves the object as one run does.  That is a write undone
    by a ``finally`` of a frame inside `fn` (transformers' kernels: ``token = var.set(v)``,
    ``try: ... finally: var.reset(token)``) every node in between ran under."""
    by_value: dict = {}
    for value, stack, n in watch.writes:
        by_value.setdefault(id(value), []).append((stack, n))
    for writes in by_value.values():
        (s1, n1), (s2, n2) = writes[0], writes[-1]
        if n1 == n2:  # (no node between: the recomputation stops before or after them all)
            continue
        common = [i for i in range(base, min(len(s1), len(s2))) if s1[i][0] is s2[i][0]]
        if not common or common != list(range(base, common[-1] + 1)):
            return False
        frame, o1, o2 = s1[common[-1]][0], s1[common[-1]][1], s2[common[-1]][1]
        targets = _handlers_running_line(frame, o2) if 0 <= o1 < o2 else set()
        if not targets:
            return False
        for index, stack in watch.nodes:
            if n1 <= index < n2:
                at = next((o for f, o in stack if f is frame), None)
                h = frame.bc.handler_for(at) if at is not None and at >= 0 else None
                if h is None or h.target not in targets:
                    return False
    return True


def call(tx, args: list, kwargs: dict) -> Value | None:
    """``checkpoint(fn, *args, **kwargs)``: `fn` inlined where one run of it is eager's
    result (see the docstring); None where torch's own call must run."""
    if not args:
        return None
    why = _unkept(kwargs)
    if why is not None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL, f"torch.utils.checkpoint.checkpoint {why}: torch's own call runs"
        )
    fn, rest = args[0], args[1:]
    fn_kwargs = {k: v for k, v in kwargs.items() if k not in _OWN}
    cp = tx.checkpoint()
    base = len(tx.frames)
    state = tx.node_state()  # (the state the call runs in)
    try:
        with _Watch(tx) as watch:
            out = dispatch.call(tx, fn, list(rest), fn_kwargs)
    except UnsupportedError as e:  # (its native part would not be checkpointed: writes twice...)
        tx.rollback(cp)
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL,
            f"torch.utils.checkpoint.checkpoint of a function that breaks the graph ({e.message})",
        ) from None
    # (every write, also to an object written before the call: `tx.mutated` lists it once)
    written = list({id(v): v for v, _, _ in watch.writes}.values())
    undone = not written or (_restored(tx, cp, written) and _undone_on_stop(tx, watch, base))
    if not undone or _written_outside(tx, cp):
        tx.rollback(cp)
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL,
            "torch.utils.checkpoint.checkpoint of a function that writes state its "
            "recomputation in backward would write again",
        )
    if _known(kwargs.get("preserve_rng_state", Const(True))) is False and _random_inside(tx, cp):
        tx.rollback(cp)
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL,
            "torch.utils.checkpoint.checkpoint with preserve_rng_state=False of a function that "
            "draws random numbers (its recomputation draws others than its forward)",
        )
    loc = tx.loc()
    where = f"{loc.filename}:{loc.lineno}" if loc is not None else "?"
    nodes = tx.graph.body[cp.nodes :]
    if nodes:  # the backend runs them under torch's checkpoint (`backends.checkpoints`)
        own = {k: _known(v) for k, v in kwargs.items() if k in _OWN and k != "use_reentrant"}
        own = {k: v for k, v in own.items() if v is not _MISSING}  # (an unknown early_stop: its default)
        # the tensors eager's checkpoint is given as arguments: it saves them for backward
        # and forks the random state of their devices
        given = [v.node for v in rest if isinstance(v, TensorV)]
        tx.graph.checkpoints.append(Region(nodes, {"use_reentrant": False, **own}, where, state, given))
    return out
