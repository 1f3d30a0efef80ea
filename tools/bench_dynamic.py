#!/usr/bin/env python
"""Dynamic shapes: bcfront beside torch.compile(backend="eager") and eager, in one run.

Cases (issue #26), each a sequence of calls whose sizes change:

* ``gpt2_generate``: a tiny transformers GPT-2 generating 24 tokens, one call per
  token with its KV cache (the first call has no cache);
* ``attention_batch``: an attention block over 24 batch sizes;
* ``attention_batch_seq``: the same block with batch and sequence length both varying;
* ``pointwise_growing``: a pointwise function on 32 growing sizes.

For each: captures per function (bcfront: the function's entries and each
continuation's; torch.compile: dynamo's unique graphs), captures when the varying
dimensions are marked with ``bcfront.mark_dynamic`` up front, graph breaks, native
fallbacks, total time over the calls (captures included) for the three runners,
and whether every output equals eager's.  Then the cached call of a dynamic entry
against a static one on the same input (the median of alternating rounds).

Writes tools/results/bench_dynamic.json; ``--markdown`` prints the README table.
Usage: python tools/bench_dynamic.py [--markdown]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import warnings

import torch
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import bcfront  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "bench_dynamic.json")


class Attention(torch.nn.Module):
    def __init__(self, c=64, nh=4):
        super().__init__()
        self.qkv = torch.nn.Linear(c, 3 * c)
        self.proj = torch.nn.Linear(c, c)
        self.nh = nh

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.nh, C // self.nh).transpose(1, 2)
        k = k.view(B, T, self.nh, C // self.nh).transpose(1, 2)
        v = v.view(B, T, self.nh, C // self.nh).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


def pointwise(x):
    return torch.sigmoid(x) * x + torch.tanh(x) * 0.5


# -- cases: (function maker, list of argument tuples, how to call) -----------------------


def _attention_case(vary: str):
    torch.manual_seed(0)
    m = Attention().eval()
    calls = []
    for i in range(24):
        b = 1 + i if vary != "seq" else 2
        t = 3 + (i * 7) % 29 if vary != "batch" else 16
        calls.append((torch.randn(b, t, 64),))
    return m, calls


def _pointwise_case():
    return pointwise, [(torch.randn(64 + 37 * i, 33),) for i in range(32)]


def _gpt2_steps():
    from models.real_zoo import _gpt2

    lm = _gpt2("sdpa", use_cache=True).eval()

    def step(ids, past):
        out = lm(ids, past_key_values=past, use_cache=True)
        return out.logits[:, -1, :].argmax(-1, keepdim=True), out.past_key_values

    return step


def _generate(step, n=24):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 50, (1, 6), generator=g)
    cur, past = ids, None
    for _ in range(n):
        tok, past = step(cur, past)
        ids = torch.cat([ids, tok], 1)
        cur = tok
    return ids


def _run_calls(fn, calls):
    return [fn(*a) for a in calls]


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and torch.allclose(a, b, atol=1e-5, rtol=1e-4)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _bcfront_counts(cf) -> dict:
    conts = [len(c.entries) for fam in cf.continuations.values() for c, _ in fam.values()]
    r = cf.report()
    return {
        "captures": len(cf.entries),
        "continuation_captures": conts,
        "max_captures_per_function": max([len(cf.entries), *conts]),
        "graph_breaks": len(r.graph_breaks),
        "native_fallbacks": [f"{f.kind}: {f.message[:100]}" for f in cf.native_fallbacks],
    }


def _marked_captures(fn, calls, ref) -> int:
    """Captures when every dimension that varies over the calls is marked dynamic up front
    (sizes 0 and 1 are still specialized, as in torch)."""
    shapes = [tuple(a.shape) for a, *_ in calls]
    varying = [d for d in range(len(shapes[0])) if len({s[d] for s in shapes}) > 1]
    marked = []
    for args in calls:
        x = args[0].clone()
        bcfront.mark_dynamic(x, varying)
        marked.append((x, *args[1:]))
    cf = bcfront.capture(fn)
    with torch.no_grad():
        assert _same(_run_calls(cf, marked), ref)
    return len(cf.entries)


def _timed(fn):
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _warm_up() -> None:
    """One throwaway call through each runner: first-use imports count in no case."""
    x = torch.randn(4, 3)
    bcfront.capture(pointwise)(x)
    torch.compile(pointwise, backend="eager")(x)


def bench_case(name: str) -> dict:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()  # unique_graphs is cumulative: count this case's only
    if name == "gpt2_generate":
        step = _gpt2_steps()
        with torch.no_grad():
            ref, t_eager = _timed(lambda: _generate(step))
            cf = bcfront.capture(step)
            out, t_bc = _timed(lambda: _generate(cf))
            tc = torch.compile(step, backend="eager")
            out_tc, t_tc = _timed(lambda: _generate(tc))
        counts = _bcfront_counts(cf)
        same = torch.equal(out, ref) and torch.equal(out_tc, ref)
    else:
        fn, calls = (
            _pointwise_case()
            if name == "pointwise_growing"
            else _attention_case({"attention_batch": "batch", "attention_batch_seq": "both"}[name])
        )
        with torch.no_grad():
            ref, t_eager = _timed(lambda: _run_calls(fn, calls))
            cf = bcfront.capture(fn)
            out, t_bc = _timed(lambda: _run_calls(cf, calls))
            tc = torch.compile(fn, backend="eager")
            out_tc, t_tc = _timed(lambda: _run_calls(tc, calls))
        counts = _bcfront_counts(cf)
        same = _same(out, ref) and _same(out_tc, ref)
        counts["captures_marked"] = _marked_captures(fn, calls, ref)

    return {
        "case": name,
        **counts,
        "torch_compile_graphs": int(counters["stats"]["unique_graphs"]),
        "same_as_eager": bool(same),
        "total_s": {"bcfront": t_bc, "torch_compile": t_tc, "eager": t_eager},
        "total_vs_torch_compile": t_bc / t_tc,
    }


def cached_dynamic_vs_static(rounds: int = 31, inner: int = 200) -> dict:
    """The same input through a dynamic entry and a static one: median per-call time."""
    out = {}
    torch.manual_seed(0)
    m = Attention().eval()
    cases = {
        "pointwise": (pointwise, (torch.randn(8, 16),)),
        "attention": (m, (torch.randn(2, 8, 64),)),
    }
    with torch.no_grad():
        for name, (fn, args) in cases.items():
            static = bcfront.capture(fn, dynamic=False)
            dynamic = bcfront.capture(fn, dynamic=True)
            static(*args)
            dynamic(*args)
            times: dict[str, list[float]] = {"static": [], "dynamic": []}
            for _ in range(rounds):
                for label, f in (("static", static), ("dynamic", dynamic)):
                    t0 = time.perf_counter()
                    for _ in range(inner):
                        f(*args)
                    times[label].append((time.perf_counter() - t0) / inner)
            s, d = statistics.median(times["static"]), statistics.median(times["dynamic"])
            out[name] = {"static_us": s * 1e6, "dynamic_us": d * 1e6, "dynamic_over_static": d / s}
    return out


CASES = ("gpt2_generate", "attention_batch", "attention_batch_seq", "pointwise_growing")


def markdown(res: dict) -> str:
    lines = [
        (
            "| case | bcfront captures (max per function) | captures when marked dynamic | breaks "
            "| fallbacks | torch.compile graphs "
            "| total bcfront / torch.compile / eager (s) | bcfront ÷ torch.compile | same as eager |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["cases"]:
        t = r["total_s"]
        lines.append(
            f"| {r['case']} | {r['captures']} ({r['max_captures_per_function']}) "
            f"| {r.get('captures_marked', '—')} | {r['graph_breaks']} "
            f"| {len(r['native_fallbacks'])} | {r['torch_compile_graphs']} "
            f"| {t['bcfront']:.2f} / {t['torch_compile']:.2f} / {t['eager']:.2f} "
            f"| {r['total_vs_torch_compile']:.2f} | {r['same_as_eager']} |"
        )
    lines.append("")
    lines.append("| cached call, same input | static entry (µs) | dynamic entry (µs) | dynamic ÷ static |")
    lines.append("|---|---|---|---|")
    for name, c in res["cached"].items():
        lines.append(
            f"| {name} | {c['static_us']:.1f} | {c['dynamic_us']:.1f} | {c['dynamic_over_static']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    _warm_up()
    res = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"python {platform.python_version()}",
        "cases": [bench_case(c) for c in args.cases.split(",")],
        "cached": cached_dynamic_vs_static(),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=2)
    print(markdown(res) if args.markdown else json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
