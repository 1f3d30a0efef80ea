"""Advice a person can act on: recompile storms and how to stop them.

A *recompile storm* is a guard that fails on most calls of a function: every
call pays for a new capture, and after the recompile limit the function runs
natively.  The fix depends on what the guard checks, so the suggestion is
chosen from a table keyed by the kind of value guarded (first match wins).
`enrich` adds the warnings (and missing source lines) to a report, so the
text and the JSON output say the same thing.
"""
from __future__ import annotations

import linecache
import re
from collections import Counter
from dataclasses import replace

from bcfront.report import FunctionReport, Report

# At least this many failures of one guard, on at least this share of calls.
STORM_MIN_FAILURES = 2
STORM_MIN_SHARE = 0.5

_SHAPE = re.compile(r"\.(?:shape|size\(\))\s*\[\s*(\d+)\s*\]|\.size\((\d+)\)")


def _shape_fix(source: str, expr: str, kind: str) -> str | None:
    m = _SHAPE.search(source) or _SHAPE.search(expr)
    if not m:
        return None
    dim = m.group(1) or m.group(2)
    base = source.split(".shape")[0].split(".size")[0] or source
    return (f"the size of dimension {dim} of {base} changes between calls: mark that "
            f"dimension dynamic, or pad/bucket the inputs to a few fixed sizes")


def _scalar_fix(source: str, expr: str, kind: str) -> str | None:
    if kind not in ("CONSTANT", "EQUALS_MATCH", "CONSTANT_MATCH") and " == " not in expr:
        return None
    return (f"{source} is a Python value baked into the graph as a constant and it changes "
            f"between calls: stop passing a changing Python scalar (pass it as a tensor, "
            f"e.g. torch.tensor(value), or keep it fixed)")


def _identity_fix(source: str, expr: str, kind: str) -> str | None:
    if kind != "ID_MATCH" and " is " not in expr:
        return None
    return (f"{source} is a different object on each call (a new module, lambda or "
            f"closure?): create it once and reuse it")


def _type_fix(source: str, expr: str, kind: str) -> str | None:
    if kind != "TYPE_MATCH":
        return None
    return f"the type of {source} changes between calls: pass values of one type"


def _tensor_fix(source: str, expr: str, kind: str) -> str | None:
    if kind != "TENSOR_MATCH":
        return None
    return (f"the dtype, device, layout or requires_grad of {source} changes between calls: "
            f"convert inputs consistently before the call")


def _global_fix(source: str, expr: str, kind: str) -> str | None:
    if not (source.startswith("G[") or kind.startswith("GLOBAL")):
        return None
    return (f"{source} (global state) changes between calls: pass it as an argument, "
            f"or change it outside the hot loop")


# Checked in order; the first rule that returns a suggestion wins.
FIXES = (_shape_fix, _scalar_fix, _identity_fix, _type_fix, _tensor_fix, _global_fix)
FALLBACK_FIX = "make this value the same on every call, or pass it as a tensor argument"


def suggest_fix(source: str, expr: str, kind: str = "") -> str:
    for rule in FIXES:
        text = rule(source, expr, kind)
        if text:
            return text
    return FALLBACK_FIX


def storm_warnings(fr: FunctionReport, kinds: dict[str, str] | None = None) -> list[str]:
    """One warning per guard that failed on most calls of `fr`."""
    if not fr.recompiles:
        return []
    kinds = kinds if kinds is not None else {g.expr: g.kind for g in fr.guards}
    fails = Counter(r.guard for r in fr.recompiles)
    calls = max(fr.calls, len(fr.recompiles) + 1)
    out = []
    for guard, n in fails.most_common():
        if n < STORM_MIN_FAILURES or n < STORM_MIN_SHARE * calls:
            continue
        rec = next(r for r in fr.recompiles if r.guard == guard)
        fix = suggest_fix(rec.source, guard, kinds.get(guard, ""))
        out.append(f"recompile storm: the guard `{guard}` failed on {n} of {calls} calls "
                   f"(last: expected {rec.expected}, got {rec.actual}); fix: {fix}")
    return out


def _with_source(fr: FunctionReport) -> FunctionReport:
    breaks = tuple(
        b if b.source_line or not b.filename or not b.lineno
        else replace(b, source_line=linecache.getline(b.filename, b.lineno).strip())
        for b in fr.graph_breaks)
    return replace(fr, graph_breaks=breaks)


def enrich(report: Report) -> Report:
    """`report` with storm warnings added and missing break source lines filled in."""
    out = []
    for fr in report.functions:
        fr = _with_source(fr)
        extra = [w for w in storm_warnings(fr)
                 if not any(w.split("`")[1] in old for old in fr.warnings)]
        out.append(replace(fr, warnings=fr.warnings + tuple(extra)) if extra else fr)
    return Report(functions=tuple(out))
