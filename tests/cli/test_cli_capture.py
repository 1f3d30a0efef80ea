"""`bcfront-explain` on scripts that really capture (needs torch and bcfront.capture)."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

pytest.importorskip("torch")

from bcfront.cli.schema import validate

from .helpers import CORPUS, expected_breaks, run_cli


def test_fullgraph_break_traceback_is_the_scripts_and_the_report_has_the_break(tmp_path):
    p = tmp_path / "fg.py"
    p.write_text(
        textwrap.dedent("""\
        import torch, bcfront

        @bcfront.capture(fullgraph=True)
        def f(x):
            if x.sum() > 0:
                return x + 1
            return x - 1

        print("result", f(torch.ones(3)))
    """)
    )
    r = run_cli(str(p), cwd=tmp_path)
    assert r.returncode == 1
    files = re.findall(r'File "([^"]+)"', r.stderr)
    assert files and all(f.endswith("fg.py") for f in files), r.stderr
    assert "GraphBreakError" in r.stderr and "fg.py:5" in r.stderr
    assert "raised GraphBreakError" in r.stderr.splitlines()[-1]
    out = " ".join(r.stdout.split())
    assert "Graph breaks (1)" in out and "fg.py:5" in out and "if x.sum() > 0:" in out


def test_captures_made_inside_main_are_reported(tmp_path):
    # The captured function is a local of main(): gone before the report unless kept alive.
    p = tmp_path / "local.py"
    p.write_text(
        textwrap.dedent("""\
        import torch, bcfront

        def main():
            cf = bcfront.capture(lambda x: (x * 2).sin())
            for _ in range(3):
                cf(torch.ones(4))

        main()
    """)
    )
    r = run_cli("--json", str(p), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert validate(data) == []
    (fn,) = data["functions"]
    assert "lambda" in fn["function"] and fn["graphs"]


def test_continuations_follow_the_function_they_continue():
    path = CORPUS / "helpers.py"
    r = run_cli("--json", str(path))
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert validate(data) == []
    names = [f["function"] for f in data["functions"]]
    for i, name in enumerate(names):
        if ".<resume@" in name:
            parent = name.split(".<resume@")[0]
            assert parent in names[:i], names
    lines = {b["lineno"] for f in data["functions"] for b in f["graph_breaks"]}
    assert set(expected_breaks(path)) <= lines
