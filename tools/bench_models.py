#!/usr/bin/env python
"""Benchmark bcfront on the real-model zoo, beside torch.compile(backend="eager") and eager.

For every entry of tests/models/real_zoo.py (tiny transformers, timm and
torchvision models, two training steps, greedy GPT-2 decoding), in one
process on one CPU thread:

* bcfront's graph breaks (as explain lists them), graphs, graph ops, the share
  of the call's tensor ops that ran inside compiled graphs (explain's count),
  native fallbacks, whether ``fullgraph=True`` passes, and whether the output
  equals eager's;
* torch.compile's graph breaks and graphs (dynamo's counters);
* the first call (capture) in seconds, for bcfront and torch.compile; each starts from
  the same state (`fresh_start`: a full garbage collection, so that a collection the
  earlier work made due does not land in one runner's timed call, and torch's fake-tensor
  dispatch cache emptied, which is process-wide: the runner timed second would otherwise
  reuse the shapes the first one propagated);
* a cached call over eager's, for both: the three runners alternate, each
  round times `inner` back-to-back calls, and the median round is kept;
* the geometric mean of cached/eager over the models, for both.

Writes tools/results/bench_models.json; ``--markdown [FILE]`` also writes the
table as Markdown for the README (to stdout without FILE).
Usage: python tools/bench_models.py [--quick] [--models a,b] [--repeats N] [--markdown [FILE]]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import importlib.util
import io
import json
import math
import os
import platform
import sys
import time
import warnings

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
# tests/ is where pytest roots tests/models (a package), so the zoo is the module
# `models.real_zoo` both here and under pytest.
sys.path.insert(0, os.path.join(ROOT, "tests"))
from models import real_zoo  # noqa: E402

import bcfront  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROUND_SECONDS = 0.02  # aim for rounds of about this long (eager time)


def _load_sibling(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


per_call = _load_sibling("bench_frontend").per_call  # interleaved medians, the house way


def cpu_name() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def fresh_start() -> None:
    """What a first call must not inherit from the runner timed before it (see the docstring)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    FakeTensorMode.cache_clear()
    gc.collect()


