"""The overview of an HTML report: one sortable row per captured function, then its details.

A row holds the calls, the share of tensor ops inside compiled graphs (a
bar), of run time inside them when calls were timed, and the counts of
graphs, breaks, recompiles, native fallbacks and warnings.  Each function's
details list its breaks with their reasons, what ran natively and why, its
warnings and notes, with links to its source lines and graphs.
"""

from __future__ import annotations

from .page import esc, short, table, where


def fn_anchor(i: int) -> str:
    return f"fn-{i}"


def is_storm(f) -> bool:
    """Recompiles on at least half the calls (at least two), or a storm warning from capture."""
    n = len(f.recompiles)
    return any("storm" in w.lower() for w in f.warnings) or (n >= 2 and 2 * n >= max(f.calls, 1))


def share(part: float, total: float) -> float | None:
    return None if total <= 0 else part / total


def bar(frac: float | None, text: str) -> str:
    if frac is None:
        return '<span class="muted">-</span>'
    pct = round(100 * frac)
    return f'<span class="bar" title="{esc(text)}"><span style="width:{pct}%"></span></span> {pct}%'


def _row(i: int, f) -> list[str | tuple[str, str]]:
    ops = share(f.ops_in_graphs, f.ops_in_graphs + f.ops_native)
    t = share(f.compiled_seconds, f.total_seconds)
    n_breaks = sum(b.count for b in f.graph_breaks)
    return [
        f'<a href="#{fn_anchor(i)}">{esc(f.function)}</a>',
        f'<span class="mono">{esc(short(f.filename))}:{esc(f.lineno or "")}</span>',
        str(f.calls),
        (bar(ops, f.op_share or "not counted"), f"{-1 if ops is None else ops:.4f}"),
        (
            bar(t, f"{f.compiled_seconds:.4f}s of {f.total_seconds:.4f}s in compiled graphs"),
            f"{-1 if t is None else t:.4f}",
        ),
        str(len(f.graphs)),
        _count(n_breaks, "bad"),
        _count(len(f.recompiles), "bad" if is_storm(f) else "warn"),
        _count(sum(n.count for n in f.native_fallbacks), "bad"),
        _count(len(f.warnings), "warn"),
    ]


def _count(n: int, tone: str) -> str:
    return f'<span class="tag {tone}">{n}</span>' if n else "0"


def overview(report) -> str:
    fns = report.functions
    n_breaks = sum(b.count for b in report.graph_breaks)
    summary = (
        f"{len(fns)} captured function(s), {len(report.graphs)} graph(s), {n_breaks} graph break(s), "
        f"{len(report.recompiles)} recompile(s), {len(report.native_fallbacks)} native fallback(s)"
    )
    cols = ["function", "defined at", "#calls", "ops in graphs", "time in graphs", "#graphs"]
    cols += ["#breaks", "#recompiles", "#ran natively", "#warnings"]
    rows = [_row(i, f) for i, f in enumerate(fns)]
    body = table(cols, rows, "overview-table") if fns else '<p class="muted">no captured function ran</p>'
    storms = [f'<a href="#{fn_anchor(i)}">{esc(f.function)}</a>' for i, f in enumerate(fns) if is_storm(f)]
    banner = (
        f'<div class="stormbox" id="storm-banner">Recompile storm in {", ".join(storms)}: '
        '<a href="#guards">the failing guards</a></div>'
        if storms
        else ""
    )
    return (
        f'<section id="overview"><h2>Overview</h2>{banner}<p id="summary">{esc(summary)}</p>{body}'
        + "".join(details(i, f) for i, f in enumerate(fns))
        + "</section>"
    )


def details(i: int, f) -> str:
    at = esc(where(f.filename, f.lineno))
    parts = [f'<h3 id="{fn_anchor(i)}">{esc(f.function)} <span class="muted mono">{at}</span></h3>']
    if f.op_share:
        parts.append(f"<p>{esc(f.op_share)}</p>")
    for w in f.warnings:
        cls = "stormbox" if "storm" in w.lower() else "warnbox"
        parts.append(f'<div class="{cls}">{esc(w)}</div>')
    if f.graph_breaks:
        rows = [
            [
                tag(b.reason, "bad"),
                link(b.filename, b.lineno),
                str(b.count),
                esc(b.message) + (f"<br><code>{esc(b.source_line)}</code>" if b.source_line else ""),
                f'<span class="mono">{esc(b.instruction)}</span>',
            ]
            for b in f.graph_breaks
        ]
        parts.append(
            "<h4>Graph breaks</h4>"
            + table(["reason", "where", "#count", "message", "instruction"], rows, f"breaks-{i}")
        )
    if f.native_fallbacks:
        rows = [
            [
                tag(n.kind, "bad"),
                str(n.count),
                f'<span class="mono">{esc(where(n.filename, n.lineno))}</span>',
                esc(n.function),
                esc(n.message),
            ]
            for n in f.native_fallbacks
        ]
        parts.append(
            "<h4>Ran natively</h4>"
            + table(["kind", "#count", "where", "function", "why"], rows, f"fallbacks-{i}")
        )
    if f.side_effects:
        rows = [
            [esc(s.kind), f"<code>{esc(s.target)}</code>", esc(where(s.filename, s.lineno))]
            for s in f.side_effects
        ]
        parts.append(
            "<h4>Side effects replayed</h4>" + table(["kind", "target", "where"], rows, f"effects-{i}")
        )
    if f.notes:
        parts.append("<h4>Notes</h4><ul>" + "".join(f"<li>{esc(n)}</li>" for n in f.notes) + "</ul>")
    if f.timed_calls:
        parts.append(
            f'<p class="muted">{f.timed_calls} timed call(s): {f.total_seconds:.4f}s total, '
            f"{f.compiled_seconds:.4f}s in compiled graphs, {f.python_seconds:.4f}s Python, "
            f"{f.capture_seconds:.4f}s capturing</p>"
        )
    return "".join(parts)


def tag(value, tone: str = "") -> str:
    """A coloured label; a described enum member's meaning on hover."""
    return f'<span class="tag {tone}" title="{esc(getattr(value, "meaning", ""))}">{esc(value)}</span>'


def link(filename: str | None, lineno: int | None) -> str:
    """`file:line` linking to that line in the source view."""
    return f'<a class="mono" href="#{line_anchor(filename, lineno)}">{esc(where(filename, lineno))}</a>'


def line_anchor(filename: str | None, lineno: int | None) -> str:
    """The id of a line in the source view (the same function builds both ends of a link)."""
    key = f"{filename or ''}:{lineno or 0}"
    h = 0
    for ch in key:
        h = (h * 131 + ord(ch)) % 2**40
    return f"L{h:x}"
