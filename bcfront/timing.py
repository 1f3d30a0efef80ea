"""Where a captured function's run time goes: compiled graphs against Python.

Measured only while someone asks -- inside `bcfront.explain` or an active
`bcfront.explain.collect()` -- so that a cached call nobody watches pays one
flag test in `CapturedFunction.__call__` and one per region, nothing more.

While measuring:

* each region function reads the clock around its graph (the backend's
  statements, between fetching the inputs and rebuilding the outputs) and adds
  the interval to a per-thread total, `CLOCK.graph` (`time_graph` emits that
  code into every region);
* capturing an entry (tracing, compiling, diagnosing the failed guard) adds
  its time to `CLOCK.capture`;
* `CapturedFunction.__call__` reads both totals around the call, so a
  function's compiled time *includes* the graphs of the continuations and
  callees it ran (they run inside its call), and its Python time is the rest
  of the call's wall time, capture excluded: guard checks, input fetches,
  rebuilding values, replaying writes, the native instruction at a break,
  continuations' own Python.

Graphs never nest -- a graph is straight-line torch code, and continuations
run after it -- so the graph total is a sum of disjoint intervals.
"""

from __future__ import annotations

import threading
from time import perf_counter

# How many collections are active; generated regions read ON[0] (a list: one
# global load and a subscript, no attribute lookup, on the unwatched path).
ON = [0]
# The active collections, oldest first; each is told about every captured
# function that runs while it is active (see `CapturedFunction._measured`).
COLLECTIONS: list = []


class _Clock(threading.local):
    """Per-thread running totals (seconds); readers take differences, never reset them."""

    graph = 0.0
    capture = 0.0


CLOCK = _Clock()


def add_graph_time(seconds: float) -> None:
    CLOCK.graph += seconds


def time_graph(body: list[str], ns) -> list[str]:
    """A region's graph statements bracketed by clock reads, taken only while measuring.

    The reads sit outside the statements so that the graph's own error handling
    (an early native return) is untouched: a run that leaves early simply adds
    no graph time.  A region without a graph gets no reads at all.
    """
    if not body:
        return body
    on = ns.const(ON, "timing_on")
    now = ns.const(perf_counter, "perf_counter")
    add = ns.const(add_graph_time, "add_graph_time")
    t0 = ns.fresh("t_graph")
    return (
        [f"    {t0} = {now}() if {on}[0] else 0.0"]
        + body
        + [f"    if {t0}:", f"        {add}({now}() - {t0})"]
    )


def start(collection) -> None:
    COLLECTIONS.append(collection)
    ON[0] = len(COLLECTIONS)


def stop(collection) -> None:
    if collection in COLLECTIONS:
        COLLECTIONS.remove(collection)
    ON[0] = len(COLLECTIONS)
