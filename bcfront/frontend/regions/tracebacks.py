"""Tracebacks for exceptions the trace raised and a continuation rebuilds (O30).

An exception raised symbolically has no real traceback.  When it crosses a graph
break it is rebuilt as a real object, and code after the break may read its
``__traceback__``, print it or walk it.  The interpreter records the frames the
exception passed through, outermost first, as ``(filename, name, positions)``
triples (`model.frame.frame_entry`: CPython adds one traceback entry per frame
the exception leaves or is caught in, none for a bare ``raise``/RERAISE in the
frame that re-raises it).
`attach` gives the rebuilt object a real traceback with those entries: it raises
the exception through one small synthesized function per entry, each claiming
the user's file, function name and the raising instruction's source position
(so a printed traceback shows the same lines and carets as CPython's).
"""

from __future__ import annotations

import _thread
from types import TracebackType as _TracebackType

_RAISERS: dict = {}  # (filename, name, positions) -> function; bounded below

_TEMPLATE = "def _raiser(exc, rest):\n    rest[0](exc, rest[1:]) if rest else None; raise exc\n"


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 64:
        out.append(0x40 | (n & 63))
        n >>= 6
    out.append(n)
    return bytes(out)


def location_table(n_units: int, end_line_delta: int, col, end_col) -> bytes:
    """A location table (the 3.11+ format, Objects/locations.md) putting every code unit at
    one source position: the long form with columns when known, else line-only."""
    if col is None or end_col is None or end_line_delta < 0:
        entry, kind = b"\x00", 13  # kind 13: line delta only (svarint 0)
    else:
        entry, kind = (
            (b"\x00" + _varint(end_line_delta) + _varint(col + 1) + _varint(end_col + 1)),
            14,
        )  # kind 14: long form
    out = bytearray()
    while n_units > 0:
        length = min(n_units, 8)
        out.append(0x80 | (kind << 3) | (length - 1))
        out += entry
        n_units -= length
    return bytes(out)


def claiming(template: str, filename: str, name: str, qualname: str, positions: tuple, fn_globals: dict):
    """The one function `template` defines (fixed source), its code claiming `filename`,
    function `name` and, for every instruction, source `positions` (lineno, end_lineno, col,
    end_col), with globals `fn_globals`."""
    lineno, end_lineno, col, end_col = positions
    ns: dict = {}
    exec(compile(template, "<bcfront-claiming>", "exec"), ns)  # noqa: S102 - a fixed template
    made = next(v for k, v in ns.items() if k != "__builtins__")
    code = made.__code__
    table = location_table(len(code.co_code) // 2, (end_lineno or lineno) - lineno, col, end_col)
    code = code.replace(
        co_filename=filename,
        co_name=name,
        co_qualname=qualname,
        co_firstlineno=max(int(lineno), 1),
        co_linetable=table,
    )
    return type(made)(code, fn_globals, name)


def _raiser(filename: str, name: str, positions: tuple):
    key = (filename, name, positions)
    fn = _RAISERS.get(key)
    if fn is None:
        fn = claiming(_TEMPLATE, filename, name, name, positions, {"__builtins__": __builtins__})
        if len(_RAISERS) > 10_000:
            _RAISERS.clear()
        _RAISERS[key] = fn
    return fn


def attach(exc: BaseException, entries) -> BaseException:
    """Give `exc` a traceback through `entries` ((filename, name, positions), outermost first),
    keeping its chaining fields as they were.

    The fast version of `attach_by_raising` (a cached region raising on every call paid a
    raise and a catch per entry, several microseconds): the frames a raise through
    `entries` leaves are made once (`_frames_through`) and each exception gets new
    traceback objects over them -- new ones, so that a program rewriting ``tb_next`` (as
    some libraries do to hide their frames) changes only its own exception's traceback.
    `tests/frontend/test_exception_tracebacks.py` compares the two."""
    if not entries:
        return exc
    frames = _FRAMES.get(entries)
    if frames is None:
        frames = _frames_through(entries)
    tb = exc.__traceback__
    for frame, lasti, lineno in reversed(frames):
        tb = _TracebackType(tb, frame, lasti, lineno)
    exc.__traceback__ = tb
    return exc


def cached_frames(entries) -> tuple | None:
    """The frames `attach` puts under an exception raised through `entries`, innermost
    first, made now if need be; None where they could not be made apart from this call
    (no thread: they would keep its callers alive, so they are not for keeping)."""
    frames = _FRAMES.get(entries)
    if frames is None:
        _frames_through(entries)
        frames = _FRAMES.get(entries)
    return None if frames is None else tuple(reversed(frames))


def attach_by_raising(exc: BaseException, entries) -> BaseException:
    """`attach`'s plain version: raise `exc` through one raiser per entry and catch it."""
    if not entries:
        return exc
    chain = (exc.__context__, exc.__cause__, exc.__suppress_context__)
    raisers = tuple(_raiser(*e) for e in entries)
    try:
        raisers[0](exc, raisers[1:])
    except BaseException:  # noqa: BLE001 - it is `exc` itself
        pass
    tb = exc.__traceback__
    exc.__traceback__ = tb.tb_next if tb is not None else None  # drop this frame's own entry
    exc.__context__, exc.__cause__, exc.__suppress_context__ = chain
    del tb
    return exc


_FRAMES: dict = {}  # entries -> ((frame, tb_lasti, tb_lineno), ...), outermost first


class _Probe(Exception):
    """The exception raised through the raisers to make their frames."""


def _frames_through(entries) -> tuple:
    """The frames (with the traceback's lasti and line) a raise through `entries` leaves.

    Made on a thread of their own: a frame keeps the frame that called it (``f_back``), and
    here that is the region, which holds the call's arguments -- a cache of frames made on
    this thread would keep them alive.  On a new thread the caller chain ends at a function
    of ours.  Where no thread can start, this call's own frames (not cached)."""
    made: list = []
    done = _thread.allocate_lock()
    done.acquire()

    def make():
        try:
            made.extend(_walk(attach_by_raising(_Probe(), entries).__traceback__))
            for frame, _, _ in made:
                frame.clear()  # the raiser's locals: the probe and the other raisers
        finally:
            done.release()

    try:
        _thread.start_new_thread(make, ())
        done.acquire()
    except RuntimeError:  # no threads here (interpreter shutdown)
        made.clear()
    frames = tuple(made)
    if len(frames) != len(entries):  # not made there: this call's own, not cached
        return tuple(_walk(attach_by_raising(_Probe(), entries).__traceback__))
    if len(_FRAMES) > 10_000:
        _FRAMES.clear()
    _FRAMES[entries] = frames
    return frames


def _walk(tb):
    while tb is not None:
        yield tb.tb_frame, tb.tb_lasti, tb.tb_lineno
        tb = tb.tb_next


def set_context(exc: BaseException, handled: BaseException) -> None:
    """What raising `exc` inside an except block handling `handled` does to it, for an
    exception a break's native step raised outside that block: `handled` becomes its
    ``__context__`` (CPython's ``_PyErr_SetObject``), where nothing set one already (an
    exception raised in a handler inside the call has its own), any cycle through
    `handled`'s chain cut first."""
    if exc is handled or exc.__context__ is not None:
        return
    o: BaseException | None = handled
    seen = 0
    while o is not None and seen < 10_000:  # a bounded walk: a chain may itself be a cycle
        ctx = o.__context__
        if ctx is exc:
            o.__context__ = None
            break
        o, seen = ctx, seen + 1
    exc.__context__ = handled
