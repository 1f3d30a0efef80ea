"""The whole facade on the standard library's code objects, under a low recursion limit.

Default run: a fixed, deterministic sample of about 300 code objects (nested
ones included) from a dozen varied modules.  ``-m slow``: every code object of
every module (parametrized by file).  Each one goes through the CFG,
dominators, frontiers, post-dominators, loops (when loops.py exists), stack
depths, liveness, SSA and aliasing with ``sys.setrecursionlimit(200)`` in force;
then, outside the limit, the SSA invariants are checked against networkx and
``dis.stack_effect`` (`dataflow_oracles.check_ssa`).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import sysconfig
import types
import warnings

import pytest
from corpus import all_code_objects, stdlib_files
from dataflow_oracles import check_ssa

from bcfront.analysis import analyze

LIB = sysconfig.get_paths()["stdlib"]
SAMPLE_MODULES = [
    "argparse.py",
    "ast.py",
    "asyncio/tasks.py",
    "collections/__init__.py",
    "contextlib.py",
    "dataclasses.py",
    "email/_header_value_parser.py",
    "enum.py",
    "functools.py",
    "inspect.py",
    "json/decoder.py",
    "re/_parser.py",
    "tarfile.py",
    "typing.py",
    "zipfile.py" if sys.version_info < (3, 12) else "zipfile/__init__.py",
]
SAMPLE_SIZE = 300
LIMIT = 200


def _code_objects(path: str) -> list[types.CodeType]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with open(path, "rb") as f:
            return all_code_objects(compile(f.read(), path, "exec", dont_inherit=True))


def _sample() -> list[types.CodeType]:
    codes = []
    for mod in SAMPLE_MODULES:
        path = os.path.join(LIB, mod)
        if os.path.exists(path):
            codes += _code_objects(path)
    codes.sort(key=lambda c: (c.co_filename, c.co_firstlineno, c.co_qualname))
    step = max(1, len(codes) / SAMPLE_SIZE)
    return [codes[int(i * step)] for i in range(min(SAMPLE_SIZE, len(codes)))]


@contextlib.contextmanager
def _recursion_limit(limit: int):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _depth() -> int:
    f, n = sys._getframe(), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


def analyze_fully(code: types.CodeType):
    """Every analysis of `code` with the recursion limit lowered, then the SSA checks."""
    assert _depth() < LIMIT - 100, "the test itself runs too deep for the limit to mean much"
    fa = analyze(code)
    with _recursion_limit(LIMIT):
        fa.cfg, fa.idom, fa.dominance_frontier, fa.post_idom, fa.dom_tree
        fa.loops
        fa.stack, fa.liveness, fa.ssa, fa.aliases
        for ins in fa.bytecode.instructions:
            fa.liveness.live_after(ins.offset)
        str(fa.ssa)
    check_ssa(fa)
    return fa


SAMPLE = _sample()


@pytest.mark.parametrize(
    "code",
    SAMPLE,
    ids=[f"{os.path.relpath(c.co_filename, LIB)}:{c.co_firstlineno}:{c.co_qualname}" for c in SAMPLE],
)
def test_sample(code):
    analyze_fully(code)


def test_sample_is_varied():
    flags = 0
    for c in SAMPLE:
        flags |= c.co_flags
    assert len(SAMPLE) >= 250
    assert flags & inspect.CO_GENERATOR and flags & inspect.CO_COROUTINE
    assert any(c.co_exceptiontable for c in SAMPLE)
    assert any(c.co_cellvars for c in SAMPLE) and any(c.co_freevars for c in SAMPLE)


@pytest.mark.slow
@pytest.mark.parametrize("path", stdlib_files(), ids=lambda p: os.path.relpath(p, LIB))
def test_whole_stdlib(path):
    try:
        codes = _code_objects(path)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        pytest.skip("test data in another Python dialect")
    for code in codes:
        analyze_fully(code)
