"""Benchmark the Triton backend on memory-bound patterns against eager and torch.compile.

    python tools/bench_triton.py                 # one NVIDIA GPU, < 5 minutes
    python tools/bench_triton.py --cpu-smoke     # CPU, Triton interpreter, tiny sizes
    python tools/bench_triton.py --dynamic       # host cost of a new size (CPU, interpreter)

First measures the device's copy bandwidth (``dst.copy_(src)`` on a large
buffer, counting the read and the write).  Then, for each pattern, times eager
PyTorch, ``torch.compile`` and ``bcfront.backends.triton.compile_fx`` on the
same inputs in the same process, reporting the median time, the achieved
bandwidth (every input read once and every output written once, the minimum
traffic of the pattern; a gather counts the table rows it reads, not the
whole table), its share of the copy bandwidth, and the speedups.
Outputs are checked against eager before timing.  Full results go to
``tools/results/bench_triton.json`` (``--out`` to change), a short table to
stdout.

GPU timing uses ``triton.testing.do_bench`` (CUDA events, L2 flushed between
runs, median).  ``--cpu-smoke`` exists so the script can be exercised without
a GPU: it runs the kernels through Triton's interpreter at tiny sizes, skips
torch.compile unless ``--with-compile`` is given, writes
``tools/results/bench_triton_cpu_smoke.json``, and its numbers are NOT a
performance measurement.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

SMOKE_BANNER = "CPU SMOKE TEST (Triton interpreter, tiny sizes) - NOT A PERFORMANCE MEASUREMENT"


def _parse():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--cpu-smoke",
        action="store_true",
        help="run on CPU through the Triton interpreter at tiny sizes (no timing value)",
    )
    p.add_argument(
        "--with-compile",
        action="store_true",
        help="in --cpu-smoke mode, also run torch.compile (slow on CPU)",
    )
    p.add_argument(
        "--dynamic",
        action="store_true",
        help="measure what a new size costs a dynamic capture (CPU, Triton interpreter)",
    )
    p.add_argument("--only", default="", help="comma-separated pattern names to run")
    p.add_argument("--out", default=None, help="where to write the JSON results")
    p.add_argument(
        "--budget",
        type=float,
        default=270.0,
        help="seconds after which torch.compile baselines are skipped (default 270)",
    )
    return p.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None and (ARGS.cpu_smoke or ARGS.dynamic):
    os.environ["TRITON_INTERPRET"] = "1"  # must precede the first triton import

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# ------------------------------------------------------------------ patterns


def pointwise_bias(x, b):
    return torch.sigmoid(x + b) * x * 0.5 + torch.tanh(x)


def transposed_add(x, y):
    return x + y.t()


def row_sum(x):
    return x.sum(-1)


def col_sum(x):
    return x.sum(0)


def softmax(x):
    return torch.softmax(x, dim=-1)


def rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).type_as(x) * w


def layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def swiglu(a, b):
    return F.silu(a) * b


def rope(x, cos, sin):
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    x1, x2 = x.chunk(2, dim=-1)
    return x * c + torch.cat((-x2, x1), dim=-1) * s


def embedding_ln(idx, wte, wpe, w, b):
    """A GPT input stage: token rows gathered from a table bigger than L2, plus
    positions, into LayerNorm."""
    x = F.embedding(idx, wte) + wpe[: idx.shape[1]]
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def cumsum_rows(x):
    return x.cumsum(-1)


BF16, F32, I64 = torch.bfloat16, torch.float32, torch.int64
INDEX_HIGH = 32768  # int64 inputs are indices drawn from [0, INDEX_HIGH)

# name -> (fn, [(shape, dtype)] per input, tiny shapes for --cpu-smoke)
PATTERNS = {
    "pointwise_bias": (pointwise_bias, [((8192, 8192), F32), ((8192,), F32)], [((8, 64), F32), ((64,), F32)]),
    "transposed_add": (
        transposed_add,
        [((8192, 8192), F32), ((8192, 8192), F32)],
        [((32, 48), F32), ((48, 32), F32)],
    ),
    "row_sum_1024": (row_sum, [((131072, 1024), F32)], [((8, 1024), F32)]),
    "row_sum_131072": (row_sum, [((1024, 131072), F32)], [((2, 8192), F32)]),
    "col_sum": (col_sum, [((4096, 16384), F32)], [((64, 48), F32)]),
    "softmax_4096": (softmax, [((32768, 4096), BF16)], [((4, 4096), BF16)]),
    "softmax_32768": (softmax, [((4096, 32768), BF16)], [((2, 32768), BF16)]),
    "rmsnorm_4096": (rmsnorm, [((32768, 4096), BF16), ((4096,), BF16)], [((4, 4096), BF16), ((4096,), BF16)]),
    "layernorm_4096": (
        layernorm,
        [((32768, 4096), BF16), ((4096,), BF16), ((4096,), BF16)],
        [((4, 4096), BF16), ((4096,), BF16), ((4096,), BF16)],
    ),
    "swiglu": (swiglu, [((16384, 8192), BF16), ((16384, 8192), BF16)], [((8, 256), BF16), ((8, 256), BF16)]),
    "rope": (
        rope,
        [((16, 2048, 32, 128), BF16), ((2048, 128), BF16), ((2048, 128), BF16)],
        [((1, 16, 2, 32), BF16), ((16, 32), BF16), ((16, 32), BF16)],
    ),
    "embedding_ln": (
        embedding_ln,
        [
            ((16, 2048), I64),
            ((INDEX_HIGH, 1024), BF16),
            ((2048, 1024), BF16),
            ((1024,), BF16),
            ((1024,), BF16),
        ],
        [((2, 8), I64), ((INDEX_HIGH, 64), BF16), ((8, 64), BF16), ((64,), BF16), ((64,), BF16)],
    ),
    "cumsum_rows": (cumsum_rows, [((16384, 4096), F32)], [((4, 4096), F32)]),
}


def _embedding_traffic(inputs, outputs) -> int:
    """Indices, the gathered table rows (not the whole table), the rest once."""
    idx, wte = inputs[0], inputs[1]
    rows = idx.numel() * wte.shape[1] * wte.element_size()
    return nbytes([idx] + inputs[2:] + outputs) + rows


def _every_input_once(inputs, outputs) -> int:
    return nbytes(inputs) + nbytes(outputs)


# Patterns whose minimum traffic is not "every input read once".
TRAFFIC = {"embedding_ln": _embedding_traffic}


def make_inputs(specs, device):
    g = torch.Generator(device="cpu").manual_seed(0)
    out = []
    for shape, dtype in specs:
        if dtype == I64:
            out.append(torch.randint(0, INDEX_HIGH, shape, generator=g).to(device))
            continue
        t = (
            torch.randn(shape, generator=g, dtype=torch.float32)
            if device == "cpu"
            else torch.randn(shape, dtype=torch.float32, device=device)
        )
        out.append(t.to(dtype))
    return out


def nbytes(tensors) -> int:
    total = 0
    for t in tensors:
        total += t.numel() * t.element_size()
    return total


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


# ------------------------------------------------------------------ timing


def timer(device):
    if device == "cuda":
        from triton.testing import do_bench

        def run(fn):
            return do_bench(fn, warmup=25, rep=100, return_mode="median")

        return run

    def run_cpu(fn, reps=3):
        fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    return run_cpu


def copy_bandwidth(device, bench) -> float:
    """GB/s of a device-to-device copy, counting read + write."""
    n = (256 << 20) if device == "cuda" else (1 << 20)
    src = torch.empty(n, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src))
    return 2 * src.numel() * 4 / (ms * 1e-3) / 1e9


def check(got, ref) -> bool:
    ok = True
    for g, r in zip(flat(got), flat(ref)):
        tol = 2e-2 if g.dtype in (torch.float16, torch.bfloat16) else 1e-3
        ok &= torch.allclose(g.float(), r.float(), rtol=tol, atol=tol)
    return bool(ok)


def bench_pattern(name, device, smoke, bench, with_compile):
    from bcfront.backends.triton import compile_fx

    fn, specs, tiny = PATTERNS[name]
    inputs = make_inputs(tiny if smoke else specs, device)
    ref = fn(*inputs)
    traffic = TRAFFIC.get(name, _every_input_once)(inputs, flat(ref))
    row = {
        "name": name,
        "shapes": [list(t.shape) for t in inputs],
        "dtypes": [str(t.dtype).removeprefix("torch.") for t in inputs],
        "bytes": traffic,
    }
    t0 = time.perf_counter()
    compiled = compile_fx(torch.fx.symbolic_trace(fn), inputs)
    out = compiled(*inputs)  # first call: compiles, autotunes on GPU
    if device == "cuda":
        torch.cuda.synchronize()
    row["compile_s"] = round(time.perf_counter() - t0, 2)
    row["ok"] = check(out, ref)
    row["kernels"] = [{"name": k.name, "kind": k.kind, "ops": list(k.ops)} for k in compiled.kernels]
    row["fallback_ops"] = list(compiled.fallback_ops)
    times = {"eager": bench(lambda: fn(*inputs)), "bcfront": bench(lambda: compiled(*inputs))}
    if with_compile:
        try:
            tc = torch.compile(fn, dynamic=False)
            row["torch_compile_ok"] = check(tc(*inputs), ref)
            times["torch_compile"] = bench(lambda: tc(*inputs))
        except Exception as e:  # noqa: BLE001 - report, do not abort the whole run
            row["torch_compile_error"] = f"{type(e).__name__}: {e}"[:300]
    row["ms"] = {k: round(v, 5) for k, v in times.items()}
    row["gbps"] = {k: traffic / (v * 1e-3) / 1e9 for k, v in times.items()}
    row["speedup_vs_eager"] = times["eager"] / times["bcfront"]
    if "torch_compile" in times:
        row["speedup_vs_torch_compile"] = times["torch_compile"] / times["bcfront"]
    return row


def table(rows, copy_gbps, smoke) -> str:
    head = f"{'pattern':<16}{'ms':>10}{'GB/s':>9}{'copy%':>7}{'x eager':>9}{'x compile':>10}{'kern':>5}  ok"
    lines = [SMOKE_BANNER] if smoke else []
    lines += [f"copy bandwidth: {copy_gbps:.1f} GB/s", head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['name']:<16}ERROR {r['error']}")
            continue
        gb = r["gbps"]["bcfront"]
        sc = r.get("speedup_vs_torch_compile")
        lines.append(
            f"{r['name']:<16}{r['ms']['bcfront']:>10.4f}{gb:>9.1f}{100 * gb / copy_gbps:>6.0f}%"
            f"{r['speedup_vs_eager']:>9.2f}{(f'{sc:.2f}' if sc else '-'):>10}"
            f"{len(r['kernels']):>5}  {'yes' if r['ok'] else 'NO'}"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------ --dynamic

DYNAMIC = {
    "pointwise": (lambda x, b: torch.relu(x) * b + x.sin(), lambda n: [torch.randn(n, 7), torch.randn(7)]),
    "softmax": (lambda x: torch.softmax(x, -1), lambda n: [torch.randn(3, n)]),
    "layernorm": (
        lambda x, w, b: F.layer_norm(x, (16,), w, b),
        lambda n: [torch.randn(n, 16), torch.randn(16), torch.randn(16)],
    ),
    "matmul": (lambda a, b: a @ b, lambda n: [torch.randn(4, n), torch.randn(n, 3)]),
    "view_chain": (lambda x: x.reshape(x.size(0), 3, 2).transpose(1, 2) + 1, lambda n: [torch.randn(n, 6)]),
}


def bench_dynamic(sizes=tuple(range(8, 28))) -> int:
    """For each function, a ``dynamic=True`` triton capture is warmed up on two sizes,
    then called on each new size twice: the first call's extra time over the second
    (same size, everything cached) is what the new size cost the host.  Host lowerings
    are counted at ``lower_program`` (present in every version of the backend), so the
    script measures older trees the same way."""
    import bcfront
    from bcfront.backends.triton import compile as tc

    calls = []
    real = tc.lower_program
    tc.lower_program = lambda gm: calls.append(1) or real(gm)
    rows = []
    for name, (fn, make) in DYNAMIC.items():
        cf = bcfront.capture(fn, backend="triton", dynamic=True)
        for n in (4, 5):
            cf(*make(n))
        before, first, again = len(calls), [], []
        for n in sizes:
            args = make(n)
            t0 = time.perf_counter()
            cf(*args)
            t1 = time.perf_counter()
            cf(*args)
            first.append(t1 - t0)
            again.append(time.perf_counter() - t1)
        extra = statistics.median(f - a for f, a in zip(first, again))
        rows.append((name, len(calls) - before, statistics.median(first), statistics.median(again), extra))
    print(f"{len(sizes)} new sizes per function (CPU, Triton interpreter), median ms")
    print(f"{'function':<12} {'lowerings':>9} {'new size':>9} {'repeat':>8} {'extra':>8}")
    for name, low, f, a, e in rows:
        print(f"{name:<12} {low:>9} {f * 1e3:>9.2f} {a * 1e3:>8.2f} {e * 1e3:>8.2f}")
    return 0


def main():
    args = ARGS
    if args.dynamic:
        return bench_dynamic()
    smoke = args.cpu_smoke
    if not smoke and not torch.cuda.is_available():
        print(
            "bench_triton: no CUDA GPU found; use --cpu-smoke to exercise the script on CPU", file=sys.stderr
        )
        return 2
    device = "cpu" if smoke else "cuda"
    bench = timer(device)
    start = time.perf_counter()
    copy_gbps = copy_bandwidth(device, bench)
    names = [n for n in args.only.split(",") if n] or list(PATTERNS)
    unknown = [n for n in names if n not in PATTERNS]
    if unknown:
        print(
            f"bench_triton: unknown pattern(s) {', '.join(unknown)}; choose from {', '.join(PATTERNS)}",
            file=sys.stderr,
        )
        return 2
    rows = []
    for name in names:
        with_compile = (args.with_compile or not smoke) and time.perf_counter() - start < args.budget
        try:
            row = bench_pattern(name, device, smoke, bench, with_compile)
        except Exception as e:  # noqa: BLE001 - reported in the pattern's row; the run goes on
            row = {"name": name, "error": f"{type(e).__name__}: {e}"[:500]}
        if "gbps" in row:
            row["share_of_copy"] = row["gbps"]["bcfront"] / copy_gbps
        rows.append(row)
        print(f"  {name}: done ({time.perf_counter() - start:.0f}s)", file=sys.stderr)
    import triton

    result = {
        "note": SMOKE_BANNER if smoke else "GPU measurement",
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "device": "cpu (interpreter)" if smoke else torch.cuda.get_device_name(0),
        "versions": {
            "torch": torch.__version__,
            "triton": triton.__version__,
            "python": platform.python_version(),
        },
        "copy_gbps": copy_gbps,
        "wall_s": round(time.perf_counter() - start, 1),
        "patterns": rows,
    }
    out = args.out or os.path.join(
        ROOT, "tools", "results", "bench_triton_cpu_smoke.json" if smoke else "bench_triton.json"
    )
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(table(rows, copy_gbps, smoke))
    print(f"results: {out}  ({result['wall_s']}s)")
    return 0 if all(r.get("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
