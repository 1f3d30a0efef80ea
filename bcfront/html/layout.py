"""A layered layout of a directed graph, drawn as inline SVG (the pictures of the HTML report).

No graphviz, no JavaScript layout: boxes are given in an order (a graph's
execution order, a CFG's block order); an edge from an earlier box to a later
one is a *forward* edge and shapes the layout, any other edge (a loop's back
edge, a dominance-frontier hint) is drawn beside it.  Ranks are longest paths
over forward edges, with sources (graph inputs) pulled down next to their
first user; within a rank a box sits near the mean x of its neighbours (a
downward then an upward sweep), overlaps pushed apart.  Linear in the boxes
and edges, so a graph of thousands of nodes lays out in well under a second.

The SVG has class ``zoomable``: the page's script pans it (drag) and zooms it
(wheel); a double click resets the view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

CHAR_W = 7.4  # px per character at the pictures' 12px monospace font (DejaVu Sans Mono: 7.22)
LINE_H = 15.0
PAD = 8.0
GAP_X = 18.0
GAP_Y = 34.0
MAX_CHARS = 52


@dataclass
class Box:
    """A node of a picture: label lines (the first one bold), a CSS class, a tooltip."""

    id: str
    lines: list[str]
    cls: str = ""
    tip: str = ""
    data: dict[str, str] = field(default_factory=dict)  # extra data-* attributes


@dataclass
class Link:
    src: str
    dst: str
    cls: str = ""
    label: str = ""
    layout: bool = True  # False: drawn, but does not shape the ranks


@dataclass
class Placed:
    x: float  # centre
    y: float  # top
    w: float
    h: float


def _clip(line: str) -> str:
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1] + "…"


def _size(box: Box) -> tuple[float, float]:
    chars = max((len(_clip(s)) for s in box.lines), default=1)
    return max(chars * CHAR_W + 2 * PAD, 40.0), len(box.lines) * LINE_H + PAD


def _forward(boxes: list[Box], edges: list[Link]) -> tuple[dict, dict, dict]:
    index = {b.id: i for i, b in enumerate(boxes)}
    preds: dict[str, list[str]] = {b.id: [] for b in boxes}
    succs: dict[str, list[str]] = {b.id: [] for b in boxes}
    for e in edges:
        if e.layout and e.src in index and e.dst in index and index[e.src] < index[e.dst]:
            preds[e.dst].append(e.src)
            succs[e.src].append(e.dst)
    return index, preds, succs


def _ranks(boxes: list[Box], preds: dict, succs: dict) -> dict[str, int]:
    rank: dict[str, int] = {}
    for b in boxes:  # forward edges go from earlier to later boxes: one pass
        rank[b.id] = max((rank[p] + 1 for p in preds[b.id]), default=0)
    for b in reversed(boxes):  # a source sits just above its first user
        if not preds[b.id] and succs[b.id]:
            rank[b.id] = max(0, min(rank[s] for s in succs[b.id]) - 1)
    return rank


def _spread(row: list[str], want: dict[str, float], size: dict, x: dict) -> None:
    """Place `row` in the order of the wanted centres, without overlap, as near them as it can."""
    row.sort(key=lambda i: want[i])
    last_right = None
    for i in row:
        w = size[i][0]
        cx = want[i] if last_right is None else max(want[i], last_right + GAP_X + w / 2)
        x[i] = cx
        last_right = cx + w / 2
    shift = sum(x[i] - want[i] for i in row) / len(row)
    for i in row:
        x[i] -= shift


def layout(boxes: list[Box], edges: list[Link]) -> dict[str, Placed]:
    """Where each box goes (centre x, top y, width, height)."""
    if not boxes:
        return {}
    _, preds, succs = _forward(boxes, edges)
    rank = _ranks(boxes, preds, succs)
    size = {b.id: _size(b) for b in boxes}
    rows: dict[int, list[str]] = {}
    for b in boxes:
        rows.setdefault(rank[b.id], []).append(b.id)
    x: dict[str, float] = {}
    for r in sorted(rows):  # downward: near the predecessors
        row, nxt, want = rows[r], 0.0, {}
        for i in row:
            ps = [x[p] for p in preds[i] if p in x]
            want[i] = sum(ps) / len(ps) if ps else nxt
            nxt = want[i] + size[i][0] + GAP_X
        _spread(row, want, size, x)
    for r in sorted(rows, reverse=True):  # upward: sources near their users
        row = rows[r]
        want = {}
        for i in row:
            ss = [x[s] for s in succs[i]]
            want[i] = sum(ss) / len(ss) if ss and not preds[i] else x[i]
        _spread(row, want, size, x)
    out, y = {}, 0.0
    for r in sorted(rows):
        h = max(size[i][1] for i in rows[r])
        for i in rows[r]:
            out[i] = Placed(x[i], y, *size[i])
        y += h + GAP_Y
    return out


def _edge_path(a: Placed, b: Placed, back: bool) -> str:
    if back:  # around the right-hand side
        x1, y1 = a.x + a.w / 2, a.y + a.h / 2
        x2, y2 = b.x + b.w / 2, b.y + b.h / 2
        bulge = max(x1, x2) + 60
        return f"M{x1:.0f},{y1:.0f} C{bulge:.0f},{y1:.0f} {bulge:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
    x1, y1, x2, y2 = a.x, a.y + a.h, b.x, b.y
    dy = max((y2 - y1) / 2, 12)
    return f"M{x1:.0f},{y1:.0f} C{x1:.0f},{y1 + dy:.0f} {x2:.0f},{y2 - dy:.0f} {x2:.0f},{y2:.0f}"


def svg(boxes: list[Box], edges: list[Link], uid: str, title: str = "", max_height: int = 640) -> str:
    """`boxes` and `edges` laid out as one ``<svg class="zoomable">``; `uid` makes its ids unique."""
    pos = layout(boxes, edges)
    if not pos:
        return '<p class="muted">(empty)</p>'
    index, _, _ = _forward(boxes, edges)
    left = min(p.x - p.w / 2 for p in pos.values()) - 20
    right = max(p.x + p.w / 2 for p in pos.values()) + 90
    bottom = max(p.y + p.h for p in pos.values()) + 20
    w, h = right - left, bottom + 20
    parts = [
        (
            f'<svg class="zoomable" id="{uid}" '
            f'viewBox="{left:.0f} -20 {w:.0f} {h:.0f}" data-vb="{left:.0f} -20 {w:.0f} {h:.0f}" '
            f'style="height:{min(h, max_height):.0f}px" role="img" aria-label="{escape(title)}">'
        ),
        (
            f'<defs><marker id="{uid}-a" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z"/></marker></defs>'
        ),
    ]
    for e in edges:
        a, b = pos.get(e.src), pos.get(e.dst)
        if a is None or b is None:
            continue
        back = not (e.layout and index[e.src] < index[e.dst])
        cls = " ".join(c for c in ("edge", e.cls, "back" if back and e.layout else "") if c)
        tip = f"<title>{escape(e.label)}</title>" if e.label else ""
        parts.append(
            f'<path class="{cls}" d="{_edge_path(a, b, back)}" marker-end="url(#{uid}-a)">{tip}</path>'
        )
    for bx in boxes:
        p = pos[bx.id]
        data = "".join(f' data-{k}="{escape(v)}"' for k, v in bx.data.items())
        tip = escape(bx.tip or "\n".join(bx.lines))
        parts.append(f'<g class="box {bx.cls}" id="{uid}-{escape(bx.id)}"{data}><title>{tip}</title>')
        parts.append(
            f'<rect x="{p.x - p.w / 2:.0f}" y="{p.y:.0f}" width="{p.w:.0f}" height="{p.h:.0f}" rx="4"/>'
        )
        for k, line in enumerate(bx.lines):
            weight = ' class="b"' if k == 0 else ""
            ty = p.y + PAD / 2 + LINE_H * (k + 0.75)
            parts.append(
                f'<text x="{p.x - p.w / 2 + PAD:.0f}" y="{ty:.0f}"{weight}>{escape(_clip(line))}</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)
