"""Random small functions (hypothesis, derandomized): liveness against the path
definition, the SSA invariants, and both dynamic oracles on an actual run."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from dataflow_oracles import brute_live_before, check_ssa, events, instructions, normal_successors, trace  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bcfront.analysis import analyze  # noqa: E402

VARS = ["a", "b", "c", "d"]


@st.composite
def expressions(draw):
    v = st.sampled_from(VARS)
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(v)
    if kind == 1:
        return str(draw(st.integers(-1, 3)))
    if kind == 2:
        return f"{draw(v)} + {draw(v)}"
    if kind == 3:
        return f"[{draw(v)}, {draw(v)}]"
    if kind == 4:
        return f"({draw(v)} if {draw(v)} else {draw(v)})"
    return f"[{draw(v)} for {draw(v)} in range(2)]"


@st.composite
def blocks(draw, depth=0):
    n = draw(st.integers(1, 3))
    lines = []
    for _ in range(n):
        kinds = 6 if depth < 2 else 3
        kind = draw(st.integers(0, kinds - 1))
        v = draw(st.sampled_from(VARS))
        if kind == 0:
            lines.append(f"{v} = {draw(expressions())}")
        elif kind == 1:
            lines.append(f"{v} = 1 // {draw(st.sampled_from(VARS))}")  # may raise
        elif kind == 2:
            lines.append(draw(st.sampled_from([f"del {v}", f"return {v}", f"{v} += 1"])))
        elif kind == 3:
            body, other = draw(blocks(depth + 1)), draw(blocks(depth + 1))
            lines += [f"if {v}:"] + _indent(body) + ["else:"] + _indent(other)
        elif kind == 4:
            lines += [f"for {v} in range(2):"] + _indent(draw(blocks(depth + 1)))
        else:
            body, handler = draw(blocks(depth + 1)), draw(blocks(depth + 1))
            lines += ["try:"] + _indent(body) + ["except (ZeroDivisionError, TypeError):"] + _indent(handler)
    return lines


def _indent(lines):
    return ["    " + ln for ln in lines]


def _compile(lines):
    src = "\n".join(["def fuzzed(a, b):"] + _indent(["c = d = 0"] + lines + ["return a, b, c, d"]))
    ns: dict = {}
    exec(compile(src, "<fuzz>", "exec"), ns)
    return ns["fuzzed"], src


FUZZ = settings(
    derandomize=True, max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@FUZZ
@given(blocks())
def test_static_oracles(lines):
    fn, src = _compile(lines)
    for code in [fn.__code__] + [k for k in fn.__code__.co_consts if hasattr(k, "co_code")]:
        fa = analyze(code)
        brute = brute_live_before(code)
        for ins in fa.bytecode.instructions:
            assert fa.liveness.live_before(ins.offset) == brute[ins.offset], (src, ins)
        check_ssa(fa)


def _leaves(v):
    out, work, seen = set(), [v], set()
    while work:
        x = work.pop()
        if id(x) not in seen:
            seen.add(id(x))
            if x.kind in ("phi", "catch"):
                work.extend(x.args)
            else:
                out.add("entry" if x.offset is None else x.offset)
    return out


@FUZZ
@given(blocks(), st.sampled_from([(0, 1), (1, 0), (2, [1])]))
def test_dynamic_oracles(lines, args):
    fn, src = _compile(lines)
    code = fn.__code__
    fa = analyze(fn)
    ins = instructions(code)
    succ = normal_successors(code)
    offsets = [i.offset for i in fa.bytecode.instructions]
    _, traces = trace(code, lambda: fn(*args))
    for seq in traces.values():
        seq = [min(o for o in offsets if o >= off) for off in seq]
        # liveness: every later read is live after each executed instruction
        later: set[str] = set()
        for off in reversed(seq):
            assert later <= fa.liveness.live_after(off), (src, off, later)
            for kind, n in reversed(events(ins[off], code)):
                later = later - {n} if kind == "w" else later | {n}
        # SSA: each read sees a value written where its SSA value may come from
        writer = {n: "entry" for n in code.co_varnames}
        prev = None
        for off in seq:
            if prev is not None and off in succ[prev]:
                for kind, n in events(ins[prev], code):
                    if kind == "w":
                        writer[n] = prev
            op = fa.ssa.ops[off]
            evs = events(ins[off], code)
            if ins[off].opname == "STORE_FAST_LOAD_FAST" and evs[0][1] == evs[1][1]:
                evs = []
            for kind, n in evs:
                if kind == "r" and fa.liveness.kinds.get(n) == "local":
                    val = next(v for v in op.uses if v.var == n)
                    assert writer[n] in _leaves(val), (src, off, n)
            prev = off
