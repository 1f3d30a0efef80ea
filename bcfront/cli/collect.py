"""Gather the reports of every captured function that ran in this process.

`bcfront.capture` keeps a process-wide registry of captured functions; each
entry can describe itself as a `report.FunctionReport`.  Functions that were
captured but never called are left out: the report is about what ran.
"""
from __future__ import annotations

import importlib

from bcfront.report import FunctionReport, Report


def _capture_module():
    # bcfront.capture is both a function on the package and the module that
    # defines it; import the module by its full name to get the latter.
    try:
        return importlib.import_module("bcfront.capture")
    except ImportError:
        return None


def _function_report(entry) -> FunctionReport | None:
    for name in ("function_report", "report"):
        fn = getattr(entry, name, None)
        if callable(fn):
            fr = fn()
            if isinstance(fr, FunctionReport):
                return fr
    return entry if isinstance(entry, FunctionReport) else None


def collect() -> Report:
    """A `Report` of every captured function that has run at least once."""
    mod = _capture_module()
    registry = getattr(mod, "registry", None) if mod is not None else None
    if registry is None:
        return Report()
    out = []
    for entry in registry():
        fr = _function_report(entry)
        if fr is not None and (fr.calls or fr.graphs or fr.graph_breaks):
            out.append(fr)
    return Report(functions=tuple(out))
