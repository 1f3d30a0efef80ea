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

Graphs nest only where a graph's node calls another captured function (an FSDP
module's call node runs the module's own capture, `semantics.fsdp_calls`); a
nested graph adds its own interval and the one around it adds the rest of its
interval, so the graph total stays a sum of disjoint intervals (continuations
run after their graph).

The op share (`OpCount`): while measuring, the outermost captured call runs
under torch's (legacy, quiet) profiler, each measured call inside a
``bcfront.call#N`` range, each graph inside ``bcfront.graph`` and each
capture inside ``bcfront.capture``.  When the outermost call returns, every
top-level operator event (``aten::add``, not the ops it calls) is counted for
each captured call around it: in a graph or native; events under a capture
(fake tensors, folding) are not counted.  So the count is per call, inclusive
like the times, and nothing at all runs on unwatched calls.
"""

from __future__ import annotations

import sys
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

    def __init__(self) -> None:
        # the graphs running, outermost first: [start time, seconds of the graphs nested in
        # it, its ``bcfront.graph`` profiler range (None when ops are not counted)]
        self.open_graphs: list[list] = []


CLOCK = _Clock()


def add_graph_time(seconds: float) -> None:
    CLOCK.graph += seconds


def graph_started() -> float:
    """Called (while measuring) as a graph starts: its start time; opens its op-count range."""
    r = OpCount.open("bcfront.graph") if OpCount.active else None
    t0 = perf_counter()
    CLOCK.open_graphs.append([t0, 0.0, r])
    return t0


def graph_done(t0: float) -> None:
    """The graph started at `t0` ran to its end: its interval, less the graphs nested in it
    (they added theirs), and its share of the graph around it."""
    graphs = CLOCK.open_graphs
    if not graphs or graphs[-1][0] != t0:
        return  # (unwound already by the call that left it)
    _, nested, r = graphs.pop()
    seconds = perf_counter() - t0
    add_graph_time(seconds - nested)
    if graphs:
        graphs[-1][1] += seconds
    if r is not None:
        OpCount.close(r)


def graph_left() -> None:
    """The innermost graph's statements are left early (a native rerun, an error): no time."""
    graphs = CLOCK.open_graphs
    r = graphs.pop()[2] if graphs else None
    if r is not None:
        OpCount.close(r)


def graphs_open() -> int:
    """How many graphs run around this point (for `graphs_unwind`)."""
    return len(CLOCK.open_graphs)


def graphs_unwind(depth: int) -> None:
    """A measured call ends: the graphs it started and an exception left close here."""
    while len(CLOCK.open_graphs) > depth:
        graph_left()


class NativeOps:
    """A block of native work inside a graph (an FSDP module's call node: its hooks): while
    ops are counted, its ops are native unless a graph nested in it runs them."""

    __slots__ = ("r",)

    def __enter__(self) -> None:
        self.r = OpCount.open("bcfront.native") if OpCount.active else None

    def __exit__(self, *exc) -> None:
        if self.r is not None:
            OpCount.close(self.r)


def time_graph(body: list[str], ns) -> list[str]:
    """A region's graph statements bracketed by clock reads, taken only while measuring.

    The reads sit outside the statements so that the graph's own error handling
    (an early native return) is untouched: a run that leaves early adds no graph
    time, and leaves the graph's op-count range first (before the native rerun).
    A region without a graph gets no reads at all.
    """
    if not body:
        return body
    on = ns.const(ON, "timing_on")
    start = ns.const(graph_started, "graph_started")
    done = ns.const(graph_done, "graph_done")
    left = ns.const(graph_left, "graph_left")
    t0 = ns.fresh("t_graph")
    out = [f"    {t0} = {start}() if {on}[0] else 0.0"]
    for line in body:
        stripped = line.lstrip()
        if stripped.split(" ", 1)[0] in ("return", "raise"):
            out.append(f"{line[: len(line) - len(stripped)]}if {t0}: {left}()")
        out.append(line)
    return out + [f"    if {t0}:", f"        {done}({t0})"]


