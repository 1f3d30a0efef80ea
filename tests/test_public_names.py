"""No two public classes of `bcfront/` share a name (#23: two `Value`s, two `Frame`s and
three `Node`s made the code hard to read and to search).  Torch-free: it reads sources."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bcfront"


def public_classes() -> dict[str, list[str]]:
    """name -> the modules that define a public module-level class of that name."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where[node.name].append(str(path.relative_to(PACKAGE.parent)))
    return where


def test_no_two_public_classes_share_a_name():
    shared = {name: mods for name, mods in public_classes().items() if len(mods) > 1}
    assert shared == {}


def test_the_scan_sees_the_package():
    found = public_classes()
    assert "CapturedFunction" in found and "Graph" in found  # (a scan that reads nothing passes)
