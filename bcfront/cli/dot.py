"""Graphviz views of one function's static analysis, for ``--analyze TARGET --dot VIEW``.

Each view is built from the public `bcfront.analyze` result only:

* ``cfg`` — basic blocks and edges, styled by kind (the analyzer's own `to_dot`);
* ``domtree`` — the dominator tree (solid, parent to child) with the dominance
  frontier as dotted edges that do not shape the layout;
* ``loops`` — the CFG with each natural loop drawn as a cluster around its
  body, nested as the loops nest, back edges bold and red, exits dashed,
  exception edges dotted;
* ``ssa`` — def-use chains: one box per instruction that reads or defines a
  value, one ellipse per SSA value (diamonds for phi and catch values), inside
  a cluster per block; an edge from each instruction to the values it defines
  and from each value to every instruction or phi that uses it.

Every string that comes from the code (names, argument reprs, file names) is
escaped with `quote`; node names are generated (``b36``, ``i12``, ``v7``).
"""

from __future__ import annotations

VIEWS = ("cfg", "domtree", "loops", "ssa")


def quote(s: str) -> str:
    """A DOT double-quoted string (newlines become centred line breaks)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _header(fa, view: str) -> list[str]:
    name = quote(f"{fa.code.co_qualname} ({view})")
    return [f"digraph {name} {{", f"  label={name};", '  labelloc="t";', '  node [fontname="monospace"];']


def _block_label(fa, b) -> str:
    blk = fa.cfg.blocks.get(b)
    line = blk.instructions[0].lineno if blk is not None and blk.instructions else None
    return f"block {b}" + (f"\nline {line}" if line else "")


def _reachable(fa) -> list:
    return [b for b, blk in fa.cfg.blocks.items() if blk.reachable]


def cfg_dot(fa) -> str:
    return fa.to_dot()


def domtree_dot(fa) -> str:
    lines = _header(fa, "dominator tree") + ["  node [shape=box];"]
    blocks = _reachable(fa)
    for b in blocks:
        lines.append(f"  b{b} [label={quote(_block_label(fa, b))}];")
    for parent in blocks:
        for child in fa.dom_tree.get(parent, ()):
            lines.append(f"  b{parent} -> b{child};")
    for b in blocks:
        for f in sorted(fa.dominance_frontier.get(b, ())):
            lines.append(
                f'  b{b} -> b{f} [style=dotted, color="grey", constraint=false, '
                f'tooltip="dominance frontier"];'
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def loops_dot(fa) -> str:
    forest = fa.loops
    lines = _header(fa, "loops") + ["  node [shape=box];"]
    by_header = {lp.header: lp for lp in forest.loops}
    innermost = {}
    for lp in sorted(forest.loops, key=lambda lp: lp.depth):  # deeper loops overwrite
        for b in lp.body:
            innermost[b] = lp.header
    members: dict = {}
    for b in _reachable(fa):
        members.setdefault(innermost.get(b), []).append(b)
    children: dict = {}
    for lp in forest.loops:
        children.setdefault(lp.parent, []).append(lp.header)
    # Clusters nest as the loops do; walk the forest with an explicit stack.
    work: list = [("open", None, 1)]
    while work:
        action, header, depth = work.pop()
        pad = "  " * depth
        if action == "close":
            lines.append(pad[:-2] + "}")
            continue
        if header is not None:
            lp = by_header[header]
            back = ", ".join(f"{u}→{h}" for u, h in lp.back_edges)
            lines += [
                f"{pad[:-2]}subgraph cluster_loop{header} {{",
                f"{pad}label={quote(f'loop at block {header} (depth {lp.depth}), back edges {back}')};",
                f'{pad}style=rounded; color="darkgreen";',
            ]
            work.append(("close", header, depth))
        for b in members.get(header, ()):
            extra = ", style=bold" if b in by_header else ""
            lines.append(f"{pad}b{b} [label={quote(_block_label(fa, b))}{extra}];")
        for h in sorted(children.get(header, ()), reverse=True):
            work.append(("open", h, depth + 1))
    back_edges = {e for lp in forest.loops for e in lp.back_edges}
    exits = {e for lp in forest.loops for e in lp.exits}
    for e in fa.cfg.edges:
        if not (fa.cfg.blocks[e.src].reachable and fa.cfg.blocks[e.dst].reachable):
            continue
        key = (e.src, e.dst)
        style = (
            'style=bold, color="red", label="back"'
            if key in back_edges
            else 'style=dashed, color="darkgreen", label="exit"'
            if key in exits
            else 'style=dotted, color="red"'
            if e.kind == "exception"
            else "style=solid"
        )
        lines.append(f"  b{e.src} -> b{e.dst} [{style}];")
    for i, region in enumerate(forest.irreducible):
        lines.append(f"  // irreducible region {i}: blocks {sorted(region.blocks)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


_VALUE_SHAPE = {"phi": "diamond", "catch": "diamond", "param": "invhouse", "undef": "invhouse"}


def _instr_label(ins) -> str:
    arg = ins.argrepr or ("" if ins.arg is None else str(ins.arg))
    return f"{ins.offset} {ins.opname}" + (f" {arg}" if arg else "")


def ssa_dot(fa) -> str:
    ssa = fa.ssa
    lines = _header(fa, "SSA def-use") + ["  compound=true;"]
    by_block: dict = {}
    for v in ssa.values:
        by_block.setdefault(v.block, []).append(v)
    ops = [op for op in ssa.ops.values() if op.uses or op.defs]
    ops_by_block: dict = {}
    for op in ops:
        ops_by_block.setdefault(op.block, []).append(op)
    entry_ids = {v.id for v in ssa.entry}
    for b in sorted(set(by_block) | set(ops_by_block), key=lambda b: (b is None, b)):
        lines += [
            f"  subgraph cluster_b{b} {{",
            f"    label={quote(_block_label(fa, b))};",
            '    style=rounded; color="grey";',
        ]
        for v in by_block.get(b, ()):
            if v.id in entry_ids:
                continue
            lines.append(
                f"    v{v.id} [label={quote(f'{v.name}  ({v.kind})')}, "
                f"shape={_VALUE_SHAPE.get(v.kind, 'ellipse')}];"
            )
        for op in ops_by_block.get(b, ()):
            lines.append(f"    i{op.offset} [label={quote(_instr_label(op.instr))}, shape=box];")
        lines.append("  }")
    if ssa.entry:
        lines += [
            "  subgraph cluster_entry {",
            '    label="entry values";',
            '    style=rounded; color="grey";',
        ]
        lines += [f"    v{v.id} [label={quote(f'{v.name}  ({v.kind})')}, shape=invhouse];" for v in ssa.entry]
        lines.append("  }")
    for op in ops:
        for d in op.defs:
            lines.append(f'  i{op.offset} -> v{d.id} [color="blue"];')
        for u in dict.fromkeys(op.uses):  # a value read twice: one edge
            lines.append(f"  v{u.id} -> i{op.offset};")
    for vs in (*ssa.phis.values(), *ssa.catches.values()):
        for v in vs:
            edges = v.edges if v.kind == "phi" else ((None, None),) * len(v.args)
            for (src, kind), a in zip(edges, v.args):
                attrs = "style=dashed"
                if src is not None:  # a phi argument: the edge it comes along ("!": exception)
                    attrs += f", label={quote(f'from {src}' + ('!' if kind == 'exception' else ''))}"
                lines.append(f"  v{a.id} -> v{v.id} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


RENDER = {"cfg": cfg_dot, "domtree": domtree_dot, "loops": loops_dot, "ssa": ssa_dot}


def to_dot(fa, view: str = "cfg") -> str:
    """The graphviz source of `view` (one of `VIEWS`) for the analysis `fa`."""
    try:
        render = RENDER[view]
    except KeyError:
        raise ValueError(f"unknown --dot view {view!r}; choose from {', '.join(VIEWS)}") from None
    return render(fa)
