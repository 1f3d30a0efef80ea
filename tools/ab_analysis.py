"""A/B timing of the analyzer: a git revision against the working tree, in one process.

    python tools/ab_analysis.py [REF] [--every N] [--reps N] [--chunk N]

Copies ``bcfront`` as committed at REF (default HEAD, through ``git archive``) and as
it is in the working tree into a temporary folder, as the packages ``bcfront_a`` and
``bcfront_b`` (the analyzer imports only relatively, so both load side by side), and
times the phases issue #2's target names through each one's `FunctionAnalysis` on
every N-th standard-library code object.  Each chunk is timed for both sides in
alternating order, `reps` times, so that the machine's drift falls on both alike;
CPU seconds (`time.process_time`), with a full collection before every phase.

Prints each phase's seconds for A and B and the ratio B/A (below 1: the working tree
is faster).  Separate benchmark runs on a shared machine drift by more than the
changes this is for; compare only within one run of this tool.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# (bench_analysis puts the repository and the test corpus on the path)
from bench_analysis import PHASES as _BENCH_PHASES
from bench_analysis import ROOT, TARGET_PHASES
from corpus import stdlib_code_objects  # the test corpus's walker

# the facade attribute of each of the target's phases, in the benchmark's order
PHASES = tuple(attr for phase, attr in _BENCH_PHASES if phase in TARGET_PHASES)


def stage(ref: str, into: str) -> None:
    """`into`/bcfront_a: the package at `ref`; `into`/bcfront_b: the working tree's."""
    data = subprocess.run(
        ["git", "-C", ROOT, "archive", "--format=tar", ref, "bcfront"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(os.path.join(into, "a"), filter="data")
    os.rename(os.path.join(into, "a", "bcfront"), os.path.join(into, "bcfront_a"))
    shutil.copytree(
        os.path.join(ROOT, "bcfront"),
        os.path.join(into, "bcfront_b"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )


def compare(codes, every: int = 1, reps: int = 2, chunk: int = 1000) -> dict:
    """{"a": {phase: seconds}, "b": {...}} over `codes[::every]` (both packages staged
    and importable)."""
    sides = {k: importlib.import_module(f"bcfront_{k}.analysis").FunctionAnalysis for k in "ab"}
    codes = codes[::every]
    clock = time.process_time
    total = {k: dict.fromkeys(PHASES, 0.0) for k in sides}
    for r in range(reps):
        for n, lo in enumerate(range(0, len(codes), chunk)):
            part = codes[lo : lo + chunk]
            for k in "ab" if (n + r) % 2 == 0 else "ba":
                fas = [sides[k](c) for c in part]
                for p in PHASES:
                    gc.collect()
                    t = clock()
                    for fa in fas:
                        getattr(fa, p)
                    total[k][p] += clock() - t
                del fas
    return total


def report(total: dict) -> str:
    a, b = total["a"], total["b"]
    lines = [f"{'phase':<20}{'A s':>9}{'B s':>9}{'B/A':>8}"]
    for p in PHASES:
        lines.append(f"{p:<20}{a[p]:>9.3f}{b[p]:>9.3f}{b[p] / a[p] if a[p] else 0:>8.3f}")
    sa, sb = sum(a.values()), sum(b.values())
    lines.append(f"{'target phases':<20}{sa:>9.3f}{sb:>9.3f}{sb / sa if sa else 0:>8.3f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref", nargs="?", default="HEAD", help="git revision for side A")
    ap.add_argument("--every", type=int, default=2, help="every N-th code object")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=1000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bcfront_ab_") as tmp:
        stage(args.ref, tmp)
        sys.path.insert(0, tmp)
        codes = list(stdlib_code_objects())
        print(
            f"A = {args.ref}, B = working tree; {len(codes[:: args.every])} code objects, "
            f"{args.reps} reps (CPU seconds)"
        )
        print(report(compare(codes, args.every, args.reps, args.chunk)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
