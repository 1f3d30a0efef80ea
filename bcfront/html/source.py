"""The source view of an HTML report: the user's files with breaks, regions and guards marked.

Per file that the report points into (a function's definition, a break and
the frames of its user stack, a guard's first use, the lines a graph's nodes
came from):

* a graph-break line is red; its reasons show on hover and, on click, in a
  row below it;
* lines whose work went into a graph are shaded, alternating between two
  shades from one graph (one region between breaks) to the next;
* a guard's first-use site has a yellow line number, its checks on hover;
* library files (site-packages, the standard library) are collapsed.

Small user files are shown whole; otherwise only the marked lines with a few
lines of context.  A file that cannot be read shows the lines the report
itself carries (`source_line`).
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field

from .overview import line_anchor
from .page import esc

CONTEXT = 3
WHOLE_FILE = 400  # user files up to this many lines are shown whole
LIBRARY_MARKS = ("/site-packages/", "/dist-packages/", "/lib/python3", "<frozen")


@dataclass
class Marks:
    breaks: dict[int, list[str]] = field(default_factory=dict)  # line -> reasons
    calls: dict[int, list[str]] = field(default_factory=dict)  # a frame on a break's user stack
    guards: dict[int, list[str]] = field(default_factory=dict)
    region: dict[int, int] = field(default_factory=dict)  # line -> graph index
    defs: set[int] = field(default_factory=set)
    text: dict[int, str] = field(default_factory=dict)  # lines the report carries


def is_library(filename: str) -> bool:
    return filename.startswith("<") or any(m in filename for m in LIBRARY_MARKS)


def collect(report) -> dict[str, Marks]:
    files: dict[str, Marks] = {}

    def at(fn):
        return files.setdefault(fn, Marks())

    for f in report.functions:
        if f.filename and f.lineno:
            at(f.filename).defs.add(f.lineno)
        for b in f.graph_breaks:
            msg = f"[{b.reason}] {b.message}" + (f" (x{b.count})" if b.count > 1 else "")
            for fr in b.user_stack[:-1]:
                if fr.filename and fr.lineno:
                    at(fr.filename).calls.setdefault(fr.lineno, []).append(f"calls into a break: {msg}")
                    at(fr.filename).text.setdefault(fr.lineno, fr.source_line)
            if b.filename and b.lineno:
                at(b.filename).breaks.setdefault(b.lineno, []).append(msg)
                at(b.filename).text.setdefault(b.lineno, b.source_line)
        for g in f.guards:
            u = g.first_use
            if u is not None and u.filename and u.lineno:
                at(u.filename).guards.setdefault(u.lineno, []).append(f"{g.kind}: {g.expr}")
                at(u.filename).text.setdefault(u.lineno, u.source_line)
    for gi, g in enumerate(report.graphs):
        for n in g.nodes:
            if n.filename and n.lineno:
                at(n.filename).region.setdefault(n.lineno, gi)
    return files


def _shown(marks: Marks, n_lines: int, library: bool) -> list[int]:
    marked = set(marks.breaks) | set(marks.calls) | set(marks.guards) | set(marks.region) | marks.defs
    if n_lines and n_lines <= WHOLE_FILE and not library:
        return list(range(1, n_lines + 1))
    if not n_lines:
        return sorted(marked)
    keep: set[int] = set()
    for ln in marked:
        keep.update(range(max(1, ln - CONTEXT), min(n_lines, ln + CONTEXT) + 1))
    return sorted(keep)


def _row(filename: str, ln: int, text: str, m: Marks) -> str:
    cls, tips = [], []
    if ln in m.region:
        cls.append(f"r{m.region[ln] % 2}")
        tips.append(f"in graph {m.region[ln]}")
    if ln in m.guards:
        cls.append("guard")
        tips += [f"guard {g}" for g in m.guards[ln][:8]]
        if len(m.guards[ln]) > 8:
            tips.append(f"... {len(m.guards[ln]) - 8} more guard(s)")
    why = m.breaks.get(ln, []) + m.calls.get(ln, [])
    if why:
        cls.append("brk")
        tips = [f"graph break {w}" for w in why] + tips
    attrs = f' id="{line_anchor(filename, ln)}"'
    attrs += f' class="{" ".join(cls)}"' if cls else ""
    attrs += f' title="{esc(chr(10).join(tips))}"' if tips else ""
    row = f'<tr{attrs}><td class="ln">{ln}</td><td>{esc(text.rstrip())}</td></tr>'
    if why:
        items = "".join(f"<li>graph break {esc(w)}</li>" for w in why)
        row += f'<tr class="why"><td></td><td><ul>{items}</ul></td></tr>'
    return row


def file_view(filename: str, m: Marks) -> str:
    lines = linecache.getlines(filename)
    library = is_library(filename)
    shown = _shown(m, len(lines), library)
    rows, prev = [], 0
    for ln in shown:
        if prev and ln > prev + 1:
            rows.append(f'<tr class="gap"><td class="ln">⋯</td><td>{ln - prev - 1} line(s)</td></tr>')
        text = lines[ln - 1] if ln <= len(lines) else m.text.get(ln, "")
        rows.append(_row(filename, ln, text, m))
        prev = ln
    counts = []
    if m.breaks:
        counts.append(f"{sum(len(v) for v in m.breaks.values())} break(s)")
    if m.guards:
        counts.append(f"{sum(len(v) for v in m.guards.values())} guard site(s)")
    if m.region:
        counts.append(f"{len(m.region)} captured line(s)")
    summary = f'<span class="mono">{esc(filename)}</span> <span class="marks">{esc(", ".join(counts))}</span>'
    kind, label = (' class="lib"', "library: ") if library else (" open", "")
    return (
        f'<details{kind} data-file="{esc(filename)}"><summary>{label}{summary}</summary>'
        f'<div class="src"><table>{"".join(rows)}</table></div></details>'
    )


def source_section(report) -> str:
    files = collect(report)
    order = sorted(files, key=lambda fn: (is_library(fn), fn))
    legend = (
        '<p class="marks">red: a graph break (click for its reasons); blue and green shading: '
        "lines captured in alternate graphs; yellow line number: a guarded value's first use</p>"
    )
    body = "".join(file_view(fn, files[fn]) for fn in order) or '<p class="muted">no source to show</p>'
    return f'<section id="source"><h2>Source</h2>{legend}{body}</section>'
