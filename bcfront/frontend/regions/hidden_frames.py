"""The traceback of an exception leaving a captured call: the user's frames, never bcfront's.

Natively, an exception out of ``f(x)`` lists the caller's frame, ``f``'s and those of what
``f`` called.  Under capture the call runs through bcfront's own frames: the capture
(`capture.py`, `fast_call.py`, the plain call), generated regions, links and continuations
(files ``bcfront:...``), the stand-ins of the user's caller that `caller_frames` puts under a
native call (``warnings.warn(stacklevel=2)`` in the callee names the user's caller, as
natively: but the real caller is in the traceback already).  `hide` is the one place that
takes them out of an exception's ``__traceback__``; the C call of every captured function
(`_cfast.c`'s ``user_frames``) calls it where one of them is there, and so does `explain`.
What stays is, frame for frame, what the native call lists: the user's functions a region
inlined are there as the region raised through them (`tracebacks.attach`), a native call at
a break as its stand-in at the break's line (`caller_frames.stand_in`), a continuation's
frame as its region rebuilt it.  The chained exceptions (``__cause__``, ``__context__``)
made inside the call get the same.
"""

from __future__ import annotations

import os
from types import TracebackType

from ..model.frame import OWN_FILES
from .tracebacks import cached_frames

# the name of the first parameter (positional-only) of a stand-in of the user's caller, and
# of no other code (`caller_frames`): that frame duplicates the caller's own, which the
# traceback lists where the exception reaches it
CALLER_MARK = "___bcfront_caller"
PREFIXES = (OWN_FILES, "<bcfront", "bcfront:")
_CHAIN_MAX = 100  # chained exceptions looked at, at most (a chain may be a cycle)


def hidden(code) -> bool:
    """A frame of `code` is bcfront's, not the user's (`_cfast.c`'s ``hidden_code``)."""
    return code.co_filename.startswith(PREFIXES) or (
        code.co_posonlyargcount > 0 and code.co_varnames[0] == CALLER_MARK
    )


def hide(exc: BaseException) -> None:
    """Take bcfront's frames out of the tracebacks of `exc` and of the exceptions it chains.

    New traceback objects over the kept frames (a traceback may be shared: another
    exception's, one a program holds), and only where something is taken out.  bcfront's own
    errors (`GraphBreakError`, the strict mode's `StrictFallbackError`...) keep theirs, and
    their chains too: where in bcfront is what they report.  ``BCFRONT_DEBUG=1``: nothing
    is taken out."""
    if os.environ.get("BCFRONT_DEBUG"):
        return
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < _CHAIN_MAX:
        e = todo.pop()
        if e is None or id(e) in seen or type(e).__module__.partition(".")[0] == "bcfront":
            continue
        seen.add(id(e))
        tb = e.__traceback__
        kept = _kept(tb)
        if kept is not None:
            # Why rewrite ``__traceback__`` rather than not make the frames: Python adds an
            # entry for each frame an exception passes through, and a capture, a native call
            # at a break and a continuation's run pass through bcfront's code.
            new = None
            for frame, lasti, lineno in reversed(kept):
                new = TracebackType(new, frame, lasti, lineno)
            e.__traceback__ = new
        todo += (e.__cause__, e.__context__)


def _kept(tb) -> list | None:
    """The (frame, lasti, lineno) of `tb`'s entries that are the user's, outermost first;
    None where all of them are."""
    kept, dropped = [], False
    while tb is not None:
        if hidden(tb.tb_frame.f_code):
            dropped = True
        else:
            kept.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    return kept if dropped else None


def at_step(exc: BaseException, entries: tuple) -> None:
    """`exc`, raised by a break's native step that the region runs in its own frame (an
    operator, a subscript, an attribute: no call through a stand-in), gets the user's frame
    at the break's instruction (`entries`: its (filename, name, positions)) under the
    region's entry, where natively the user's frame is the one the instruction raised in:
    `hide` then takes the region's out.  Called from the region's handler around the step
    (`step_lines`), which re-raises it."""
    tb = exc.__traceback__
    frames = cached_frames(entries)
    if tb is None or not frames:
        return
    # (a traceback entry is made only by an exception passing a frame: the user's frame at
    # the break is one the region stands for, so its entry is put in by hand)
    below = tb.tb_next
    for frame, lasti, lineno in frames:  # innermost first
        below = TracebackType(below, frame, lasti, lineno)
    exc.__traceback__ = TracebackType(below, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)


def step_lines(ns, prefix: str, lines: list, entry: tuple) -> list:
    """`lines` (a break's native step, run in the region's frame) within a handler giving
    what they raise the user's frame at the break (`at_step`): `entry` is (filename, name,
    positions)."""
    return [
        "try:",
        *("    " + line for line in lines),
        f"except {ns.helper('BaseException')} as {prefix}step_exc:",
        f"    {ns.const(at_step, 'at_step')}({prefix}step_exc, {ns.const((entry,), 'step_at')})",
        f"    del {prefix}step_exc",  # (the bare raise below raises it still)
        "    raise",
    ]


def install() -> None:
    """Have the C call of every captured function hide bcfront's frames (where it is built)."""
    from ...cfast import C

    # only this package's own C module: a second copy of the package imported under another
    # name (`tools/ab_analysis.py` stages ``bcfront_b``) loads ``bcfront._cfast`` too, and
    # would point its hook at the copy's files, leaving this package's frames in tracebacks
    if C is not None and C.__name__ == f"{__name__.partition('.')[0]}._cfast":
        C._set_frame_hook(hide, PREFIXES, CALLER_MARK)
