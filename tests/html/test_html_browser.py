"""The HTML report in a real browser: headless Chromium opens it from disk (file://) and the
checks read the page's own DOM after its scripts ran, and drive it with real input events.

Skipped where no Chromium is installed (Debian: ``apt-get install chromium``).  Screenshots are
saved as artifacts under ``$BCFRONT_ARTIFACTS`` (default: pytest's temporary directory), their
paths printed.  No wall time is asserted: the page marks itself ready (``data-ready``) and the
opening time of a large report is measured by ``tools/bench_html.py``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from browser import Browser, find_chromium
from test_html_report import hand_report

from bcfront.html import analysis_html
from bcfront.html.overview import line_anchor
from bcfront.report import FunctionReport, GraphInfo, GraphNode, GuardInfo, Report

pytestmark = pytest.mark.skipif(
    find_chromium() is None, reason="no headless Chromium installed (Debian: apt-get install chromium)"
)


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    d = Path(os.environ.get("BCFRONT_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def open_page(b: Browser, path: Path) -> None:
    """Open `path` from disk and wait until the page says its first frame is drawn."""
    b.open(path.as_uri())
    for _ in range(500):
        if b.js("document.documentElement.getAttribute('data-ready')"):
            break
        time.sleep(0.02)
    assert b.js("document.documentElement.getAttribute('data-ready')"), "the page never marked itself ready"
    assert b.errors() == []


def shot(b: Browser, artifacts: Path, name: str) -> Path:
    path = b.screenshot(artifacts / name)
    assert path.stat().st_size > 10_000
    print(f"screenshot: {path}")
    return path


def visible(b: Browser, selector: str) -> bool:
    return b.js(
        f"(function(){{var e=document.querySelector({json.dumps(selector)});"
        "return !!e&&e.getClientRects().length>0&&getComputedStyle(e).visibility!=='hidden';})()"
    )


def test_report_in_the_browser(browser, artifacts, tmp_path):
    """Sections, break lines with their reasons (hover and click), regions, guard sites, library
    files collapsed, the guard filter, sorting, the storm and the timeline, in the live DOM."""
    report = hand_report(tmp_path)
    out = tmp_path / "r.html"
    report.to_html(out)
    b = browser
    open_page(b, out)
    ids = b.js("[...document.querySelectorAll('main > section')].map(s => s.id)")
    assert ids == ["overview", "source", "graphs", "guards"]
    # each break's source line: red, its reason on hover, a click shows the reasons below it
    for br in report.graph_breaks:
        sel = f"#{line_anchor(br.filename, br.lineno)}"
        row = b.js(
            f"(function(){{var r=document.querySelector('{sel}');"
            "return [r.className, r.title, r.cells[1].textContent];})()"
        )
        assert "brk" in row[0].split() and str(br.reason) in row[1] and br.message in row[1]
        assert br.source_line.strip() in row[2]
        why = f"{sel} + tr.why"
        assert not visible(b, why)
        b.click(*b.center_of(sel))
        assert visible(b, why)
        assert br.message in b.js(f"document.querySelector('{sel} + tr.why').textContent")
    f = report.functions[0].filename
    assert "guard" in b.js(f"document.getElementById('{line_anchor(f, 2)}').className")
    assert "r0" in b.js(f"document.getElementById('{line_anchor(f, 6)}').className")
    shot(b, artifacts, "report-source.png")
    # library files: collapsed; a click opens one
    assert b.js("document.querySelector('details.lib').open") is False
    b.click(*b.center_of("details.lib > summary"))
    assert b.js("document.querySelector('details.lib').open") is True
    # the storm, at the top of the overview and of the guards
    assert visible(b, "#storm-banner") and visible(b, "#guards .stormbox")
    assert b.js("document.querySelectorAll('.timeline i.rec').length") == len(report.recompiles)
    # a break's `file:line` in the overview leads to its source line, below the sticky header
    link = '#overview a.mono[href^="#L"]'
    target = b.js(f"document.querySelector('{link}').getAttribute('href')")
    b.click(*b.center_of(link))
    time.sleep(0.2)
    top = b.js(f"document.querySelector('{target}').getBoundingClientRect().top")
    assert b.js("document.querySelector('header').getBoundingClientRect().bottom") <= top < 300
    # each recompile: its failing guard, expected → actual
    recs = b.js("[...document.querySelectorAll('#recompiles-table tbody tr')].map(r => r.textContent)")
    assert len(recs) == len(report.recompiles)
    for r, text in zip(report.recompiles, recs):
        assert f"{r.expected} → {r.actual}" in text and r.guard in text
    assert visible(b, "#recompiles-table")
    # graph nodes coloured by kind (the page's CSS, as drawn)
    fill = "getComputedStyle(document.querySelector('#graphs g.box[data-kind={}] rect')).fill"
    colours = {k: b.js(fill.format(k)) for k in ("input", "op", "view", "inplace")}
    assert len(set(colours.values())) == 4, colours
    # the guard table filters as one types
    n_guards = len(report.guards)
    assert b.js("document.querySelectorAll('#guards-table tbody tr').length") == n_guards
    b.click(*b.center_of("#guard-filter"))
    needle = report.guards[-1].expr
    b.call("Input.insertText", text=needle)
    shown = b.js(
        "[...document.querySelectorAll('#guards-table tbody tr')].filter(r => r.getClientRects().length)"
        ".map(r => r.textContent)"
    )
    assert shown and all(needle in t for t in shown)
    assert "match" in b.js("document.getElementById('guard-filter-count').textContent")
    b.js("document.getElementById('overview').scrollIntoView()")
    shot(b, artifacts, "report-overview.png")


def big_report(n_graphs: int, n_layers: int, guards_per_fn: int) -> Report:
    """`n_graphs` graphs of a model of `n_layers` layers (parameters named by submodule)."""
    fns = []
    for gi in range(n_graphs):
        nodes = [GraphNode("x", "input", "L['x']", meta="f32[2, 64]")]
        nodes += [
            GraphNode(f"w{i}", "input", f"L['self'].layers._modules['{i}'].fc.weight", meta="f32[64, 64]")
            for i in range(n_layers)
        ]
        prev = "x"
        for i in range(n_layers):
            for k, (target, kind) in enumerate((("linear", "op"), ("view", "view"), ("relu_", "inplace"))):
                name = f"t{i}_{k}"
                ins = (prev, f"w{i}") if k == 0 else (prev,)
                nodes.append(GraphNode(name, kind, f"torch.{target}", ins, "f32[2, 64]", False, "", None))
                prev = name
        nodes.append(GraphNode("out", "op", "torch.add", (prev, "x"), "f32[2, 64]", True, "", None))
        guards = tuple(
            GuardInfo("L['x']", "TENSOR_MATCH", f"L['x'].size()[0] == {k}") for k in range(guards_per_fn)
        )
        g = GraphInfo(f"f{gi}", "eager", len(nodes), "...", nodes=tuple(nodes))
        fns.append(FunctionReport(f"f{gi}", None, None, (g,), guards=guards, calls=1))
    return Report(tuple(fns))


def test_large_graph_pans_zooms_and_expands(browser, artifacts, tmp_path):
    """A 600+ node graph: grouped by submodule, readable at first, wheel zooms, drag pans, a click
    on a group builds the full picture and centres it on that group's nodes."""
    report = big_report(1, 200, 10)
    assert len(report.graphs[0].nodes) > 600
    out = tmp_path / "big.html"
    report.to_html(out)
    b = browser
    open_page(b, out)
    labels = b.js(
        "[...document.querySelectorAll('#graph0-grouped g.box')]"
        ".map(g => g.querySelector('text').textContent)"
    )
    assert len(labels) == 41  # the inputs, then 40 bins of 5 layers each
    assert labels[1] == "layers.0 … layers.4" and labels[-1] == "layers.195 … layers.199"
    svg = "#graph0-grouped"

    def vb(sel):
        return [float(v) for v in b.js(f"document.querySelector('{sel}').getAttribute('viewBox')").split()]

    def rect(sel):
        return b.js(
            f"(function(){{var r=document.querySelector('{sel}').getBoundingClientRect();"
            "return [r.width,r.height];})()"
        )

    start = vb(svg)
    if rect(svg)[0] / vb(svg)[2] < 0.99:  # starts at one unit a pixel where the whole is too small
        assert abs(start[2] - rect(svg)[0]) < 1
    x, y = b.center_of(svg)
    b.wheel(x, y, 400)
    zoomed = vb(svg)
    assert zoomed[2] > start[2] and zoomed[3] > start[3]
    b.drag(x, y, x - 100, y - 150)
    panned = vb(svg)
    assert panned[2] == zoomed[2] and panned[0] > zoomed[0] and panned[1] > zoomed[1]
    b.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=2)
    b.call("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="left", clickCount=2)
    assert vb(svg) == [
        float(v) for v in b.js(f"document.querySelector('{svg}').getAttribute('data-vb')").split()
    ]
    # a click on the group of layers.5-9 shows the full picture around its first node
    assert b.js("document.getElementById('graph0-full')") is None  # not built yet
    group = b.js(
        "[...document.querySelectorAll('#graph0-grouped g.box')]"
        ".find(g => g.querySelector('text').textContent.startsWith('layers.5 ')).id"
    )
    b.js(
        f"(function(s){{s.setAttribute('viewBox', s.getAttribute('data-vb'));}})"
        f"(document.querySelector('{svg}'))"
    )
    b.click(*b.center_of(f"#{group} rect"))
    assert visible(b, "#graph0-full") and not visible(b, "#graph0-groupbox")
    assert b.js("document.querySelectorAll('#graph0-full g.box').length") == len(report.graphs[0].nodes)
    node = b.js(
        "(function(){var n=document.getElementById('graph0-full-t5_0').getBBox();"
        "var v=document.getElementById('graph0-full').getAttribute('viewBox').split(' ').map(Number);"
        "return n.x>=v[0]&&n.x+n.width<=v[0]+v[2]&&n.y>=v[1]&&n.y<=v[1]+v[3];})()"
    )
    assert node, "the clicked group's first node is in view"
    shot(b, artifacts, "report-large-graph.png")


def test_twenty_graph_report_opens(browser, artifacts, tmp_path):
    """20 graphs and 9000 guards: the page opens and marks itself ready (its time is measured by
    tools/bench_html.py, not asserted here); the guard filter still finds a guard."""
    report = big_report(20, 20, 450)
    out = tmp_path / "twenty.html"
    report.to_html(out)
    b = browser
    open_page(b, out)
    shown = "[...document.querySelectorAll('#graphs svg.zoomable')].filter(s => s.getClientRects().length)"
    assert b.js(shown + ".length") == 20  # one picture each (grouped), the full ones hidden
    b.click(*b.center_of("#guard-filter"))
    b.call("Input.insertText", text="== 449")
    assert b.js("document.getElementById('guard-filter-count').textContent") == "20 match(es)"
    assert b.js("document.querySelectorAll('#guards-table details[open]').length") == 20
    # the overview sorts on a click on a header: by name, then the other way
    first = "document.querySelector('#overview-table tbody tr').cells[0].textContent"
    b.click(*b.center_of("#overview-table th:nth-child(1)"))
    assert b.js(first) == "f0"
    b.click(*b.center_of("#overview-table th:nth-child(1)"))
    assert b.js(first) == "f9"


def running_max(xs):
    best = None
    for x in xs:
        if best is None or x > best:
            best = x
    return best


def test_analyzer_view_in_the_browser(browser, artifacts, tmp_path):
    import bcfront

    fa = bcfront.analyze(running_max)
    out = tmp_path / "a.html"
    out.write_text(analysis_html(fa), encoding="utf-8")
    b = browser
    open_page(b, out)
    for pic in ("cfg-pic", "domtree-pic", "ssa-pic"):
        boxes = b.js(f"[...document.querySelectorAll('#{pic} g.box')].map(g => g.getBBox().width)")
        assert boxes and all(w > 0 for w in boxes)
    assert b.js("document.querySelectorAll('#cfg-pic path.back').length") >= 1
    phis = [v.name for vs in fa.ssa.phis.values() for v in vs]
    text = b.js("document.getElementById('ssa-pic').textContent")
    assert phis and all(f"{p} = φ(" in text for p in phis)
    b.js("document.getElementById('cfg').scrollIntoView()")
    shot(b, artifacts, "analyzer.png")
