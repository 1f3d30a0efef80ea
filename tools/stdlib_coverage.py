#!/usr/bin/env python
"""How much of the standard-library corpus bcfront captures with no graph break.

Runs every function of `tests/stdlib/corpus.py` on each of its inputs under
``bcfront.capture(..., fullgraph=True)`` (strict mode: a native fallback counts
as a break).  A function is captured whole when every input gives what the
native call gives -- its result or its own exception -- without a graph break.
Prints the share (target: at least 80%) and, for the others, the first break.

With ``--torch`` it measures ``torch.compile(..., fullgraph=True,
backend="eager")`` on the same corpus instead, for comparison.

With ``--out PATH`` the numbers and each function's first break go to a JSON file
(`tools/results/stdlib_coverage.json`, `..._torch.json`).

With ``--speed`` it measures #30's last target instead: for every function captured
whole, the median time of a cached call of its capture against calling the same function
natively, on each of its inputs (batches of calls on fresh copies of the arguments,
the copying not timed); it prints the geometric mean of the ratios (all, and the
pure-Python functions alone) and the worst functions (``--out`` writes them,
`tools/results/stdlib_speed.json`).  Beside it, in the same run, the same captures with
their checks run as Python (``checked_links = False``, the reference of the C checks).
What is captured is the corpus entry itself where it
is a Python function, else its Python root (`rooted`), and the native side calls that
same function; the ratio against the C entry itself (without the root) is reported too.
``BCFRONT_PURE_PYTHON=1`` measures the pure-Python call path (no C fast paths).

With ``--processes N`` beside ``--speed``, the timing runs in N fresh processes and each
ratio is the median of theirs (a process's memory layout moves a sub-microsecond call's
ratio by 10-40% on a VM; every ratio in one process alike).

Usage: PYTHONPATH=. python tools/stdlib_coverage.py [-v] [--torch | --speed [--processes N]] [--out PATH]
"""

from __future__ import annotations

import copy
import gc
import heapq
import json
import os
import pathlib
import platform
import statistics
import sys
import time
import types
from collections import Counter

os.environ["BCFRONT_STRICT"] = "1"
ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bcfront  # noqa: E402
from bcfront.errors import GraphBreakError  # noqa: E402
from tests.stdlib.corpus import CORPUS, rooted  # noqa: E402


def _outcome(fn, args):
    try:
        return ("ok", fn(*copy.deepcopy(args)))
    except GraphBreakError:
        raise
    except Exception as e:  # the function's own exception
        if type(e).__module__.startswith("torch._dynamo"):
            raise  # torch.compile's graph break (--torch)
        return ("raise", type(e), str(e))


def _torch_compiled(fn):
    import torch

    torch._dynamo.reset()
    return torch.compile(fn, fullgraph=True, backend="eager")


def first_break(fn, inputs, torch_compile: bool = False) -> str | None:
    """None when every input captures whole and matches native, else why not."""
    for args in inputs:
        if torch_compile:
            cf = _torch_compiled(rooted(fn))
        else:
            cf = bcfront.capture(rooted(fn), fullgraph=True)
        try:
            got = _outcome(cf, args)
        except GraphBreakError as e:
            return f"{e.reason.value}: {e.message}"
        except Exception as e:  # noqa: BLE001 - a strict-mode fallback, or a dynamo break
            lines = str(e).splitlines() or [""]
            return f"{type(e).__name__}: {lines[0][:160]}"
        want = _outcome(fn, args)
        if repr(got) != repr(want):
            return f"differs from native: {got!r} vs {want!r}"[:200]
    return None


