"""Compile the backend's kernels for an NVIDIA GPU without one, and inspect the result.

    python tools/triton_ptx_check.py [--arch 90] [--only NAME,...] [--json]

Generates the GPU flavour of every kernel of the pattern corpus
(``tests/backends/triton_cases.py``, plus the benchmark's shapes), compiles each
candidate launch configuration with Triton's own compiler down to PTX and a
cubin (ptxas runs on the CPU), and reports per kernel: whether it compiled,
registers used, spill bytes, and whether global loads/stores are vectorized.
It is the CPU-side check of the GPU code path (the interpreter runs different
helper code and no layout passes); the tests call `compile_kernel`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

_SHORT = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "i1",
}


@contextlib.contextmanager
def _compiler_mode():
    """Switch Triton's interpreter off (it is read from the environment on use)."""
    old = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = old


def _load_compiled_flavour(source: str, name: str):
    """Import `source` so that @triton.jit builds a JITFunction, not an interpreter one."""
    fd, path = tempfile.mkstemp(suffix=".py", prefix="bcf_gpu_")
    with os.fdopen(fd, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"bcf_gpu_{abs(hash(path))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def compile_kernel(ks, layouts: dict, cfg, arch: int = 90):
    """Triton-compile one generated kernel for ``cuda:sm_<arch>``; returns the CompiledKernel."""
    with _compiler_mode():
        return _compile(ks, layouts, cfg, arch)


def _compile(ks, layouts, cfg, arch):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = _load_compiled_flavour(ks.source, ks.name)
    params = fn.arg_names
    signature, attrs = {}, {}
    for k, (p, buf) in enumerate(zip(params, ks.args)):
        signature[p] = "*" + _SHORT[layouts[buf].dtype]
        attrs[(k,)] = [["tt.divisibility", 16]]  # torch allocations are 16-byte aligned
    blocks = dict(cfg.blocks)
    for p in params[len(ks.args) :]:
        signature[p] = "constexpr"
    src = ASTSource(fn, signature, constexprs=blocks, attrs=attrs)
    options = {"num_warps": cfg.num_warps}
    if ks.checked:  # index asserts are live only in debug builds (as the launcher runs them)
        from bcfront.backends.triton.runtime import CHECKED_OPTIONS

        options.update(CHECKED_OPTIONS)
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)


def ptxas_stats(ptx: str, arch: int = 90) -> dict:
    """Registers and spill bytes reported by the ptxas that ships with Triton."""
    from triton.backends.nvidia.compiler import get_ptxas

    ptxas = get_ptxas(arch).path
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        out = subprocess.run(
            [ptxas, "-v", f"-arch=sm_{arch}a", src, "-o", os.path.join(d, "k.cubin")],
            capture_output=True,
            text=True,
        )
    text = out.stdout + out.stderr
    regs = re.search(r"Used (\d+) registers", text)
    spill = re.findall(r"(\d+) bytes spill (?:stores|loads)", text)
    return {"registers": int(regs.group(1)) if regs else None, "spill_bytes": sum(int(s) for s in spill)}


def vector_width(ptx: str) -> dict:
    """Widest vector global load/store in the PTX (1 = scalar accesses only)."""

    def widest(kind):
        ws = [int(m) for m in re.findall(rf"{kind}\.global(?:\.\w+)*\.v(\d)", ptx)]
        return max(ws, default=1 if f"{kind}.global" in ptx else 0)

    return {"load": widest("ld"), "store": widest("st")}


def kernels_of(fn, inputs):
    """(KernelSource, layouts) for every kernel the backend generates for `fn` (GPU flavour)."""
    import torch

    from bcfront.backends.triton import codegen, fuse, lower
    from bcfront.backends.triton.frontend import trace_aten

    gm, _, _ = trace_aten(torch.fx.symbolic_trace(fn), inputs)
    prog, _ = lower.lower_program(gm)
    out = []
    for st in fuse.schedule(prog):
        if isinstance(st, fuse.KernelPlan):
            out.append((codegen.generate(st, prog.arena, prog.layouts, interpret=False), prog.layouts))
    return out


def fake_inputs(specs):
    """Meta-only inputs (one fake mode for all): shapes of any size cost no memory."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return [torch.empty(shape, dtype=dtype) for shape, dtype in specs]


def all_ops(x, i, m):
    """One of each op family whose GPU spelling differs from the interpreter's."""
    import torch

    return (
        torch.tanh(x)
        + torch.expm1(x)
        + torch.log1p(x.abs())
        + x**2.7
        + torch.copysign(x, -x)
        + torch.erf(x)
        + torch.sign(x)
        + torch.round(x * 3)
        + torch.trunc(x)
        + x.sqrt().rsqrt(),
        torch.div(i, 3, rounding_mode="floor") + torch.remainder(i, -4) + (i << 2) + i.abs(),
        m & (x > 0) | torch.isnan(x),
        x.argmax(-1),
        x.argmin(0),
        x.prod(-1),
        (x > 0).any(-1),
        (x > 0).all(0),
        i.amax(-1),
        x.amin(0),
        torch.div(x, x.floor(), rounding_mode="floor"),
    )


