"""Benchmark the static analyzer on every code object of the standard library.

    python tools/bench_analysis.py [--limit N] [--chunk N] [--out PATH] [--json] [--by-kind]
                                   [--vs-dis N]

Compiles every ``.py`` file of this interpreter's standard library (sorted
walk, ``site-packages`` left out; the walker is the test corpus's), collects
all code objects (nested ones too), and times each analysis phase over all of them through the facade
(`bcfront.analysis.FunctionAnalysis`, whose properties cache each phase, so a
phase's time excludes the phases it builds on).  Phases the facade does not
have yet are skipped with a note.

Reports code objects per second per phase and for the whole analysis, and
the ratio of the whole analysis's time (and of the phases issue #2's target
names: all but post-dominators) to networkx's
``immediate_dominators`` + ``dominance_frontiers`` alone on the same CFGs
(networkx graphs are built outside the timing).  Times are CPU seconds of
this process (`time.process_time`), which a busy machine disturbs less than
wall time.  Writes ``tools/results/bench_analysis.json``.

With ``--vs-dis N`` the analysis is also timed against merely listing the instructions,
``list(dis.get_instructions(code))``, on every N-th code object (``vs_dis`` in the JSON):
each code object through every phase (as `bcfront.analyze` and then reading every
result would), and through the target's phases, each chunk's three loops in
alternating order, with the collector on and off as above.

With ``--by-kind`` the code objects are also timed in three groups apart (one block
without a handler, several blocks without one, with an exception handler), whose
ratios differ: fixed costs weigh most in the first, SSA's handler work in the last.

Each chunk of code objects is timed twice, in alternating order: with the cyclic
collector on (the headline figures, and the target's) and with it off during
every timed loop of both sides, as `timeit` does (``collector_off``).  The two
differ by the collections that allocations trigger inside a timed loop: the
analysis keeps its results (the facade caches every phase) and the collector
traverses them there -- in the decode phase, where the facade first makes the
instance dict with the collector on -- while networkx's results are dropped at
once.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (ROOT, os.path.join(ROOT, "tests", "analysis")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from corpus import stdlib_code_objects, stdlib_files  # noqa: E402  (the test corpus's walker)

from bcfront.analysis import FunctionAnalysis  # noqa: E402

# (phase, FunctionAnalysis attribute); each is computed after the ones before it.
PHASES = [
    ("decode", "bytecode"),
    ("cfg", "cfg"),
    ("dominators", "idom"),
    ("frontiers", "dominance_frontier"),
    ("post_dominators", "post_idom"),
    ("loops", "loops"),
    ("stack", "stack"),
    ("liveness", "liveness"),
    ("ssa", "ssa"),
]
CORE = ("decode", "cfg", "dominators", "frontiers", "post_dominators", "loops")
# The phases issue #2's target names ("the full analysis (decode, CFG, dominators,
# frontiers, loops, liveness, SSA)"): every phase but post-dominators.  The stack
# phase counts, as SSA's input (SSA renames stack slots by their depths).
TARGET_PHASES = ("decode", "cfg", "dominators", "frontiers", "loops", "stack", "liveness", "ssa")


def available_phases() -> tuple[list[tuple[str, str]], list[str]]:
    """Phases whose module exists, and notes about the ones skipped."""
    import importlib

    have, notes = [], []
    for phase, attr in PHASES:
        if phase in ("loops", "stack", "liveness", "ssa"):
            try:
                importlib.import_module(f"bcfront.analysis.{phase}")
            except ImportError:
                notes.append(f"{phase}: skipped (bcfront.analysis.{phase} does not exist yet)")
                continue
        have.append((phase, attr))
    return have, notes


def _time_chunk(codes: list[types.CodeType], phases, collector: bool, tally: dict) -> None:
    """Time each phase over `codes` (each phase's loop after a full collection), then
    networkx on the same CFGs, adding the CPU seconds to `tally`.  With `collector`
    False the cyclic collector is off during each timed loop (as `timeit` does): the
    CPU time of the computation alone.  With it on, a collection that an allocation
    triggers inside a loop is counted there: the analysis retains its results (the
    facade caches them), networkx's are dropped at once."""
    import networkx as nx

    clock = time.process_time
    fas = [FunctionAnalysis(c) for c in codes]
    ok = fas
    for phase, attr in phases:
        gc.collect()
        if not collector:
            gc.disable()
        survivors = []
        t = clock()
        for fa in ok:
            try:
                getattr(fa, attr)
            except Exception as exc:  # noqa: BLE001 - report it; the object leaves later phases
                if collector:  # (each code object is counted once)
                    tally["failed"][phase] += 1
                    if len(tally["errors"][phase]) < 20:
                        tally["errors"][phase].append(
                            f"{fa.code.co_filename}:{fa.code.co_firstlineno} "
                            f"{fa.code.co_qualname}: {type(exc).__name__}: {exc}"
                        )
                continue
            survivors.append(fa)
        tally["totals"][phase] += clock() - t
        gc.enable()
        ok = survivors
    graphs = []
    for fa in fas:
        if "cfg" not in fa.__dict__:
            continue
        cfg = fa.cfg
        if collector:
            tally["blocks"] += len(cfg.blocks)
            tally["instrs"] += len(fa.bytecode.offsets)
        if not cfg.blocks:
            continue
        g = nx.DiGraph()
        g.add_nodes_from(cfg.blocks)
        g.add_edges_from((e.src, e.dst) for e in cfg.edges)
        graphs.append((g, cfg.entry))
    del fas, ok
    gc.collect()
    if not collector:
        gc.disable()
    t = clock()
    for g, entry in graphs:
        nx.immediate_dominators(g, entry)
        nx.dominance_frontiers(g, entry)
    tally["nx"] += clock() - t
    gc.enable()


def _ratios(totals: dict, nx_time: float) -> dict:
    """The whole analysis, the phases issue #2's target names, the control-flow core and
    dominators + frontiers, each over networkx's time."""

    def over(ps):
        return round(sum(totals.get(p, 0) for p in ps) / nx_time, 3) if nx_time else None

    return {
        "ratio_full_to_networkx": over(totals),
        "ratio_target_phases_to_networkx": over(TARGET_PHASES),
        # the control-flow core (decode .. loops) apart from the dataflow phases after it
        "ratio_core_to_networkx": over(CORE),
        "ratio_dominance_to_networkx": over(("dominators", "frontiers")),
    }


def _new_tally(phases) -> dict:
    """What `_time_chunk` adds to with the collector on: seconds per phase and for
    networkx, failures and their samples per phase, blocks and instructions."""
    return {
        "totals": {p: 0.0 for p, _ in phases},
        "nx": 0.0,
        "errors": {p: [] for p, _ in phases},
        "failed": {p: 0 for p, _ in phases},
        "blocks": 0,
        "instrs": 0,
    }


def run(codes: list[types.CodeType], chunk: int) -> dict:
    phases, notes = available_phases()
    on = _new_tally(phases)
    off = {"totals": {p: 0.0 for p, _ in phases}, "nx": 0.0}
    for k, lo in enumerate(range(0, len(codes), chunk)):
        # both ways on every chunk, in alternating order (the machine drifts)
        for collector in (True, False) if k % 2 == 0 else (False, True):
            _time_chunk(codes[lo : lo + chunk], phases, collector, on if collector else off)
    totals, nx_time, errors, failed = on["totals"], on["nx"], on["errors"], on["failed"]
    blocks, instrs = on["blocks"], on["instrs"]
    n = len(codes)
    full = sum(totals.values())
    rate = {p: (n / s if s else None) for p, s in totals.items()}
    return {
        "python": "{}.{}.{}".format(*sys.version_info[:3]),
        "code_objects": n,
        "blocks": blocks,
        "instructions": instrs,
        "clock": "process_time (CPU seconds)",
        "phases": {
            p: {
                "seconds": round(totals[p], 4),
                "code_objects_per_second": round(rate[p], 1) if rate[p] else None,
                "errors": failed[p],
            }
            for p, _ in phases
        },
        "skipped": notes,
        "full": {"seconds": round(full, 4), "code_objects_per_second": round(n / full, 1) if full else None},
        "networkx": {
            "what": "immediate_dominators + dominance_frontiers",
            "seconds": round(nx_time, 4),
            "code_objects_per_second": round(n / nx_time, 1) if nx_time else None,
        },
        "target_phases": list(TARGET_PHASES),
        **_ratios(totals, nx_time),
        # the same run with the collector off in every timed loop (both sides)
        "collector_off": {
            "phases": {p: round(v, 4) for p, v in off["totals"].items()},
            "full_seconds": round(sum(off["totals"].values()), 4),
            "networkx_seconds": round(off["nx"], 4),
            **_ratios(off["totals"], off["nx"]),
        },
        "target_ratio": 3.0,
        "error_samples": {p: e for p, e in errors.items() if e},
    }


def _timed(work, collector: bool) -> float:
    """CPU seconds of `work()`, after a full collection; the collector off meanwhile
    unless `collector`."""
    gc.collect()
    if not collector:
        gc.disable()
    t = time.process_time()
    work()
    dt = time.process_time() - t
    gc.enable()
    return dt


def _through(codes: list[types.CodeType], attrs: list[str], collector: bool) -> float:
    """CPU seconds of taking each code object through the phases `attrs` in turn (the
    `FunctionAnalysis` objects made outside the timing)."""
    fas = [FunctionAnalysis(c) for c in codes]

    def work() -> None:
        for fa in fas:
            for a in attrs:
                getattr(fa, a)

    return _timed(work, collector)


def _listing(codes: list[types.CodeType], collector: bool) -> float:
    import dis

    return _timed(lambda: [list(dis.get_instructions(c)) for c in codes], collector)


def run_vs_dis(codes: list[types.CodeType], chunk: int) -> dict:
    """CPU seconds of the analysis (every phase, and the target's phases, each code
    object through them in turn) and of ``list(dis.get_instructions(code))`` over `codes`,
    chunk by chunk in alternating order, collector on and off; and their ratios."""
    phases, _ = available_phases()
    every = [attr for _, attr in phases]
    target = [attr for p, attr in phases if p in TARGET_PHASES]
    out: dict = {"code_objects": len(codes)}
    for collector in (True, False):
        tally = {"all": 0.0, "target": 0.0, "dis": 0.0}
        for k, lo in enumerate(range(0, len(codes), chunk)):
            part = codes[lo : lo + chunk]
            order = ["all", "target", "dis"] if k % 2 == 0 else ["dis", "target", "all"]
            for key in order:
                if key == "dis":
                    tally[key] += _listing(part, collector)
                else:
                    tally[key] += _through(part, every if key == "all" else target, collector)
        d = tally["dis"]
        out["collector_on" if collector else "collector_off"] = {
            "all_phases_seconds": round(tally["all"], 4),
            "target_phases_seconds": round(tally["target"], 4),
            "dis_seconds": round(d, 4),
            "ratio_all_phases_to_dis": round(tally["all"] / d, 3) if d else None,
            "ratio_target_phases_to_dis": round(tally["target"] / d, 3) if d else None,
        }
    out["target_ratio"] = 1.2
    return out


# --by-kind: the code objects in three groups, whose costs differ in kind
KINDS = ("one block", "several blocks", "with a handler")


def kind_of(code: types.CodeType) -> str:
    """A code object's group: with an exception handler, else by its number of blocks."""
    if code.co_exceptiontable:
        return "with a handler"
    return "one block" if len(FunctionAnalysis(code).cfg.blocks) == 1 else "several blocks"


def run_by_kind(codes: list[types.CodeType], chunk: int) -> dict:
    """Each group of `KINDS` timed apart (collector on, as the headline): its code objects,
    instructions, target phases' seconds, networkx's seconds and their ratio."""
    phases, _ = available_phases()
    groups: dict[str, list] = {k: [] for k in KINDS}
    for c in codes:
        groups[kind_of(c)].append(c)
    gc.collect()
    out = {}
    for kind, cs in groups.items():
        tally = _new_tally(phases)
        for lo in range(0, len(cs), chunk):
            _time_chunk(cs[lo : lo + chunk], phases, True, tally)
        totals = tally["totals"]
        out[kind] = {
            "code_objects": len(cs),
            "instructions": tally["instrs"],
            # (a code object a phase fails on is left out of the later phases)
            "errors": {p: n for p, n in tally["failed"].items() if n},
            "phases": {p: round(v, 4) for p, v in totals.items()},
            "target_phases_seconds": round(sum(totals.get(p, 0) for p in TARGET_PHASES), 4),
            "networkx_seconds": round(tally["nx"], 4),
            "ratio_target_phases_to_networkx": _ratios(totals, tally["nx"])[
                "ratio_target_phases_to_networkx"
            ],
        }
    return out


def cpu_info(path: str = "/proc/cpuinfo") -> dict:
    """The first processor's vendor, family, model, stepping and name from `path` (empty
    where there is none).  Under a hypervisor the name is often generic ("AMD EPYC"):
    family and model tell the generations apart, and the ratios above depend on them
    (the same tree measured 2.9x on one such machine and 2.6x on another)."""
    keys = {
        "vendor_id": "vendor",
        "cpu family": "family",
        "model": "model",
        "stepping": "stepping",
        "model name": "name",
    }
    out: dict = {}
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    break  # the end of the first processor's entry
                key, _, value = line.partition(":")
                key = key.strip()
                if key in keys:
                    out[keys[key]] = value.strip()
    except OSError:
        pass
    return out


def environment() -> dict:
    """What the figures depend on besides the tree: the machine, its CPU, the kernel
    and networkx's version (the other side of every ratio)."""
    import networkx as nx

    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
        "cpu": cpu_info(),
        "networkx_version": nx.__version__,
    }


