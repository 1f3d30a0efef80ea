#!/usr/bin/env python
"""Coverage probe: bcfront.capture on a wide set of tiny library models (no timing).

For every entry of tests/models/wide_zoo.py (HF decoders, encoders, Whisper, CLIP,
Wav2Vec2, HF and timm vision models, a few training steps), as a new user would
run them (tiny random configs, CPU, one thread):

* the first call captured under `bcfront.explain.collect`: graph breaks (reason
  and where), graphs, the share of the call's tensor ops that ran inside compiled
  graphs (explain's count, as tools/bench_models.py takes it), native fallbacks
  and their messages, and whether the output equals eager's (same seeds; for
  training steps the parameters and their gradients too);
* a second call at another batch and/or sequence length: recompiles, and its output
  against eager's;
* whether ``fullgraph=True`` passes (inference entries).

A model that raises is recorded with its error, the others still run; each model has
a time limit (``--limit`` seconds).  Writes tools/results/probe_models.json and prints
a table.  Usage: python tools/probe_models.py [--models a,b] [--limit S] [--out FILE]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import signal
import sys
import time
import traceback
import warnings

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from models import real_zoo, wide_zoo  # noqa: E402

import bcfront  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = ((1, 0), (3, 1))  # (seed, variant): the first call, then another shape


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout("time limit")


def same(actual, expected, where: str) -> str:
    """'' when `actual` equals `expected`, else the first difference."""
    try:
        real_zoo.assert_same(actual, expected, where)
    except AssertionError as e:
        return str(e).splitlines()[0][:200]
    return ""


def training_state_diff(mod, ref) -> str:
    got = dict(mod.named_parameters())
    for name, p in ref.named_parameters():
        diff = same(got[name].detach(), p.detach(), name) or (
            same(got[name].grad, p.grad, f"{name}.grad") if p.grad is not None else ""
        )
        if diff:
            return diff
    return ""


def share(report) -> float:
    if not report.functions:
        return 0.0
    root = max(report.functions, key=lambda f: f.ops_in_graphs + f.ops_native)
    total = root.ops_in_graphs + root.ops_native
    return root.ops_in_graphs / total if total else 0.0


def where(filename, lineno) -> str:
    if not filename:
        return "?"
    parts = filename.replace("\\", "/").split("/")
    short = "/".join(parts[-2:]) if "site-packages" in filename else parts[-1]
    return f"{short}:{lineno}"


def probe(name: str) -> dict:
    factory = wide_zoo.WIDE[name]
    mod, make_inputs = factory()
    ref = copy.deepcopy(mod)
    cf = bcfront.capture(mod, backend="eager")
    row: dict = {"kind": factory.kind}
    diffs = []
    with real_zoo.grad_context(factory.kind), bcfront.explain.collect() as everything:
        for i, (seed, variant) in enumerate(CALLS):
            r_args, r_kwargs = make_inputs(seed, variant)
            args, kwargs = make_inputs(seed, variant)
            expected, ref_ops = real_zoo.reference_ops(ref, r_args, r_kwargs)
            if i == 0:
                row["reference_ops"] = ref_ops
                with bcfront.explain.collect() as first_call:
                    t = time.perf_counter()
                    actual = cf(*args, **kwargs)
                    row["first_s"] = round(time.perf_counter() - t, 2)
                first = first_call.report()
            else:
                actual = cf(*args, **kwargs)
            diffs.append(same(actual, expected, f"call {i}"))
            if factory.kind == "train" and not diffs[-1]:
                diffs[-1] = training_state_diff(mod, ref)
    every = everything.report()
    row.update(
        breaks=len(first.graph_breaks),
        break_list=[
            f"{b.reason.value}: {where(b.filename, b.lineno)}: {b.message[:160]}" for b in first.graph_breaks
        ],
        graphs=len(first.graphs),
        ops=sum(g.op_count for g in first.graphs),
        share=share(first),
        native_fallbacks=[
            f"{f.kind}: {where(f.filename, f.lineno)}: {f.message[:200]}" for f in every.native_fallbacks
        ],
        recompiles=len(every.recompiles),
        recompile_list=[f"{r.function}: {r.reason[:160]}" for r in every.recompiles[:6]],
        matches_eager=not any(diffs),
        mismatch=[d for d in diffs if d],
    )
    if factory.kind != "train":
        fmod, fmake = factory()
        args, kwargs = fmake(1, 0)
        with real_zoo.grad_context(factory.kind):
            try:
                bcfront.capture(fmod, backend="eager", fullgraph=True)(*args, **kwargs)
                row["fullgraph"] = True
            except bcfront.GraphBreakError:
                row["fullgraph"] = False
    return row


COLUMNS = (
    ("model", lambda n, r: n),
    ("kind", lambda n, r: r["kind"][:5]),
    ("breaks", lambda n, r: str(r["breaks"])),
    ("graphs", lambda n, r: str(r["graphs"])),
    ("in graphs", lambda n, r: f"{r['share']:.1%}"),
    ("fullgraph", lambda n, r: {True: "yes", False: "no"}.get(r.get("fullgraph"), "-")),
    ("recompiles", lambda n, r: str(r["recompiles"])),
    ("native", lambda n, r: str(len(r["native_fallbacks"]))),
    ("= eager", lambda n, r: "yes" if r["matches_eager"] else "NO"),
    ("1st call (s)", lambda n, r: f"{r['first_s']:.1f}"),
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="", help="comma-separated entries (default: all)")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per model")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "probe_models.json"))
    ap.add_argument("--verbose", action="store_true", help="print each model's breaks and fallbacks")
    opts = ap.parse_args(argv)
    names = [n for n in opts.models.split(",") if n] or list(wide_zoo.WIDE)
    unknown = sorted(set(names) - set(wide_zoo.WIDE))
    if unknown:
        ap.error(f"unknown models {unknown}; known: {', '.join(wide_zoo.WIDE)}")
    torch.set_num_threads(1)
    signal.signal(signal.SIGALRM, _alarm)
    models = {}
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            signal.setitimer(signal.ITIMER_REAL, opts.limit)
            try:
                models[name] = probe(name)
            except (Exception, Timeout) as e:  # noqa: BLE001 - one model failing must not lose the rest
                tb = traceback.extract_tb(e.__traceback__)[-1]
                at = where(tb.filename, tb.lineno)
                models[name] = {"error": f"{type(e).__name__}: {str(e)[:300]} ({at})"}
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    ok = {n: r for n, r in models.items() if "error" not in r}
    results = {
        "models": models,
        "summary": {
            "models": len(models),
            "errors": len(models) - len(ok),
            "whole": sum(1 for r in ok.values() if r["breaks"] == 0 and not r["native_fallbacks"]),
            "equal_to_eager": sum(1 for r in ok.values() if r["matches_eager"]),
            "mean_share": sum(r["share"] for r in ok.values()) / len(ok) if ok else 0.0,
        },
        "meta": {
            **real_zoo.library_versions(),
            "python": sys.version.split()[0],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        },
    }
    os.makedirs(os.path.dirname(os.path.abspath(opts.out)), exist_ok=True)
    with open(opts.out, "w") as fh:
        json.dump(results, fh, indent=2)
    rows = [[h for h, _ in COLUMNS], *([f(n, r) for _, f in COLUMNS] for n, r in ok.items())]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    for name, row in models.items():
        if "error" in row:
            print(f"{name}: failed: {row['error']}")
        elif opts.verbose or not row["matches_eager"]:
            # (one recompile is the second call's new shape)
            recompiles = row["recompile_list"] if row["recompiles"] > 1 else []
            for line in (*row["break_list"], *row["native_fallbacks"], *row["mismatch"], *recompiles):
                print(f"  {name}: {line}")
    s = results["summary"]
    print(
        f"\n{s['whole']}/{s['models']} whole (no break, no native fallback), {s['equal_to_eager']} equal to "
        f"eager, {s['errors']} errors; mean share in graphs {s['mean_share']:.1%}"
    )
    print(f"wrote {opts.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