def _call_times(fns, inputs, batch: int = 200, repeats: int = 21) -> list[float]:
    """Median seconds per call of each of `fns` over `inputs` (each call on a fresh copy),
    their batches interleaved: a change of the machine's load meets them all alike.  The
    collector is off while a batch runs (the copies made for it would start it inside one
    side's batch, not the other's)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            copies = [copy.deepcopy(args) for _ in range(batch) for args in inputs]
            gc.disable()
            t0 = time.perf_counter()
            for args in copies:
                try:
                    fn(*args)
                except Exception:  # noqa: BLE001 - an input that makes it raise: timed too
                    pass
            elapsed = time.perf_counter() - t0
            gc.enable()
            out.append(elapsed / len(copies))
    return [statistics.median(t) for t in times]


def speed_root(fn):
    """What the speed measure captures for a corpus entry: the function itself where it is
    a Python function (as a user would capture it), else its Python root (`rooted`: a C
    function or an ``lru_cache`` wrapper has no bytecode of its own)."""
    return fn if type(fn) is types.FunctionType else rooted(fn)


def speed(names) -> dict:
    """Per function captured whole, the cached call of its capture against calling the same
    function natively (``ratios``: #30's target), and against calling the corpus entry
    itself (``vs_entry``: differs for a C entry, whose capture has a Python root around it)."""
    ratios, vs_entry, python, python_links = {}, {}, [], {}
    for name in names:
        fn, inputs = CORPUS[name]
        root = speed_root(fn)
        try:
            cf = bcfront.capture(root, fullgraph=True)
            for args in inputs:  # compile an entry per input first: every timed call is cached
                _outcome(cf, args)
        except Exception:  # noqa: BLE001 - captured whole only through its root: measure that
            root = rooted(fn)
            cf = bcfront.capture(root, fullgraph=True)
            for args in inputs:
                _outcome(cf, args)
        if len(cf.entries) == 0:
            continue
        plain = bcfront.capture(root, fullgraph=True)  # the same, its checks as Python (reference)
        plain.checked_links = False
        for args in inputs:
            _outcome(plain, args)
        cached, native, links = _call_times([cf, root, plain], inputs)
        python_links[name] = links / native
        ratios[name] = cached / native
        vs_entry[name] = cached / (native if root is fn else _call_times([fn], inputs)[0])
        if root is fn:
            python.append(name)
    geo = statistics.geometric_mean(ratios.values()) if ratios else float("nan")
    geo_py = statistics.geometric_mean(ratios[n] for n in python) if python else float("nan")
    geo_entry = statistics.geometric_mean(vs_entry.values()) if vs_entry else float("nan")
    geo_links = statistics.geometric_mean(python_links.values()) if python_links else float("nan")
    worst = sorted(ratios.items(), key=lambda kv: -kv[1])
    return {
        "functions": len(ratios),
        "geomean_ratio": round(geo, 3),
        "python_functions": len(python),
        "geomean_ratio_python": round(geo_py, 3),
        "slower_python": sorted(n for n in python if ratios[n] > 1),
        "c_entries": sorted(set(ratios) - set(python)),
        "geomean_vs_entry": round(geo_entry, 3),
        "geomean_python_links": round(geo_links, 3),
        "slower_python_links": sum(1 for r in python_links.values() if r > 1),
        "c_path": bcfront.fast_call.HAVE_C,
        "ratios": dict(worst),
        "vs_entry": vs_entry,
    }


def combine_speeds(runs: list[dict]) -> dict:
    """`speed`'s results of several processes as one: per function the median of its ratios
    (a process's memory layout moves a sub-microsecond call's ratio by 10-40% here, the same
    way for every measurement in it), and in how many processes each pure-Python function
    read slower than native."""
    names = [n for n in runs[0]["ratios"] if all(n in r["ratios"] for r in runs)]
    python = [n for n in names if n not in runs[0]["c_entries"]]
    ratios = {n: statistics.median(r["ratios"][n] for r in runs) for n in names}
    vs_entry = {n: statistics.median(r["vs_entry"][n] for r in runs) for n in names}
    geo = statistics.geometric_mean(ratios.values()) if ratios else float("nan")
    geo_py = statistics.geometric_mean(ratios[n] for n in python) if python else float("nan")
    geo_entry = statistics.geometric_mean(vs_entry.values()) if vs_entry else float("nan")
    slower_in = {n: sum(1 for r in runs if r["ratios"][n] > 1) for n in python}
    return {
        "processes": len(runs),
        "functions": len(ratios),
        "geomean_ratio": round(geo, 3),
        "python_functions": len(python),
        "geomean_ratio_python": round(geo_py, 3),
        "slower_python": sorted(n for n in python if ratios[n] > 1),
        "slower_python_in_processes": {n: k for n, k in sorted(slower_in.items()) if k},
        "slower_python_per_process": [len(r["slower_python"]) for r in runs],
        "c_entries": sorted(set(names) - set(python)),
        "geomean_vs_entry": round(geo_entry, 3),
        "geomean_python_links": round(statistics.median(r["geomean_python_links"] for r in runs), 3),
        "slower_python_links": round(statistics.median(r["slower_python_links"] for r in runs)),
        "c_path": all(r["c_path"] for r in runs),
        "ratios": dict(sorted(ratios.items(), key=lambda kv: -kv[1])),
        "vs_entry": vs_entry,
    }


def speed_in_processes(names, processes: int) -> dict:
    """`speed(names)` in `processes` fresh processes, one after another, combined
    (`combine_speeds`)."""
    import subprocess
    import tempfile

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(processes):
            out = pathlib.Path(tmp) / f"speed{i}.json"
            subprocess.run([sys.executable, __file__, "--speed-child", str(out), *names], check=True)
            runs.append(json.loads(out.read_text()))
    return combine_speeds(runs)


def _seen(xs, x):
    """``x in xs`` in a branch: an entry per answer (a guard on a computed bool)."""
    if x in xs:
        return "seen", xs.count(x)
    xs.append(x)
    return len(xs)


def _push_len(xs, x):
    heapq.heappush(xs, x)
    return len(xs)


def _pop_push(xs, i, x):
    """``xs.pop()``, ``xs.insert``, ``len`` after them."""
    v = xs.pop()
    xs.insert(i, x)
    return v, len(xs)


# corpus entries whose first argument is a list, called on lists of varying lengths and values
# (a heap or a sorted buffer the caller keeps), beside the same input every call; and a few
# functions of the same kind of our own (`OWN`), of the uses the corpus lacks
VARIED = {
    "heapq.heappush": lambda rng, xs: (xs, rng.randint(0, 99)),
    "heapq.heappop": lambda rng, xs: ([*xs, rng.randint(0, 99)],),
    "bisect.bisect": lambda rng, xs: (sorted(xs), rng.randint(0, 99)),
    "bisect.insort": lambda rng, xs: (sorted(xs), rng.randint(0, 99)),
    "x in xs, a branch": lambda rng, xs: (xs, rng.randint(0, 99)),
    "len after heappush": lambda rng, xs: (xs, rng.randint(0, 99)),
    "list.pop, list.insert, len": lambda rng, xs: ([*xs, rng.randint(0, 99)], rng.randint(-9, 9), 5),
}
OWN = {"x in xs, a branch": _seen, "len after heappush": _push_len, "list.pop, list.insert, len": _pop_push}


def varied_speed(calls: int = 200) -> dict:
    """Per `VARIED` entry: the cached call over `calls` lists of 0-8 random ints against the
    native call (median per call, after one pass that makes the entries), its entries,
    graph breaks and native fallbacks (a function past its recompile limit runs natively,
    with a warning), the breaks counted by `bcfront.explain`."""
    import random
    import warnings

    out = {}
    for name, make in VARIED.items():
        fn = OWN[name] if name in OWN else CORPUS[name][0]
        root = speed_root(fn)
        rng = random.Random(0)
        inputs = [make(rng, [rng.randint(0, 99) for _ in range(rng.randint(0, 8))]) for _ in range(calls)]
        cf = bcfront.capture(root)
        with warnings.catch_warnings(record=True) as caught, bcfront.explain.collect() as run:
            warnings.simplefilter("always")
            for args in inputs:
                _outcome(cf, copy.deepcopy(args))
        fallbacks = sum(1 for w in caught if "natively" in str(w.message))
        breaks = sum(b.count for b in run.report().graph_breaks)
        cached, native = _call_times([cf, root], inputs, batch=1)
        ratio = cached / native
        out[name] = {
            "ratio": round(ratio, 3),
            "entries": len(cf.entries),
            "breaks": breaks,
            "fallbacks": fallbacks,
        }
    return out


def main() -> int:
    verbose = "-v" in sys.argv
    if "--speed-child" in sys.argv:  # one process of `speed_in_processes`
        at = sys.argv.index("--speed-child")
        pathlib.Path(sys.argv[at + 1]).write_text(json.dumps(speed(sys.argv[at + 2 :])))
        return 0
    if "--speed" in sys.argv:
        whole = [n for n, (fn, inputs) in sorted(CORPUS.items()) if first_break(fn, inputs) is None]
        processes = int(sys.argv[sys.argv.index("--processes") + 1]) if "--processes" in sys.argv else 1
        data = speed(whole) if processes == 1 else speed_in_processes(whole, processes)
        ratios = data["ratios"]
        slower = sum(1 for r in ratios.values() if r > 1)
        if processes > 1:
            print(
                f"medians of {processes} processes; pure-Python functions slower than native in each "
                f"process: {data['slower_python_per_process']}; "
                f"slower in any: {data['slower_python_in_processes']}"
            )
        print(
            f"cached call / native call, {data['functions']} functions captured whole: "
            f"geomean {data['geomean_ratio']:.2f}x; slower than native: {slower}\n"
            f"  the {data['python_functions']} pure-Python functions: "
            f"{data['geomean_ratio_python']:.2f}x, slower than native: {len(data['slower_python'])}; "
            f"against each corpus entry itself (a C entry "
            f"without its Python root): {data['geomean_vs_entry']:.2f}x; C call: {data['c_path']}\n"
            f"  the same with the checks as Python (checked_links = False), side by side: "
            f"{data['geomean_python_links']:.2f}x; slower than native: {data['slower_python_links']}"
        )
        for name, r in list(ratios.items())[: len(ratios) if verbose else 10]:
            kind = "  (a C entry, through its Python root)" if name in data["c_entries"] else ""
            print(f"  {r:6.2f}x  {name}{kind}")
        data["varied"] = varied_speed()
        print("on lists of varying lengths and values (cached / native, entries, breaks, native fallbacks):")
        for name, v in data["varied"].items():
            print(
                f"  {v['ratio']:6.2f}x  {name}  ({v['entries']} entries, {v['breaks']} breaks, "
                f"{v['fallbacks']} fallbacks)"
            )
        if "--out" in sys.argv:
            out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
            data["ratios"] = {k: round(v, 3) for k, v in ratios.items()}
            data["vs_entry"] = {k: round(v, 3) for k, v in data["vs_entry"].items()}
            out.write_text(json.dumps({"python": platform.python_version(), **data}, indent=2) + "\n")
        return 0
    torch_compile = "--torch" in sys.argv
    broken = {}
    for name, (fn, inputs) in sorted(CORPUS.items()):
        why = first_break(fn, inputs, torch_compile)
        if why is not None:
            broken[name] = why
    whole = len(CORPUS) - len(broken)
    share = whole / len(CORPUS)
    who = "torch.compile" if torch_compile else "bcfront"
    print(f"{who}: captured whole: {whole}/{len(CORPUS)} functions ({share:.0%}); target 80%")
    kinds = Counter(why.split(":")[0] for why in broken.values())
    for kind, n in kinds.most_common():
        print(f"  {n:3d}  {kind}")
    if verbose:
        for name, why in sorted(broken.items()):
            print(f"{name}: {why}")
    if "--out" in sys.argv:
        out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
        data = {"python": platform.python_version(), "who": who, "functions": len(CORPUS)}
        data.update(captured_whole=whole, share=round(share, 4), breaks=dict(sorted(broken.items())))
        out.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
