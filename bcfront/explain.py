"""`bcfront.explain`: run a function once under capture and report what happened.

The report (see `bcfront.report`) lists, for the captured function and every
function captured on its behalf (continuations after graph breaks, callees
that broke while inlined): the graphs with their readable code and backend,
the graph breaks (identical ones merged with a count), the guards of the
newest entry with where each guarded value was first used, the recompiles,
the side effects replayed after regions, notes, whatever ran natively instead
of captured and why (`native_fallbacks`), where the run time went (compiled
graphs against Python, see `bcfront.timing`) and the share of tensor ops that
ran inside compiled graphs.  ``print(report)`` gives a short plain text.

`collect()` is the public hook for tools that run a whole program (the
``bcfront-explain`` CLI): while it is active, every captured function that
runs is kept alive and its calls are timed::

    with bcfront.explain.collect() as run:
        main()
    report = run.report()
"""

from __future__ import annotations

import contextlib

from . import report, timing
from .capture import CapturedFunction, capture, function_report


def explain(fn, /, *args, **kwargs) -> report.Report:
    if isinstance(fn, CapturedFunction):
        cf = CapturedFunction(
            fn.target,
            backend=fn.backend,
            fullgraph=fn.fullgraph,
            recompile_limit=fn.recompile_limit,
            **fn.options,
        )
    else:
        cf = capture(fn)
    with collect():
        cf(*args, **kwargs)
    return report.Report(tuple(merge_breaks(reports_of(cf))))


class Collection:
    """The captured functions that ran while a `collect()` was active (kept alive), and their report."""

    def __init__(self, count_ops: bool = True):
        self._ran: dict[int, object] = {}  # id -> CapturedFunction, in order of first call
        self.count_ops = count_ops  # count tensor ops in graphs vs native (bcfront.timing.OpCount)

    def saw(self, cf) -> None:
        """Called by capture for each measured call."""
        if id(cf) not in self._ran:
            self._ran[id(cf)] = cf

    @property
    def functions(self) -> list:
        """Every captured function that ran, each followed by those made on its behalf."""
        ran = list(self._ran.values())
        made_for_others = {id(c) for cf in ran for c in _children(cf)}
        return _depth_first([cf for cf in ran if id(cf) not in made_for_others] + ran)

    def report(self) -> report.Report:
        """A `Report` of every captured function that ran (calls, graphs or breaks to show).
        A break met by several captures (each decorator wrapper around a function that
        breaks inside is captured on its own, and meets the same break) is listed once,
        with its count, as in `explain`."""
        out = []
        for cf in self.functions:
            fr = function_report(cf)
            if fr.calls or fr.graphs or fr.graph_breaks:
                out.append(fr)
        return report.Report(tuple(merge_breaks(out)))


@contextlib.contextmanager
def collect(count_ops: bool = True):
    """Collect and time every captured function that runs while active; yields a `Collection`.

    With `count_ops`, the tensor ops of their calls are counted too: inside compiled
    graphs or natively (see `bcfront.timing`; it runs torch's profiler during the calls).
    Collections nest (each sees what ran while it was active).  Outside any
    collection, cached calls are not timed.
    """
    c = Collection(count_ops)
    timing.start(c)
    try:
        yield c
    finally:
        timing.stop(c)


def _children(cf) -> list:
    return [c for e in cf.entries for c in e.children]


def family(*roots) -> list:
    """The captured functions `roots` and every one made on their behalf (continuations,
    callees captured at a call site), transitively, depth first, each once."""
    return _depth_first(list(roots))


def _depth_first(roots: list) -> list:
    out, seen, work = [], set(), list(reversed(roots))
    while work:
        f = work.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        out.append(f)
        work.extend(reversed(_children(f)))
    return out


def merge_breaks(functions: list[report.FunctionReport]) -> list[report.FunctionReport]:
    """Identical breaks (same reason, message, place, instruction) across functions: once, counted."""
    import dataclasses

    first: dict = {}
    counts: dict = {}
    for fi, f in enumerate(functions):
        for b in f.graph_breaks:
            key = (b.reason, b.message, b.filename, b.lineno, b.instruction)
            first.setdefault(key, fi)
            counts[key] = counts.get(key, 0) + b.count
    out = []
    for fi, f in enumerate(functions):
        kept = []
        for b in f.graph_breaks:
            key = (b.reason, b.message, b.filename, b.lineno, b.instruction)
            if first[key] == fi and key in counts:
                kept.append(dataclasses.replace(b, count=counts.pop(key)))
        out.append(dataclasses.replace(f, graph_breaks=tuple(kept)))
    return out


def reports_of(cf) -> list[report.FunctionReport]:
    """Reports of `cf` and of every captured function its entries call, depth first, once each."""
    return [function_report(f) for f in _depth_first([cf])]
