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
from dataclasses import dataclass, replace

from bcfront.reasons import BreakReason
from bcfront.report import FunctionReport, GraphBreak, Report

# At least this many failures of one guard, on at least this share of calls.
STORM_MIN_FAILURES = 2
STORM_MIN_SHARE = 0.5

_SHAPE = re.compile(r"\.(?:shape|size\(\))\s*\[\s*(\d+)\s*\]|\.size\((\d+)\)")
_LOCAL = re.compile(r"L\[['\"](\w+)['\"]\]")
_TUPLE = re.compile(r"[(\[]\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*[)\]]")
# ``key=value`` in a value's description, e.g. "Tensor(torch.int64, shape=[2, 8], stride=[8, 1])".
_FIELD = re.compile(r"(\w+)=(\[[^\]]*\]|\([^)]*\)|'[^']*'|\"[^\"]*\"|[^,()\[\]]+)")
# Positional words of a tensor's description that are worth naming when they change.
_DTYPE = re.compile(r"torch\.(?:u?int\d+|float\d+|bfloat16|bool|complex\d+|half|double)")


@dataclass(frozen=True)
class Failure:
    """What a recompile says about one guard: enough to pick a fix."""

    source: str
    expr: str
    kind: str
    expected: str = ""
    actual: str = ""


def fields(text: str) -> dict[str, str]:
    """The ``key=value`` parts of a value's description (plus ``dtype`` when it is named)."""
    out = {k: v.strip() for k, v in _FIELD.findall(text)}
    m = _DTYPE.search(text)
    if m and "dtype" not in out:
        out["dtype"] = m.group(0)
    return out


def changes(expected: str, actual: str) -> list[tuple[str, str, str]]:
    """What differs between two descriptions: ``[(field, expected, actual)]``.

    Descriptions with ``key=value`` parts are compared field by field; plain
    values are one change named "value".
    """
    old, new = fields(expected), fields(actual)
    if old and new:
        diff = [(k, old[k], new.get(k, "?")) for k in old if old[k] != new.get(k)]
        diff += [(k, "?", new[k]) for k in new if k not in old]
        if diff:
            return diff
    return [] if expected == actual else [("value", expected, actual)]


def describe_changes(expected: str, actual: str) -> str:
    """e.g. "shape [2, 8] → [2, 9], stride [8, 1] → [9, 1]"."""
    parts = changes(expected, actual)
    if len(parts) == 1 and parts[0][0] == "value":
        return f"{expected} → {actual}"
    return ", ".join(f"{k} {a} → {b}" for k, a, b in parts)


def _dims(text: str) -> tuple[int, ...] | None:
    m = _TUPLE.search(text)
    return tuple(int(x) for x in m.group(1).split(",")) if m else None


def _changed(f: Failure) -> dict[str, tuple[str, str]]:
    return {k: (a, b) for k, a, b in changes(f.expected, f.actual)}


def _python_name(source: str) -> str:
    """``L['x'].layers[0]`` -> ``x.layers[0]``: how the caller spells an argument's value."""
    return _LOCAL.sub(lambda m: m.group(1), source)


def _mark_call(base: str, dims: list[int]) -> str:
    dim = str(dims[0]) if len(dims) == 1 else repr(tuple(dims))
    return f"bcfront.mark_dynamic({_python_name(base)}, {dim})"


def _specialized_fix(f: Failure) -> str | None:
    """A SHAPE guard that pinned a symbolic size to one value: the code needed it."""
    if f.kind != "SHAPE" or "==" not in f.expected:
        return None
    return (
        f"the captured code uses the value of a dynamic size ({f.expected}; {f.source}) as a "
        f"Python number (a loop bound, a list index, a C call), so each size is a new capture: "
        f"compute with the size through torch ops, or pad/bucket the inputs to a few sizes"
    )


def _shape_fix(f: Failure) -> str | None:
    m = _SHAPE.search(f.source) or _SHAPE.search(f.expr)
    if m:
        dims = [int(m.group(1) or m.group(2))]
        base = f.source.split(".shape")[0].split(".size")[0] or f.source
    else:  # a whole-shape check: find the dimensions that differ
        changed = _changed(f)
        old, new = (
            (_dims(changed["shape"][0]), _dims(changed["shape"][1]))
            if "shape" in changed
            else (_dims(f.expected), _dims(f.actual))
        )
        if old is None or new is None or len(old) != len(new) or old == new:
            return None
        dims = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
        base = f.source
    which = "dimension " + ", ".join(map(str, dims))
    return (
        f"the size of {which} of {base} changes between calls: make it dynamic before the "
        f"call with {_mark_call(base, dims)} (or capture with dynamic=True), or pad/bucket "
        f"the inputs to a few fixed sizes"
    )


def _stride_fix(f: Failure) -> str | None:
    changed = _changed(f)
    if "stride" not in changed or "shape" in changed:
        return None
    return (
        f"{f.source} has the same shape but different strides on each call: it is a view "
        f"into a tensor whose size changes (a slice of a growing sequence?); pass a "
        f"contiguous copy (.contiguous()) or slice it from a fixed-size buffer"
    )


