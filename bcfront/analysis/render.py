"""Text, rich, graphviz and JSON views of a `FunctionAnalysis`.

`to_dict` schema (``"schema": "bcfront.analysis/1"``; all block ids are start
offsets, written as strings where they are object keys; the virtual exit is
-1; lists are sorted; fields are only ever added, never renamed)::

    schema      "bcfront.analysis/1"
    function    {name, qualname, filename, firstlineno, python: "3.12",
                 varnames: [...], cellvars: [...], freevars: [...]}
    entry       offset of the entry block
    blocks      [{start, end, reachable, stack_depth (null if unreachable),
                  handler: null | {start, end, target, depth, lasti},
                  instructions: [{offset, opname, arg, argrepr, line, stack_depth}]}]
    edges       [{src, dst, kind}]          kind: fallthrough | jump | branch | exception
    exit_preds  [block, ...]                blocks with an edge to the virtual exit
    idom        {"block": idom | null}      reachable blocks only
    frontiers   {"block": [block, ...]}
    post_idom   {"block": post-idom | null} "-1" (exit) maps to null
    loops       {irreducible: bool, loops: [{header, body, back_edges: [[src, dst]],
                                             exits, parent: header | null, depth}]}
    liveness    {variables: {name: "local" | "cell" | "free"},
                 live_in: {"block": [name]}, live_out: {"block": [name]}}
    ssa         {values: [{id, name, kind, var, block, offset, args: [name]}],
                 phis: {"block": [{name, var, args: [{from, kind, value}]}]},
                 instructions: {"offset": {uses: [name], defs: [name], stack: [name]}}}
    aliases     {sets: [[name, ...]], points_to: {name: [object label]}}
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    import types

    from rich.console import Console as _Console

    from .bytecode import Bytecode
    from .cfg import CFG
    from .liveness import Liveness
    from .loops import LoopForest
    from .ssa import SSA
    from .stack import StackInfo

    class Labelled(Protocol):
        @property
        def label(self) -> str: ...

    class Aliases(Protocol):
        """What the views read of `objalias.Aliases` (which imports `ssa`, which imports this)."""

        @property
        def sets(self) -> list[frozenset[str]]: ...
        def points_to(self, name: str) -> frozenset[Labelled]: ...

    class FunctionAnalysis(Protocol):
        """What the views read of `bcfront.analysis.FunctionAnalysis` (a protocol, so this
        module, which the facade imports, does not import the facade back)."""

        code: types.CodeType

        @property
        def bytecode(self) -> Bytecode: ...
        @property
        def cfg(self) -> CFG: ...
        @property
        def idom(self) -> dict[int, int | None]: ...
        @property
        def dominance_frontier(self) -> dict[int, set[int]]: ...
        @property
        def post_idom(self) -> dict[int, int | None]: ...
        @property
        def loops(self) -> LoopForest: ...
        @property
        def stack(self) -> StackInfo: ...
        @property
        def liveness(self) -> Liveness: ...
        @property
        def ssa(self) -> SSA: ...
        @property
        def aliases(self) -> Aliases: ...


SCHEMA = "bcfront.analysis/1"


# -- plain text -------------------------------------------------------------------


def _names(ns: Iterable[str]) -> str:
    return "{" + ", ".join(sorted(ns)) + "}"


def _opt(x: object) -> str:
    return "-" if x is None else str(x)


def to_text(fa: FunctionAnalysis) -> str:
    code = fa.code
    cfg = fa.cfg
    v = fa.bytecode.version
    out = [f"{code.co_qualname}  ({code.co_filename}:{code.co_firstlineno}, CPython {v[0]}.{v[1]})"]
    idom, df, pdom, live, st = fa.idom, fa.dominance_frontier, fa.post_idom, fa.liveness, fa.stack
    succ_kinds: dict[int, list[str]] = {b: [] for b in cfg.blocks}
    for e in cfg.edges:
        succ_kinds[e.src].append(f"{e.dst} ({e.kind})")
    for b, blk in cfg.blocks.items():
        head = f"block {b}..{blk.end}"
        if not blk.reachable:
            head += "  UNREACHABLE"
        else:
            head += (
                f"  depth {st.depth_in.get(b)}  idom {_opt(idom.get(b))}  ipdom {_opt(pdom.get(b))}"
                f"  df {_names(map(str, df.get(b, ())))}"
            )
        out.append(head)
        out.append(f"    live-in {_names(live.live_in(b))}  live-out {_names(live.live_out(b))}")
        for ins in blk.instructions:
            line = f"  {ins.offset:>5} {ins.opname} {ins.argrepr}".rstrip()
            if ins.lineno is not None:
                line = f"{line:<48} line {ins.lineno}"
            out.append(line)
        if succ_kinds[b]:
            out.append("    -> " + ", ".join(succ_kinds[b]))
    loops = fa.loops
    out.append("loops:" if loops.loops else "loops: none")
    for lp in loops.loops:
        out.append(f"  header {lp.header} depth {lp.depth}: body {_names(map(str, lp.body))}")
    if loops.irreducible:
        out.append("  (irreducible control flow)")
    out.append("ssa:")
    out.extend("  " + line for line in str(fa.ssa).splitlines())
    sets = fa.aliases.sets
    out.append("may-alias sets: " + (", ".join(_names(s) for s in sets) if sets else "none"))
    return "\n".join(out) + "\n"


def render(fa: FunctionAnalysis, console: _Console | None = None) -> None:
    """Print `fa` with rich when a console is given or stdout is a terminal."""
    if console is None:
        try:
            from rich.console import Console
        except ImportError:
            Console = None  # type: ignore[misc,assignment]  # (rich is optional)
        if Console is None or not sys.stdout.isatty():
            sys.stdout.write(to_text(fa))
            return
        console = Console()
    from rich.table import Table
    from rich.text import Text

    code = fa.code
    console.print(
        Text(f"{code.co_qualname}", style="bold"),
        Text(f"  {code.co_filename}:{code.co_firstlineno}", style="dim"),
    )
    table = Table(title="blocks", show_lines=False)
    for col in ("block", "end", "depth", "idom", "ipdom", "frontier", "live in", "live out", "succs"):
        table.add_column(col)
    live, st = fa.liveness, fa.stack
    succs: dict[int, list[str]] = {b: [] for b in fa.cfg.blocks}
    for e in fa.cfg.edges:
        succs[e.src].append(f"{e.dst}{'' if e.kind == 'fallthrough' else ' ' + e.kind[0]}")
    for b, blk in fa.cfg.blocks.items():
        style = None if blk.reachable else "dim"
        table.add_row(
            str(b),
            str(blk.end),
            str(st.depth_in.get(b, "-")),
            str(fa.idom.get(b, "-")),
            str(fa.post_idom.get(b, "-")),
            _names(map(str, fa.dominance_frontier.get(b, ()))),
            _names(live.live_in(b)),
            _names(live.live_out(b)),
            ", ".join(succs[b]),
            style=style,
        )
    console.print(table)
    text = Text()
    for line in str(fa.ssa).splitlines():
        style = "bold cyan" if line.startswith("block") else "magenta" if " = phi(" in line else None
        text.append(line + "\n", style=style)
    console.print(text)
    sets = fa.aliases.sets
    console.print(
        "may-alias sets: " + (", ".join(_names(s) for s in sets) if sets else "none"),
        markup=False,
        highlight=False,
    )


# -- graphviz ---------------------------------------------------------------------

_EDGE_STYLE = {
    "fallthrough": "style=solid",
    "jump": "style=bold",
    "branch": 'style=dashed, color="blue"',
    "exception": 'style=dotted, color="red"',
}


def _dot_str(s: str) -> str:
    """A DOT double-quoted string; `\\l` line breaks are added by the caller."""
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(fa: FunctionAnalysis) -> str:
    cfg = fa.cfg
    name = _dot_str(fa.code.co_qualname)
    lines = [f'digraph "{name}" {{', '  node [shape=box, fontname="monospace"];']
    for b, blk in cfg.blocks.items():
        body = [f"block {b}" + ("" if blk.reachable else " (unreachable)")]
        body += [f"{ins.offset} {ins.opname} {ins.argrepr}".rstrip() for ins in blk.instructions]
        label = "".join(_dot_str(x) + "\\l" for x in body)
        extra = ', style=filled, fillcolor="lightgrey"' if not blk.reachable else ""
        lines.append(f'  b{b} [label="{label}"{extra}];')
    for e in cfg.edges:
        lines.append(f"  b{e.src} -> b{e.dst} [{_EDGE_STYLE[e.kind]}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- dict / JSON --------------------------------------------------------------------


def _key_map(d: dict[int, Any], conv: Callable[[Any], Any] = lambda x: x) -> dict[str, Any]:
    return {str(k): conv(d[k]) for k in sorted(d)}


def _loops_dict(forest: LoopForest) -> dict[str, Any]:
    def pairs(edges: Iterable[Iterable[Hashable]]) -> list[list[Hashable]]:
        return [list(e) for e in edges]  # already sorted

    loops: list[dict[str, Any]] = [
        {
            "header": lp.header,
            "body": sorted(cast("frozenset[int]", lp.body)),  # (a CFG's nodes: ints)
            "back_edges": pairs(lp.back_edges),
            "exits": pairs(lp.exits),
            "parent": lp.parent,
            "depth": lp.depth,
        }
        for lp in forest.loops
    ]
    return {"irreducible": bool(forest.irreducible), "loops": loops}


def _ssa_dict(ssa: SSA) -> dict[str, Any]:
    values = [
        {
            "id": v.id,
            "name": v.name,
            "kind": v.kind,
            "var": v.var,
            "block": v.block,
            "offset": v.offset,
            "args": [a.name for a in v.args],
        }
        for v in ssa.values
    ]
    phis = {
        str(b): [
            {
                "name": v.name,
                "var": v.var,
                "args": [
                    {"from": src, "kind": kind, "value": a.name} for (src, kind), a in zip(v.edges, v.args)
                ],
            }
            for v in ssa.phis[b]
        ]
        for b in sorted(ssa.phis)
    }
    instrs = {
        str(off): {
            "uses": [v.name for v in op.uses],
            "defs": [v.name for v in op.defs],
            "stack": [v.name for v in op.results],
        }
        for off, op in sorted(ssa.ops.items())
    }
    return {"values": values, "phis": phis, "instructions": instrs}


def to_dict(fa: FunctionAnalysis) -> dict[str, Any]:
    code, cfg, st, live = fa.code, fa.cfg, fa.stack, fa.liveness
    v = fa.bytecode.version
    blocks = []
    for b, blk in cfg.blocks.items():
        h = blk.handler
        blocks.append(
            {
                "start": b,
                "end": blk.end,
                "reachable": blk.reachable,
                "stack_depth": st.depth_in.get(b),
                "handler": None
                if h is None
                else {"start": h.start, "end": h.end, "target": h.target, "depth": h.depth, "lasti": h.lasti},
                "instructions": [
                    {
                        "offset": ins.offset,
                        "opname": ins.opname,
                        "arg": ins.arg,
                        "argrepr": ins.argrepr,
                        "line": ins.lineno,
                        "stack_depth": st.depth_before(ins.offset) if blk.reachable else None,
                    }
                    for ins in blk.instructions
                ],
            }
        )
    al = fa.aliases
    return {
        "schema": SCHEMA,
        "function": {
            "name": code.co_name,
            "qualname": code.co_qualname,
            "filename": code.co_filename,
            "firstlineno": code.co_firstlineno,
            "python": f"{v[0]}.{v[1]}",
            "varnames": list(code.co_varnames),
            "cellvars": list(code.co_cellvars),
            "freevars": list(code.co_freevars),
        },
        "entry": cfg.entry,
        "blocks": blocks,
        "edges": [{"src": e.src, "dst": e.dst, "kind": e.kind} for e in cfg.edges],
        "exit_preds": sorted(set(cfg.exit_preds)),
        "idom": _key_map(fa.idom),
        "frontiers": _key_map(fa.dominance_frontier, sorted),
        "post_idom": _key_map(fa.post_idom),
        "loops": _loops_dict(fa.loops),
        "liveness": {
            "variables": dict(live.kinds),
            "live_in": _key_map(live.bits_in, lambda m: sorted(live.names(m))),
            "live_out": _key_map(live.bits_out, lambda m: sorted(live.names(m))),
        },
        "ssa": _ssa_dict(fa.ssa),
        "aliases": {
            "sets": [sorted(s) for s in al.sets],
            "points_to": {n: sorted(o.label for o in al.points_to(n)) for n in live.variables},
        },
    }
