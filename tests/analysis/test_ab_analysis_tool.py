"""tools/ab_analysis.py: it stages the committed and the working-tree analyzer side by
side as two packages, and times every target phase of both."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _git(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True)


pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or _git("rev-parse", "HEAD").returncode, reason="needs git and a checkout"
)


@pytest.fixture
def staged(load_tool, tmp_path):
    tool = load_tool("ab_analysis")
    tool.stage("HEAD", str(tmp_path))
    sys.path.insert(0, str(tmp_path))
    yield tool, tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.split(".")[0] in ("bcfront_a", "bcfront_b")]:
        del sys.modules[name]


def test_side_a_is_the_committed_package_and_side_b_the_working_tree(staged):
    _, tmp = staged
    for rel in ("analysis/ssa_build.py", "analysis/__init__.py"):
        committed = _git("show", f"HEAD:bcfront/{rel}").stdout
        assert (tmp / "bcfront_a" / rel).read_bytes() == committed
        assert (tmp / "bcfront_b" / rel).read_bytes() == (ROOT / "bcfront" / rel).read_bytes()


def test_both_sides_load_apart_and_every_target_phase_is_timed(staged):
    tool, tmp = staged
    from corpus import stdlib_code_objects

    codes = stdlib_code_objects(limit=30)
    total = tool.compare(codes, every=1, reps=1, chunk=10)
    a = sys.modules["bcfront_a.analysis"]
    b = sys.modules["bcfront_b.analysis"]
    assert a is not b and a.FunctionAnalysis is not b.FunctionAnalysis
    assert pathlib.Path(a.__file__).is_relative_to(tmp / "bcfront_a")
    for side in "ab":
        assert list(total[side]) == list(tool.PHASES)
        assert all(t >= 0 for t in total[side].values())
        assert sum(total[side].values()) > 0
    assert tool.report(total).splitlines()[-1].startswith("target phases")
