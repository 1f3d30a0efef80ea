"""The graph view of an HTML report: each captured graph as a picture of its dataflow.

Nodes are coloured by kind (`GraphNode.kind`): inputs, torch ops, views,
in-place writes; graph outputs have a green border.  A graph of more than
`GROUP_OVER` nodes is first shown grouped: one box per run of consecutive
nodes of one submodule (known from the parameters they read: a transformer
layer is one box), or where the graph reads no parameters, of one function
of one file; coarser (per file, then fixed-size chunks) when that gives more
than `MAX_GROUPS` boxes; each box with its op counts, and the graph inputs as
one box.  The full picture is a click away (a click on a box shows its nodes
there; built from a ``<template>`` only when asked for, so a report of many large graphs opens
fast).  Generated Triton kernels are drawn as their own picture, each kernel a
box listing the graph ops fused into it.  Every picture pans and zooms.

A report without node data (an older JSON) shows the graph's code only.
"""

from __future__ import annotations

import re
from collections import Counter

from . import layout
from .layout import Box, Link
from .page import esc, short

GROUP_OVER = 60  # more nodes: grouped picture first
EAGER_FULL = 200  # more nodes: the full picture is built on demand
MAX_GROUPS = 40  # boxes in a grouped picture, at most (besides the inputs)


def _node_box(n) -> Box:
    cls = n.kind + (" output" if n.output else "")
    head = n.name if n.kind == "input" else f"{n.name} = {n.target.rsplit('.', 1)[-1]}"
    where = f"{short(n.filename)}:{n.lineno} in {n.function}" if n.filename else ""
    tip = "\n".join(x for x in (f"{n.name} = {n.expr}", n.meta, f"kind: {n.kind}", where) if x)
    return Box(n.name, [head, n.meta or "?"], cls, tip, {"kind": n.kind})


def full_picture(g, uid: str) -> str:
    boxes = [_node_box(n) for n in g.nodes]
    edges = [Link(a, n.name) for n in g.nodes for a in dict.fromkeys(n.inputs)]
    return layout.svg(boxes, edges, uid, f"graph {g.function}")


def _runs(nodes, key) -> list[tuple[str, list]]:
    out: list[tuple[str, list]] = []
    for n in nodes:
        k = key(n)
        if out and out[-1][0] == k:
            out[-1][1].append(n)
        else:
            out.append((k, [n]))
    return out


def _by_function(n) -> str:
    return f"{short(n.filename)}:{n.function}" if n.filename else "(no source line)"


def _by_file(n) -> str:
    return short(n.filename) if n.filename else "(no source line)"


_ITEM = re.compile(r"\._modules\[['\"]([^'\"]+)['\"]\]|\.([A-Za-z_]\w*)|\[(\d+)\]")


def module_path(source: str) -> tuple[str, ...]:
    """The submodule a graph input (a parameter or buffer) belongs to, from its source:
    ``L['self'].transformer.h._modules['0'].ln_1.weight`` -> ``('transformer', 'h', '0', 'ln_1')``."""
    root = source.find("]")
    if not source.startswith("L[") or root < 0:
        return ()
    parts = [a or b or c for a, b, c in _ITEM.findall(source[root + 1 :])]
    return tuple(parts[:-1])


def _modules(nodes) -> dict[str, tuple[str, ...]]:
    """Each body node's module: that of the parameters it reads, else the last one read before it."""
    owner = {n.name: module_path(n.target) for n in nodes if n.kind == "input"}
    out: dict[str, tuple[str, ...]] = {}
    current: tuple[str, ...] = ()
    for n in nodes:
        if n.kind == "input":
            continue
        read = [owner[a] for a in n.inputs if owner.get(a)]
        if read:
            current = max(read, key=len)
        out[n.name] = current
    return out


def _by_module(nodes) -> list[tuple[str, list]]:
    """Runs of body nodes from one submodule, at the deepest nesting that gives at most
    `MAX_GROUPS` runs and more than one (GPT-2: one box per ``transformer.h.<i>``); [] without
    parameters."""
    mods = _modules(nodes)
    body = [n for n in nodes if n.kind != "input"]
    deepest = max((len(m) for m in mods.values()), default=0)
    best: list[tuple[str, list]] = []
    for depth in range(1, deepest + 1):
        runs = _runs(body, lambda n, d=depth: ".".join(mods[n.name][:d]))
        if len(runs) > MAX_GROUPS:
            if not best:  # one level too coarse, the next too fine (48 layers): bins of runs
                best = _bins(runs)
            break
        if len({k for k, _ in runs}) > 1:
            best = runs
    return [(k or f"{_by_function(ms[0])} (outside modules)", ms) for k, ms in best]