class OpCount:
    """Counting the tensor ops of measured calls (see the module docstring)."""

    active = False  # a profile is running (started by the outermost measured call)
    wanted = 0  # collections that asked for op counts
    _profile = None
    _calls: dict = {}  # range name -> captured function, for this profile
    _n = 0

    @classmethod
    def call_started(cls, cf):
        """At a measured call of `cf`: its range (None when ops are not counted), and whether
        this call started the profile (it then ends it: `call_ended`)."""
        if not cls.wanted:
            return None, False
        began = False
        if not cls.active:
            began = cls._begin()
            if not began:
                return None, False
        cls._n += 1
        name = f"bcfront.call#{cls._n}"
        cls._calls[name] = cf
        return cls.open(name), began

    @classmethod
    def call_ended(cls, r, began: bool) -> None:
        if r is not None:
            cls.close(r)  # (its graphs closed: `graphs_unwind`)
        if began:
            cls._finish()

    @classmethod
    def open(cls, name: str):
        from torch._C._profiler import _RecordFunctionFast

        r = _RecordFunctionFast(name)
        r.__enter__()
        return r

    @staticmethod
    def close(r) -> None:
        r.__exit__(None, None, None)

    @classmethod
    def _begin(cls) -> bool:
        torch = sys.modules.get("torch")
        if torch is None or torch.autograd._profiler_enabled():
            return False  # no torch op can run yet / someone else's profiler runs: no count
        from torch.autograd.profiler_legacy import profile

        p = profile()
        try:
            p.__enter__()
        except RuntimeError:
            return False
        cls._profile, cls.active = p, True
        return True

    @classmethod
    def _finish(cls) -> None:
        p, calls = cls._profile, cls._calls
        cls._profile, cls._calls, cls.active = None, {}, False
        if p is None:
            return
        try:
            p.__exit__(None, None, None)
        except AssertionError:  # records it cannot pair (gloo's collectives end on their threads)
            return  # no op count for this profile
        counts = count_ops(p.function_events, calls)
        for name, (in_graphs, native) in counts.items():
            cf = calls[name]
            cf.ops_in_graphs += in_graphs
            cf.ops_native += native


_OP_PLACES = {"bcfront.graph": True, "bcfront.native": False}  # range -> its ops in a graph


def count_ops(events, calls: dict) -> dict:
    """``{call range: [ops in graphs, native ops]}``: each top-level op event counted once
    for every distinct captured function whose call range encloses it; in a graph when the
    innermost ``bcfront.graph`` or ``bcfront.native`` range around it is a graph's."""
    out: dict = {}
    for e in events:
        if "::" not in e.name:
            continue
        in_graph, seen, p = None, [], e.cpu_parent
        skip = False
        while p is not None:
            n = p.name
            if n.startswith("bcfront."):
                if n == "bcfront.capture":
                    skip = True
                    break
                if n in _OP_PLACES:
                    in_graph = _OP_PLACES[n] if in_graph is None else in_graph
                elif n in calls:
                    seen.append(n)
            elif "::" in n and not seen and in_graph is None:
                skip = True  # called by another op: counted as that op
                break
            p = p.cpu_parent
        if skip:
            continue
        done = set()
        for n in seen:
            f = id(calls[n])
            if f in done:
                continue  # a recursive call of the same function: once
            done.add(f)
            c = out.setdefault(n, [0, 0])
            c[0 if in_graph else 1] += 1
    return out


def start(collection) -> None:
    COLLECTIONS.append(collection)
    ON[0] = len(COLLECTIONS)
    OpCount.wanted = sum(1 for c in COLLECTIONS if getattr(c, "count_ops", True))


def stop(collection) -> None:
    if collection in COLLECTIONS:
        COLLECTIONS.remove(collection)
    ON[0] = len(COLLECTIONS)
    OpCount.wanted = sum(1 for c in COLLECTIONS if getattr(c, "count_ops", True))
