"""Independent oracles for the dataflow analyses (liveness, SSA, stack, aliasing).

Nothing here uses bcfront's own decode/CFG/dataflow code: instructions come
from `dis`, dominators from networkx, executions from `sys.settrace`.

* `events` — which variables an instruction reads and writes, in order, per
  the definitions in `bcfront.analysis.liveness` (re-stated here from dis).
* `brute_live_before` — the definition of liveness at instruction
  granularity: x is live before i iff some path of the instruction graph
  (normal successors, plus an exception edge from every covered instruction)
  reaches a read of x with no write in between; searched path by path (BFS
  per variable), not by dataflow equations.
* `trace` — the offsets each frame of a code object executes, in order.
* `check_ssa` — the SSA invariants, against networkx dominators and
  ``dis.stack_effect`` depths.
"""

from __future__ import annotations

import dis
import sys
from collections import deque

import networkx as nx

PY = sys.version_info[:2]
UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
TERMINATORS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
JUMPS = set(getattr(dis, "hasjump", ())) | set(dis.hasjrel) | set(dis.hasjabs)
INTROSPECTION = {"locals", "vars", "dir", "eval", "exec", "super"}


def instructions(code):
    """dis instructions without EXTENDED_ARG prefixes (as offset -> Instruction, in order)."""
    return {i.offset: i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"}


def n_args(code) -> int:
    return code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)


def events(ins, code) -> list[tuple[str, str]]:
    """[("r" | "w", name)] in execution order; ("r", "*") reads everything."""
    op, a = ins.opname, ins.argval
    if op in (
        "LOAD_FAST",
        "LOAD_FAST_CHECK",
        "LOAD_DEREF",
        "LOAD_CLOSURE",
        "LOAD_CLASSDEREF",
        "LOAD_FROM_DICT_OR_DEREF",
        "STORE_DEREF",
        "DELETE_DEREF",
    ):
        return [("r", a)]
    if op == "STORE_FAST":
        return [("w", a)]
    if op in ("DELETE_FAST", "LOAD_FAST_AND_CLEAR"):
        return [("r", a), ("w", a)]
    if op == "LOAD_FAST_LOAD_FAST":
        return [("r", a[0]), ("r", a[1])]
    if op == "STORE_FAST_STORE_FAST":
        return [("w", a[0]), ("w", a[1])]
    if op == "STORE_FAST_LOAD_FAST":
        return [("w", a[0]), ("r", a[1])]
    if op == "MAKE_CELL":
        return ([("r", a)] if a in code.co_varnames[: n_args(code)] else []) + [("w", a)]
    if op == "COPY_FREE_VARS":
        return [("w", n) for n in code.co_freevars]
    if op in ("LOAD_GLOBAL", "LOAD_NAME") and a in INTROSPECTION:
        return [("r", "*")]
    return []


def all_variables(code) -> list[str]:
    return list(dict.fromkeys(code.co_varnames + code.co_cellvars + code.co_freevars))


def exception_entries(code):
    return dis.Bytecode(code).exception_entries


def instruction_graph(code):
    """(instrs, normal successors per offset, handler target per offset or None)."""
    ins = instructions(code)
    offs = list(ins)
    nxt = {o: offs[k + 1] if k + 1 < len(offs) else None for k, o in enumerate(offs)}
    entries = exception_entries(code)
    succ, handler = {}, {}
    for o, i in ins.items():
        out = []
        target = i.argval if i.opcode in JUMPS else None
        while target is not None and target not in ins:  # aimed at an EXTENDED_ARG
            target += 2
        if i.opname in UNCONDITIONAL:
            out = [target]
        elif i.opname not in TERMINATORS:
            if nxt[o] is not None:
                out.append(nxt[o])
            if target is not None:
                out.append(target)
        succ[o] = out
        handler[o] = None
        for e in entries:
            if e.start <= o < e.end:
                t = e.target
                while t not in ins:
                    t += 2
                handler[o] = t
                break
    return ins, succ, handler


def brute_live_before(code) -> dict[int, set[str]]:
    """Liveness by its path definition (see the module docstring)."""
    ins, succ, handler = instruction_graph(code)
    first: dict[int, dict[str, str]] = {}
    names = all_variables(code)
    for o, i in ins.items():
        f: dict[str, str] = {}
        for kind, n in events(i, code):
            for m in names if n == "*" else [n]:
                f.setdefault(m, kind)
        first[o] = f
    out = {o: set() for o in ins}
    for x in names:
        for start in ins:
            seen = {start}
            work = deque([start])
            while work:
                o = work.popleft()
                ev = first[o].get(x)
                if ev == "r":
                    out[start].add(x)
                    break
                nexts = list(succ[o]) if ev != "w" else []
                if handler[o] is not None:
                    nexts.append(handler[o])
                for s in nexts:
                    if s not in seen:
                        seen.add(s)
                        work.append(s)
    return out


