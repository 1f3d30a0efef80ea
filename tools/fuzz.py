#!/usr/bin/env python
"""Differential fuzzing campaigns for bcfront.capture.

Generates random programs (bcfront.testing.fuzzgen), runs each eagerly and
captured over several calls with changing inputs (bcfront.testing.differential),
shrinks every mismatch to a small reproducer (bcfront.testing.shrink) and
writes it to the output directory as a standalone script.  The last line of
output is always ``N passed, M failed``.

Examples:
    python tools/fuzz.py --seed 1 --count 500
    python tools/fuzz.py --seed 7 --time 600 --mode tensor
    python tools/fuzz.py --seed 3 --count 50 --mode py --no-shrink
    python tools/fuzz.py --mode tensor --program 20250007     # one program, shrunk
    python tools/fuzz.py --mode py --isolate --count 300      # survives interpreter crashes
    python tools/fuzz.py --seed 5 --mode py --extra all       # opt-in grammar (docs/fuzzing.md)
    python tools/fuzz.py --seed 5 --mode py --extra sets,loops,exc
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tools", "results", "fuzz")
SEED_STRIDE = 1_000_003  # program i of campaign seed s has seed s * SEED_STRIDE + i


class ProgramTimeout(BaseException):
    """Raised by SIGALRM; a BaseException so the runner's `except Exception` lets it through."""


def _alarm(signum, frame):
    raise ProgramTimeout()


