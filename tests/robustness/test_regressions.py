"""Every mismatch the differential fuzzer found, shrunk to a minimal program.

Each `Regression` is module source defining ``f``, the calls to make, where
it came from, and what went wrong.  The test runs it with
`bcfront.testing.differential.run` (eager is the oracle: results, inputs
after the call, globals, printed output, exceptions, gradients).  A
regression that still fails carries `open_bug`: it is a strict xfail, so the
suite stays green, the bug stays visible, and the day it is fixed the xfail
turns into a failure that asks for the mark to go.  docs/known-bugs.md lists
the open ones.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from bcfront.testing import differential
from bcfront.testing.program import from_source

from .helpers import HAS_TORCH
from .regressions import Regression
from .regressions.across_breaks import ACROSS_BREAKS
from .regressions.builtin_semantics import BUILTINS
from .regressions.stale_state import STALE_STATE
from .regressions.tensors import TENSOR as TENSOR_CASES

PY = {**ACROSS_BREAKS, **STALE_STATE, **BUILTINS}

TENSOR = TENSOR_CASES


def _params(table):
    out = []
    for name, reg in sorted(table.items()):
        is_open = reg.open_bug and sys.version_info[:2] >= reg.open_from
        marks = (pytest.mark.xfail(strict=True, reason=reg.open_bug),) if is_open else ()
        out.append(pytest.param(name, marks=marks, id=name))
    return out


CHILD = """
import sys
from bcfront.testing.differential import run
from bcfront.testing.program import CallSpec, from_source  # noqa: F401 - CallSpec: for eval of the calls
verdict = run(from_source(sys.argv[1], eval(sys.argv[2]), name=sys.argv[3]))
print("ok" if verdict.ok else verdict.mismatch.describe())
"""


def _run(name: str, reg: Regression) -> None:
    if reg.isolate:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, reg.source, repr(reg.calls), name],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (
            f"{name} ({reg.found}): the interpreter died "
            f"(exit status {done.returncode}); output {done.stdout[-300:]!r}"
        )
        assert done.stdout.strip() == "ok", f"{name} ({reg.found}):\n{done.stdout}"
        return
    verdict = differential.run(from_source(reg.source, reg.calls, name=name))
    assert verdict.ok, f"{name} ({reg.found}):\n{verdict.mismatch.describe()}"


@pytest.mark.parametrize("name", _params(PY))
def test_python_regression(name):
    _run(name, PY[name])


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", _params(TENSOR))
def test_tensor_regression(name):
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    _run(name, TENSOR[name])