def _bins(runs: list[tuple[str, list]]) -> list[tuple[str, list]]:
    """Consecutive runs merged into at most `MAX_GROUPS` bins, labelled ``first … last``."""
    size = -(-len(runs) // MAX_GROUPS)
    out = []
    for i in range(0, len(runs), size):
        part = runs[i : i + size]
        label = part[0][0] if len(part) == 1 else f"{part[0][0]} … {part[-1][0]}"
        out.append((label, [n for _, ms in part for n in ms]))
    return out


def groups(nodes) -> list[tuple[str, list]]:
    """The graph inputs, then runs of consecutive body nodes from one submodule (`_by_module`),
    or else one function, or else one file, or else fixed-size chunks, as (label, nodes)."""
    inputs = [n for n in nodes if n.kind == "input"]
    body = [n for n in nodes if n.kind != "input"]
    runs = _by_module(nodes)
    if not runs:
        runs = _runs(body, _by_function)
    if len(runs) > MAX_GROUPS:
        runs = _runs(body, _by_file)
    if len(runs) > MAX_GROUPS:
        size = -(-len(body) // MAX_GROUPS)
        runs = []
        for i in range(0, len(body), size):
            chunk = body[i : i + size]
            top = Counter(_by_function(n) for n in chunk).most_common(1)[0][0]
            runs.append((f"{top} …", chunk))
    return ([("inputs", inputs)] if inputs else []) + runs


def grouped_picture(g, uid: str) -> str:
    parts = groups(g.nodes)
    owner: dict[str, str] = {}
    boxes = []
    for gi, (key, members) in enumerate(parts):
        gid = f"g{gi}"
        for n in members:
            owner[n.name] = gid
        kinds = Counter(n.kind for n in members)
        lines_ = [n.lineno for n in members if n.lineno]
        span = f" lines {min(lines_)}-{max(lines_)}" if lines_ else ""
        head = f"{len(members)} inputs" if key == "inputs" else f"{key}{span}"
        count = ", ".join(f"{c} {k}" for k, c in sorted(kinds.items()))
        outs = sum(n.output for n in members)
        cls = "group" + (" input" if key == "inputs" else "") + (" output" if outs else "")
        tip = "\n".join([head, count] + [f"{n.name} = {n.expr}" for n in members[:30]])
        data = {"first": members[0].name} if members else {}
        lines_out = [head, count + (f", {outs} output(s)" if outs else "")]
        boxes.append(Box(gid, lines_out, cls, tip + "\n(click: these nodes in the full picture)", data))
    seen: set[tuple[str, str]] = set()
    edges = []
    for n in g.nodes:
        dst = owner[n.name]
        for a in n.inputs:
            src = owner.get(a)
            if src is not None and src != dst and (src, dst) not in seen:
                seen.add((src, dst))
                edges.append(Link(src, dst))
    return layout.svg(boxes, edges, uid, f"graph {g.function}, grouped")


def kernels_picture(g, uid: str) -> str:
    boxes = [
        Box(
            f"k{i}",
            [k.name] + list(k.ops[:12]) + ([f"... {len(k.ops) - 12} more"] if len(k.ops) > 12 else []),
            "kernel",
            "\n".join([k.name, *k.ops]),
        )
        for i, k in enumerate(g.kernels)
    ]
    edges = [Link(f"k{i}", f"k{i + 1}", "frontier") for i in range(len(boxes) - 1)]
    return layout.svg(boxes, edges, uid, "fused kernels")


LEGEND = (
    '<div class="legend"><span class="input">input</span><span>torch op</span>'
    '<span class="view">view</span><span class="inplace">in-place write</span>'
    '<span class="output">output</span><span class="kernel">Triton kernel</span>'
    "<span>drag: pan, wheel: zoom, double click: reset</span></div>"
)


def graph_view(gi: int, g) -> str:
    uid = f"graph{gi}"
    head = (
        f'<h3 id="{uid}">graph {gi}: {esc(g.function)} <span class="muted">'
        f"{esc(g.backend)}, {g.op_count} op(s), {len(g.nodes)} node(s)</span></h3>"
    )
    parts = [head]
    if g.nodes:
        n = len(g.nodes)
        if n > GROUP_OVER:
            full = full_picture(g, f"{uid}-full")
            full_box = f"<template>{full}</template>" if n > EAGER_FULL else full
            parts.append(
                f'<button class="toggle" data-target="{uid}-fullbox" data-other="{uid}-groupbox">'
                'grouped / all nodes</button> <span class="marks">click a box to see its nodes</span>'
                f'<div id="{uid}-groupbox">{grouped_picture(g, f"{uid}-grouped")}</div>'
                f'<div id="{uid}-fullbox" hidden>{full_box}</div>'
            )
        else:
            parts.append(full_picture(g, f"{uid}-full"))
    if g.kernels:
        parts.append(f"<h4>{len(g.kernels)} fused kernel(s)</h4>" + kernels_picture(g, f"{uid}-kernels"))
    if g.fallback_ops:
        parts.append(f"<p>left to torch by the backend: <code>{esc(', '.join(g.fallback_ops))}</code></p>")
    parts.append(f'<details><summary>code</summary><pre class="code">{esc(g.code)}</pre></details>')
    return "".join(parts)


def graphs_section(report) -> str:
    graphs = report.graphs
    body = (
        "".join(graph_view(i, g) for i, g in enumerate(graphs))
        or '<p class="muted">no graph was captured</p>'
    )
    return f'<section id="graphs"><h2>Graphs ({len(graphs)})</h2>{LEGEND}{body}</section>'