def warm_up() -> None:
    """Each side's one-time process costs (lazy imports of its own modules, dynamo's
    setup) paid once on a tiny function, so the first model's "first call" measures its
    capture, as every later model's does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (lambda x: torch.nn.functional.gelu(x) + 1, lambda x: (x * 2).sum()):
            bcfront.capture(fn, backend="eager")(torch.ones(4))
            torch.compile(fn, backend="eager")(torch.ones(4))
        torch._dynamo.reset()


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def dynamo_counts() -> tuple[int, int]:
    """(graph breaks, graphs) that torch.compile recorded since the last reset."""
    counters = torch._dynamo.utils.counters
    return sum(counters["graph_break"].values()), counters["stats"]["unique_graphs"]


def same(actual, expected) -> bool:
    try:
        real_zoo.assert_same(actual, expected, "output")
    except AssertionError:
        return False
    return True


def fullgraph_passes(factory, args, kwargs) -> bool:
    mod, _ = factory()
    with real_zoo.grad_context(factory.kind):
        try:
            bcfront.capture(mod, backend="eager", fullgraph=True)(*args, **kwargs)
        except bcfront.GraphBreakError:
            return False
    return True


def bench_model(name: str, repeats: int, inner: int | None) -> dict:
    factory = real_zoo.REAL_ZOO[name]
    mod, make_inputs = factory()
    bc_mod, tc_mod = copy.deepcopy(mod), copy.deepcopy(mod)
    args, kwargs = make_inputs(1, 0)
    row: dict = {"kind": factory.kind, "attn": factory.attn}
    with real_zoo.grad_context(factory.kind):
        expected, ref_ops = real_zoo.reference_ops(mod, args, kwargs)

        cf = bcfront.capture(bc_mod, backend="eager")
        # the first call timed bare; the report from a second copy, since explain's op
        # count (a profiler) would slow the timed call down
        fresh_start()
        out, row["bcfront_first_s"] = timed(lambda: cf(*args, **kwargs))
        watched = bcfront.capture(copy.deepcopy(mod), backend="eager")
        with bcfront.explain.collect() as run:
            watched(*args, **kwargs)
        rep = run.report()
        ops = sum(g.op_count for g in rep.graphs)
        root = max(rep.functions, key=lambda f: f.ops_in_graphs + f.ops_native)
        counted = root.ops_in_graphs + root.ops_native
        row.update(
            breaks=len(rep.graph_breaks),
            graphs=len(rep.graphs),
            ops=ops,
            reference_ops=ref_ops,
            # tensor ops that ran inside compiled graphs, as explain measured them
            share=root.ops_in_graphs / counted if counted else 0.0,
            native_fallbacks=len(rep.native_fallbacks),
            recompiles=len(rep.recompiles),
            matches_eager=same(out, expected),
        )

        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()  # (reset() leaves them: they would add up over models)
        tc = torch.compile(tc_mod, backend="eager")
        fresh_start()
        _, row["torch_compile_first_s"] = timed(lambda: tc(*args, **kwargs))
        row["torch_compile_breaks"], row["torch_compile_graphs"] = dynamo_counts()

        eager_once = timed(lambda: mod(*args, **kwargs))[1]
        n = inner or max(1, min(200, round(ROUND_SECONDS / max(eager_once, 1e-6))))
        runners = [
            lambda: mod(*args, **kwargs),
            lambda: cf(*args, **kwargs),
            lambda: tc(*args, **kwargs),
        ]
        t_eager, t_bc, t_tc = per_call(runners, (), n, repeats)
    row.update(
        eager_ms=t_eager * 1e3,
        bcfront_ms=t_bc * 1e3,
        torch_compile_ms=t_tc * 1e3,
        bcfront_cached_over_eager=t_bc / t_eager,
        torch_compile_cached_over_eager=t_tc / t_eager,
        inner=n,
    )
    row["fullgraph"] = fullgraph_passes(factory, *make_inputs(1, 0))
    return row


def geomean(xs) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


COLUMNS = (
    ("model", lambda n, r: n),
    ("attn", lambda n, r: r["attn"] or "-"),
    ("breaks", lambda n, r: str(r["breaks"])),
    ("graphs", lambda n, r: str(r["graphs"])),
    ("graph ops", lambda n, r: str(r["ops"])),
    ("in graphs", lambda n, r: f"{r['share']:.0%}"),
    ("fullgraph", lambda n, r: "yes" if r["fullgraph"] else "no"),
    ("= eager", lambda n, r: "yes" if r["matches_eager"] else "NO"),
    ("tc breaks", lambda n, r: str(r["torch_compile_breaks"])),
    ("1st call bc / tc (s)", lambda n, r: f"{r['bcfront_first_s']:.2f} / {r['torch_compile_first_s']:.2f}"),
    ("eager (ms)", lambda n, r: f"{r['eager_ms']:.2f}"),
    ("cached/eager bc", lambda n, r: f"{r['bcfront_cached_over_eager']:.2f}"),
    ("cached/eager tc", lambda n, r: f"{r['torch_compile_cached_over_eager']:.2f}"),
)


def table_rows(models: dict) -> list[list[str]]:
    return [[f(name, row) for _, f in COLUMNS] for name, row in models.items() if "error" not in row]


def markdown(results: dict) -> str:
    meta = results["meta"]
    out = io.StringIO()
    out.write(
        f"Real-model zoo, {meta['date']}, {meta['machine']}, 1 thread; torch {meta['torch']}, "
        f"transformers {meta['transformers']}, timm {meta['timm']}, torchvision {meta['torchvision']}; "
        f'bc = bcfront, tc = torch.compile(backend="eager"); median of {meta["repeats"]} rounds.\n\n'
    )
    out.write("| " + " | ".join(h for h, _ in COLUMNS) + " |\n")
    out.write("|" + "|".join("---" for _ in COLUMNS) + "|\n")
    for r in table_rows(results["models"]):
        out.write("| " + " | ".join(r) + " |\n")
    g = results["geomean"]
    out.write(
        f"\nGeomean cached/eager: bcfront {g['bcfront_cached_over_eager']:.2f}, "
        f"torch.compile {g['torch_compile_cached_over_eager']:.2f}.\n"
    )
    for name, row in results["models"].items():
        if "error" in row:
            out.write(f"\n{name}: failed: {row['error']}\n")
    return out.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    ap.add_argument("--models", default="", help="comma-separated entries (default: all)")
    ap.add_argument("--repeats", type=int, default=None, help="rounds per runner (median kept)")
    ap.add_argument("--inner", type=int, default=None, help="calls per round (default: about 20 ms)")
    ap.add_argument("--markdown", nargs="?", const="-", default=None, help="write a Markdown table")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "bench_models.json"))
    opts = ap.parse_args(argv)
    names = [n for n in opts.models.split(",") if n] or list(real_zoo.REAL_ZOO)
    unknown = sorted(set(names) - set(real_zoo.REAL_ZOO))
    if unknown:
        ap.error(f"unknown models {unknown}; known: {', '.join(real_zoo.REAL_ZOO)}")
    repeats = opts.repeats or (3 if opts.quick else 15)
    torch.set_num_threads(1)
    warm_up()
    load_start = round(os.getloadavg()[0], 2)
    models = {}
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                models[name] = bench_model(name, repeats, opts.inner)
            except Exception as e:  # noqa: BLE001 - one model failing must not lose the others' numbers
                models[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    ok = [r for r in models.values() if "error" not in r]
    results = {
        "models": models,
        "geomean": {
            "bcfront_cached_over_eager": geomean(r["bcfront_cached_over_eager"] for r in ok),
            "torch_compile_cached_over_eager": geomean(r["torch_compile_cached_over_eager"] for r in ok),
        },
        "meta": {
            **real_zoo.library_versions(),
            "python": sys.version.split()[0],
            "threads": 1,
            "repeats": repeats,
            "quick": opts.quick,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{cpu_name()}, {os.cpu_count()} CPUs",
            "load_start": load_start,  # other processes share the box: 1-minute load
            "load_end": round(os.getloadavg()[0], 2),
        },
    }
    os.makedirs(os.path.dirname(os.path.abspath(opts.out)), exist_ok=True)
    with open(opts.out, "w") as fh:
        json.dump(results, fh, indent=2)
    rows = [[h for h, _ in COLUMNS], *table_rows(models)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    g = results["geomean"]
    print(
        f"\ngeomean cached/eager: bcfront {g['bcfront_cached_over_eager']:.2f}, "
        f"torch.compile {g['torch_compile_cached_over_eager']:.2f}"
    )
    for name, row in models.items():
        if "error" in row:
            print(f"{name}: failed: {row['error']}")
    print(f"load average {load_start} at start, {results['meta']['load_end']} at end")
    print(f"wrote {opts.out}")
    if opts.markdown == "-":
        print("\n" + markdown(results))
    elif opts.markdown:
        with open(opts.markdown, "w") as fh:
            fh.write(markdown(results))
        print(f"wrote {opts.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