def trace(code, run):
    """Call `run()` tracing the opcodes of every frame of `code` (generator frames
    included).  Returns (result or the exception raised, {frame: [offsets]}).
    `run` is called twice (see below), so it must be repeatable."""
    traces: dict = {}

    def local(frame, event, arg):
        if event == "opcode":
            traces.setdefault(frame, []).append(frame.f_lasti)
        return local

    def glob(frame, event, arg):
        if frame.f_code is code:
            frame.f_trace_opcodes = True
            return local
        return None

    old = sys.gettrace()
    result = None
    # CPython 3.13.0 starts opcode events only from a code object's second traced
    # call, so run once to warm up and keep what the second run records.
    for _ in range(2):
        traces.clear()
        sys.settrace(glob)
        try:
            result = run()
        except Exception as e:  # noqa: BLE001 - the exception is part of the behaviour we traced
            result = e
        finally:
            sys.settrace(old)
    return result, traces


def normal_successors(code) -> dict[int, list[int]]:
    return instruction_graph(code)[1]


# -- SSA invariants ----------------------------------------------------------------


def _intervals(idom, entry):
    """networkx's DFS pre/post numbers of the dominator tree: a dominates b iff a's
    interval contains b's."""
    tree = nx.DiGraph()
    tree.add_node(entry)
    tree.add_edges_from((d, n) for n, d in idom.items() if n != d and d is not None)
    pre = {n: i for i, n in enumerate(nx.dfs_preorder_nodes(tree, entry))}
    post = {n: i for i, n in enumerate(nx.dfs_postorder_nodes(tree, entry))}
    return {n: (pre[n], post[n]) for n in pre}


def _dis_effect(i, jump: bool) -> int:
    if i.opname == "RETURN_GENERATOR":
        return 1  # documented departure: it pushes the first sent value on every version
    arg = i.arg if i.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(i.opcode, arg, jump=jump)


def check_ssa(fa) -> None:
    """Assert the SSA invariants of `fa.ssa` (raises AssertionError with the reason)."""
    cfg, ssa, st = fa.cfg, fa.ssa, fa.stack
    code = fa.code
    if not cfg.blocks:
        return
    g = nx.DiGraph()
    g.add_node(cfg.entry)
    g.add_edges_from((e.src, e.dst) for e in cfg.edges)
    idom = nx.immediate_dominators(g, cfg.entry)
    reach = set(idom) | {cfg.entry}  # networkx >= 3.5 leaves the entry out
    iv = _intervals(idom, cfg.entry)

    def dom(a, b):
        return iv[a][0] <= iv[b][0] and iv[b][1] <= iv[a][1]

    # each value defined exactly once, and listed once
    defined: dict[int, object] = {}

    def define(v, where):
        assert id(v) not in defined, f"{v.name} defined twice ({defined[id(v)]} and {where})"
        defined[id(v)] = where

    pos: dict[int, tuple[int, int]] = {}  # id(value) -> (block, position in block)
    for v in ssa.entry:
        define(v, "entry")
        pos[id(v)] = (cfg.entry, -2)
    dis_ins = instructions(code)
    for b in reach:
        for v in ssa.phis.get(b, ()):
            define(v, f"phi@{b}")
            pos[id(v)] = (b, -1)
        for v in ssa.handler_values.get(b, ()):
            define(v, f"handler@{b}")
            pos[id(v)] = (b, -1)
        blk = cfg.blocks[b]
        for k, ins in enumerate(blk.instructions):
            assert ins.offset in dis_ins, f"offset {ins.offset} is not a dis instruction"
            for v in ssa.ops[ins.offset].defs:
                define(v, f"op@{ins.offset}")
                pos[id(v)] = (b, k)
        for v in ssa.catches.get(b, ()):
            define(v, f"catch@{b}")
            pos[id(v)] = (b, len(blk.instructions))
    assert len(defined) == len(ssa.values) == len({id(v) for v in ssa.values})
    assert len({v.name for v in ssa.values}) == len(ssa.values), "value names repeat"

    # every use dominated by its definition
    for off, op in ssa.ops.items():
        b = op.block
        k = [i.offset for i in cfg.blocks[b].instructions].index(off)
        for u in op.uses:
            db, dk = pos[id(u)]
            assert dom(db, b), f"{u.name} (block {db}) does not dominate its use at {off}"
            if db == b:
                assert dk < k, f"{u.name} used at {off} before (or by) its definition"
    in_edges: dict[int, list] = {b: [] for b in reach}
    for e in cfg.edges:
        if e.src in reach:
            in_edges[e.dst].append((e.src, e.kind))
    for b in reach:
        for v in ssa.phis.get(b, ()):
            assert sorted(v.edges) == sorted(in_edges[b]), f"phi {v.name}: edges {v.edges}"
            assert len(v.args) == len(in_edges[b])
            for (src, kind), a in zip(v.edges, v.args):
                db, dk = pos[id(a)]
                assert dom(db, src), f"phi {v.name}: {a.name} does not dominate pred {src}"
                if kind == "exception" and db == src:
                    n = len(cfg.blocks[src].instructions)
                    assert dk < n - 1 or dk == n, (
                        f"phi {v.name}: {a.name} is defined by the raising instruction itself"
                    )
        for v in ssa.catches.get(b, ()):
            assert len(v.args) >= 2
    # stack depths: consistent across predecessors, recomputed with dis.stack_effect
    for e in cfg.edges:
        if e.src not in reach:
            continue
        blk = cfg.blocks[e.src]
        if e.kind == "exception":
            h = blk.handler
            want = h.depth + h.lasti + 1
        else:
            d = st.depth_in[e.src]
            for ins in blk.instructions:
                i = dis_ins[ins.offset]
                d += _dis_effect(i, jump=(ins is blk.instructions[-1] and e.kind in ("jump", "branch")))
            want = d
        assert st.depth_in[e.dst] == want, (
            f"block {e.dst}: depth {st.depth_in[e.dst]}, but {want} along {e.kind} from {e.src}"
        )
        assert len(ssa.stack_in[e.dst]) == want
    assert st.max_depth <= code.co_stacksize, (st.max_depth, code.co_stacksize)
    _check_flow(fa, reach, pos)


