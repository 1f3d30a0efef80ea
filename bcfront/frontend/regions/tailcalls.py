"""Continuations as tail calls: a chain of breaks runs in a loop, not in nested calls.

A region that ends at a graph break must go on in a continuation.  Calling it
would nest one Python frame per break, so a break inside a loop (the
continuation at offset X reaching X again on the next iteration) would grow
the stack by a few frames per iteration and hit the recursion limit.  Instead:

* a continuation's region *returns* ``TailCall((target, *args))`` -- the next
  continuation and its arguments (a tuple subclass: one allocation, no
  ``__init__``);
* the outermost captured call (the user's function, or a callee captured at
  a call site) calls its first continuation and, while the result is a
  `TailCall`, calls the next one (`run_chain`).  The generated code checks
  ``type(r) is TailCall`` inline, so a chain of one costs one type test.

Nothing is shared between calls (each marker is a fresh tuple), so this is
re-entrant and thread-safe; an exception simply propagates out of the loop
with the frames of the continuation that raised it.  Only bcfront's own
generated code calls continuations, so no user code ever sees a marker.

`LoopEntry` is what a continuation calls when it re-enters a continuation
already on its own chain (a loop around a break): it runs the target's
cached entries, captures a new one at most `LOOP_RECAPTURES` times, and
otherwise runs the rest of the loop natively -- a loop whose guards change
every iteration (an int counter, an iterator position, the name a loop over
names reads) would otherwise recompile once per iteration up to the recompile
limit.  "The rest of the loop" is its `native` callable (`breaks.NativeLoop`):
the loop's remaining iterations run as plain Python and the code after the
loop goes on captured again; where that cannot be arranged, the rest of the
function runs natively.  Either way the reason is in the function's notes.
"""

from __future__ import annotations

# New entries a continuation may capture from inside its own loop.  Three: a decoding loop
# needs its static entry, its symbolic one (the length grew) and the last iteration's, where
# a stopping check on that length flips (transformers' MaxLengthCriteria: ``cur_len >=
# max_length``); with two, that last iteration ran natively.
LOOP_RECAPTURES = 3


class TailCall(tuple):
    """(callable, *args): what to call next, returned by a continuation's region."""

    __slots__ = ()


def run_chain(r):
    """Run tail calls until a real result comes back (it is returned or raised)."""
    while type(r) is TailCall:
        r = r[0](*r[1:])
    return r


class LoopEntry:
    """A continuation re-entered from its own chain (see the module docstring)."""

    __slots__ = ("cap", "fn", "make_native", "native", "__weakref__")

    def __init__(self, cap, fn, make_native=None):
        self.cap, self.fn = cap, fn
        self.make_native = make_native  # () -> callable(*args): the rest of the loop natively
        self.native = None

    def __call__(self, *args):
        cap = self.cap
        for e in cap._entries:
            try:  # the same inline check as CapturedFunction.__call__
                hit = e.guard(*args)
            except TypeError:
                hit = False
            if hit:
                cap.calls += 1
                return e.region(*args)
        if cap.native_reason is None and getattr(cap, "loop_captures", 0) < LOOP_RECAPTURES:
            cap.loop_captures = getattr(cap, "loop_captures", 0) + 1
            return cap(*args)
        native = self.native
        if native is None:
            native = self.native = self.make_native() if self.make_native is not None else self.fn
        return native(*args)  # the rest of the loop, natively

    def __repr__(self):
        return f"<loop entry of {self.cap!r}>"
