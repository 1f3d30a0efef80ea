"""Gather the reports of every captured function that ran in this process.

`bcfront.capture` keeps a process-wide registry of the captured functions that
ran; each describes itself as a `report.FunctionReport` (``cf.report()``).
The registry holds them weakly, so that capturing never leaks — but a
script's captured functions are often locals of its ``main()``, gone by the
time the report is written.  `keep_alive` therefore swaps in a registry that
also keeps what it is given (and remembers the order of first calls) for as
long as the CLI needs it.

Captured functions made on behalf of others (continuations after a graph
break, callees that broke while inlined) are listed right after the function
that made them, depth first, each once.
"""
from __future__ import annotations

import contextlib
import importlib
import weakref

from bcfront.report import FunctionReport, Report


def _capture_module():
    # bcfront.capture is both a function on the package and the module that
    # defines it; import the module by its full name to get the latter.
    try:
        return importlib.import_module("bcfront.capture")
    except ImportError:
        return None


class _KeepingSet(weakref.WeakSet):
    """A WeakSet that also holds strong references, in insertion order."""

    def __init__(self, data=()):
        super().__init__(data)
        self.kept = list(data)

    def add(self, item) -> None:
        if item not in self:
            self.kept.append(item)
        super().add(item)


@contextlib.contextmanager
def keep_alive():
    """While active, captured functions that run stay alive until the report is collected."""
    mod = _capture_module()
    old = getattr(mod, "_REGISTRY", None)
    if not isinstance(old, weakref.WeakSet):
        yield None      # a registry of another shape: collect whatever it offers
        return
    keeping = _KeepingSet(old)
    mod._REGISTRY = keeping
    try:
        yield keeping
    finally:
        mod._REGISTRY = old
        for cf in keeping.kept:
            old.add(cf)


def _ordered_registry(mod) -> list:
    reg = getattr(mod, "_REGISTRY", None)
    if isinstance(reg, _KeepingSet):
        return list(reg.kept)
    registry = getattr(mod, "registry", None)
    return list(registry()) if callable(registry) else []


def _children(cf) -> list:
    return [c for e in getattr(cf, "entries", ()) for c in getattr(e, "children", ())]


def _depth_first(roots: list) -> list:
    out, seen, work = [], set(), list(reversed(roots))
    while work:
        cf = work.pop()
        if id(cf) in seen:
            continue
        seen.add(id(cf))
        out.append(cf)
        work.extend(reversed(_children(cf)))
    return out


def _function_report(cf) -> FunctionReport | None:
    # Look the method up on the type: a captured module forwards unknown
    # attributes to the module, which must not be mistaken for ours.
    make = getattr(type(cf), "report", None)
    fr = make(cf) if callable(make) else None
    return fr if isinstance(fr, FunctionReport) else None


def collect() -> Report:
    """A `Report` of every captured function that has run at least once."""
    mod = _capture_module()
    if mod is None:
        return Report()
    ran = _ordered_registry(mod)
    made_for_others = {id(c) for cf in ran for c in _children(cf)}
    ordered = _depth_first([cf for cf in ran if id(cf) not in made_for_others] + ran)
    out = []
    for cf in ordered:
        fr = _function_report(cf)
        if fr is not None and (fr.calls or fr.graphs or fr.graph_breaks):
            out.append(fr)
    return Report(functions=tuple(out))
