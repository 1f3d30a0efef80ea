"""`--analyze TARGET --dot VIEW`: each view parses as DOT and shows what independent oracles say.

Oracles: networkx for dominators, a brute-force natural-loop definition for the
loop clusters, `dis` for the instructions of the SSA view.  The DOT text is
read back with `dotparse` (strict, written from the DOT grammar), and with
pydot / `dot` too when they happen to be installed.
"""

from __future__ import annotations

import dis
import shutil
import subprocess

import networkx as nx
import pytest

import bcfront
from bcfront.cli.dot import VIEWS, to_dot

from . import dotparse
from .helpers import run_cli

SOURCE = '''\
def nested(x, n):
    s = 0
    for i in range(n):
        if i % 2:
            s = s + i
        else:
            s = s - x
        while s > 10:
            s -= 3
    try:
        s = s / x
    except ZeroDivisionError:
        s = 0
    return s


def straight(a):
    b = a + 1
    c = b * b
    return c


def diamond(a):
    if a:
        x = 1
    else:
        x = 2
    y = x + a       # enough code after the join that 3.12+ does not copy it into both arms
    z = y * y
    return z + x


def weird_names(a):
    """quotes " and backslashes \\\\ in constants must be escaped"""
    s = "say \\"hi\\" \\\\ {x}"
    return s + a
'''

CASES = ("nested", "straight", "diamond", "weird_names")


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("dot") / "m.py"
    path.write_text(SOURCE)
    ns: dict = {}
    exec(compile(SOURCE, str(path), "exec"), ns)
    return path, ns


def cfg_graph(fa) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(b for b, blk in fa.cfg.blocks.items() if blk.reachable)
    g.add_edges_from((e.src, e.dst) for e in fa.cfg.edges if e.src in g and e.dst in g)
    return g


def node_block(name: str) -> int:
    assert name.startswith("b"), name
    return int(name[1:])


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("case", CASES)
def test_every_view_parses(mod, case, view):
    text = to_dot(bcfront.analyze(mod[1][case]), view)
    dot = dotparse.parse(text)
    assert dot.nodes and (dot.edges or case != "nested")
    for src, dst, _ in dot.edges:
        assert src in dot.nodes and dst in dot.nodes
    try:
        import pydot
    except ImportError:  # optional: not a dependency
        return
    assert pydot.graph_from_dot_data(text)


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
@pytest.mark.parametrize("view", VIEWS)
def test_graphviz_accepts_every_view(mod, view):
    text = to_dot(bcfront.analyze(mod[1]["nested"]), view)
    r = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("case", CASES)
def test_domtree_is_networkx_dominator_tree(mod, case):
    fa = bcfront.analyze(mod[1][case])
    dot = dotparse.parse(to_dot(fa, "domtree"))
    g = cfg_graph(fa)
    idom = nx.immediate_dominators(g, fa.cfg.entry)
    expected = {(d, b) for b, d in idom.items() if b != d}
    tree = {(node_block(s), node_block(t)) for s, t, a in dot.edges if "style" not in a}
    assert tree == expected
    assert {node_block(n) for n in dot.nodes} == set(g)
    frontier = {(node_block(s), node_block(t)) for s, t, a in dot.edges if a.get("style") == "dotted"}
    df = nx.dominance_frontiers(g, fa.cfg.entry)
    assert frontier == {(b, f) for b, fs in df.items() for f in fs}


def natural_loops(g: nx.DiGraph, entry) -> dict[int, set]:
    """Header -> body, by the textbook definition (back edge u->h with h dominating u)."""
    idom = nx.immediate_dominators(g, entry)  # newer networkx omit the entry itself

    def dominates(a, b):
        while True:
            if a == b:
                return True
            if idom.get(b, b) == b:
                return False
            b = idom[b]

    loops: dict[int, set] = {}
    for u, h in g.edges:
        if dominates(h, u):
            body, work = {h, u}, ([u] if u != h else [])  # never walk back past the header
            while work:
                n = work.pop()
                for p in g.predecessors(n):
                    if p not in body:
                        body.add(p)
                        work.append(p)
            loops.setdefault(h, set()).update(body)
    return loops


@pytest.mark.parametrize("case", CASES)
def test_loop_clusters_are_the_natural_loops(mod, case):
    fa = bcfront.analyze(mod[1][case])
    dot = dotparse.parse(to_dot(fa, "loops"))
    g = cfg_graph(fa)
    expected = natural_loops(g, fa.cfg.entry)
    got = {
        int(name.removeprefix("cluster_loop")): {node_block(n) for n in dotparse.members(dot, name)}
        for name in dot.clusters
    }
    assert got == expected
    # nesting: a cluster's parent is the smallest other loop containing its header
    for name, c in dot.clusters.items():
        h = int(name.removeprefix("cluster_loop"))
        outer = [k for k, body in expected.items() if k != h and h in body]
        want = min(outer, key=lambda k: len(expected[k])) if outer else None
        assert c.parent == (None if want is None else f"cluster_loop{want}")
    back = {(node_block(s), node_block(t)) for s, t, a in dot.edges if a.get("label") == "back"}
    doms = _dominators(g, fa.cfg.entry)
    assert back == {(u, h) for u, h in g.edges if h in doms[u]}
    assert {(node_block(s), node_block(t)) for s, t, _ in dot.edges} == set(g.edges)


