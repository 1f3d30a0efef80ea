"""docs/data-model.md names real files and every guard kind, so it cannot silently go stale."""

from __future__ import annotations

import re
from pathlib import Path

from bcfront.frontend.model.guard_kinds import GuardKind

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "data-model.md"


def named_paths(text: str) -> set[str]:
    return set(re.findall(r"`((?:[\w.]+/)*\w+\.(?:py|md))`", text))


def test_every_file_the_page_names_exists():
    missing = [
        p
        for p in named_paths(DOC.read_text())
        if not any((base / p).exists() for base in (ROOT / "bcfront", ROOT, ROOT / "docs"))
        and not (ROOT / "tests" / p).exists()
    ]
    assert missing == []


def test_the_guard_grammar_lists_every_kind():
    grammar = DOC.read_text().split("## Guard", 1)[1].split("```")[1]
    assert set(re.findall(r"\b[A-Z][A-Z_]+[A-Z]\b", grammar)) >= {k.value for k in GuardKind}


def test_path_scan_sees_paths():
    assert named_paths("see `ir/graph.py` and `reasons.py`, not `x`") == {"ir/graph.py", "reasons.py"}
