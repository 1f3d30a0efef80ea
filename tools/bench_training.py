"""A full training step (forward, backward, clip_grad_norm_, optimizer step), side by side.

Models: a small GPT (token + position embeddings, pre-norm transformer blocks, AdamW) and
a small ResNet (conv/batch-norm basic blocks, SGD with momentum); ``gpt_sched``: the GPT
step with a learning-rate schedule (`LambdaLR`, linear warmup then decay) stepped inside
it, whose rate and counters change every step.  Runners, in one run on
the same batches from the same initial weights:

* ``eager``: plain PyTorch;
* ``bcfront``: ``bcfront.capture(step)``, default backend (the backward and the optimizer
  step are nodes of the graph);
* ``bcfront_fx_inductor``: ``bcfront.capture(step, backend=compile_fx, joint_graph=True)``:
  the forward and backward graphs from AOT autograd, compiled by Inductor;
* ``compile_eager`` / ``compile_inductor``: ``torch.compile(step, backend=...)``.

A runner Inductor cannot build on this machine (no C++ compiler, ...) is reported with its
error instead of numbers.  For each: the median step time over ``--steps`` steps after the
first (compilation excluded), the first step's time, the recompiles after step 1, the
graph breaks, and the largest difference of the final parameters from eager's.  Writes
``tools/results/bench_training.json``.  Timings on a shared machine are noisy: compare
runners within one run.

    PYTHONPATH=. python tools/bench_training.py [--steps 100] [--only gpt,resnet]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import sys
import time
import types
from datetime import date

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bcfront


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class SmallGPT(nn.Module):
    def __init__(self, vocab=256, d=64, heads=4, layers=2, ctx=32):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.short = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(y)) + self.short(x))


class SmallResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.layers = nn.Sequential(Basic(16, 16, 1), Basic(16, 32, 2), Basic(32, 64, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


def gpt_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss


def resnet_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss


def gpt_case():
    torch.manual_seed(0)
    model = SmallGPT()

    def data(i):
        g = torch.Generator().manual_seed(i)
        x = torch.randint(0, 256, (8, 32), generator=g)
        return x, torch.roll(x, -1, 1)

    return model, lambda ps: torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.1), data, gpt_step


def resnet_case():
    torch.manual_seed(0)
    model = SmallResNet()

    def data(i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(8, 3, 32, 32, generator=g), torch.randint(0, 10, (8,), generator=g)

    return model, lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9), data, resnet_step


def gpt_sched_step(model, opt, x, y):
    """`gpt_step` with a learning-rate schedule stepped inside it, as a training loop with
    a scheduler writes it: the rate, and the scheduler's counters, change every step."""
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.scheduler.step()
    return loss


def _with_schedule(opt):
    """`opt` with a linear-warmup, linear-decay `LambdaLR` as ``opt.scheduler`` (one per
    runner: each steps its own)."""
    warmup, total = 10, 1000
    opt.scheduler = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: s / warmup if s < warmup else max(0.0, (total - s) / (total - warmup))
    )
    return opt


def gpt_sched_case():
    model, make_opt, data, _ = gpt_case()
    return model, lambda ps: _with_schedule(make_opt(ps)), data, gpt_sched_step


CASES = {"gpt": gpt_case, "resnet": resnet_case, "gpt_sched": gpt_sched_case}


def dynamo_frames() -> int:
    from torch._dynamo.utils import counters

    return int(counters["frames"]["ok"])


def dynamo_breaks() -> int:
    from torch._dynamo.utils import counters

    return int(sum(counters["graph_break"].values()))


def runners():
    from torch._inductor.compile_fx import compile_fx

    def bc(**kw):
        def make(step):
            cf = bcfront.capture(step, **kw)
            return cf, lambda: (len(cf.report().recompiles), len(cf.report().graph_breaks))

        return make

    def tc(backend):
        def make(step):
            # a copy of the step's code per runner: dynamo's cache lives on the code object
            own = types.FunctionType(
                step.__code__.replace(co_name=f"{step.__name__}_{backend}"), step.__globals__
            )
            return torch.compile(own, backend=backend), None  # counted around its own calls

        return make

    return {
        "eager": lambda step: (step, lambda: (0, 0)),
        "bcfront": bc(),
        "bcfront_fx_inductor": bc(backend=compile_fx, joint_graph=True),
        "compile_eager": tc("eager"),
        "compile_inductor": tc("inductor"),
    }


class Run:
    """One runner on its own copy of the model and optimizer."""

    def __init__(self, case, make_runner):
        base, make_opt, self.data, step = case
        self.model = copy.deepcopy(base)
        self.opt = make_opt(self.model.parameters())
        self.fn, self.stats = make_runner(step)
        self.times: list = []
        self.dynamo_breaks = self.dynamo_recompiles = 0

    def step(self, i):
        x, y = self.data(i)
        frames, breaks = dynamo_frames(), dynamo_breaks()
        t0 = time.perf_counter()
        self.fn(self.model, self.opt, x, y)
        self.times.append(time.perf_counter() - t0)
        # torch.compile's counters are global: each runner counts what its own calls added
        self.dynamo_breaks += dynamo_breaks() - breaks
        if i > 0:
            self.dynamo_recompiles += dynamo_frames() - frames

    def row(self):
        recompiles, breaks = self.stats() if self.stats else (self.dynamo_recompiles, self.dynamo_breaks)
        return {
            "median_step_ms": round(statistics.median(self.times[1:]) * 1e3, 3),
            "first_step_ms": round(self.times[0] * 1e3, 1),
            "recompiles_after_step1": recompiles,
            "graph_breaks": breaks,
        }


def run_case(case, chosen: dict, steps: int, name: str) -> dict:
    """All runners in lockstep: step i of every runner before step i + 1 of any, so a
    shared machine's load falls on all of them alike (the medians compare); the order
    rotates every step, so no runner always follows the same one (whose step evicted
    its caches)."""
    runs: dict = {}
    rows: dict = {}
    for rname, make_runner in chosen.items():
        try:
            runs[rname] = Run(case, make_runner)
        except Exception as e:  # noqa: BLE001 - report and go on
            rows[rname] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    for i in range(steps + 1):
        order = list(runs.items())
        k = i % len(order) if order else 0
        for rname, run in order[k:] + order[:k]:  # each runner in each position as often
            try:
                run.step(i)
            except Exception as e:  # noqa: BLE001 - e.g. Inductor cannot build here: say so, go on
                rows[rname] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
                print(f"{name:7s} {rname:20s} FAILED {rows[rname]['error']}", flush=True)
                del runs[rname]
    ref = runs.get("eager")
    for rname, run in runs.items():
        row = run.row()
        if ref is not None:
            row["max_param_diff_vs_eager"] = max(
                (p - q).abs().max().item() for p, q in zip(run.model.parameters(), ref.model.parameters())
            )
        rows[rname] = row
        print(f"{name:7s} {rname:20s} {row}", flush=True)
    return {r: rows[r] for r in chosen if r in rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--only", default="gpt,resnet")
    ap.add_argument("--runners", default=None, help="comma-separated subset of the runners")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: the CPUs, at most 4)")
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "bench_training.json")
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads or max(1, min(4, len(os.sched_getaffinity(0)))))
    all_runners = runners()
    chosen = args.runners.split(",") if args.runners else list(all_runners)
    results = {}
    for name in args.only.split(","):
        results[name] = run_case(CASES[name](), {r: all_runners[r] for r in chosen}, args.steps, name)
    out = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPU(s), torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s), CPU only",
        "steps": args.steps,
        "results": results,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
