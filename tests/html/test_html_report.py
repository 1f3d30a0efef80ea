"""`Report.to_html` and `bcfront-explain --html`: one valid, self-contained page that shows
every break, guard, recompile and fallback of the report, and pictures of every graph."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from htmlcheck import broken_anchors, external, parse

from bcfront.html.layout import Box, Link, layout
from bcfront.html.overview import line_anchor
from bcfront.report import (
    FunctionReport,
    GraphBreak,
    GraphInfo,
    GraphNode,
    GuardInfo,
    KernelInfo,
    NativeFallback,
    Recompile,
    Report,
    UserFrame,
)

REPO = Path(__file__).resolve().parents[2]
USER = """\
def step(x, n):
    y = x * 2
    if y.sum() > 0:
        y = y - 1
    print("step", n)
    return y.view(-1)
"""


def hand_report(tmp_path: Path) -> Report:
    """A report as capture builds it, by hand (no torch): every field the page shows."""
    f = str(tmp_path / "user_model.py")
    Path(f).write_text(USER)
    lib = "/usr/lib/python3/site-packages/lib_mod.py"
    nodes = (
        GraphNode("x", "input", "L['x']", (), "f32[4, 8]", expr="L['x']"),
        GraphNode("t1", "op", "operator.mul", ("x",), "f32[4, 8]", False, "x * 2", f, 2, "step"),
        GraphNode("t2", "inplace", "add_", ("t1",), "f32[4, 8]", False, "t1.add_(1)", f, 2, "step"),
        GraphNode("t3", "view", "view", ("t2",), "f32[32]", True, "t2.view(-1)", f, 6, "step"),
    )
    return Report(
        (
            FunctionReport(
                "step",
                f,
                1,
                graphs=(
                    GraphInfo("step", "eager", 3, "def graph_0(x): ...", nodes=nodes),
                    GraphInfo(
                        "step.<resume@40>",
                        "triton",
                        1,
                        "def graph_1(y): ...",
                        (KernelInfo("fused_sub_relu_0", ("aten.sub", "aten.relu"), "@triton.jit ..."),),
                        ("aten.nonzero",),
                    ),
                ),
                graph_breaks=(
                    GraphBreak(
                        "data-dependent-branch",
                        "branch on a tensor value <script>",
                        f,
                        3,
                        "if y.sum() > 0:",
                        "POP_JUMP_IF_FALSE at offset 40",
                        (UserFrame("main", lib, 20, "step(x, 3)"), UserFrame("step", f, 3, "")),
                        count=3,
                    ),
                    GraphBreak("io", "print() does I/O", f, 5, 'print("step", n)'),
                ),
                guards=(
                    GuardInfo(
                        "L['x']",
                        "TENSOR_MATCH",
                        "check_tensor(L['x'], shape=[4, 8])",
                        UserFrame("step", f, 2),
                    ),
                    GuardInfo("L['n']", "CONSTANT", "L['n'] == 3", UserFrame("step", f, 5)),
                    GuardInfo("G['g']", "ID_MATCH", "id(G['g']) == 1234"),
                ),
                recompiles=tuple(
                    Recompile(
                        "step", f"L['n'] == {i}", "L['n']", f"<{i}>", f"<{i + 1}>", "changed", None, i + 2
                    )
                    for i in range(4)
                ),
                calls=6,
                warnings=("recompile storm: the guard on L['n'] failed on 4 of 6 calls",),
                notes=("torch.relu is a C function",),
                native_fallbacks=(NativeFallback("recompile-limit", "gave up <here>", f, 5, "step", 2),),
                ops_in_graphs=3,
                ops_native=1,
            ),
        )
    )


def check_page(text: str):
    page = parse(text)
    assert page.errors == []
    assert external(page) == []
    assert broken_anchors(page) == []
    for section in ("overview", "source", "graphs", "guards"):
        assert section in page.ids
    return page


def check_shows_everything(report: Report, page) -> None:
    """Every break (on its source line), guard, recompile and fallback of `report` is on the page."""
    for b in report.graph_breaks:
        row = page.ids[line_anchor(b.filename, b.lineno)]
        assert "brk" in row["class"].split()
        assert str(b.reason) in row["title"] and b.message in row["title"]
    guards = page.text_in["guards-table"]
    for g in report.guards:
        assert g.expr in guards
    if report.recompiles:
        recs = page.text_in["recompiles-table"]
        for r in report.recompiles:
            assert r.guard in recs and r.expected in recs and r.actual in recs
    text = page.text_in["overview"]
    for fb in report.native_fallbacks:
        assert fb.message in text
    for f in report.functions:
        for w in f.warnings:
            assert w in text
    for gi, g in enumerate(report.graphs):
        for n in g.nodes:
            if len(g.nodes) <= 60:  # pictured node by node (larger graphs: grouped first)
                box = page.ids[f"graph{gi}-full-{n.name}"]
                assert box["data-kind"] == n.kind


def test_hand_built_report(tmp_path):
    report = hand_report(tmp_path)
    out = tmp_path / "r.html"
    text = report.to_html(out)
    assert out.read_text(encoding="utf-8") == text
    page = check_page(text)
    check_shows_everything(report, page)
    assert "<script>" not in page.text_in["overview"] or "&lt;script&gt;" in text  # escaped
    # the library frame on the break's stack: a collapsed file, its call line marked
    lib = [e for e in page.elements if e["tag"] == "details" and "lib" in e.get("class", "")]
    assert [e["data-file"] for e in lib] == ["/usr/lib/python3/site-packages/lib_mod.py"]
    assert "open" not in lib[0]
    # guard sites and captured lines (graph 0) are marked
    f = report.functions[0].filename
    assert "guard" in page.ids[line_anchor(f, 2)]["class"].split()
    assert "r0" in page.ids[line_anchor(f, 6)]["class"].split()
    # the storm is shown first, the timeline has one red tick per recompile's call
    assert page.with_class("stormbox")
    assert len(page.with_class("rec", "i")) == 4 and len(page.with_class("cap", "i")) == 1
    assert page.with_class("kernel", "g")  # the Triton kernel, grouped
    assert "75%" in page.text_in["overview-table"]  # 3 of 4 ops in graphs


def test_older_report_without_nodes_or_calls(tmp_path):
    """A report read back from an older JSON (no nodes, no recompile call) still renders."""
    r = Report(
        (
            FunctionReport(
                "f",
                None,
                None,
                (GraphInfo("f", "eager", 1, "def g(): pass"),),
                calls=2,
                recompiles=(Recompile("f", "a == 1", "a", "1", "2", "why"),),
            ),
        )
    )
    page = check_page(r.to_html())
    assert "def g(): pass" in page.text_in["graphs"]
    assert "without a call number" in page.text_in["guards"]


def test_empty_report():
    page = check_page(Report().to_html())
    assert "no captured function ran" in page.text_in["overview"]


def test_large_graph_is_grouped_and_its_full_picture_built_on_demand(tmp_path):
    f = str(tmp_path / "m.py")
    nodes = [GraphNode(f"p{i}", "input", f"L['p{i}']", meta="f32[8]") for i in range(40)]
    prev = "p0"
    for i in range(600):
        layer = i // 60
        name = f"t{i}"
        ins = (prev, f"p{layer}") if i % 3 else (prev,)
        kind = ("op", "view", "inplace")[i % 3]
        nodes.append(
            GraphNode(
                name, kind, "torch.add", ins, "f32[8]", i == 599, "", f, 10 + i % 60, f"layer{layer % 2}"
            )
        )
        prev = name
    g = GraphInfo("Model.forward", "eager", 600, "...", nodes=tuple(nodes))
    report = Report((FunctionReport("Model.forward", f, 1, (g,), calls=1),))
    page = check_page(report.to_html())
    grouped = [e for e in page.elements if e.get("id", "").startswith("graph0-grouped-g")]
    assert len(grouped) == 1 + 10  # the inputs, then one box per run of one function's nodes
    assert "graph0-full-t0" in page.in_template  # built only when asked for
    assert page.with_class("toggle", "button")
    # the full picture parses too, and has every node
    from bcfront.html.graphview import full_picture

    full = parse("<!DOCTYPE html>" + full_picture(g, "x"))
    assert full.errors == [] and all(f"x-{n.name}" in full.ids for n in nodes)


def test_layout_keeps_boxes_apart_and_edges_downward():
    boxes = [Box(f"n{i}", [f"node {i}" * (1 + i % 3)]) for i in range(300)]
    edges = [Link(f"n{i}", f"n{j}") for i in range(300) for j in (2 * i + 1, 2 * i + 2) if j < 300]
    edges.append(Link("n299", "n0"))  # a back edge: drawn, does not rank
    pos = layout(boxes, edges)
    for e in edges[:-1]:
        assert pos[e.src].y + pos[e.src].h < pos[e.dst].y
    rows: dict = {}
    for p in pos.values():
        rows.setdefault(p.y, []).append(p)
    for row in rows.values():
        row.sort(key=lambda p: p.x)
        for a, b in zip(row, row[1:]):
            assert a.x + a.w / 2 <= b.x - b.w / 2


def test_rendering_imports_no_torch(tmp_path):
    code = (
        "import sys, bcfront.report as r, bcfront.html;"
        "print(len(r.Report((r.FunctionReport('f', None, None, calls=1),)).to_html()) > 0,"
        " 'torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.split() == ["True", "False"], out.stderr


def test_grouping_stays_small_when_functions_interleave():
    from bcfront.html.graphview import MAX_GROUPS, groups

    nodes = [
        GraphNode(f"t{i}", "op", "torch.add", (), "", False, "", f"/m{i % 7}.py", 1, f"f{i % 3}")
        for i in range(500)
    ]
    parts = groups(nodes)
    assert len(parts) <= MAX_GROUPS
    assert [n.name for _, members in parts for n in members] == [n.name for n in nodes]  # each once, in order


def test_large_graph_is_grouped_by_submodule():
    """Nodes take the submodule of the parameters they read (carried forward in execution order);
    the grouping picks the deepest level with at most MAX_GROUPS runs, or bins of runs."""
    from bcfront.html.graphview import MAX_GROUPS, groups, module_path

    assert module_path("L['self'].h._modules['0'].attn.c_attn.weight") == ("h", "0", "attn", "c_attn")
    assert module_path("L['self'].layers[3].w") == ("layers", "3")
    assert module_path("L['x']") == ()

    def model(n_layers):
        nodes = [GraphNode("x", "input", "L['x']")]
        nodes += [
            GraphNode(f"w{i}", "input", f"L['self'].h._modules['{i}'].fc.weight") for i in range(n_layers)
        ]
        prev = "x"
        for i in range(n_layers):
            nodes.append(GraphNode(f"a{i}", "op", "torch.linear", (prev, f"w{i}")))
            nodes.append(GraphNode(f"b{i}", "op", "torch.relu", (f"a{i}",)))  # no parameter: layer i
            prev = f"b{i}"
        return nodes

    parts = groups(model(12))
    assert [k for k, _ in parts] == ["inputs"] + [f"h.{i}.fc" for i in range(12)]
    assert all([n.name for n in ms] == [f"a{i}", f"b{i}"] for i, (_, ms) in enumerate(parts[1:]))
    parts = groups(model(200))
    assert len(parts) == 1 + MAX_GROUPS
    assert parts[1][0] == "h.0 … h.4" and len(parts[1][1]) == 10
