"""Start the ranks of a distributed test as subprocesses and collect their results.

`run(scenario, world)` picks a free loopback port, starts `workers.py` once per rank and
waits with a deadline: when one rank fails (or the deadline passes) the others are killed,
so a raising rank never hangs the run.  Each rank destroys its process group itself.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RankFailed(AssertionError):
    pass


def run(scenario: str, world: int = 2, timeout: float = 240.0, env: dict | None = None) -> list[dict]:
    """The results of every rank, rank 0 first (raises `RankFailed` with the ranks' output)."""
    port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="bcfront-dist-"))
    penv = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **(env or {})}
    procs = []
    for r in range(world):
        log = open(tmp / f"rank{r}.log", "w")
        cmd = [sys.executable, str(HERE / "workers.py"), scenario, str(r), str(world), str(port)]
        procs.append(
            (subprocess.Popen([*cmd, str(tmp / f"rank{r}.json")], stdout=log, stderr=log, env=penv), log)
        )
    deadline = time.monotonic() + timeout
    failed = None
    try:
        while any(p.poll() is None for p, _ in procs):
            bad = [i for i, (p, _) in enumerate(procs) if p.poll() not in (None, 0)]
            if bad or time.monotonic() > deadline:
                failed = f"rank {bad[0]} exited with {procs[bad[0]][0].returncode}" if bad else "timed out"
                break
            time.sleep(0.2)
        bad = [i for i, (p, _) in enumerate(procs) if p.poll() not in (None, 0)]
        if bad and failed is None:
            failed = f"rank {bad[0]} exited with {procs[bad[0]][0].returncode}"
    finally:
        for p, log in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            log.close()
    if failed:
        logs = "\n".join(f"--- rank {r}\n" + (tmp / f"rank{r}.log").read_text()[-4000:] for r in range(world))
        raise RankFailed(f"{scenario}: {failed}\n{logs}")
    return [json.loads((tmp / f"rank{r}.json").read_text()) for r in range(world)]
