"""docs/architecture.md names every module of the package, under its folder's section."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _sections() -> dict[str, str]:
    """Text under each '### `bcfront/<folder>/`' heading of the module map."""
    parts = re.split(r"^### `(bcfront/[\w/]*)`.*$", DOC, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _section_for(path: pathlib.Path, sections: dict[str, str]) -> str | None:
    rel = path.relative_to(ROOT).parent.as_posix() + "/"
    # the deepest documented folder that contains the module (handlers/ sits in frontend/)
    owners = [s for s in sections if rel.startswith(s)]
    return sections[max(owners, key=len)] if owners else None


MODULES = sorted(p for p in (ROOT / "bcfront").rglob("*.py") if "__pycache__" not in p.parts)


def test_the_module_map_has_a_section_per_top_level_folder():
    sections = _sections()
    folders = {p.relative_to(ROOT).parts[1] for p in MODULES if len(p.relative_to(ROOT).parts) > 2}
    assert {f"bcfront/{f}/" for f in folders} <= set(sections), sorted(sections)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_module_is_named_in_its_folders_section(path):
    text = _section_for(path, _sections())
    assert text is not None, f"no section of docs/architecture.md covers {path.parent}"
    if path.stem == "__init__" and path.parent.name != "bcfront":
        return  # a package's __init__ is its section (or its row) in the map
    name = path.stem
    assert re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text), (
        f"docs/architecture.md does not mention {path.relative_to(ROOT)}: add it to the module map"
    )
