"""Graph breaks with continuations (pure Python, runs on 3.11-3.13 without torch).

Oracle: CPython running the original function from the same state; results,
printed output (order and count), raised exceptions and mutations must match
over several calls.  Where the number of breaks is determined it is asserted,
as is that the break was compiled with a continuation (not a native fallback).
"""

from __future__ import annotations

import contextlib
import copy
import io

import pytest

import bcfront
from bcfront.errors import GraphBreakError

from . import corpus_breaks
from .corpus_breaks import CASES
from .outcomes import quiet_outcome


@pytest.mark.parametrize("name", sorted(CASES))
def test_break_matches_python(name):
    case = CASES[name]
    cf = bcfront.capture(case.fn)
    for args in case.calls + case.calls[:1]:
        corpus_breaks.COUNT[0] = 0
        expected = quiet_outcome(case.fn, *copy.deepcopy(args))
        count_ref = corpus_breaks.COUNT[0]
        corpus_breaks.COUNT[0] = 0
        actual = quiet_outcome(cf, *copy.deepcopy(args))
        assert actual == expected, f"{name}{args}"
        assert corpus_breaks.COUNT[0] == count_ref
    first = cf.entries[0]
    if case.breaks is not None:
        assert len(first.breaks) == case.breaks
    if case.continued:
        assert not first.native, f"{name}: fell back to native: {first.notes}"
        assert first.children, f"{name}: no continuation"


def test_break_reason_and_location():
    cf = bcfront.capture(corpus_breaks.straight_line)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(1)
    (b,) = cf.entries[0].breaks
    assert b.reason == "io"
    assert "print" in b.message
    assert b.filename.endswith("corpus_breaks.py")
    assert b.source_line.startswith("print(")
    assert b.instruction.startswith("CALL")
    assert b.user_stack[-1].function.endswith("straight_line")


def test_inlined_callee_break_has_user_stack_and_is_captured_separately():
    cf = bcfront.capture(corpus_breaks.in_inlined_callee)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(1)
        cf(1)
    (b,) = cf.entries[0].breaks
    assert [f.function for f in b.user_stack][-2:] == ["in_inlined_callee", "_helper"]
    names = [c.__qualname__ for c in cf.entries[0].children]
    assert any(n == "_helper" for n in names), names


def test_fullgraph_raises_at_first_break():
    cf = bcfront.capture(corpus_breaks.straight_line, fullgraph=True)
    with pytest.raises(GraphBreakError) as info:
        cf(1)
    e = info.value
    assert e.reason == "io" and e.lineno is not None and e.filename.endswith("corpus_breaks.py")
    assert e.user_stack and e.instruction


def test_loop_break_does_not_recurse_per_iteration():
    cf = bcfront.capture(corpus_breaks.in_for_loop)
    with contextlib.redirect_stdout(io.StringIO()):
        assert (
            cf(2000) == corpus_breaks.in_for_loop.__wrapped__(2000)
            if hasattr(corpus_breaks.in_for_loop, "__wrapped__")
            else True
        )
    with contextlib.redirect_stdout(io.StringIO()):
        expected = corpus_breaks.in_for_loop(2000)
        assert cf(2000) == expected


def test_explain_reports_breaks_once_with_count():
    report = None
    with contextlib.redirect_stdout(io.StringIO()):
        report = bcfront.explain(corpus_breaks.in_for_loop, 3)
    reasons = [(b.reason, b.lineno, b.count) for b in report.graph_breaks]
    assert reasons, "no break reported"
    keys = [(r, ln) for r, ln, _ in reasons]
    assert len(keys) == len(set(keys)), "identical breaks must be merged"
