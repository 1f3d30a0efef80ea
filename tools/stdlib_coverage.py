#!/usr/bin/env python
"""How much of the standard-library corpus bcfront captures with no graph break.

Runs every function of `tests/stdlib/corpus.py` on each of its inputs under
``bcfront.capture(..., fullgraph=True)`` (strict mode: a native fallback counts
as a break).  A function is captured whole when every input gives what the
native call gives -- its result or its own exception -- without a graph break.
Prints the share (target: at least 80%) and, for the others, the first break.

Usage: PYTHONPATH=. python tools/stdlib_coverage.py [-v]
"""

from __future__ import annotations

import copy
import os
import pathlib
import sys
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
    except Exception as e:  # noqa: BLE001 - the function's own exception
        return ("raise", type(e), str(e))


def first_break(fn, inputs) -> str | None:
    """None when every input captures whole and matches native, else why not."""
    for args in inputs:
        cf = bcfront.capture(rooted(fn), fullgraph=True)
        try:
            got = _outcome(cf, args)
        except GraphBreakError as e:
            return f"{e.reason.value}: {e.message}"
        except Exception as e:  # noqa: BLE001 - a strict-mode fallback, or worse
            return f"{type(e).__name__}: {str(e)[:160]}"
        want = _outcome(fn, args)
        if repr(got) != repr(want):
            return f"differs from native: {got!r} vs {want!r}"[:200]
    return None


def main() -> int:
    verbose = "-v" in sys.argv
    broken = {}
    for name, (fn, inputs) in sorted(CORPUS.items()):
        why = first_break(fn, inputs)
        if why is not None:
            broken[name] = why
    whole = len(CORPUS) - len(broken)
    share = whole / len(CORPUS)
    print(f"captured whole: {whole}/{len(CORPUS)} functions ({share:.0%}); target 80%")
    kinds = Counter(why.split(":")[0] for why in broken.values())
    for kind, n in kinds.most_common():
        print(f"  {n:3d}  {kind}")
    if verbose:
        for name, why in sorted(broken.items()):
            print(f"{name}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