def _check_flow(fa, reach, pos) -> None:
    """Along every edge, the values leaving the predecessor are what the successor
    starts with (its phi argument for that edge, or the inherited value)."""
    cfg, ssa, live = fa.cfg, fa.ssa, fa.liveness
    for e in cfg.edges:
        if e.src not in reach:
            continue
        src = cfg.blocks[e.src]
        stack = list(ssa.stack_in[e.src])
        locs = dict(ssa.locals_in(e.src))
        points_stack, points_locs = [tuple(stack)], [dict(locs)]
        for k, ins in enumerate(src.instructions):
            op = ssa.ops[ins.offset]
            is_last = k == len(src.instructions) - 1
            if is_last and e.kind in ("jump", "branch"):
                eff = fa.stack.effects[fa.stack.index[ins.offset]]
                if eff.jump != eff.fall:
                    base = stack[: len(stack) - op.pops]
                    inputs = stack[len(stack) - op.pops :]
                    news = [v for v in op.defs if v.kind == "op"]
                    stack = base + [news[o] if o >= 0 else inputs[~o] for o in eff.jump]
                    break
            stack[len(stack) - op.pops :] = op.results
            for v in op.defs:
                if isinstance(v.var, str) and v.kind in ("store", "undef"):
                    locs[v.var] = v
            if not is_last:
                points_stack.append(tuple(stack))
                points_locs.append(dict(locs))
        phis = {v.var: v for v in ssa.phis.get(e.dst, ())}
        want_locals = {n for n in live.live_in(e.dst) if live.kinds[n] == "local"}
        depth = len(ssa.stack_in[e.dst])
        handler_base = cfg.blocks[e.src].handler.depth if e.kind == "exception" else depth
        for var in list(range(min(depth, handler_base))) + sorted(want_locals):
            if e.kind == "exception":
                seen = (
                    [s[var] for s in points_stack] if isinstance(var, int) else [p[var] for p in points_locs]
                )
                seen = list(dict.fromkeys(seen))
            else:
                seen = [stack[var] if isinstance(var, int) else locs[var]]
            if var in phis:
                phi = phis[var]
                a = phi.args[phi.edges.index((e.src, e.kind))]
                got = list(a.args) if a.kind == "catch" and len(seen) > 1 else [a]
            else:
                got = [ssa.stack_in[e.dst][var] if isinstance(var, int) else ssa.locals_in(e.dst)[var]]
            assert got == seen, (
                f"edge {e.src}->{e.dst} ({e.kind}), variable {var!r}: "
                f"flows {[v.name for v in seen]}, received {[v.name for v in got]}"
            )
