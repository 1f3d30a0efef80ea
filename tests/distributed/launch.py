"""Start the ranks of a distributed test as subprocesses and collect their results.

`run(scenario, world)` starts `workers.py` once per rank, meeting at a store file in the
run's own temporary folder (no port to pick: a free port found here could be taken by
another run before rank 0 binds it), and waits with a deadline: when one rank fails (or
the deadline passes) the others are killed, so a raising rank never hangs the run, and
`RankFailed` carries every rank's output, the failed rank's first (a rank killed by a
signal has its threads' Python stacks there: the workers enable faulthandler).  Each rank
destroys its process group itself.  The folder is removed when every rank succeeded.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


class RankFailed(AssertionError):
    pass


def _exit_text(rc: int) -> str:
    if rc < 0:
        try:
            return f"{rc} ({signal.Signals(-rc).name})"
        except ValueError:
            pass
    return str(rc)


def run(scenario: str, world: int = 2, timeout: float = 240.0, env: dict | None = None) -> list[dict]:
    """The results of every rank, rank 0 first (raises `RankFailed` with the ranks' output)."""
    tmp = Path(tempfile.mkdtemp(prefix="bcfront-dist-"))
    store = f"file://{tmp / 'store'}"
    penv = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **(env or {})}
    procs = []
    for r in range(world):
        log = open(tmp / f"rank{r}.log", "w")
        cmd = [sys.executable, str(HERE / "workers.py"), scenario, str(r), str(world), store]
        procs.append(
            (subprocess.Popen([*cmd, str(tmp / f"rank{r}.json")], stdout=log, stderr=log, env=penv), log)
        )
    deadline = time.monotonic() + timeout
    failed = None
    try:
        while any(p.poll() is None for p, _ in procs):
            bad = [i for i, (p, _) in enumerate(procs) if p.poll() not in (None, 0)]
            if bad or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        bad = [i for i, (p, _) in enumerate(procs) if p.poll() not in (None, 0)]
        bad.sort(key=lambda i: procs[i][0].returncode >= 0)  # a rank a signal killed first
        if bad:
            failed = f"rank {bad[0]} exited with {_exit_text(procs[bad[0]][0].returncode)}"
        elif any(p.poll() is None for p, _ in procs):
            failed = f"timed out after {timeout:.0f} s"
    finally:
        for p, log in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            log.close()
    if failed:
        first = bad[0] if bad else 0
        order = [first] + [r for r in range(world) if r != first]
        logs = "\n".join(
            f"--- rank {r} ({tmp / f'rank{r}.log'})\n{_tail(tmp / f'rank{r}.log')}" for r in order
        )
        raise RankFailed(f"{scenario}: {failed}\n{logs}")
    out = [json.loads((tmp / f"rank{r}.json").read_text()) for r in range(world)]
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def _tail(log: Path, limit: int = 8000) -> str:
    text = log.read_text(errors="replace")
    return text if len(text) <= limit else f"[... {len(text) - limit} characters before]\n" + text[-limit:]
