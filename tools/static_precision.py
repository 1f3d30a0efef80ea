"""Precision and recall of the static break predictor against the breaks capture really takes.

    python tools/static_precision.py [--out tools/results/static_precision.json] [FILES...]

For each example script (default: examples/corpus/*.py and examples/gpt.py)
this compares three sets of source lines:

* *predicted* — `bcfront-explain --static FILE` (the file is not run), at
  several confidence thresholds;
* *actual* — the graph breaks in `bcfront-explain --json FILE` (the file runs
  under capture; each break's file and line);
* *labelled* — the ``# expect-break:`` comments written by hand in the corpus.

A prediction is a true positive when capture broke on the same line of the
same file.  Precision = TP / predicted, recall = TP / actual, summed over all
files (micro-averaged).  Without a working capture (no `bcfront.capture`, or
no torch) the actual breaks are unknown: the tool then scores against the
labels only and says so in the result.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bcfront.cli.static import predict_file  # noqa: E402

THRESHOLDS = (0.3, 0.5, 0.7, 0.9)
DEFAULT_OUT = REPO / "tools" / "results" / "static_precision.json"


def default_files() -> list[Path]:
    return sorted((REPO / "examples" / "corpus").glob("*.py")) + [REPO / "examples" / "gpt.py"]


def labelled(path: Path) -> set[int]:
    return {i for i, line in enumerate(path.read_text().splitlines(), 1) if "# expect-break:" in line}


def predicted(path: Path) -> dict[int, tuple[float, str]]:
    """line -> (highest confidence, reason) of the static predictions."""
    out: dict[int, tuple[float, str]] = {}
    for p in predict_file(str(path)).predictions:
        if p.lineno and (p.lineno not in out or p.confidence > out[p.lineno][0]):
            out[p.lineno] = (p.confidence, p.reason)
    return out


def actual(path: Path, timeout: int = 600) -> tuple[dict[int, str] | None, str]:
    """line -> reason of the breaks capture took running `path`; (None, why) if it cannot run."""
    r = subprocess.run(
        [sys.executable, "-m", "bcfront.cli.explain", "--json", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "100"},
    )
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        return None, f"no report (exit {r.returncode}): {r.stderr.strip()[-300:]}"
    if r.returncode != 0:
        return None, f"the script failed under capture (exit {r.returncode}): {r.stderr.strip()[-300:]}"
    if not data["functions"]:
        return None, "no captured function ran (bcfront.capture not available?)"
    real = os.path.realpath(path)
    out = {}
    for fn in data["functions"]:
        for b in fn["graph_breaks"]:
            if b["filename"] and os.path.realpath(b["filename"]) == real and b["lineno"]:
                out[b["lineno"]] = b["reason"]
    return out, "ok"


def score(pred: set[int], truth: set[int]) -> dict:
    tp = len(pred & truth)
    return {
        "tp": tp,
        "fp": len(pred - truth),
        "fn": len(truth - pred),
        "precision": round(tp / len(pred), 4) if pred else None,
        "recall": round(tp / len(truth), 4) if truth else None,
    }


def total(rows: list[dict]) -> dict:
    tp, fp, fn = (sum(r[k] for r in rows) for k in ("tp", "fp", "fn"))
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
    }


def evaluate(files: list[Path], run: bool = True) -> dict:
    per_file, by_t_actual, by_t_label = [], {t: [] for t in THRESHOLDS}, {t: [] for t in THRESHOLDS}
    capture_ok = True
    for path in files:
        pred = predicted(path)
        labels = labelled(path)
        act, status = actual(path) if run else (None, "not run")
        capture_ok &= act is not None
        entry = {
            "file": str(path.relative_to(REPO)),
            "labelled": sorted(labels),
            "actual": None if act is None else {str(k): v for k, v in sorted(act.items())},
            "actual_status": status,
            "predicted": {str(k): {"confidence": c, "reason": r} for k, (c, r) in sorted(pred.items())},
        }
        for t in THRESHOLDS:
            lines = {k for k, (c, _) in pred.items() if c >= t}
            by_t_label[t].append(score(lines, labels))
            if act is not None:
                by_t_actual[t].append(score(lines, set(act)))
        if act is not None:
            entry["labels_vs_actual"] = score(labels, set(act))
            entry["reason_agreement"] = {
                str(k): {"static": pred[k][1], "capture": act[k]} for k in sorted(set(pred) & set(act))
            }
        per_file.append(entry)
    result = {
        "python": platform.python_version(),
        "files": len(files),
        "capture_available": capture_ok,
        "against_actual": {str(t): total(rows) for t, rows in by_t_actual.items()} if capture_ok else None,
        "against_labels": {str(t): total(rows) for t, rows in by_t_label.items()},
        "per_file": per_file,
    }
    if capture_ok:
        result["labels_vs_actual"] = total([e["labels_vs_actual"] for e in per_file])
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("files", nargs="*", type=Path, help="scripts (default: the example corpus)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    ap.add_argument(
        "--no-run", action="store_true", help="score against the hand labels only; do not run the scripts"
    )
    args = ap.parse_args(argv)
    files = [f.resolve() for f in args.files] or default_files()
    result = evaluate(files, run=not args.no_run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for title, key in (
        ("against actual breaks", "against_actual"),
        ("against hand labels", "against_labels"),
    ):
        table = result[key]
        if table is None:
            print(
                f"{title}: capture not available "
                f"({next(e['actual_status'] for e in result['per_file'] if e['actual'] is None)})"
            )
            continue
        print(title)
        for t, s in table.items():
            print(
                f"  confidence >= {t}: precision {s['precision']}, recall {s['recall']} "
                f"(tp {s['tp']}, fp {s['fp']}, fn {s['fn']})"
            )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
