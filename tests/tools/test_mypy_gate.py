"""tools/mypy_gate.py on a tiny package: the baseline excuses old errors only, counted and
without line numbers, and never an error in a strict module.  Torch-free (mypy only)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy")

GATE = Path(__file__).resolve().parents[2] / "tools" / "mypy_gate.py"

CONFIG = """
[tool.mypy]
python_version = "3.11"
files = ["pkg"]

[[tool.mypy.overrides]]
module = ["pkg.strict", "pkg.strict.*"]
disallow_untyped_defs = true
"""

OLD_ERROR = """
def old() -> int:
    return "old"
"""

NEW_ERROR = """
def new() -> str:
    return 1
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))


def gate(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(GATE), "--baseline", str(root / "baseline.txt"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def project(tmp_path):
    """A package with one known error in a loose module and a clean strict module, baselined."""
    write(tmp_path, "pyproject.toml", CONFIG)
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/loose.py", OLD_ERROR)
    write(tmp_path, "pkg/strict/__init__.py", "def typed(x: int) -> int:\n    return x\n")
    r = gate(tmp_path, "--update")
    assert r.returncode == 0, r.stdout + r.stderr
    return tmp_path


def test_the_baseline_keys_errors_by_file_code_and_message(project):
    entries = [ln for ln in (project / "baseline.txt").read_text().splitlines() if not ln.startswith("#")]
    message = 'Incompatible return value type (got "str", expected "int")'
    assert entries == [f"1\tpkg/loose.py\treturn-value\t{message}"]
    r = gate(project)
    assert r.returncode == 0 and "no new errors" in r.stdout, r.stdout + r.stderr


def test_moving_a_baselined_error_is_not_a_new_error(project):
    write(project, "pkg/loose.py", "\n\nimport os\n\n" + OLD_ERROR)
    r = gate(project)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_planted_error_fails_the_gate_and_says_where(project):
    write(project, "pkg/loose.py", OLD_ERROR + NEW_ERROR)
    r = gate(project)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "pkg/loose.py:5: error: Incompatible return value type" in r.stdout
    assert "1 new error(s)" in r.stdout and "Fix them" in r.stdout


def test_a_second_copy_of_a_baselined_error_is_new(project):
    write(project, "pkg/loose.py", OLD_ERROR + OLD_ERROR.replace("old", "older"))
    r = gate(project)
    assert r.returncode == 1 and "1 new error(s)" in r.stdout, r.stdout + r.stderr


def test_strict_modules_are_never_baselined(project):
    write(project, "pkg/strict/__init__.py", "def untyped(x):\n    return x\n")
    r = gate(project)
    assert r.returncode == 1 and "pkg/strict/__init__.py:1: error" in r.stdout, r.stdout + r.stderr
    r = gate(project, "--update")
    assert r.returncode == 1 and "strict modules" in r.stdout, r.stdout + r.stderr
    baseline = (project / "baseline.txt").read_text()
    assert "pkg/loose.py" in baseline and "pkg/strict" not in baseline
    # Nor can a hand-written entry excuse it.
    with (project / "baseline.txt").open("a") as f:
        f.write("1\tpkg/strict/__init__.py\tno-untyped-def\tFunction is missing a type annotation\n")
    assert gate(project).returncode == 1


def test_a_mypy_failure_is_not_a_pass(project):
    r = gate(project, "pkg/absent.py")  # mypy exits 2 and reports no error line
    assert r.returncode == 2 and "mypy itself failed" in r.stdout, r.stdout + r.stderr


def _gate_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mypy_gate", GATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_union_member_order_does_not_change_an_errors_key():
    gate = _gate_module()
    line = 'x.py:3: error: Argument 1 has type "{}"; expected "Iterable[{}]"  [arg-type]'
    first = line.format("int | str | tuple[bool | None, str]", "A | B")
    later = line.format("tuple[None | bool, str] | str | int", "B | A")
    swapped = line.format("tuple[str, None | bool] | str | int", "B | A")
    [(key_first, _)] = gate.parse_errors(first)
    [(key_later, _)] = gate.parse_errors(later)
    [(key_swapped, _)] = gate.parse_errors(swapped)
    assert key_first == key_later
    assert key_first != key_swapped  # a tuple's element order is part of the type
