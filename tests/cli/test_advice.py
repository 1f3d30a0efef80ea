"""Recompile-storm detection and the fixes suggested for each kind of guard."""

from __future__ import annotations

import pytest

from bcfront.cli.advice import FALLBACK_FIX, Failure, enrich, storm_warnings, suggest_fix
from bcfront.report import FunctionReport, GraphBreak, GuardInfo, Recompile, Report


def recompiles(n, source="L['n']", expr="L['n'] == {i}", expected="{i}", actual="{j}"):
    return tuple(
        Recompile("f", expr.format(i=i), source, expected.format(i=i), actual.format(j=i + 1), "changed")
        for i in range(n)
    )


@pytest.mark.parametrize(
    "calls, fails, storm",
    [
        (10, 5, True),  # half the calls
        (10, 4, False),  # under half
        (3, 2, True),  # most calls
        (2, 1, False),  # one failure is a recompile, not a storm
        (0, 3, True),  # calls not counted: at least failures + 1 calls happened
    ],
)
def test_storm_threshold(calls, fails, storm):
    fr = FunctionReport("f", "x.py", 1, recompiles=recompiles(fails), calls=calls)
    assert bool(storm_warnings(fr)) is storm


def test_failures_group_by_guarded_value_not_by_check_text():
    # Each entry's guard names a different expected shape; the value guarded is the same.
    recs = recompiles(
        5, source="L['idx']", expr="L['idx'].shape == ({i}, 8)", expected="({i}, 8)", actual="({j}, 8)"
    )
    (w,) = storm_warnings(FunctionReport("f", None, None, recompiles=recs, calls=7))
    assert "the guard on L['idx'] failed on 5 of 7 calls" in w
    assert "dimension 0 of L['idx']" in w and "bcfront.mark_dynamic(idx, 0)" in w


def test_only_the_value_that_fails_on_most_calls_storms():
    recs = recompiles(6) + recompiles(2, source="L['k']", expr="L['k'] == {i}")
    (w,) = storm_warnings(FunctionReport("f", None, None, recompiles=recs, calls=9))
    assert "the guard on L['n'] failed on 6 of 9 calls" in w


@pytest.mark.parametrize(
    "failure, words",
    [
        (Failure("L['x'].shape[1]", "L['x'].shape[1] == 8", "TENSOR_MATCH"), "dimension 1 of L['x']"),
        (Failure("L['x']", "L['x'].size(2) == 8", "SHAPE"), "dimension 2"),
        (
            Failure("L['x']", "shape check", "TENSOR_MATCH", "(2, 8, 16)", "(2, 9, 17)"),
            "dimension 1, 2 of L['x']",
        ),
        (Failure("L['t']", "L['t'] == 0.5", "CONSTANT"), "stop passing a changing Python scalar"),
        (Failure("L['fn']", "id(L['fn']) == 140", "ID_MATCH"), "create it once and reuse it"),
        (Failure("L['x']", "type(L['x']) is list", "TYPE_MATCH"), "values of one type"),
        (
            Failure("L['x']", "L['x'] dtype float32", "TENSOR_MATCH", "float32", "float16"),
            "convert inputs consistently",
        ),
        (Failure("G['SCALE']", "G['SCALE'] == 2", "GLOBAL"), "pass it as an argument"),
        (Failure("L['y']", "something odd", "WEIRD"), FALLBACK_FIX),
        (
            Failure("L['idx'].layers[0]", "shape check", "TENSOR_MATCH", "(2, 8)", "(2, 9)"),
            "bcfront.mark_dynamic(idx.layers[0], 1)",
        ),
        (
            Failure("s0 = L['x'].shape[0]", "s0 == 4", "SHAPE", "s0 == 4", "s0 = 5"),
            "uses the value of a dynamic size",
        ),
    ],
)
def test_suggested_fix_matches_the_guard(failure, words):
    assert words in suggest_fix(failure)


def test_enrich_adds_storm_and_source_lines_once(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("a = 1\nif x.sum() > 0:\n    pass\n")
    fr = FunctionReport(
        "f",
        str(src),
        1,
        graph_breaks=(GraphBreak("data-dependent-branch", "m", str(src), 2),),
        recompiles=recompiles(3),
        calls=4,
        guards=(GuardInfo("L['n']", "CONSTANT", "L['n'] == 2"),),
    )
    out = enrich(Report((fr,))).functions[0]
    assert out.graph_breaks[0].source_line == "if x.sum() > 0:"
    assert len(out.warnings) == 1 and "recompile storm" in out.warnings[0]
    # A warning capture already gave about the same guard is not repeated.
    fr2 = FunctionReport(
        "f",
        None,
        None,
        recompiles=recompiles(3),
        calls=4,
        warnings=("recompile limit reached; the guard on L['n'] kept failing",),
    )
    assert enrich(Report((fr2,))).functions[0].warnings == fr2.warnings


def test_enrich_leaves_quiet_functions_alone():
    fr = FunctionReport("f", None, None, calls=3)
    assert enrich(Report((fr,))).functions[0] == fr


def test_a_raised_fullgraph_break_is_added_to_the_closest_function():
    from bcfront.cli.advice import with_raised_break
    from bcfront.errors import GraphBreakError

    outer = FunctionReport("outer", "/p/m.py", 1, calls=1)
    inner = FunctionReport("inner", "/p/m.py", 10, calls=1)
    other = FunctionReport("other", "/p/o.py", 1, calls=1)
    exc = GraphBreakError(
        "data-dependent-branch",
        "truth of a tensor",
        "/p/m.py",
        12,
        instruction="POP_JUMP_IF_FALSE at offset 8",
    )
    out = with_raised_break(Report((outer, inner, other)), exc)
    got = {f.function: f.graph_breaks for f in out.functions}
    assert got["outer"] == () and got["other"] == ()
    (b,) = got["inner"]
    assert (b.reason, b.lineno, b.instruction) == (
        "data-dependent-branch",
        12,
        "POP_JUMP_IF_FALSE at offset 8",
    )
    assert "fullgraph=True" in b.message
    # Recorded already (same line): not added twice; other exceptions: nothing added.
    assert with_raised_break(out, exc) == out
    assert with_raised_break(out, ValueError("x")) == out