def _dominators(g, entry) -> dict:
    idom = nx.immediate_dominators(g, entry)
    out = {}
    for b in g:
        chain, n = {b}, b
        while idom.get(n, n) != n:
            n = idom[n]
            chain.add(n)
        out[b] = chain
    return out


def _ssa(mod, case):
    fn = mod[1][case]
    dot = dotparse.parse(to_dot(bcfront.analyze(fn), "ssa"))
    instrs = {i.offset: i for i in dis.get_instructions(fn)}
    return dot, instrs


@pytest.mark.parametrize("case", CASES)
def test_ssa_instruction_boxes_are_the_real_instructions(mod, case):
    dot, instrs = _ssa(mod, case)
    boxes = {n: a for n, a in dot.nodes.items() if n.startswith("i")}
    assert boxes
    for n, a in boxes.items():
        off, opname = a["label"].split()[:2]
        assert int(n[1:]) == int(off)
        assert instrs[int(off)].opname == opname
    for s, t, _ in dot.edges:  # def edges go instruction -> value, uses value -> instruction or phi
        assert s[0] in "iv" and t[0] in "iv" and not (s[0] == t[0] == "i")


def _value(dot, label_prefix: str) -> list[str]:
    return [n for n, a in dot.nodes.items() if n.startswith("v") and a["label"].startswith(label_prefix)]


def test_ssa_straight_line_def_use(mod):
    dot, instrs = _ssa(mod, "straight")
    (b,) = _value(dot, "b.1 ")
    (store,) = [o for o, i in instrs.items() if i.opname == "STORE_FAST" and i.argval == "b"]
    (mul,) = [o for o, i in instrs.items() if i.opname == "BINARY_OP" and i.argrepr == "*"]
    defs = [s for s, t, _ in dot.edges if t == b]
    assert defs == [f"i{store}"]  # defined once, by its store
    uses = {t for s, t, _ in dot.edges if s == b}
    assert f"i{mul}" in uses  # read by b * b (one edge for both reads)


def test_ssa_diamond_has_a_phi_fed_by_both_branches(mod):
    dot, instrs = _ssa(mod, "diamond")
    (phi,) = [n for n, a in dot.nodes.items() if a.get("shape") == "diamond"]
    assert dot.nodes[phi]["label"].startswith("x.")
    incoming = [(s, a) for s, t, a in dot.edges if t == phi]
    assert len(incoming) == 2
    stores = {o for o, i in instrs.items() if i.opname == "STORE_FAST" and i.argval == "x"}
    feeders = set()
    for s, a in incoming:
        assert a["label"].startswith("from ")
        (d,) = [src for src, t, _ in dot.edges if t == s]
        feeders.add(int(d[1:]))
    assert feeders == stores


def test_quotes_in_code_are_escaped(mod):
    dot = dotparse.parse(to_dot(bcfront.analyze(mod[1]["weird_names"]), "ssa"))
    labels = " ".join(a.get("label", "") for a in dot.nodes.values())
    assert 'say "hi"' in labels


def test_cli_dot_views(mod, tmp_path):
    path = mod[0]
    for view in VIEWS:
        r = run_cli("--analyze", f"{path}:nested", "--dot", view, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        dotparse.parse(r.stdout)
        assert r.stdout.endswith("}\n")
    plain = run_cli("--analyze", f"{path}:nested", "--dot", cwd=tmp_path)
    assert plain.stdout == run_cli("--analyze", f"{path}:nested", "--dot", "cfg", cwd=tmp_path).stdout
    bad = run_cli("--analyze", f"{path}:nested", "--dot", "tree", cwd=tmp_path)
    assert bad.returncode == 2 and "--dot takes one of cfg, domtree, loops, ssa" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_help_documents_the_views():
    out = " ".join(run_cli("--help").stdout.split())
    for view in VIEWS:
        assert view in out
    assert "--dot loops" in out or "--dot domtree" in out


def test_text_loop_tree_nests_inner_loops_under_outer(mod, tmp_path):
    r = run_cli("--analyze", f"{mod[0]}:nested", "--width", "200", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fa = bcfront.analyze(mod[1]["nested"])
    (outer,) = [lp for lp in fa.loops.loops if lp.depth == 1]
    (inner,) = [lp for lp in fa.loops.loops if lp.depth == 2]
    lines = r.stdout.splitlines()
    at = {
        lp.header: next(i for i, s in enumerate(lines) if f"header block {lp.header} " in s)
        for lp in (outer, inner)
    }
    indent = {h: len(lines[i]) - len(lines[i].lstrip("│ └├─")) for h, i in at.items()}
    assert at[inner.header] > at[outer.header] and indent[inner.header] > indent[outer.header]
