"""What is noted as each graph node is recorded, for `regions.region_errors`.

`check_split` ends the region early where a `region_errors.Split` asks for a
graph break (``tx.split``, set by the driver); `note_node` remembers which nodes
run under a handler the user's code could see a half-done graph from (their body
indices, read by `handled_between`); `note_grad_write` records a node that writes leaves'
``.grad`` only by replacing the reference (``t.grad = ...``, a backward into
leaves without a grad), which putting the old references back undoes
(``tx.grad_undo``).  They only read and write the tracer, so they live here,
below the semantics that record nodes (`semantics.torch_calls.record`).
"""

from __future__ import annotations

from ...errors import UnsupportedError
from ...reasons import BreakReason
from .values import MethodV, StateCMV


def check_split(tx) -> None:
    """Called before each node is recorded: the graph break a `Split` asked for."""
    split = tx.__dict__.get("split")
    if split is not None and split.at is not None and len(tx.graph.body) >= split.at:
        raise UnsupportedError(BreakReason.WRITE_BEFORE_ERROR, split.why)


HANDLED_NODES = "handled_nodes"  # tracer attribute: the body indices recorded under a handler


def note_node(tx) -> None:
    """Called for each node recorded: remember when one runs under a user's handler.  Not
    journaled: a rolled-back node's index stays (the safe side), and a node recorded again
    at that index or a lower one after a rollback is noted as any other."""
    if _in_handler(tx):
        tx.__dict__.setdefault(HANDLED_NODES, set()).add(len(tx.graph.body) - 1)


def handled_between(tx, start: int, stop: int | None = None) -> bool:
    """Some body node with an index in [start, stop) (None: no end) was recorded under a
    user's handler."""
    return any(start <= i and (stop is None or i < stop) for i in tx.__dict__.get(HANDLED_NODES, ()))


GRAD_UNDO = "grad_undo"  # tracer attribute: {node name: input names whose .grad it replaces}


def note_grad_write(tx, node, inputs: tuple[str, ...] | None) -> None:
    """`node` writes ``.grad`` of the graph inputs named in `inputs` by replacing the
    reference only (None: it also accumulates into an existing grad in place, which no
    putting back undoes).  Journaled: a rolled-back inlined call takes its note with it."""
    notes = dict(tx.__dict__.get(GRAD_UNDO) or {})
    notes[node.name] = inputs
    tx.__dict__.setdefault(GRAD_UNDO, None)
    tx.set(tx, GRAD_UNDO, notes)


def _in_handler(tx) -> bool:
    """Some frame of the trace runs its current instruction under an exception handler a
    user could see the state from: a try, or a with block other than a torch state
    manager's (no_grad, autocast...: its exit restores the state and re-raises)."""
    return any(f.cur is not None and _user_handler(f, f.bc.handler_for(f.cur.offset)) for f in tx.frames)


def _user_handler(f, h) -> bool:
    for _ in range(64):  # state-manager with blocks, innermost first
        if h is None:
            return False
        if not _state_cm_cleanup(f, h):
            return True
        # the cleanup's own handler (COPY 3; POP_EXCEPT; RERAISE 1), then whatever covers it
        inner = f.bc.handler_for(h.target)
        if inner is None:
            return True  # not the layout expected: assume a handler
        h = f.bc.handler_for(inner.target)
    return True


def _state_cm_cleanup(f, h) -> bool:
    """Handler `h` is the cleanup of a with block over a torch state manager."""
    try:
        i = f.bc.index_of(h.target)
        ops = (f.instrs[i].opname, f.instrs[i + 1].opname)
    except (KeyError, IndexError):
        return False
    if ops != ("PUSH_EXC_INFO", "WITH_EXCEPT_START") or not 0 < h.depth <= len(f.stack):
        return False
    exit_ = f.stack[h.depth - 1]  # the with's bound __exit__, below the block
    return isinstance(exit_, MethodV) and isinstance(exit_.obj, StateCMV)