def parse(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 2)[2],
    )
    p.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    p.add_argument(
        "--program",
        type=int,
        default=None,
        metavar="SEED",
        help="run (and shrink) just the program with this seed, as in its name 'py-SEED'",
    )
    p.add_argument("--count", type=int, default=None, help="number of programs (default 200 unless --time)")
    p.add_argument(
        "--time", type=float, default=None, help="stop starting new programs after this many seconds"
    )
    p.add_argument(
        "--mode",
        choices=tuple(MODES),
        default="all",
        help="py (no torch), tensor, module (nn.Module forward), both (py and tensor) "
        "or all (default): the modes alternate",
    )
    p.add_argument("--backend", default="auto", help="bcfront.capture backend (default auto)")
    p.add_argument(
        "--device", default=None, help="where tensor programs' inputs live, e.g. cuda (default cpu)"
    )
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per program before it counts as failed"
    )
    p.add_argument(
        "--shrink-budget", type=int, default=300, help="differential runs spent shrinking each failure"
    )
    p.add_argument("--shrink-time", type=float, default=300.0, help="seconds spent shrinking each failure")
    p.add_argument("--no-shrink", action="store_true", help="write failing programs unshrunk")
    p.add_argument("--out", default=DEFAULT_OUT, help="where reproducers go (default tools/results/fuzz)")
    p.add_argument(
        "--isolate",
        action="store_true",
        help="run every program (and every shrinking step) in a child process, so a program "
        "that crashes the interpreter is a failure of kind 'crash', not the end",
    )
    p.add_argument(
        "--extra",
        default="",
        metavar="FEATURES",
        help="opt-in grammar features, comma-separated, or 'all': "
        "sets, opaque, dictiter, classattr, exc, loops, tuples, builtins "
        "(programs are named <mode>x-SEED)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="only the failures and the final line")
    p.add_argument("--child", help=argparse.SUPPRESS)  # internal: run one program, print JSON
    args = p.parse_args(argv)
    if args.child:
        return args
    from bcfront.testing.fuzzextra import parse_features

    try:
        args.extra = parse_features(args.extra)
    except ValueError as e:
        p.error(str(e))
    if args.program is not None:
        if len(MODES[args.mode]) > 1:
            p.error("--program needs --mode py, tensor or module")
        args.count, args.time = 1, None
    elif args.count is None and args.time is None:
        args.count = 200
    if args.mode != "py" and not _has_torch():
        p.error("tensor programs need torch; use --mode py")
    return args


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


MODES = {
    "py": ("py",),
    "tensor": ("tensor",),
    "module": ("module",),
    "both": ("py", "tensor"),
    "all": ("py", "tensor", "module"),
}


def child(path: str, backend: str) -> int:
    """Run the program described in the JSON file `path`; print the verdict as JSON."""
    import bcfront
    from bcfront.testing import differential
    from bcfront.testing.program import CallSpec, from_source

    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    with open(path) as fh:
        d = json.load(fh)
    calls = [CallSpec(tuple(c["args"]), c["grad"], c["before"]) for c in d["calls"]]
    program = from_source(d["source"], calls, name=d["name"], mode=d["mode"], entry=d["entry"])
    verdict = differential.run(program, lambda fn: bcfront.capture(fn, backend=backend))
    m = verdict.mismatch
    print(json.dumps(None if m is None else {f: getattr(m, f) for f in m.__slots__}))
    return 0


def isolated(program, backend: str, timeout: float):
    """`differential.run` in a child process: a Verdict, None on timeout, or a 'crash' mismatch."""
    from bcfront.testing.differential import Mismatch, Verdict

    d = {
        "source": program.source,
        "name": program.name,
        "mode": program.mode,
        "entry": program.entry,
        "calls": [{"args": list(c.args), "grad": c.grad, "before": c.before} for c in program.calls],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(d, fh)
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", fh.name, "--backend", backend],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    finally:
        os.unlink(fh.name)
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
    if done.returncode < 0:  # killed by a signal: SIGSEGV, SIGABRT, ...
        what = f"the interpreter died (signal {-done.returncode}): {tail[0][:200]}"
        return Verdict(program.name, Mismatch(0, "crash", "", "no crash", what), 0)
    if done.returncode != 0:
        raise RuntimeError(f"the child runner failed (exit status {done.returncode}): {tail[0][:300]}")
    m = json.loads(done.stdout.strip().splitlines()[-1])
    return Verdict(program.name, None if m is None else Mismatch(**m), len(program.calls))


def main(argv=None) -> int:
    args = parse(argv)
    if args.child:
        return child(args.child, args.backend)
    sys.stdout.reconfigure(line_buffering=True)  # progress shows up in logs as it happens
    import bcfront
    from bcfront.testing import differential, shrink
    from bcfront.testing.fuzzgen import generate

    made = []  # captured functions of the current program, for the coverage stats

    def capture(fn):
        cf = bcfront.capture(fn, backend=args.backend)
        made.append(cf)
        return cf

    def timed(fn, *a, limit=args.timeout, **k):
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            return fn(*a, **k)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def run_limited(program, capture):
        if args.isolate:
            return isolated(program, args.backend, args.timeout)
        try:
            return timed(differential.run, program, capture)
        except ProgramTimeout:
            return None

    signal.signal(signal.SIGALRM, _alarm)
    # Fake-tensor kernels that fail log a traceback before raising; the raise is what we compare.
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    os.makedirs(args.out, exist_ok=True)
    passed = failed = 0
    kinds = collections.Counter()
    stats = CaptureStats()
    start = time.monotonic()
    i = 0
    while (args.count is None or i < args.count) and (
        args.time is None or time.monotonic() - start < args.time
    ):
        mode = MODES[args.mode][i % len(MODES[args.mode])]
        seed = args.program if args.program is not None else args.seed * SEED_STRIDE + i
        i += 1
        program = generate(seed, mode, device=args.device, extra=args.extra)
        made.clear()
        try:
            verdict = (
                run_limited(program, capture) if args.isolate else timed(differential.run, program, capture)
            )
            if verdict is None:
                raise ProgramTimeout()
            stats.add(made)
        except Exception as e:  # noqa: BLE001 - a harness bug must not end the campaign
            failed += 1
            kinds["harness-error"] += 1
            print(f"FAIL {program.name}: the harness raised {type(e).__name__}: {e}")
            continue
        except ProgramTimeout:
            failed += 1
            kinds["timeout"] += 1
            print(f"FAIL {program.name}: no result within {args.timeout:g}s")
            _write(args.out, program, None, shrink)
            continue
        if verdict.ok:
            passed += 1
            if not args.quiet:
                print(f"ok   {program.name}")
            continue
        failed += 1
        kinds[verdict.mismatch.part] += 1
        small, small_verdict = program, verdict
        if not args.no_shrink:
            small, small_verdict = shrink.shrink_mismatch(
                program,
                capture,
                budget=args.shrink_budget,
                time_limit=args.shrink_time,
                signature=verdict.mismatch.signature,
                run=run_limited,
            )
            if small_verdict is None or small_verdict.ok:  # did not fail again: flaky
                small, small_verdict = program, verdict
                kinds["flaky"] += 1
        path = _write(args.out, small, small_verdict, shrink)
        print(
            f"FAIL {program.name}: {verdict.mismatch.part} (shrunk {program.size()} -> "
            f"{small.size()} statements) -> {os.path.relpath(path)}"
        )
        print(
            "     " + small_verdict.mismatch.describe().replace("\n", "\n     ")
            if small_verdict.mismatch
            else ""
        )
        sys.stdout.flush()
    if kinds:
        print("failures by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    for line in stats.lines():
        print(line)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


class CaptureStats:
    """What the captured side did over a campaign: how much it really captured.

    A program that passes because bcfront ran it natively tests little, so the
    campaign ends with the programs whose root ran natively (an entry that runs
    the whole function natively, or no entry), those where a continuation did,
    the graph breaks by reason and the reasons behind the native entries (from
    the captured functions' entries; not with --isolate, whose children keep
    their captures).
    """

    def __init__(self):
        self.programs = self.root_native = self.some_native = 0
        self.breaks = collections.Counter()
        self.native = collections.Counter()

    def add(self, made) -> None:
        if not made:
            return
        self.programs += 1
        root_native = any(not cf.entries or all(e.native for e in cf.entries) for cf in made)
        from bcfront.explain import family

        some_native = False
        for cf in family(*made):
            for e in cf.entries:
                some_native |= e.native
                for b in e.breaks:
                    self.breaks[b.reason] += b.count
                    if e.native:
                        self.native[b.reason] += b.count
        self.root_native += root_native
        self.some_native += some_native and not root_native

    def lines(self) -> list[str]:
        if not self.programs:
            return []
        out = [
            (
                f"captured: {self.programs} programs; the whole function ran natively in {self.root_native}, "
                f"a continuation did in {self.some_native}"
            )
        ]
        if self.breaks:
            out.append(
                "graph breaks by reason: " + ", ".join(f"{k} {n}" for k, n in self.breaks.most_common(12))
            )
        if self.native:
            out.append(
                "native entries by reason: " + ", ".join(f"{k} {n}" for k, n in self.native.most_common(8))
            )
        return out


def _write(out: str, program, verdict, shrink) -> str:
    path = os.path.join(out, f"{program.name}.py")
    if verdict is None:
        text = f'"""Fuzz program {program.name}: timed out."""\nSOURCE = {program.source!r}\n'
    else:
        text = shrink.reproducer(program, verdict, os.path.relpath(path, ROOT))
    with open(path, "w") as fh:
        fh.write(text)
    return path


if __name__ == "__main__":
    sys.exit(main())
