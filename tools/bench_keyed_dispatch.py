#!/usr/bin/env python
"""The cached call of a function specialized on an int argument, with 1, 5 and 50 entries,
calling the last one: ns per call natively, through the plain chain of exact links
(``keyed_dispatch = False``: the path before the keyed table) and through the C call's
keyed table (`bcfront.keyed_dispatch.keyed_table`), side by side in one run, medians of
repeated batches, interleaved.

Usage: PYTHONPATH=. python tools/bench_keyed_dispatch.py [--repeat N]
"""

from __future__ import annotations

import statistics
import sys
import time

import bcfront


def scaled(x, y):
    return x * 2 + y


def _ns_per_call(fns, args, number: int, repeat: int) -> list[float]:
    """Median ns per call of each of `fns`, their batches interleaved (a busy machine slows
    them alike)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times):
            t0 = time.perf_counter_ns()
            for _ in range(number):
                fn(*args)
            out.append((time.perf_counter_ns() - t0) / number)
    return [statistics.median(t) for t in times]


def _captured(entries: int, keyed: bool):
    cf = bcfront.capture(scaled, recompile_limit=entries + 1, dynamic=False)  # one entry per int
    cf.keyed_dispatch = keyed
    for i in range(entries):
        cf(i, 1)
    assert len(cf.entries) == entries
    return cf


def main() -> int:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 9
    number = 20000
    print(
        f"ns per call of the last entry (median of {repeat} x {number}); C call: {bcfront.fast_call.HAVE_C}"
    )
    print(f"{'entries':>8} {'native':>8} {'chain':>8} {'keyed':>8} {'chain/nat':>10} {'keyed/nat':>10}")
    for n in (1, 5, 50):
        chain, keyed = _captured(n, False), _captured(n, True)
        args = (n - 1, 1)
        assert chain(*args) == keyed(*args) == scaled(*args)
        nat, ch, ke = _ns_per_call([scaled, chain, keyed], args, number, repeat)
        print(f"{n:>8} {nat:>8.1f} {ch:>8.1f} {ke:>8.1f} {ch / nat:>9.2f}x {ke / nat:>9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
