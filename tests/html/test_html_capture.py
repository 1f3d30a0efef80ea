"""The HTML report of real captures: a function with breaks, a recompile storm, the CLI on the
bundled example, a zoo model, the analyzer view, and (where one is installed) a real browser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from browser import Browser, find_chromium  # noqa: E402
from htmlcheck import parse  # noqa: E402
from test_html_report import check_page, check_shows_everything  # noqa: E402

import bcfront  # noqa: E402
from bcfront.cli.schema import validate  # noqa: E402
from bcfront.html import analysis_html  # noqa: E402
from bcfront.html.overview import line_anchor  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def step(x, n):
    y = x * 2
    z = y.view(-1)
    z.add_(1)
    if y.sum() > 0:
        y = y - n
    print("step")
    return torch.relu(y).transpose(0, 1)


def test_explain_report_pictures_every_node(lenient, capsys):
    x = torch.randn(3, 4)
    report = bcfront.explain(step, x, 2)
    assert validate(json.loads(report.to_json())) == []
    page = check_page(report.to_html())
    check_shows_everything(report, page)
    assert len(report.graph_breaks) == 2
    # node kinds from the ops themselves: the input, a view, an in-place write, an output
    first = report.graphs[0]
    kinds = {n.target.rsplit(".", 1)[-1]: n.kind for n in first.nodes}
    assert kinds["view"] == "view" and kinds["add_"] == "inplace" and kinds["mul"] == "op"
    assert [n.target for n in first.nodes if n.kind == "input"] == ["L['x']"]
    assert any(n.output for n in first.nodes)
    # every node reads only nodes before it (the picture's edges)
    for g in report.graphs:
        seen: set = set()
        for n in g.nodes:
            assert set(n.inputs) <= seen
            seen.add(n.name)


def test_recompile_storm_on_the_timeline(lenient, capsys):
    def f(x, n):
        return x * n + 1

    cf = bcfront.capture(f, dynamic=False)  # no symbolic int: every new n recompiles
    with bcfront.explain.collect() as run:
        for i in range(8):
            assert torch.equal(cf(torch.ones(2), i), torch.ones(2) * i + 1)
    report = run.report()
    calls = sorted({r.call for r in report.recompiles})
    assert calls == list(range(2, 9))  # every call after the first one missed
    page = check_page(report.to_html())
    check_shows_everything(report, page)
    assert page.with_class("stormbox")
    ticks = [e for e in page.elements if e["tag"] == "i" and "title" in e]
    red = [e["title"] for e in ticks if e.get("class") == "rec"]
    assert red == [f"call {c}: recompiled" for c in calls]


def run_cli(*args, cwd=REPO):
    env = {k: v for k, v in os.environ.items() if k != "BCFRONT_DEBUG"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "bcfront.cli.explain", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def gpt_html(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpt") / "report.html"
    r = run_cli("--html", str(out), "examples/gpt.py", "--static")  # --static: the storms
    assert r.returncode == 0, r.stderr
    assert "bcfront explain:" not in r.stdout  # the page replaces the text report
    assert f"wrote {out}" in r.stderr
    return out


def test_cli_html_on_the_bundled_example(gpt_html, tmp_path):
    page = check_page(gpt_html.read_text(encoding="utf-8"))
    r = run_cli("--json", "examples/gpt.py", "--static")
    report = bcfront.report.Report(
        tuple(_function(f) for f in json.loads(r.stdout)["functions"])  # the same run, as data
    )
    assert report.graph_breaks and report.recompiles
    for b in report.graph_breaks:
        assert b.message in page.text_in["source"]
    for rc in report.recompiles:
        assert rc.guard in page.text_in["recompiles-table"]
    assert page.with_class("stormbox")  # gpt.py's sliding window: a storm


def _function(d: dict):
    from bcfront.report import FunctionReport, GraphBreak, Recompile

    return FunctionReport(
        d["function"],
        d["filename"],
        d["lineno"],
        graph_breaks=tuple(GraphBreak(**{**b, "user_stack": ()}) for b in d["graph_breaks"]),
        recompiles=tuple(Recompile(**{**r, "first_use": None}) for r in d["recompiles"]),
    )


def test_zoo_model_report(capsys):
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from models.real_zoo import REAL_ZOO
    finally:
        sys.path.remove(str(REPO / "tests"))
    module, make_inputs = REAL_ZOO["hf_gpt2"]()
    args, kwargs = make_inputs(0, 0)
    with torch.no_grad():
        report = bcfront.explain(module, *args, **kwargs)
    assert report.graphs and sum(len(g.nodes) for g in report.graphs) > 50
    assert validate(json.loads(report.to_json())) == []
    page = check_page(report.to_html())
    check_shows_everything(report, page)
    big = [i for i, g in enumerate(report.graphs) if len(g.nodes) > 60]
    for i in big:  # grouped by the module code the nodes came from
        assert any(e.get("id", "").startswith(f"graph{i}-grouped-g") for e in page.elements)
    lib = [e for e in page.elements if e["tag"] == "details" and "lib" in e.get("class", "")]
    assert any("modeling_gpt2" in e["data-file"] for e in lib)  # library source: collapsed


def running_max(xs):
    best = None
    for x in xs:
        if best is None or x > best:
            best = x
    return best


def test_analyzer_view_cfg_dominators_loops_ssa():
    fa = bcfront.analyze(running_max)
    page = parse(analysis_html(fa))
    assert page.errors == []
    for section in ("cfg", "domtree", "loops", "ssa"):
        assert section in page.ids
    reachable = [b for b, blk in fa.cfg.blocks.items() if blk.reachable]
    for b in fa.cfg.blocks:
        assert f"cfg-pic-b{b}" in page.ids
    for b in reachable:
        assert f"domtree-pic-b{b}" in page.ids and f"ssa-pic-b{b}" in page.ids
    back = [e for e in page.elements if e["tag"] == "path" and "back" in e.get("class", "").split()]
    assert len(back) >= sum(len(lp.back_edges) for lp in fa.loops.loops) > 0
    for b, phis in fa.ssa.phis.items():
        for v in phis:
            assert f"{v.name} = φ(" in page.text_in[f"ssa-pic-b{b}"]
    assert "header" in page.ids[f"cfg-pic-b{fa.loops.loops[0].header}"]["class"]


def test_cli_analyze_html(tmp_path):
    out = tmp_path / "a.html"
    r = run_cli("--analyze", "json.decoder:JSONDecoder.raw_decode", "--html", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert parse(out.read_text(encoding="utf-8")).errors == []


@pytest.mark.skipif(
    find_chromium() is None, reason="no headless Chromium installed (apt-get install chromium)"
)
def test_in_a_real_browser(gpt_html, lenient, tmp_path, capsys):
    """Chromium opens real reports from disk: after the page's scripts ran, its DOM has the
    sections and each break's source line, red, with its reason; a screenshot of each."""
    report = bcfront.explain(step, torch.randn(3, 4), 2)
    out = tmp_path / "step.html"
    report.to_html(out)
    artifacts = Path(os.environ.get("BCFRONT_ARTIFACTS") or tmp_path)
    with Browser() as b:
        for path in (out, gpt_html):
            b.open(path.as_uri())
            for _ in range(500):
                if b.js("document.documentElement.getAttribute('data-ready')"):
                    break
                time.sleep(0.02)
            assert b.js("document.documentElement.getAttribute('data-ready')")
            sections = b.js("[...document.querySelectorAll('main > section')].map(s => s.id)")
            assert sections == ["overview", "source", "graphs", "guards"]
            assert b.errors() == []
            shot = b.screenshot(artifacts / f"{path.stem}.png")
            with capsys.disabled():
                print(f"\nscreenshot: {shot}")
        b.open(out.as_uri())
        for br in report.graph_breaks:
            row = b.js(
                f"(function(){{var r=document.getElementById('{line_anchor(br.filename, br.lineno)}');"
                "return r&&[r.className,r.title,r.cells[1].textContent,"
                "getComputedStyle(r).backgroundColor];})()"
            )
            assert row is not None, f"no line {br.lineno} in the source view"
            assert "brk" in row[0].split() and br.message in row[1]
            assert row[2].strip() == br.source_line.strip()
            assert row[3] != "rgba(0, 0, 0, 0)"  # shaded
