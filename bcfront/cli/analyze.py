"""``--analyze TARGET``: the analyzer's view of one function, as text or JSON (graphviz: `dot`)."""

from __future__ import annotations

import bcfront

from .runner import CliError
from .target import resolve


def analyze_target(target: str):
    """`bcfront.analyze` of the function `target` names; user errors become `CliError`."""
    obj = resolve(target)
    try:
        return bcfront.analyze(obj)
    except ImportError as e:
        raise CliError(f"the analyzer is not available: {e}", exit_code=3) from None
    except (TypeError, ValueError) as e:  # not a Python function; foreign bytecode
        raise CliError(f"cannot analyze {target}: {e}") from None


def emit(fa, fmt: str, console):
    """Text goes to `console`; "json" is returned as a string."""
    if fmt == "json":
        data = fa.to_json()
        if not isinstance(data, str):
            import json

            data = json.dumps(data, indent=2, default=str)
        return data
    if hasattr(fa, "render"):
        fa.render(console)
        render_structure(fa, console)
    else:
        console.print(fa.to_text(), markup=False, highlight=False)
    return None


def _block_label(fa, b) -> str:
    blk = fa.cfg.blocks.get(b)
    line = blk.instructions[0].lineno if blk is not None and blk.instructions else None
    return f"block {b}" + (f" (line {line})" if line else "")


def render_structure(fa, console) -> None:
    """The dominator tree and the loop nest, as trees (the block table shows neither shape)."""
    from rich.tree import Tree

    entry = fa.cfg.entry
    if fa.dom_tree:
        root = Tree(f"dominator tree: {_block_label(fa, entry)}")
        todo = [(root, entry)]
        while todo:  # iterative: functions can have thousands of blocks
            node, b = todo.pop()
            for child in reversed(fa.dom_tree.get(b, ())):
                todo.append((node.add(_block_label(fa, child)), child))
        console.print(root)
    loops = fa.loops
    forest = Tree(f"loops ({len(loops.loops)})")
    nodes = {}  # loop header -> its tree node (`parent` is the enclosing loop's header)
    for lp in sorted(loops.loops, key=lambda lp: lp.depth):
        back = ", ".join(f"{a}→{b}" for a, b in lp.back_edges)
        exits = ", ".join(f"{a}→{b}" for a, b in lp.exits) or "none"
        label = (
            f"header {_block_label(fa, lp.header)}: body {sorted(lp.body)}, back edges {back}, exits {exits}"
        )
        nodes[lp.header] = nodes.get(lp.parent, forest).add(label)
    if loops.irreducible:
        forest.add(f"irreducible regions: {loops.irreducible}")
    console.print(forest)