def gather_ops(w, idx, x, i2):
    """Gathers: embedding plus positions into a LayerNorm, index_select, gather,
    advanced indexing with wrapped negatives (kernels with index asserts)."""
    import torch
    import torch.nn.functional as F

    e = F.embedding(idx, w) + F.embedding(idx.flip(0), w)
    return (
        F.layer_norm(e, (w.shape[1],)),
        torch.index_select(x, 1, i2[0]),
        torch.gather(x, 1, i2),
        x[i2[0], :7],
    )


def scan_ops(x, h):
    """cumsum along rows (persistent and looped), a column, and of a half tensor."""
    return x.cumsum(-1), x[:, :64].exp().cumsum(0), h.cumsum(-1)


def _sources(args):
    """(label, fn, fake inputs) for the patterns to check."""
    import torch

    if args.ops:
        yield (
            "all_ops",
            all_ops,
            fake_inputs([((64, 96), torch.float32), ((64, 96), torch.int64), ((64, 96), torch.bool)]),
        )
        yield (
            "gathers",
            gather_ops,
            fake_inputs(
                [
                    ((512, 256), torch.float32),
                    ((4, 64), torch.int64),
                    ((64, 96), torch.float32),
                    ((64, 96), torch.int64),
                ]
            ),
        )
        yield "scans", scan_ops, fake_inputs([((64, 8192), torch.float32), ((32, 1000), torch.bfloat16)])
        return
    if args.corpus:
        from tests.backends.triton_cases import CASES

        dtype = getattr(torch, args.dtype)
        names = [n for n in args.only.split(",") if n] or sorted(CASES)
        for name in names:
            specs = [(tuple(t.shape), t.dtype) for t in CASES[name].inputs(args.n, dtype)]
            yield name, CASES[name].fn, fake_inputs(specs)
        return
    from tools.bench_triton import PATTERNS

    names = [n for n in args.only.split(",") if n] or list(PATTERNS)
    for name in names:
        fn, specs, _ = PATTERNS[name]
        yield name, fn, fake_inputs(specs)


def check(fn, inputs, arch: int = 90, label: str = "") -> list[dict]:
    """Compile every kernel of `fn` for every candidate config; one row per compile."""
    from bcfront.backends.triton.runtime import candidate_configs

    rows = []
    for ks, layouts in kernels_of(fn, inputs):
        for cfg in candidate_configs(ks, interpret=False):
            row = {
                "pattern": label,
                "kernel": ks.name,
                "kind": ks.kind,
                "config": dict(cfg.blocks),
                "num_warps": cfg.num_warps,
            }
            try:
                ck = compile_kernel(ks, layouts, cfg, arch)
                row.update(ptxas_stats(ck.asm["ptx"], arch))
                row["vector"] = vector_width(ck.asm["ptx"])
                row["asserts"] = ck.asm["ptx"].count("__assertfail")  # live device asserts
                row["ok"] = True
            except Exception as e:  # noqa: BLE001 - reported in the kernel's row; the run goes on
                row.update(ok=False, error=f"{type(e).__name__}: {e}"[:600])
            rows.append(row)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arch", type=int, default=90, help="compute capability, e.g. 90 for H100/H200")
    p.add_argument("--only", default="", help="comma-separated pattern names")
    p.add_argument(
        "--corpus", action="store_true", help="check the test corpus (tests/backends/triton_cases.py) instead"
    )
    p.add_argument("--n", type=int, default=4097, help="with --corpus: the varying size")
    p.add_argument("--dtype", default="float32", help="with --corpus: input dtype")
    p.add_argument("--ops", action="store_true", help="check one function using every op family")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        print(
            "triton_ptx_check: unset TRITON_INTERPRET (the compiler cannot run in interpreter mode)",
            file=sys.stderr,
        )
        return 2
    rows = []
    for label, fn, inputs in _sources(args):
        rows += check(fn, inputs, args.arch, label)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            status = (
                f"regs={r['registers']} spill={r['spill_bytes']} vec={r['vector']}"
                if r["ok"]
                else "FAILED " + r["error"]
            )
            print(f"{r['pattern']:<16} {r['kind']:<10} {r['config']!s:<32} w={r['num_warps']:<3} {status}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