def _scalar_fix(f: Failure) -> str | None:
    if f.kind not in ("CONSTANT", "EQUALS_MATCH", "CONSTANT_MATCH") and " == " not in f.expr:
        return None
    return (
        f"{f.source} is a Python value baked into the graph as a constant and it changes "
        f"between calls: stop passing a changing Python scalar (pass it as a tensor, "
        f"e.g. torch.tensor(value), or keep it fixed)"
    )


def _identity_fix(f: Failure) -> str | None:
    if f.kind != "ID_MATCH" and not f.expr.startswith("id("):
        return None
    return (
        f"{f.source} is a different object on each call (a new module, lambda or "
        f"closure?): create it once and reuse it"
    )


def _type_fix(f: Failure) -> str | None:
    if f.kind != "TYPE_MATCH":
        return None
    return f"the type of {f.source} changes between calls: pass values of one type"


def _tensor_fix(f: Failure) -> str | None:
    if f.kind != "TENSOR_MATCH" and not {"dtype", "device", "requires_grad"} & set(_changed(f)):
        return None
    return (
        f"the dtype, device, layout or requires_grad of {f.source} changes between calls: "
        f"convert inputs consistently before the call"
    )


def _global_fix(f: Failure) -> str | None:
    if not (f.source.startswith("G[") or f.kind.startswith("GLOBAL")):
        return None
    return (
        f"{f.source} (global state) changes between calls: pass it as an argument, "
        f"or change it outside the hot loop"
    )


# Checked in order; the first rule that returns a suggestion wins.
FIXES = (
    _specialized_fix,
    _shape_fix,
    _stride_fix,
    _type_fix,
    _identity_fix,
    _tensor_fix,
    _global_fix,
    _scalar_fix,
)
FALLBACK_FIX = "make this value the same on every call, or pass it as a tensor argument"


def suggest_fix(failure: Failure) -> str:
    for rule in FIXES:
        text = rule(failure)
        if text:
            return text
    return FALLBACK_FIX


def storm_warnings(fr: FunctionReport) -> list[str]:
    """One warning per guarded value whose guard failed on most calls of `fr`.

    Failures are grouped by the value guarded (``L['x'].shape[1]``), not by
    the check's text, which names a different expected value in each entry.
    """
    if not fr.recompiles:
        return []
    kinds = {g.expr: g.kind for g in fr.guards}
    fails = Counter(r.source or r.guard for r in fr.recompiles)
    calls = max(fr.calls, len(fr.recompiles) + 1)
    out = []
    for key, n in fails.most_common():
        if n < STORM_MIN_FAILURES or n < STORM_MIN_SHARE * calls:
            continue
        rec = [r for r in fr.recompiles if (r.source or r.guard) == key][-1]
        fix = suggest_fix(
            Failure(rec.source or key, rec.guard, kinds.get(rec.guard, ""), rec.expected, rec.actual)
        )
        out.append(
            f"recompile storm: the guard on {key} failed on {n} of {calls} calls "
            f"(last: {describe_changes(rec.expected, rec.actual)}); fix: {fix}"
        )
    return out


def _with_source(fr: FunctionReport) -> FunctionReport:
    breaks = tuple(
        b
        if b.source_line or not b.filename or not b.lineno
        else replace(b, source_line=linecache.getline(b.filename, b.lineno).strip())
        for b in fr.graph_breaks
    )
    return replace(fr, graph_breaks=breaks)


def _already_warned(warning: str, existing: tuple[str, ...]) -> bool:
    """Capture may warn about the same guard itself (e.g. at the recompile limit)."""
    guarded = warning.split(" failed on ")[0].removeprefix("recompile storm: the guard on ")
    return any(guarded in w for w in existing)


def with_raised_break(report: Report, exc: BaseException | None) -> Report:
    """`report` with the break a ``fullgraph=True`` capture raised, if capture did not record it.

    It goes to the function defined closest above the break in the same file.
    """
    from bcfront.errors import GraphBreakError

    if not isinstance(exc, GraphBreakError) or not exc.filename or not exc.lineno:
        return report
    same_file = [
        f
        for f in report.functions
        if f.filename == exc.filename and f.lineno is not None and f.lineno <= exc.lineno
    ]
    if not same_file:
        return report
    target = max(same_file, key=lambda f: f.lineno)
    if any(b.lineno == exc.lineno for b in target.graph_breaks):
        return report
    brk = GraphBreak(
        BreakReason.of(exc.reason),
        exc.message + " (raised: fullgraph=True)",
        exc.filename,
        exc.lineno,
        "",
        exc.instruction or "",
        tuple(exc.user_stack),
    )
    return Report(
        tuple(
            replace(f, graph_breaks=f.graph_breaks + (brk,)) if f is target else f for f in report.functions
        )
    )


def enrich(report: Report) -> Report:
    """`report` with storm warnings added and missing break source lines filled in."""
    out = []
    for fr in report.functions:
        fr = _with_source(fr)
        extra = [w for w in storm_warnings(fr) if not _already_warned(w, fr.warnings)]
        out.append(replace(fr, warnings=fr.warnings + tuple(extra)) if extra else fr)
    return Report(functions=tuple(out))
