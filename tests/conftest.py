"""Shared pytest fixtures.

`shallow_stack` bounds how deep the code under test may recurse: inside
``with shallow_stack():`` the recursion limit is the current stack depth plus
`HEADROOM` frames (at least 150 in total), so a recursive walk over a CFG with
thousands of blocks fails loudly instead of passing by luck.  Oracles
(networkx, brute force) should run outside the ``with``.

`load_tool` imports a script of ``tools/`` as a module, for the tests of the tools.

Strict mode: the suite runs with ``BCFRONT_STRICT=1`` (unless set otherwise),
so a bcfront bug that would silently fall back to native -- an internal error
while capturing, a fresh entry failing its own guards -- fails the test
instead (`bcfront.capture.StrictFallbackError`).  A test that checks such a
fallback on purpose uses the `lenient` fixture.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pathlib
import sys

import pytest

os.environ.setdefault("BCFRONT_STRICT", "1")


@pytest.fixture
def lenient(monkeypatch):
    """This test checks a fallback bcfront takes for its own bugs: no strict mode."""
    monkeypatch.setenv("BCFRONT_STRICT", "0")


HEADROOM = 100


def _depth() -> int:
    f, n = sys._getframe(1), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


@contextlib.contextmanager
def _limited(headroom: int = HEADROOM):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(150, _depth() + headroom))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@pytest.fixture
def shallow_stack():
    """A context-manager factory: ``with shallow_stack(): analyze(...)``."""
    return _limited


@pytest.fixture
def low_recursion_limit():
    """The whole test runs with only `HEADROOM` frames above the test function."""
    with _limited():
        yield


@pytest.fixture(scope="session")
def load_tool():
    """``load_tool("bench_analysis")``: tools/bench_analysis.py imported as a module."""
    tools = pathlib.Path(__file__).resolve().parents[1] / "tools"

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, tools / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load
