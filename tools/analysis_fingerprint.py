"""Fingerprint the static analyzer's output, to show a speed change changed nothing.

    python tools/analysis_fingerprint.py --save ref.json [--every N]
    python tools/analysis_fingerprint.py --check ref.json [--every N]

Analyzes every N-th code object of the standard library (the benchmark's walker,
default every 10th) plus every entry of the test corpus, and records for each a
hash of everything the analysis exposes: `FunctionAnalysis.to_dict()` (blocks,
edges, dominators, frontiers, post-dominators, loops, liveness per block, SSA
values, phis and per-instruction uses/defs, aliases) plus, per instruction, the
stack slots read and written and the live variables before and after.  `--check`
names the first code objects whose fingerprint differs from the saved one.
Compare on the same CPython only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (ROOT, os.path.join(ROOT, "tests", "analysis")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from corpus import corpus_code_objects, stdlib_code_objects  # noqa: E402

from bcfront.analysis import FunctionAnalysis  # noqa: E402

_ADDRESS = re.compile(r"at 0x[0-9a-f]+")


def fingerprint(code) -> str:
    """A hash of the whole analysis of `code` (an error's type and text if it fails)."""
    fa = FunctionAnalysis(code)
    try:
        doc = fa.to_dict()
        st, live = fa.stack, fa.liveness
        per_instr = []
        for blk in fa.cfg.blocks.values():
            if not blk.reachable:
                continue
            for ins in blk.instructions:
                o = ins.offset
                per_instr.append(
                    [
                        o,
                        list(st.reads(o)),
                        list(st.writes(o)),
                        sorted(live.live_before(o)),
                        sorted(live.live_after(o)),
                    ]
                )
        doc["per_instruction"] = per_instr
        # argreprs of code objects name their address, which differs between runs, and
        # the corpus's functions name this checkout's path
        text = _ADDRESS.sub("at 0x?", json.dumps(doc, sort_keys=True, default=repr))
        text = text.replace(ROOT, "<checkout>")
    except Exception as exc:  # noqa: BLE001 - an analysis error is part of the output too
        text = f"error: {type(exc).__name__}: {exc}"
    return hashlib.sha256(text.encode()).hexdigest()


def codes(every: int) -> list[tuple[str, object]]:
    out = [(f"corpus:{name}", c) for name, c in corpus_code_objects()]
    for k, c in enumerate(stdlib_code_objects()[::every]):
        out.append((f"stdlib#{k}:{c.co_filename}:{c.co_firstlineno}:{c.co_qualname}", c))
    return out


def main(argv=None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # frozenset constants print in hash order: fix the seed so runs compare
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="PATH")
    g.add_argument("--check", metavar="PATH")
    ap.add_argument("--every", type=int, default=10, help="take every N-th stdlib code object")
    args = ap.parse_args(argv)
    prints = {key: fingerprint(c) for key, c in codes(max(1, args.every))}
    if args.save:
        with open(args.save, "w") as f:
            json.dump({"python": sys.version.split()[0], "every": args.every, "fingerprints": prints}, f)
        print(f"saved {len(prints)} fingerprints to {args.save}")
        return 0
    with open(args.check) as f:
        ref = json.load(f)
    if ref["every"] != args.every or ref["python"] != sys.version.split()[0]:
        print(f"the reference was made with --every {ref['every']} on Python {ref['python']}")
        return 2
    old = ref["fingerprints"]
    diff = [k for k in old.keys() | prints.keys() if old.get(k) != prints.get(k)]
    if not diff:
        print(f"identical: {len(prints)} code objects")
        return 0
    print(f"{len(diff)} of {len(prints)} code objects differ, e.g.:")
    for k in sorted(diff)[:20]:
        print("  ", k)
    return 1


if __name__ == "__main__":
    sys.exit(main())
