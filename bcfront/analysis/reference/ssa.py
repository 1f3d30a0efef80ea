"""Reference SSA of the fast locals: Cytron et al.'s construction, written plainly.

R. Cytron, J. Ferrante, B. Rosen, M. Wegman, K. Zadeck, "Efficiently Computing
Static Single Assignment Form and the Control Dependence Graph" (TOPLAS 1991),
pruned by liveness:

1. Phi placement.  The entry defines every local (its parameter value, or
   unbound); a block defines the locals it writes.  A phi for local x goes at
   every block of the iterated dominance frontier of x's defining blocks where
   x is live on entry.  An exception handler also gets a phi for x when a block
   it protects writes x and x is live at the handler (the handler sees x as it
   was before whichever protected instruction raised, which the block's exit
   value does not say, even when the block dominates the handler).  Phis count
   as definitions for the frontier iteration.
2. Renaming.  A walk of the dominator tree with the current value of every
   local: a block starts from its immediate dominator's exit values, its phis
   define new values, then its instructions read and write (each instruction's
   events as `live_events.instruction_events` lists them).  Along an ordinary edge
   b -> s, the argument of s's phi is x's value at b's end; along an exception
   edge it is the set of values x has before each instruction of b.

Values are named by where they are defined: ``("entry", x)``, ``("store",
offset, x)``, ``("undef", offset, x)`` (DELETE_FAST, and the clear half of
LOAD_FAST_AND_CLEAR), ``("phi", block, x)``.  Stack slots are left out.  The
fast version is `bcfront.analysis.ssa` (with `ssa_phis` and `ssa_build`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType
from typing import cast

from ..bytecode import Instr
from ..live_events import instruction_events, variables_of
from .cfg import RefCFG

Key = tuple[object, ...]  # a value's name, as in the module docstring

# the instructions whose reads of a local are SSA uses (the fast version's `uses`)
LOCAL_READS = frozenset(
    {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"}
)


@dataclass
class RefSSA:
    phis: dict[int, set[str]]  # block -> locals with a phi there
    # (block, local) -> per incoming edge (src, kind), in the block's edge order: the
    # value along it (a frozenset of values along an exception edge)
    phi_args: dict[tuple[int, str], list[tuple[tuple[int, str], object]]]
    reads: dict[int, list[Key]]  # offset -> values of the locals it reads
    defs: dict[int, list[Key]]  # offset -> values it defines


def place_phis(
    cfg: RefCFG,
    df: dict[int, set[int]],
    live_in: dict[int, set[str]],
    written: dict[int, set[str]],
    local_names: list[str],
) -> dict[int, set[str]]:
    """Step 1: block -> the locals that get a phi there."""
    phis: dict[int, set[str]] = {b: set() for b in cfg.rpo}
    for b in cfg.rpo:  # handlers of blocks that write a local
        h = cfg.blocks[b].handler
        if h is not None:
            phis[h.target] |= written[b] & live_in[h.target]
    for x in local_names:
        defsites = {b for b in cfg.rpo if x in written[b]} | {cfg.entry}
        defsites |= {b for b in cfg.rpo if x in phis[b]}
        work = list(defsites)
        while work:
            d = work.pop()
            for y in df.get(d, ()):
                if x not in phis[y] and x in live_in[y]:
                    phis[y].add(x)
                    if y not in defsites:
                        defsites.add(y)
                        work.append(y)
    return {b: xs for b, xs in phis.items() if xs}


def build_ssa(
    cfg: RefCFG,
    idom: dict[int, int | None],
    df: dict[int, set[int]],
    live_in: dict[int, set[str]],
    instrs: tuple[Instr, ...],
    code: CodeType,
) -> RefSSA:
    """SSA of the locals of `code` (the module docstring's two steps)."""
    names, kinds = variables_of(code)
    local_names = [n for n in names if kinds[n] == "local"]
    locals_ = set(local_names)

    def events(ins: Instr) -> list[tuple[str, str]]:
        return [(k, x) for k, x in instruction_events(ins, code) if x in locals_]

    written = {
        b: {
            x
            for i in range(cfg.blocks[b].first, cfg.blocks[b].stop)
            for k, x in events(instrs[i])
            if k == "w"
        }
        for b in cfg.rpo
    }
    phis = place_phis(cfg, df, live_in, written, local_names)
    children: dict[int, list[int]] = {b: [] for b in cfg.rpo}
    for b in cfg.rpo:
        d = idom[b]
        if d is not None:
            children[d].append(b)
    phi_args: dict[tuple[int, str], list[list[object]]] = {}
    for b, xs in phis.items():
        incoming = [
            (p, kind)
            for p in dict.fromkeys(cfg.blocks[b].preds)
            if p in idom
            for s, kind in cfg.blocks[p].succs
            if s == b
        ]
        for x in xs:
            phi_args[b, x] = [[edge, None] for edge in incoming]
    reads: dict[int, list[Key]] = {}
    defs: dict[int, list[Key]] = {}
    exit_env: dict[int, dict[str, Key]] = {}
    start_env = {x: ("entry", x) for x in local_names}
    work = [cfg.entry]
    while work:  # the dominator tree, parents first
        b = work.pop()
        blk = cfg.blocks[b]
        d = idom[b]
        env = dict(start_env if d is None else exit_env[d])
        for x in phis.get(b, ()):
            env[x] = ("phi", b, x)
        seen: dict[str, list[Key]] = {x: [] for x in local_names}  # values before each instr
        for i in range(blk.first, blk.stop):
            ins = instrs[i]
            for x in local_names:
                seen[x].append(env[x])
            for kind, x in events(ins):
                if kind == "r":
                    if ins.opname in LOCAL_READS:
                        reads.setdefault(ins.offset, []).append(env[x])
                else:
                    undef = ins.opname in ("DELETE_FAST", "LOAD_FAST_AND_CLEAR")
                    env[x] = ("undef" if undef else "store", ins.offset, x)
                    defs.setdefault(ins.offset, []).append(env[x])
        exit_env[b] = env
        for s, kind in blk.succs:  # fill the successors' phi arguments
            for x in phis.get(s, ()):
                for arg in phi_args[s, x]:
                    if arg[0] == (b, kind):
                        arg[1] = frozenset(seen[x]) if kind == "exception" else env[x]
        work.extend(reversed(children[b]))
    args = {k: [(cast(tuple[int, str], edge), value) for edge, value in v] for k, v in phi_args.items()}
    return RefSSA(phis, args, reads, defs)
