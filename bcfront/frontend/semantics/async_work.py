"""Work handles of ``async_op=True`` collectives in captured code.

``dist.all_reduce(t, async_op=True)`` issues the functional collective where the call is
(`semantics.collectives`) and hands out a `WorkV`: the issued tensor, the tensor eager
writes the result into and the view that result takes.  ``work.wait()`` (or
``is_completed()``, ``is_success()``, ``result()``: each waits first, so a polling loop
ends) records the ``wait_tensor`` and the ``copy_`` into the tensor at that place; the
backends' `sink_waits` never moves a wait later than its first reader, which here is that
``copy_``.  Reading the tensor before the wait reads it before the collective wrote it
(in eager that read races the collective; the docs require the wait first).

A handle still pending when the region ends (returned, stored outside, live across a graph
break) is rebuilt as a `CapturedWork`: a real ``dist.Work`` holding the issued tensor (a
graph output), whose ``wait()`` waits on it and copies the result, so the communication
still overlaps whatever runs before that wait; a continuation's trace inlines that
``wait``.  A rebuilt handle that nobody waits on completes when it is collected.  Other
methods of a handle (``get_future``, ``synchronize``...) break (``collective``) and run on
the rebuilt handle.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import Const, ListV, ObjectV, TensorV, Value
from . import dispatch
from .torch_calls import record


class CapturedWork(dist.Work):
    """The work handle of a collective a captured graph issued: ``wait()`` waits on the
    issued tensor and copies the result (viewed as `shape`) into `dst`; a handle made
    while tracing (`placeholder`) is never run."""

    def __init__(self, pending=None, dst=None, shape=None, placeholder=False):
        super().__init__()
        self._pending, self._dst, self._shape = pending, dst, shape
        self._placeholder = placeholder

    def wait(self, timeout=None):
        if self._placeholder:
            raise RuntimeError("bcfront: a work handle of a trace escaped it unrebuilt")
        pending, dst, shape = self._pending, self._dst, self._shape
        if pending is not None:
            self._pending = self._dst = None
            out = torch.ops._c10d_functional.wait_tensor.default(pending)
            if dst is not None:
                dst.copy_(out if shape is None else out.view(shape))
        return True

    def is_completed(self):
        return self.wait()

    def is_success(self):
        return self.wait()

    def result(self):
        dst = self._dst
        self.wait()
        return [] if dst is None else [dst]

    def get_future(self):
        fut: torch.futures.Future = torch.futures.Future()
        fut.set_result(self.result())
        return fut

    def __del__(self):  # dropped unwaited: the result lands now, as eager's eventually does
        try:
            if self._pending is not None:
                self.wait()
        except Exception:  # noqa: BLE001 - never raise from a finalizer (shutdown, a torn-down group)
            pass


class WorkV(ObjectV):
    """A `CapturedWork` made in the trace: `issued` (the collective's output, not waited),
    `dst` (the tensor its result is copied into, None for none), `shape` (the view the
    result takes first, None for none); `waited` once a wait is recorded."""

    __slots__ = ("issued", "dst", "shape", "waited")

    def __init__(self, issued: TensorV, dst: TensorV | None, shape=None):
        super().__init__(CapturedWork(placeholder=True))
        self.issued, self.dst, self.shape, self.waited = issued, dst, shape, False

    def describe(self):
        return "Work(async collective)"

    def rebuild(self, rb) -> str:
        """A real handle: pending (the issued tensor becomes a graph output) or completed."""
        cls = rb.ns.const(CapturedWork)
        if self.waited:
            return rb.temp(f"{cls}()", self, "work")
        dst = "None" if self.dst is None else rb.expr(self.dst)
        shape = repr(self.shape)
        return rb.temp(f"{cls}({rb.expr(self.issued)}, {dst}, {shape})", self, "work")


class PendingLogV(Value):
    """The handles a trace made, in order; marked mutated, so the region rebuilds those still
    pending at its end even when nothing holds them (`replay_ops`): the dropped ones then
    complete when collected, as the collective eventually writes in eager."""

    __slots__ = ("works",)

    def __init__(self):
        super().__init__(None)
        self.works: tuple = ()

    def python_type(self):
        return type(None)

    def describe(self):
        return "async collectives"

    def describe_effect(self) -> None:
        return None  # (bookkeeping: no write to the world, nothing an error could leave half-done)

    def replay_ops(self, rb) -> None:
        for w in self.works:
            if not w.waited:
                rb.expr(w)


_LOG = "async_work_log"


def pending(tx, issued: TensorV, dst: TensorV | None, shape=None) -> WorkV:
    """The handle of a collective issued as `issued` whose result goes into `dst`."""
    w = WorkV(issued, dst, None if shape is None else tuple(shape))
    log = tx.trace_value(_LOG, PendingLogV)
    tx.set(log, "works", (*log.works, w))
    return w


def _wait(tx, w: WorkV) -> None:
    if w.waited:
        return
    out = record(tx, "call", torch.ops._c10d_functional.wait_tensor.default, [w.issued], {})
    if w.dst is not None:
        if w.shape is not None:
            out = record(tx, "method", "view", [out, Const(w.shape)], {})
        record(tx, "method", "copy_", [w.dst, out], {}, mutates=True)
    tx.set(w, "waited", True)


def _method(name: str):
    def model(tx, args: list, kwargs: dict) -> Value:
        w = args[0] if args else None
        if not isinstance(w, WorkV):  # a real handle (a continuation's input): its own code
            return dispatch.inline_call(tx, ObjectV(getattr(CapturedWork, name)), args, kwargs)
        _wait(tx, w)
        if name == "result":
            return ListV([] if w.dst is None else [w.dst])
        return Const(True)

    return model


MODELS = {getattr(CapturedWork, n): _method(n) for n in ("wait", "is_completed", "is_success", "result")}


def model_for(obj):
    """The model of a `CapturedWork` method: the waits above; a break for its other methods
    (``get_future``, the ones of ``dist.Work``); None for anything else."""
    try:
        m = MODELS.get(obj)
    except TypeError:  # unhashable
        return None
    if m is not None:
        return m
    qualname = getattr(obj, "__qualname__", None)
    own = isinstance(qualname, str) and qualname.startswith("CapturedWork.")
    if not own and not isinstance(getattr(obj, "__self__", None), CapturedWork):
        return None
    what = getattr(obj, "__name__", "?")

    def model(tx, args, kwargs):
        raise UnsupportedError(BreakReason.COLLECTIVE, f"Work.{what}() of an async collective")

    return model
