"""The `bcfront.analysis` facade: input handling, laziness and caching, dominance
queries against networkx, nesting, and every output format (text, rich, DOT, JSON)."""

from __future__ import annotations

import functools
import io
import json
import re
import types

import networkx as nx
import pytest
from corpus import CORPUS, all_code_objects

import bcfront
from bcfront.analysis import EXIT, FunctionAnalysis, analyze


def sample(a, b):
    """A loop, a branch, a try and a nested function."""
    total = 0
    for x in a:
        if x:
            total += x
    try:
        total /= b
    except ZeroDivisionError:
        total = None

    def inner(y):
        return y + 1

    return inner(total or 0)


def tricky_strings():
    return 'quote " backslash \\ braces {} <angle> |bar| \n newline', "tab\t"


class Klass:
    def method(self, x):
        return x

    @staticmethod
    def static(x):
        return x


def decorated(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


# -- input ----------------------------------------------------------------------------


def test_accepts_functions_methods_code_and_wrappers():
    assert analyze(sample).code is sample.__code__
    assert analyze(sample.__code__).code is sample.__code__
    assert analyze(Klass().method).code is Klass.method.__code__
    assert analyze(Klass.static).code is Klass.static.__code__
    assert analyze(decorated(sample)).code.co_name in ("wrapper", "sample")
    assert bcfront.analyze(sample).code is sample.__code__
    fa = analyze(sample)
    assert analyze(fa) is fa


@pytest.mark.parametrize(
    "bad,needle",
    [
        (len, "built-in len"),
        (42, "int"),
        (int, "class int"),
        (None, "NoneType"),
        ("def f(): pass", "str"),
    ],
)
def test_bad_input_is_a_type_error_naming_it(bad, needle):
    with pytest.raises(TypeError) as ei:
        analyze(bad)
    assert needle in str(ei.value)


# -- laziness ---------------------------------------------------------------------------


def test_nothing_is_computed_until_asked_and_then_cached():
    fa = analyze(sample)
    computed = set(fa.__dict__) - {"code"}
    assert not computed
    live = fa.liveness
    assert fa.liveness is live
    assert {"bytecode", "cfg", "liveness"} <= set(fa.__dict__)
    assert "ssa" not in fa.__dict__ and "aliases" not in fa.__dict__
    assert fa.ssa is fa.ssa


def test_loops_of_the_sample_function():
    forest = analyze(sample).loops
    assert len(forest.loops) == 1
    d = analyze(sample).to_dict()["loops"]
    assert d["loops"][0]["header"] == forest.loops[0].header


# -- dominance through the facade against networkx ---------------------------------------


def _nx_dominators(cfg):
    g = nx.DiGraph()
    g.add_node(cfg.entry)
    g.add_edges_from((e.src, e.dst) for e in cfg.edges)
    idom = dict(nx.immediate_dominators(g, cfg.entry))
    idom[cfg.entry] = cfg.entry
    doms = {}
    for n in idom:
        chain, m = {n}, n
        while idom[m] != m:
            m = idom[m]
            chain.add(m)
        doms[n] = chain
    return doms


@pytest.mark.parametrize(
    "name", ["sample", "try_except_else_finally", "nested_loops", "match_statement", "while_true"]
)
def test_dominates_matches_networkx(name):
    fn = sample if name == "sample" else CORPUS[name]
    fa = analyze(fn)
    doms = _nx_dominators(fa.cfg)
    blocks = list(fa.cfg.blocks)
    for a in blocks:
        for b in blocks:
            want = b in doms and a in doms[b]
            assert fa.dominates(a, b) is want, (a, b)
    for n, kids in fa.dom_tree.items():
        for k in kids:
            assert fa.idom[k] == n
    assert fa.post_idom[EXIT] is None


# -- nesting -------------------------------------------------------------------------------


def test_nested_code_objects():
    fa = analyze(CORPUS["closures"])
    direct = fa.nested()
    assert [n.code.co_name for n in direct] == ["inner"]
    deep = fa.nested(recursive=True)
    assert [n.code.co_name for n in deep] == ["inner", "<lambda>"]
    assert all(isinstance(n, FunctionAnalysis) for n in deep)
    assert len(deep) == len(all_code_objects(CORPUS["closures"])) - 1


# -- outputs ---------------------------------------------------------------------------


def test_to_text_lists_every_block_and_the_ssa():
    fa = analyze(sample)
    text = fa.to_text()
    for b in fa.cfg.blocks:
        assert re.search(rf"^block {b}\.\.", text, re.M)
    assert "ssa:" in text and "= phi(" in text
    assert "may-alias sets:" in text


def test_render_plain_when_not_a_terminal(capsys):
    fa = analyze(sample)
    fa.render()
    out = capsys.readouterr().out
    assert out == fa.to_text()


def test_render_with_rich_console():
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=160, force_terminal=True, color_system="standard")
    analyze(sample).render(console)
    out = buf.getvalue()
    assert "\x1b[" in out  # styled
    assert "blocks" in out and "phi(" in out


_DOT_TOKEN = re.compile(r'\s*(?:(->)|([{}\[\];,=])|("(?:[^"\\]|\\.)*")|([A-Za-z_][\w.]*|-?\d+))', re.S)