def table(res: dict) -> str:
    lines = [
        (
            f"CPython {res['python']}, networkx {res.get('networkx_version', '?')}: "
            f"{res['code_objects']} code objects, "
            f"{res['blocks']} blocks, {res['instructions']} instructions ({res['clock']})"
        ),
        f"{'phase':<16}{'seconds':>10}{'codes/s':>12}{'errors':>8}",
    ]
    cpu = res.get("cpu")
    if cpu:
        lines.insert(
            1,
            f"cpu: {cpu.get('name', '?')} (family {cpu.get('family', '?')}, "
            f"model {cpu.get('model', '?')}, stepping {cpu.get('stepping', '?')}); "
            f"{res.get('machine', '')}",
        )
    for p, r in res["phases"].items():
        lines.append(
            f"{p:<16}{r['seconds']:>10.3f}{r['code_objects_per_second'] or 0:>12.0f}{r['errors']:>8}"
        )
    f, x = res["full"], res["networkx"]
    lines.append(f"{'full analysis':<16}{f['seconds']:>10.3f}{f['code_objects_per_second'] or 0:>12.0f}")
    lines.append(f"{'networkx idom+df':<16}{x['seconds']:>10.3f}{x['code_objects_per_second'] or 0:>12.0f}")
    lines.append(
        f"full / networkx = {res['ratio_full_to_networkx']}; the issue's phases "
        f"(all but post_dominators) / networkx = {res['ratio_target_phases_to_networkx']} "
        f"(target <= {res['target_ratio']}); "
        f"decode..loops / networkx = {res['ratio_core_to_networkx']}; "
        f"dominators+frontiers / networkx = {res['ratio_dominance_to_networkx']}"
    )
    off = res["collector_off"]
    lines.append(
        f"collector off in the timed loops: full {off['full_seconds']:.3f} s, networkx "
        f"{off['networkx_seconds']:.3f} s; full / networkx = "
        f"{off['ratio_full_to_networkx']}; the issue's phases / networkx = "
        f"{off['ratio_target_phases_to_networkx']}"
    )
    for kind, g in res.get("by_kind", {}).items():
        lines.append(
            f"{kind:<16}{g['code_objects']:>7} code objects, {g['instructions']:>8} "
            f"instructions: the issue's phases {g['target_phases_seconds']:.3f} s, "
            f"networkx {g['networkx_seconds']:.3f} s, ratio "
            f"{g['ratio_target_phases_to_networkx']}" + (f", errors {g['errors']}" if g.get("errors") else "")
        )
    vd = res.get("vs_dis")
    if vd:
        on, off = vd["collector_on"], vd["collector_off"]
        lines.append(
            f"against list(dis.get_instructions(code)), {vd['code_objects']} code objects: every "
            f"phase {on['ratio_all_phases_to_dis']}x, the issue's phases "
            f"{on['ratio_target_phases_to_dis']}x (target <= {vd['target_ratio']}); collector off "
            f"{off['ratio_all_phases_to_dis']}x / {off['ratio_target_phases_to_dis']}x"
        )
    lines.extend(f"note: {n}" for n in res["skipped"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--limit", type=int, default=None, help="analyze only the first N code objects (default: all)"
    )
    ap.add_argument(
        "--chunk",
        type=int,
        default=500,
        help="code objects analyzed together before their results are dropped",
    )
    ap.add_argument(
        "--out",
        default=os.path.join(ROOT, "tools", "results", "bench_analysis.json"),
        help="where to write the JSON results",
    )
    ap.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    ap.add_argument(
        "--by-kind",
        action="store_true",
        help="also time one-block code objects, other handler-free ones and "
        "those with an exception handler apart (`by_kind` in the JSON)",
    )
    ap.add_argument(
        "--vs-dis",
        type=int,
        default=None,
        metavar="N",
        help="also time the analysis against list(dis.get_instructions(code)) on every "
        "N-th code object (`vs_dis` in the JSON)",
    )
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be at least 1")
    codes = stdlib_code_objects(limit=args.limit)
    res = run(codes, max(1, args.chunk))
    if args.by_kind:
        res["by_kind"] = run_by_kind(codes, max(1, args.chunk))
    if args.vs_dis:
        res["vs_dis"] = run_vs_dis(codes[:: max(1, args.vs_dis)], max(1, args.chunk))
    res["stdlib_files"] = len(stdlib_files())
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res.update(environment())
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print(json.dumps(res, indent=2) if args.json else table(res))
    if not args.json:
        print(f"wrote {os.path.relpath(args.out, os.getcwd())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
