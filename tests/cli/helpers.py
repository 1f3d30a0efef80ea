"""Helpers for the CLI tests: run `bcfront-explain` in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CORPUS = EXAMPLES / "corpus"


def run_cli(
    *args: str,
    cwd: Path | str | None = None,
    env: dict | None = None,
    timeout: int = 300,
    module: bool = True,
) -> subprocess.CompletedProcess:
    """`python -m bcfront.cli.explain ARGS` (or the module's `main` via -c when module=False)."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FORCE_COLOR", "NO_COLOR", "BCFRONT_DEBUG", "TTY_COMPATIBLE")
    }
    full_env.update({"COLUMNS": "100", "PYTHONIOENCODING": "utf-8"})
    full_env.update(env or {})
    cmd = (
        [sys.executable, "-m", "bcfront.cli.explain", *args]
        if module
        else [
            sys.executable,
            "-c",
            "import sys; from bcfront.cli.explain import main; sys.exit(main())",
            *args,
        ]
    )
    return subprocess.run(
        cmd,
        cwd=cwd or REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def expected_breaks(path: Path) -> dict[int, str]:
    """Hand-written labels of a corpus script: line -> reason, from `# expect-break:` comments."""
    out = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if "# expect-break:" in line:
            out[i] = line.split("# expect-break:")[1].strip()
    return out
