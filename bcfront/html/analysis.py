"""The analyzer's view as an HTML page (``bcfront-explain --analyze TARGET --html``).

Pictures of one function's static analysis (a `bcfront.analyze` result, read
through its public attributes only, so this layer imports no analyzer):

* the CFG: blocks with their first instructions, edges by kind, loop bodies
  shaded by nesting depth, loop headers outlined, back edges red;
* the dominator tree, with the dominance frontier as dashed edges that do
  not shape it;
* SSA: each block with its phis (``x.3 = φ(x.1 ← 0, x.2 ← 50)``) and the
  values it defines, on the CFG's edges;
* a table of the loops.
"""

from __future__ import annotations

from . import layout
from .layout import Box, Link
from .page import esc, page, table

MAX_INSTRS = 8


def _reachable(fa) -> list:
    return [b for b, blk in fa.cfg.blocks.items() if blk.reachable]


def _line(fa, b):
    blk = fa.cfg.blocks.get(b)
    return next((i.lineno for i in blk.instructions if getattr(i, "lineno", None)), None) if blk else None


def _head(fa, b) -> str:
    line = _line(fa, b)
    return f"block {b}" + (f" (line {line})" if line else "")


def _depths(fa) -> tuple[dict, set]:
    depth: dict = {}
    for lp in fa.loops.loops:
        for b in lp.body:
            depth[b] = max(depth.get(b, 0), lp.depth)
    return depth, {lp.header for lp in fa.loops.loops}


def cfg_picture(fa) -> str:
    depth, headers = _depths(fa)
    back = {e for lp in fa.loops.loops for e in lp.back_edges}
    boxes = []
    for b, blk in fa.cfg.blocks.items():
        ins = [f"{i.offset} {i.opname} {i.argrepr}".rstrip() for i in blk.instructions]
        shown = ins[:MAX_INSTRS] + ([f"... {len(ins) - MAX_INSTRS} more"] if len(ins) > MAX_INSTRS else [])
        cls = " ".join(
            c
            for c in (
                f"loop{min(depth[b], 3)}" if b in depth else "",
                "header" if b in headers else "",
                "" if blk.reachable else "unreach",
            )
            if c
        )
        boxes.append(Box(f"b{b}", [_head(fa, b)] + shown, cls, "\n".join([_head(fa, b)] + ins)))
    edges = [
        Link(f"b{e.src}", f"b{e.dst}", "back" if (e.src, e.dst) in back else e.kind, e.kind)
        for e in fa.cfg.edges
    ]
    return layout.svg(boxes, edges, "cfg-pic", "control-flow graph")


def _preorder(fa) -> list:
    out, work = [], [fa.cfg.entry]
    while work:  # iterative: functions can have thousands of blocks
        b = work.pop()
        out.append(b)
        work.extend(reversed(fa.dom_tree.get(b, ())))
    return out


def domtree_picture(fa) -> str:
    blocks = _preorder(fa)
    boxes = [Box(f"b{b}", [_head(fa, b), f"idom: {fa.idom.get(b)}"]) for b in blocks]
    edges = [Link(f"b{p}", f"b{c}") for p in blocks for c in fa.dom_tree.get(p, ())]
    edges += [
        Link(f"b{b}", f"b{f}", "frontier", "dominance frontier", layout=False)
        for b in blocks
        for f in sorted(fa.dominance_frontier.get(b, ()))
    ]
    return layout.svg(boxes, edges, "domtree-pic", "dominator tree")


def ssa_picture(fa) -> str:
    ssa = fa.ssa
    defs: dict = {}
    for op in ssa.ops.values():
        for d in op.defs:
            defs.setdefault(op.block, []).append(f"{d.name} ← {op.offset} {op.instr.opname}")
    boxes = []
    for b in _reachable(fa):
        phis = [
            f"{v.name} = φ(" + ", ".join(f"{a.name} ← {src}" for (src, _), a in zip(v.edges, v.args)) + ")"
            for v in ssa.phis.get(b, ())
        ]
        catches = [f"{v.name} = catch" for v in getattr(ssa, "catches", {}).get(b, ())]
        ds = defs.get(b, [])
        shown = ds[:MAX_INSTRS] + ([f"... {len(ds) - MAX_INSTRS} more"] if len(ds) > MAX_INSTRS else [])
        cls = "phi" if phis else ""
        boxes.append(
            Box(f"b{b}", [_head(fa, b)] + phis + catches + shown, cls, "\n".join([_head(fa, b)] + phis + ds))
        )
    edges = [Link(f"b{e.src}", f"b{e.dst}", e.kind, e.kind) for e in fa.cfg.edges]
    return layout.svg(boxes, edges, "ssa-pic", "SSA")


def loops_table(fa) -> str:
    rows = [
        [
            str(lp.header),
            str(lp.depth),
            esc(", ".join(str(b) for b in sorted(lp.body))),
            esc(", ".join(f"{a}→{b}" for a, b in lp.back_edges)),
            esc(", ".join(f"{a}→{b}" for a, b in lp.exits) or "none"),
        ]
        for lp in fa.loops.loops
    ]
    irr = fa.loops.irreducible
    extra = f"<p>irreducible regions: {esc(irr)}</p>" if irr else ""
    if not rows:
        return '<p class="muted">no loops</p>' + extra
    return table(["#header", "#depth", "body", "back edges", "exits"], rows, "loops-table") + extra


def analysis_html(fa, title: str = "") -> str:
    """The whole page for the analysis `fa`."""
    name = getattr(fa.code, "co_qualname", fa.code.co_name)
    title = title or f"bcfront analyze: {name}"
    where = f"{fa.code.co_filename}:{fa.code.co_firstlineno}"
    n_phis = sum(len(v) for v in fa.ssa.phis.values())
    sections = [
        f'<section id="cfg"><h2>Control-flow graph</h2><p class="mono">{esc(where)}: '
        f"{len(fa.cfg.blocks)} block(s), {len(fa.cfg.edges)} edge(s), {len(fa.loops.loops)} loop(s)</p>"
        '<p class="marks">loop bodies shaded by depth, headers outlined green, back edges red, '
        "exception edges dotted red, branches blue</p>" + cfg_picture(fa) + "</section>",
        '<section id="domtree"><h2>Dominator tree</h2><p class="marks">dashed: dominance frontier</p>'
        + domtree_picture(fa)
        + "</section>",
        f'<section id="loops"><h2>Loops</h2>{loops_table(fa)}</section>',
        f'<section id="ssa"><h2>SSA</h2><p>{n_phis} phi(s); yellow blocks have phis</p>'
        + ssa_picture(fa)
        + "</section>",
    ]
    nav = [("cfg", "CFG"), ("domtree", "Dominators"), ("loops", "Loops"), ("ssa", "SSA")]
    return page(title, nav, sections)
