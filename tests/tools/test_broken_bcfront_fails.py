"""A bcfront that does not import fails the suite; it never turns into skipped tests.

The default suite runs in a subprocess with a planted import hook (a pytest plugin) that
makes every `import bcfront...` raise.  Skips for an absent third-party package (torch,
triton, ...) stay allowed: the torch-free CI runs need them.  Any other skip means some test
or helper swallowed the import error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
import sys

class BrokenBcfront:
    """Refuses every bcfront module, as a syntax error or a bad import inside it would."""

    def find_spec(self, name, path=None, target=None):
        if name == "bcfront" or name.startswith("bcfront."):
            raise ImportError("planted: bcfront does not import")

sys.meta_path.insert(0, BrokenBcfront())
'''


def test_a_broken_bcfront_fails_and_skips_nothing(tmp_path):
    (tmp_path / "broken_bcfront.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "broken_bcfront",
         "--continue-on-collection-errors", "--ignore", str(REPO / "tests" / "tools"), "tests"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert "planted: bcfront does not import" in out
    skips = re.findall(r"^SKIPPED \[\d+\] (.*)$", r.stdout, flags=re.M)
    third_party = re.compile(r"could not import '(?!bcfront)|needs torch")
    assert [s for s in skips if not third_party.search(s)] == []
