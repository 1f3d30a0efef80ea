"""No two public classes in bcfront share a name.

Imports every module of the package (those that need a GPU or a missing
optional dependency are skipped, and listed if that hides a module), collects
the public classes each defines, and fails on a name defined in two places:
a reader, a traceback or an import should never leave "which `Node`?" open.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

import pytest

import bcfront

ALLOWED: set[str] = set()  # names that may be shared (none)


def public_classes() -> tuple[dict[str, set[str]], list[str]]:
    """Class name -> the qualified names of the public classes so named; and the modules
    that did not import."""
    by_name: dict[str, set[str]] = defaultdict(set)
    skipped = []
    for info in pkgutil.walk_packages(bcfront.__path__, "bcfront."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            skipped.append(info.name)
            continue
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and not name.startswith("_"):
                by_name[obj.__name__].add(f"{module.__name__}.{obj.__qualname__}")
    return by_name, skipped


def clashes(by_name: dict[str, set[str]]) -> dict[str, list[str]]:
    return {n: sorted(q) for n, q in by_name.items() if len(q) > 1 and n not in ALLOWED}


def test_no_two_public_classes_share_a_name():
    pytest.importorskip("torch")  # most of the frontend needs it
    by_name, skipped = public_classes()
    assert clashes(by_name) == {}
    assert "Node" in by_name and "bcfront.ir.graph.Node" in by_name["Node"]  # the walk saw ir
    assert [m for m in skipped if not m.startswith("bcfront.backends.triton")] == []


def test_clashes_are_found():
    assert clashes({"Frame": {"a.Frame", "b.Frame"}, "Ok": {"a.Ok"}}) == {"Frame": ["a.Frame", "b.Frame"]}
