"""`bcfront.explain`: run a function once under capture and report what happened.

The report (see `bcfront.report`) lists, for the captured function and every
function captured on its behalf (continuations after graph breaks, callees
that broke while inlined): the graphs with their readable code and backend,
the graph breaks (identical ones merged with a count), the guards of the
newest entry with where each guarded value was first used, the recompiles,
the side effects replayed after regions, notes, and where the run time went
(compiled graphs against Python, see `bcfront.timing`).

`collect()` is the public hook for tools that run a whole program (the
``bcfront-explain`` CLI): while it is active, every captured function that
runs is kept alive and its calls are timed::

    with bcfront.explain.collect() as run:
        main()
    report = run.report()
"""
from __future__ import annotations

import contextlib
from collections import Counter

from . import report, timing


def explain(fn, *args, **kwargs) -> report.Report:
    from .capture import CapturedFunction, capture
    if isinstance(fn, CapturedFunction):
        cf = CapturedFunction(fn.target, backend=fn.backend, fullgraph=fn.fullgraph,
                              recompile_limit=fn.recompile_limit, **fn.options)
    else:
        cf = capture(fn)
    with collect():
        cf(*args, **kwargs)
    return report.Report(tuple(merge_breaks(reports_of(cf))))


class Collection:
    """The captured functions that ran while a `collect()` was active (kept alive), and their report."""

    def __init__(self):
        self._ran: dict[int, object] = {}     # id -> CapturedFunction, in order of first call

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
        """A `Report` of every captured function that ran (calls, graphs or breaks to show)."""
        out = []
        for cf in self.functions:
            fr = function_report(cf)
            if fr.calls or fr.graphs or fr.graph_breaks:
                out.append(fr)
        return report.Report(tuple(out))


@contextlib.contextmanager
def collect():
    """Collect and time every captured function that runs while active; yields a `Collection`.

    Collections nest (each sees what ran while it was active).  Outside any
    collection, cached calls are not timed.
    """
    c = Collection()
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


def function_report(cf) -> report.FunctionReport:
    target = cf.target
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    if code is None and cf.module_root is not None:
        code = getattr(type(cf.module_root).forward, "__code__", None)
    graphs, notes, effects = [], list(cf.notes), []
    breaks = Counter()
    for e in cf.entries:
        graphs.extend(e.graphs)
        notes.extend(n for n in e.notes if n not in notes)
        effects.extend(s for s in e.side_effects if s not in effects)
        for b in e.breaks:
            key = (b.reason, b.message, b.filename, b.lineno, b.instruction)
            breaks[key] += b.count
    merged = []
    for e in cf.entries:
        for b in e.breaks:
            key = (b.reason, b.message, b.filename, b.lineno, b.instruction)
            if key in breaks:
                merged.append(report.GraphBreak(b.reason, b.message, b.filename, b.lineno,
                                                b.source_line, b.instruction, b.user_stack,
                                                breaks.pop(key)))
    guards = []
    if cf.entries:
        for g in cf.entries[-1].guards:
            guards.append(report.GuardInfo(g.source.readable() if g.source is not None else str(g.extra),
                                       g.kind, g.readable(), g.first_use))
    return report.FunctionReport(
        function=cf.__qualname__, filename=code.co_filename if code else None,
        lineno=code.co_firstlineno if code else None, graphs=tuple(graphs),
        graph_breaks=tuple(merged), guards=tuple(guards), recompiles=tuple(cf.recompiles),
        side_effects=tuple(effects), calls=cf.calls, notes=tuple(notes),
        warnings=tuple(cf.warnings), timed_calls=cf.timed_calls,
        compiled_seconds=cf.compiled_seconds, python_seconds=cf.python_seconds,
        total_seconds=cf.total_seconds, capture_seconds=cf.capture_seconds)
