"""bcfront never pauses the cyclic garbage collector: ``gc.disable()`` (or ``gc.freeze()``) is
process-wide, so it would also stop collection for the user's other threads (issue #23).  A
caller that wants the pause around its own batch may take it; the library does not.  AST only."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAUSES = {"disable", "freeze"}


def gc_pauses(source: str) -> list[int]:
    """Lines that call ``gc.disable``/``gc.freeze`` (also as ``from gc import disable``)."""
    tree = ast.parse(source)
    names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "gc"
        for alias in node.names
        if alias.name in PAUSES
    }
    gc_aliases = {
        alias.asname or "gc"
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "gc"
    }
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in PAUSES and isinstance(f.value, ast.Name):
            if f.value.id in gc_aliases:
                out.append(node.lineno)
        elif isinstance(f, ast.Name) and f.id in names:
            out.append(node.lineno)
    return out


def test_bcfront_never_pauses_the_collector():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "bcfront").rglob("*.py"))
        for line in gc_pauses(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_planted_pauses_are_found():
    src = "\n".join(
        [
            "import gc",
            "import gc as g",
            "from gc import freeze",
            "gc.disable()",
            "g.disable()",
            "freeze()",
            "gc.collect()",
        ]
    )
    assert gc_pauses(src) == [4, 5, 6]
