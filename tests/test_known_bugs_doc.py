"""docs/known-bugs.md is a list someone can act on: every "Open" entry names a test that
exists and is marked xfail(strict=True); it lists open bugs only, and every line of the
fixed bugs' index (tests/robustness/fixed-bugs.md) names a test that exists.

Open entries' tests are collected by pytest in a subprocess (with a small plugin that writes
each collected item's xfail marks), so parametrized ids and marks added at collection time
count exactly as they do in a run.  Fixed lines are checked statically (file, function,
parameter id in the file's text), which keeps this test torch-free and fast.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "known-bugs.md"
FIXED = ROOT / "tests" / "robustness" / "fixed-bugs.md"  # the fixed ones' index

# `tests/dir/test_x.py::test_name[param]` in backquotes; the function and param are optional.
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+)(?:\[([^\]`]+)\])?)?`")

PLUGIN = """
import json, os

def pytest_collection_finish(session):
    strict_default = session.config.getini("xfail_strict")
    out = {}
    for item in session.items:
        marks = [m for m in item.iter_markers("xfail") if not m.args or m.args[0]]
        out[item.nodeid] = [bool(m.kwargs.get("strict", strict_default)) for m in marks]
    with open(os.environ["KNOWN_BUGS_COLLECTED"], "w") as f:
        json.dump(out, f)
"""


def section(text: str, title: str) -> str:
    """The text under `## title`, up to the next `## ` heading."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"known-bugs.md has no '## {title}' section"
    return m[1]


def open_entries(text: str) -> dict[str, list[str]]:
    """`### ID. title` entries under Open -> the test node ids each one names."""
    parts = re.split(r"^### ", section(text, "Open"), flags=re.M)[1:]
    entries = {}
    for part in parts:
        title, _, body = part.partition("\n")
        entries[title.strip()] = [
            f"{path}::{fn}" + (f"[{param}]" if param else "")
            for path, fn, param in TEST_REF.findall(body)
            if fn
        ]
    return entries


def collected_xfails(root: Path, files: list[str], tmp: Path) -> dict[str, list[bool]]:
    """pytest's collection of test files under root: node id -> strict flag of each active xfail.

    Whole files, not node ids: one id that does not exist would stop the collection."""
    (tmp / "known_bugs_collect.py").write_text(PLUGIN)
    out = tmp / "collected.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), os.environ.get("PYTHONPATH", "")]),
           "KNOWN_BUGS_COLLECTED": str(out)}  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "known_bugs_collect", "-o", "addopts=", *files],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return json.loads(out.read_text()) if out.exists() else {}


def open_problems(text: str, root: Path, tmp: Path) -> list[str]:
    """What is wrong with the Open section: entries without a test, tests that are not strict xfails."""
    entries = open_entries(text)
    problems = [
        f"{title}: names no test (`tests/...py::test_name[param]`)"
        for title, ids in entries.items()
        if not ids
    ]
    files = sorted({i.split("::")[0] for ids in entries.values() for i in ids})
    files = [f for f in files if (root / f).is_file()]
    collected = collected_xfails(root, files, tmp) if files else {}
    for title, ids in entries.items():
        for node_id in ids:
            if node_id not in collected:
                problems.append(f"{title}: {node_id} does not exist (pytest collects no such test)")
            elif not any(collected[node_id]):
                problems.append(f"{title}: {node_id} is not marked xfail(strict=True)")
    return problems


def fixed_problems(text: str, root: Path) -> list[str]:
    """Fixed lines whose test file, function or parameter id is not there."""
    problems = []
    for line in section(text, "Fixed").splitlines():
        if not line.startswith("- "):
            continue
        refs = TEST_REF.findall(line)
        if not refs:
            problems.append(f"names no test: {line[:80]}")
        for path, fn, param in refs:
            source = root / path
            if not source.is_file():
                problems.append(f"{path} does not exist")
                continue
            code = source.read_text(encoding="utf-8")
            if fn and not re.search(rf"^\s*def {fn}\(", code, flags=re.M):
                problems.append(f"{path} defines no {fn}")
            elif param and not any(param in text for text in with_case_modules(source, code)):
                problems.append(f"{path}: no case named {param!r} for {fn}")
    return problems


def with_case_modules(source: Path, code: str) -> list[str]:
    """The text of a test file and of the modules it imports from its own package (``from
    .cases import X``, ``from .cases.theme import Y``): where its parametrized cases live."""
    texts = [code]
    for dotted in re.findall(r"^from \.([\w.]+) import", code, flags=re.M):
        base = source.parent.joinpath(*dotted.split("."))
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                texts.append(path.read_text(encoding="utf-8"))
    return texts


def test_every_open_bug_is_pinned_by_a_strict_xfail(tmp_path):
    assert open_problems(DOC.read_text(encoding="utf-8"), ROOT, tmp_path) == []


def test_every_fixed_bug_names_a_test_that_exists():
    assert fixed_problems(FIXED.read_text(encoding="utf-8"), ROOT) == []


def test_the_known_bugs_page_lists_open_bugs_only():
    assert "## Fixed" not in DOC.read_text(encoding="utf-8")


# -- the checks themselves, on a made-up project ---------------------------------------------

SAMPLE_TESTS = """
import pytest

@pytest.mark.xfail(strict=True, reason="open")
def test_strict():
    assert False

@pytest.mark.xfail(reason="open")
def test_lenient():
    assert False

def test_plain():
    pass

@pytest.mark.parametrize("case", [pytest.param("a", marks=pytest.mark.xfail(strict=True)), "b"])
def test_cases(case):
    assert case == "b"
"""

SAMPLE_DOC = """
# Known bugs

## Open

### X1. pinned
Test: `tests/test_sample.py::test_strict`, and a case: `tests/test_sample.py::test_cases[a]`.

### X2. not strict
Test: `tests/test_sample.py::test_lenient`.

### X3. not an xfail
Tests: `tests/test_sample.py::test_plain`, `tests/test_sample.py::test_cases[b]`.

### X4. gone
Test: `tests/test_sample.py::test_renamed`.

### X5. no test at all
Just words.

## Fixed

- **X0** fine: `tests/test_sample.py::test_cases[b]`
- **X6** no such file: `tests/test_gone.py::test_strict`
- **X7** no such function: `tests/test_sample.py::test_renamed`
- **X8** no such case: `tests/test_sample.py::test_cases[zzz]`
- **X9** nothing named
"""


def test_the_checks_find_every_kind_of_stale_entry(tmp_path):
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_sample.py").write_text(textwrap.dedent(SAMPLE_TESTS))
    problems = open_problems(SAMPLE_DOC, project, tmp_path)
    assert problems == [
        "X5. no test at all: names no test (`tests/...py::test_name[param]`)",
        "X2. not strict: tests/test_sample.py::test_lenient is not marked xfail(strict=True)",
        "X3. not an xfail: tests/test_sample.py::test_plain is not marked xfail(strict=True)",
        "X3. not an xfail: tests/test_sample.py::test_cases[b] is not marked xfail(strict=True)",
        "X4. gone: tests/test_sample.py::test_renamed does not exist (pytest collects no such test)",
    ]
    assert fixed_problems(SAMPLE_DOC, project) == [
        "tests/test_gone.py does not exist",
        "tests/test_sample.py defines no test_renamed",
        "tests/test_sample.py: no case named 'zzz' for test_cases",
        "names no test: - **X9** nothing named",
    ]
