"""Guards and recompiles in the HTML report: a searchable guard table, each recompile's failing
guard (expected → actual), and a timeline of captures over each function's calls.

A *storm* (recompiles on at least half the calls, at least twice, or a storm
warning from capture) is shown first, in red, so it is seen at a glance.  On the
timeline each call is a tick: blue where the function was first captured, red
where a guard failed and it was captured again (`Recompile.call`); runs of more
than `MAX_TICKS` calls are bucketed, a bucket red when any of its calls recompiled.
"""

from __future__ import annotations

from html import escape

from .overview import fn_anchor, is_storm, line_anchor, link
from .page import esc, short, table

MAX_TICKS = 300
OPEN_GUARDS = 400  # more guards in all: each function's table starts closed


def timeline(f) -> str:
    """One tick per call (or per bucket of calls): captures blue, recompiles red."""
    calls = max(f.calls, 1)
    rec = [r.call for r in f.recompiles if r.call]
    unknown = len(f.recompiles) - len(rec)
    step = -(-calls // MAX_TICKS)  # ceil
    marks: dict[int, str] = {}
    if f.graphs or f.graph_breaks:
        marks[0] = "cap"
    for c in rec:
        marks[(c - 1) // step] = "rec"
    ticks = []
    for k in range(-(-calls // step)):
        lo, hi = k * step + 1, min((k + 1) * step, calls)
        span = f"call {lo}" if lo == hi else f"calls {lo}-{hi}"
        what = {"cap": "captured", "rec": "recompiled"}.get(marks.get(k, ""), "cache hit")
        cls = f' class="{marks[k]}"' if k in marks else ""
        ticks.append(f'<i{cls} title="{span}: {what}"></i>')
    note = f" ({unknown} recompile(s) without a call number)" if unknown else ""
    return (
        f'<div class="timeline" data-function="{esc(f.function)}">{"".join(ticks)}</div>'
        f'<div class="muted">{f.calls} call(s), {len(f.recompiles)} recompile(s){note}; '
        "blue: first capture, red: recompile, grey: cache hit</div>"
    )


def _text(value) -> str:
    """Element text (not an attribute): quotes stay as they are."""
    return escape(str(value), quote=False)


def _short_frame(fr) -> str:
    """`file.py:line`, linking to that line in the source view (which names the whole path)."""
    if fr is None or not fr.filename:
        return ""
    return (
        f'<a href="#{line_anchor(fr.filename, fr.lineno)}">{_text(short(fr.filename))}:{fr.lineno or ""}</a>'
    )


def _frame(fr) -> str:
    return "" if fr is None else link(fr.filename, fr.lineno)


def guards_section(report) -> str:
    fns = report.functions
    parts = ['<section id="guards"><h2>Guards and recompiles</h2>']
    storms = [(i, f) for i, f in enumerate(fns) if is_storm(f)]
    for i, f in storms:
        last = f.recompiles[-1] if f.recompiles else None
        why = (
            f": guard <code>{esc(last.guard)}</code> expected {esc(last.expected)}, got {esc(last.actual)}"
            if last
            else ""
        )
        parts.append(
            f'<div class="stormbox">Recompile storm in <a href="#{fn_anchor(i)}">{esc(f.function)}</a>: '
            f"{len(f.recompiles)} recompile(s) in {f.calls} call(s){why}</div>"
        )
    if not storms:
        parts.append('<p class="muted">no recompile storm</p>')
    parts.append("<h3>Captures over the calls</h3>")
    for f in fns:
        if f.calls:
            parts.append(f"<div><b>{esc(f.function)}</b>{timeline(f)}</div>")
    recs = [r for f in fns for r in f.recompiles]
    parts.append(f"<h3>Recompiles ({len(recs)})</h3>")
    if recs:
        rows = [
            [
                esc(r.function),
                str(r.call or ""),
                f"<code>{esc(r.guard)}</code>",
                f'<code>{esc(r.expected)}</code> → <code class="actual">{esc(r.actual)}</code>',
                _frame(r.first_use),
            ]
            for r in recs
        ]
        parts.append(
            table(
                ["function", "#call", "failing guard", "expected → actual", "first used at"],
                rows,
                "recompiles-table",
            )
        )
    parts.append(guard_tables(fns))
    parts.append("</section>")
    return "".join(parts)


def guard_tables(fns) -> str:
    """The searchable guards: one table per function, inside one element the filter searches.
    A function's table starts open while the page has at most `OPEN_GUARDS` guards (a closed
    ``<details>`` is not laid out, so thousands of guards do not slow the page's opening)."""
    total = sum(len(f.guards) for f in fns)
    parts = [
        f"<h3>Guards ({total})</h3>",
        (
            '<input class="filter" id="guard-filter" data-table="guards-table" type="search" '
            'placeholder="filter guards: function, kind, source, check…"> <span class="muted" '
            'id="guard-filter-count"></span>'
        ),
        '<div id="guards-table">',
    ]
    for i, f in enumerate(fns):
        if not f.guards:
            continue
        rows = [  # lean cells (thousands of rows): the table's CSS sets the fonts
            [_text(g.kind), _text(g.source), _text(g.expr), _short_frame(g.first_use)] for g in f.guards
        ]
        is_open = " open" if total <= OPEN_GUARDS else ""
        parts.append(
            f'<details class="guards"{is_open} data-function="{esc(f.function)}"><summary><b>'
            f"{esc(f.function)}</b> {len(f.guards)} guard(s)</summary>"
            + table(["kind", "source", "check", "first used at"], rows, f"guards-{i}")
            + "</details>"
        )
    parts.append("</div>")
    return "".join(parts)
