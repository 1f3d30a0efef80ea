"""tools/check runs every step, says which failed, and fails when one does.

The steps run under a stand-in interpreter ($PYTHON) that records its arguments and fails
on request, so the test checks the script's plumbing in milliseconds, not ruff or mypy.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CHECK = Path(__file__).resolve().parents[2] / "tools" / "check"


def fake_python(tmp_path: Path, fail_on: str) -> Path:
    """An executable that appends its arguments to calls.log and exits 1 if they contain fail_on."""
    exe = tmp_path / "python"
    exe.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$*" >> "{tmp_path}/calls.log"\n'
        f'case "$*" in *"{fail_on}"*) exit 1;; esac\n'
        "exit 0\n"
    )
    exe.chmod(0o755)
    return exe


def check(tmp_path: Path, *steps: str, fail_on: str = "never") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": str(fake_python(tmp_path, fail_on))}
    return subprocess.run([str(CHECK), *steps], env=env, capture_output=True, text=True, timeout=60)


def summary(r: subprocess.CompletedProcess) -> list[str]:
    return [ln.split(" (")[0] for ln in r.stdout.split("=== summary ===")[1].strip().splitlines()]


def test_every_step_passes(tmp_path):
    r = check(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert summary(r) == ["PASS  ruff", "PASS  format", "PASS  mypy", "PASS  tests"]
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[0] == "-m ruff check ." and calls[1] == "-m ruff format --check ."
    assert calls[2] == "tools/mypy_gate.py" and calls[3].startswith("-m pytest")


def test_a_failing_step_fails_the_check_and_the_rest_still_run(tmp_path):
    r = check(tmp_path, fail_on="ruff format")
    assert r.returncode == 1, r.stdout + r.stderr
    assert summary(r) == ["PASS  ruff", "FAIL  format", "PASS  mypy", "PASS  tests"]


def test_named_steps_only(tmp_path):
    r = check(tmp_path, "mypy", fail_on="mypy_gate")
    assert r.returncode == 1 and summary(r) == ["FAIL  mypy"], r.stdout + r.stderr
    assert (tmp_path / "calls.log").read_text().splitlines() == ["tools/mypy_gate.py"]


def test_an_unknown_step_is_refused(tmp_path):
    r = check(tmp_path, "lint")
    assert r.returncode == 2 and "unknown step 'lint'" in r.stderr
    assert not (tmp_path / "calls.log").exists()


def test_ci_runs_the_readme_test_command_unchanged_then_tools_check():
    root = CHECK.parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    ci = (root / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marker = ci.index("# --- keep this line identical to the README's test command ---")
    readme_command = ci[marker + 1]
    assert readme_command.startswith("python3 -m venv .venv") and readme_command in readme.splitlines()
    rest = "\n".join(ci[marker + 2 :])
    assert "PYTHON=.venv/bin/python tools/check" in rest and "'.[test,dev]'" in rest