def _parse_dot(src: str):
    """A small DOT reader for what to_dot emits: returns (nodes {id: label}, edges)."""
    toks, pos = [], 0
    src = src.strip()
    while pos < len(src):
        m = _DOT_TOKEN.match(src, pos)
        assert m and m.end() > pos, f"bad DOT at {src[pos : pos + 40]!r}"
        toks.append(next(t for t in m.groups() if t is not None))
        pos = m.end()
    assert toks[0] == "digraph" and toks[2] == "{" and toks[-1] == "}"
    body = toks[3:-1]
    nodes, edges, i = {}, [], 0

    def attrs(j):
        out = {}
        assert body[j] == "["
        j += 1
        while body[j] != "]":
            k, eq, v = body[j], body[j + 1], body[j + 2]
            assert eq == "="
            out[k] = v
            j += 3
            if body[j] == ",":
                j += 1
        return out, j + 1

    while i < len(body):
        if body[i + 1] == "->":
            a, j = attrs(i + 3)
            edges.append((body[i], body[i + 2], a))
        else:
            a, j = attrs(i + 1)
            if body[i] != "node":
                nodes[body[i]] = a.get("label")
        assert body[j] == ";"
        i = j + 1
    return nodes, edges


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"l": "\n", "n": "\n"}.get(m.group(1), m.group(1)), s[1:-1])


@pytest.mark.parametrize("fn", [sample, tricky_strings, CORPUS["try_except_else_finally"]])
def test_dot_is_well_formed(fn):
    fa = analyze(fn)
    nodes, edges = _parse_dot(fa.to_dot())
    assert set(nodes) == {f"b{b}" for b in fa.cfg.blocks}
    assert len(edges) == len(fa.cfg.edges)
    styles = {"fallthrough": "solid", "jump": "bold", "branch": "dashed", "exception": "dotted"}
    for (src, dst, a), e in zip(edges, fa.cfg.edges):
        assert (src, dst) == (f"b{e.src}", f"b{e.dst}")
        assert a["style"] == styles[e.kind]
    for b, blk in fa.cfg.blocks.items():
        label = _unquote(nodes[f"b{b}"])
        for ins in blk.instructions:
            assert f"{ins.offset} {ins.opname}" in label
        if fn is tricky_strings:
            assert label.count("\n") >= len(blk.instructions)
    if fn is tricky_strings:
        assert 'quote " backslash \\\\ braces {}' in "".join(_unquote(v) for v in nodes.values())


def _reachable_offsets(fa):
    return {i.offset for b in fa.cfg.reachable for i in fa.cfg.blocks[b].instructions}


@pytest.mark.parametrize("name", ["sample", "comprehension_shadowing", "with_statements", "generator"])
def test_json_schema(name):
    fa = analyze(sample if name == "sample" else CORPUS[name])
    d = fa.to_dict()
    assert json.loads(fa.to_json()) == d
    assert json.loads(fa.to_json(indent=None)) == d
    assert fa.to_json() == analyze(fa.code).to_json()  # deterministic
    assert set(d) == {
        "schema",
        "function",
        "entry",
        "blocks",
        "edges",
        "exit_preds",
        "idom",
        "frontiers",
        "post_idom",
        "loops",
        "liveness",
        "ssa",
        "aliases",
    }
    assert d["schema"] == "bcfront.analysis/1"
    assert d["function"]["qualname"] == fa.code.co_qualname
    assert [b["start"] for b in d["blocks"]] == list(fa.cfg.blocks)
    for b in d["blocks"]:
        blk = fa.cfg.blocks[b["start"]]
        assert [i["offset"] for i in b["instructions"]] == [i.offset for i in blk.instructions]
        assert b["stack_depth"] == fa.stack.depth_in.get(b["start"])
    assert [(e["src"], e["dst"], e["kind"]) for e in d["edges"]] == [
        (e.src, e.dst, e.kind) for e in fa.cfg.edges
    ]
    assert {int(k): v for k, v in d["idom"].items()} == fa.idom
    assert {int(k): set(v) for k, v in d["frontiers"].items()} == fa.dominance_frontier
    assert {int(k): v for k, v in d["post_idom"].items()} == fa.post_idom
    live = d["liveness"]
    for b in fa.cfg.blocks:
        assert live["live_in"][str(b)] == sorted(fa.liveness.live_in(b))
        assert live["live_out"][str(b)] == sorted(fa.liveness.live_out(b))
    ssa = d["ssa"]
    assert {int(k) for k in ssa["instructions"]} == _reachable_offsets(fa)
    names = {v["name"] for v in ssa["values"]}
    for ins in ssa["instructions"].values():
        assert set(ins["uses"]) | set(ins["defs"]) | set(ins["stack"]) <= names
    for phis in ssa["phis"].values():
        for phi in phis:
            assert phi["name"] in names and all(a["value"] in names for a in phi["args"])


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_corpus_entry_through_every_output(name):
    for code in all_code_objects(CORPUS[name]):
        fa = analyze(code)
        json.loads(fa.to_json())
        _parse_dot(fa.to_dot())
        assert fa.to_text()


def test_empty_and_builtin_code_objects():
    code = compile("", "<empty>", "exec")
    fa = analyze(code)
    assert fa.to_dict()["blocks"]
    assert isinstance(fa.nested(), list)
    lam = types.FunctionType(compile("lambda: [0]", "<l>", "eval").co_consts[0], {})
    assert analyze(lam).ssa.values
