"""Generators left suspended inside try/with: dropping one must run natively.

A generator suspended under a handler is closed when it is collected, running
its finally/__exit__ at once, which the trace cannot do (O54).  The handlers
ask here whether a return, a rebinding or a deletion drops such a generator.
Below the handlers and the run loop, so neither imports the other for it.
"""

from __future__ import annotations

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.frame import Frame
from ..model.values import GeneratorV


def check_dropped_generators(tx, frame: Frame, kept=None) -> None:
    """A generator left suspended inside try/finally or a with block is closed when it is
    collected -- natively, at once, its finally/__exit__ running (printing, releasing) --
    which the trace cannot do.  So a frame that returns while one of its locals (other than
    the value it returns) holds such a generator runs that return natively: the root's as a
    graph break, a callee's by calling it (O54).  Generators kept elsewhere (an attribute,
    as contextlib's managers do) are not dropped here."""
    if frame.generator is not None:
        return
    for v in list(frame.locals.values()) + frame.stack[:-1]:
        if v is not kept and dropping_pending_generator(tx, v):
            raise UnsupportedError(
                BreakReason.GENERATOR_CLEANUP,
                "a generator suspended inside try/with is dropped: its cleanup runs when it is collected",
            )


def dropping_pending_generator(tx, v) -> bool:
    """Whether `v` is a generator suspended inside try/with (deleting or rebinding the name
    that holds it may close it)."""
    return isinstance(v, GeneratorV) and v in tx.suspended_in_try and _pending(v)


def _pending(gen) -> bool:
    f = gen.frame
    if not gen.started or gen.done or f.cur is None:
        return False
    entry = f.bc.handler_for(f.cur.offset)
    # 3.12+ cover a generator's whole body with an implicit handler that only turns a
    # StopIteration into RuntimeError: no cleanup of the user's runs there
    return entry is not None and not _stop_iteration_guard(f.bc, entry)


def _stop_iteration_guard(bc, entry) -> bool:
    target = bc.at(entry.target)
    return target.opname == "CALL_INTRINSIC_1" and target.arg == 3  # INTRINSIC_STOPITERATION_ERROR
