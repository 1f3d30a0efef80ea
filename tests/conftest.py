"""Shared pytest fixtures.

`shallow_stack` bounds how deep the code under test may recurse: inside
``with shallow_stack():`` the recursion limit is the current stack depth plus
`HEADROOM` frames (at least 150 in total), so a recursive walk over a CFG with
thousands of blocks fails loudly instead of passing by luck.  Oracles
(networkx, brute force) should run outside the ``with``.
"""
from __future__ import annotations

import contextlib
import sys

import pytest

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
