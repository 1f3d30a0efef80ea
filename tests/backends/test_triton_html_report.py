"""The HTML report of a real Triton capture (interpreter): each fused kernel is drawn as a
group of its own in the graph view, checked in the file's markup and, where Chromium is
installed, in the page's DOM after its scripts ran (with a screenshot artifact)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "html"))

import bcfront  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.norm = torch.nn.Linear(16, 16), torch.nn.LayerNorm(16)

    def forward(self, x):
        y = self.norm(self.lin(x)).relu() * 2 + 1
        return (y.sigmoid() * y).sum(-1)


@pytest.fixture(scope="module")
def triton_report(tmp_path_factory):
    torch.manual_seed(0)
    report = bcfront.explain(bcfront.capture(Block(), backend="triton"), torch.randn(4, 16))
    path = tmp_path_factory.mktemp("html") / "triton.html"
    report.to_html(path)
    return report, path


def test_each_fused_kernel_is_a_group_in_the_markup(triton_report):
    from htmlcheck import parse

    report, path = triton_report
    kernels = sum(len(g.kernels) for g in report.graphs)
    assert kernels >= 1 and all(g.backend == "triton" for g in report.graphs)
    page = parse(path.read_text(encoding="utf-8"))
    assert page.errors == []
    assert len(page.with_class("kernel", "g")) == kernels


def test_the_kernel_groups_are_drawn_in_a_browser(triton_report):
    from browser import Browser, find_chromium

    if find_chromium() is None:
        pytest.skip("no headless Chromium installed (Debian: apt-get install chromium)")
    report, path = triton_report
    with Browser() as b:
        b.open(path.as_uri())
        for _ in range(500):
            if b.js("document.documentElement.getAttribute('data-ready')"):
                break
            time.sleep(0.02)
        assert b.errors() == []
        b.js("document.querySelectorAll('details').forEach(d => d.open = true)")
        drawn = b.js("document.querySelectorAll('g.kernel').length")
        assert drawn == sum(len(g.kernels) for g in report.graphs)
        b.js("document.querySelector('g.kernel').closest('svg').scrollIntoView()")
        out = Path(os.environ.get("BCFRONT_ARTIFACTS") or path.parent) / "triton-kernels.png"
        print(f"screenshot: {b.screenshot(out)}")
