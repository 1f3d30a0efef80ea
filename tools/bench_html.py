"""How fast the HTML report opens in headless Chromium, on real captures.

    python tools/bench_html.py            # about a minute on CPU; needs Chromium (apt-get install chromium)

Reports:

* ``twenty_graphs``: a stack of 20 transformers ``GPT2Block`` layers with a ``print`` after
  each one: 20 graph breaks, 21 graphs, some 9000 guards;
* ``gpt2_12_layers``: transformers ``GPT2LMHeadModel`` with 12 layers: one graph of ~790 nodes;
* ``example_gpt``: ``bcfront-explain --static examples/gpt.py`` (recompile storms).

For each: the seconds to capture and to render the HTML (Python), the page's size, and, opened
from disk (file://) in one headless Chromium ``REPEAT`` times, the milliseconds from navigation
start to the first frame drawn after the load event (the page's own ``data-ready`` mark,
`performance.now()` there) and the wall time from the navigate command until the page reports
ready; the first (cold) open and the median of the others.  Results go to
``tools/results/bench_html.json`` (``--out`` to change), a table to stdout.  The goal (issue 31):
a 20-graph model's report opens in under 2 seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests", ROOT / "tests" / "html"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

REPEAT = 6
LAYERS = 20


def twenty_graphs():
    import torch
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    import bcfront

    torch.manual_seed(0)
    cfg = GPT2Config(n_embd=64, n_head=4, n_layer=LAYERS, n_positions=64, attn_implementation="eager")

    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList(GPT2Block(cfg, layer_idx=i) for i in range(LAYERS))
            self.ln = torch.nn.LayerNorm(64)

        def layer(self, i, x):  # a graph break after each layer
            x = self.blocks[i](x)
            print(f"layer {i}: {float(x.norm()):.3f}")
            return x

        def forward(self, x):  # unrolled: a loop would stop capturing after 2 iterations
            f = self.layer
            x = f(0, x)
            x = f(1, x)
            x = f(2, x)
            x = f(3, x)
            x = f(4, x)
            x = f(5, x)
            x = f(6, x)
            x = f(7, x)
            x = f(8, x)
            x = f(9, x)
            x = f(10, x)
            x = f(11, x)
            x = f(12, x)
            x = f(13, x)
            x = f(14, x)
            x = f(15, x)
            x = f(16, x)
            x = f(17, x)
            x = f(18, x)
            x = f(19, x)
            return self.ln(x)

    m = Stack().eval()
    with torch.no_grad():
        return bcfront.explain(m, torch.randn(2, 16, 64))


def gpt2_12_layers():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import bcfront

    torch.manual_seed(0)
    cfg = GPT2Config(n_embd=64, n_head=4, n_layer=12, n_positions=64, vocab_size=100, eos_token_id=0)
    cfg.bos_token_id = 0
    m = GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():
        return bcfront.explain(m, torch.randint(0, 100, (2, 16)))


def example_gpt(out: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "bcfront.cli.explain", "--html", str(out), "examples/gpt.py", "--static"]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)


def build(name: str, out: Path) -> dict:
    t0 = time.perf_counter()
    if name == "example_gpt":
        example_gpt(out)
        return {"capture_and_render_s": round(time.perf_counter() - t0, 3), "bytes": out.stat().st_size}
    report = {"twenty_graphs": twenty_graphs, "gpt2_12_layers": gpt2_12_layers}[name]()
    t1 = time.perf_counter()
    report.to_html(out)
    t2 = time.perf_counter()
    return {
        "capture_s": round(t1 - t0, 3),
        "render_s": round(t2 - t1, 3),
        "bytes": out.stat().st_size,
        "graphs": len(report.graphs),
        "graph_breaks": sum(b.count for b in report.graph_breaks),
        "nodes": sum(len(g.nodes) for g in report.graphs),
        "max_nodes": max((len(g.nodes) for g in report.graphs), default=0),
        "guards": len(report.guards),
    }


def open_times(b, path: Path) -> dict:
    from browser import BrowserError

    ready_ms, wall_s = [], []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        b.call("Page.navigate", url=path.as_uri())
        mark = None
        while not mark:
            try:  # the old document may still answer, or none while the new one loads
                mark = b.js(
                    "location.protocol === 'file:' && document.documentElement?.getAttribute('data-ready')"
                )
            except BrowserError:
                mark = None
            time.sleep(0.005)
        wall_s.append(time.perf_counter() - t0)
        ready_ms.append(float(mark))
        assert b.errors() == [], b.errors()
        b.call("Page.navigate", url="about:blank")
        time.sleep(0.2)
    return {
        "ready_ms_cold": round(ready_ms[0], 1),
        "ready_ms_median": round(statistics.median(ready_ms[1:]), 1),
        "wall_s_cold": round(wall_s[0], 3),
        "wall_s_median": round(statistics.median(wall_s[1:]), 3),
        "wall_s_max": round(max(wall_s), 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "tools" / "results" / "bench_html.json"))
    ap.add_argument("--only", default="", help="comma-separated report names")
    ap.add_argument("--keep", default="", help="a folder to keep the pages in")
    args = ap.parse_args()
    from browser import Browser, find_chromium
    from models.vision_cpu import import_torchvision

    import_torchvision()  # transformers imports torchvision when it is installed
    exe = find_chromium()
    if exe is None:
        print("no Chromium installed (apt-get install chromium)", file=sys.stderr)
        return 2
    names = [
        n
        for n in ("twenty_graphs", "gpt2_12_layers", "example_gpt")
        if not args.only or n in args.only.split(",")
    ]
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = args.keep or tmp_dir
        Path(tmp).mkdir(parents=True, exist_ok=True)
        for name in names:
            out = Path(tmp) / f"{name}.html"
            with contextlib.redirect_stdout(io.StringIO()):
                results[name] = build(name, out)
        with Browser() as b:
            version = b.call("Browser.getVersion", _session=False).get("product", "")
            for name in names:
                results[name].update(open_times(b, Path(tmp) / f"{name}.html"))
    doc = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "python": platform.python_version(),
        "browser": version,
        "repeat": REPEAT,
        "reports": results,
    }
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(
        f"{'report':16} {'graphs':>6} {'nodes':>6} {'guards':>6} {'MB':>5} "
        f"{'ready ms':>9} {'cold':>7} {'wall s':>7}"
    )
    for name, r in results.items():
        print(
            f"{name:16} {r.get('graphs', '-'):>6} {r.get('nodes', '-'):>6} {r.get('guards', '-'):>6} "
            f"{r['bytes'] / 1e6:5.1f} {r['ready_ms_median']:9.0f} {r['ready_ms_cold']:7.0f} "
            f"{r['wall_s_median']:7.3f}"
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
