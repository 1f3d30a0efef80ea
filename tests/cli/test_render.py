"""Rendering of explain reports: content, width, colour, verbosity (hand-built reports)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from bcfront.cli.advice import enrich
from bcfront.cli.render import RenderOptions, StripTrailing, render_report
from bcfront.report import Report

from .samples import full_report, source_file

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def render(report, width=100, verbose=False, terminal=False) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=terminal,
        color_system="truecolor" if terminal else None,
        highlight=False,
    )
    render_report(report, console, RenderOptions(verbose=verbose))
    return buf.getvalue()


@pytest.fixture
def report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths below the working directory print relative
    return enrich(full_report(source_file(tmp_path)))


def test_summary_counts_every_break_occurrence(report):
    first = render(report, width=120).strip().splitlines()[0]
    # 3 identical breaks + 1 print break; 2 functions; 3 graphs; 4 recompiles; 1 storm;
    # 1 loop that fell back to native.
    assert first == (
        "bcfront explain: 2 captured functions, 3 graphs, 4 graph breaks, 4 recompiles, 1 warning, "
        "1 native fallback"
    )


def test_native_fallbacks_show_kind_count_place_and_message(report):
    out = render(report)
    assert "Ran natively (1)" in out
    assert "loop-limit ×2" in out and "user_model.py:5" in out and "in step.<resume@60>" in out
    assert "kept recapturing: the rest runs natively" in out


def test_op_share_is_shown_per_function(report):
    out = render(report)
    assert "75% of tensor ops in compiled graphs (6 of 8); 2 ops ran natively" in out


def test_breaks_show_reason_location_source_count_and_stack(report):
    out = render(report)
    assert "data-dependent-branch ×3" in out
    assert "  user_model.py:3" in out  # relative to the working directory
    # The source line was filled in from the file (the report left it empty).
    assert re.search(r"3 .*if y\.sum\(\) > 0:", out)
    assert "POP_JUMP_IF_FALSE at offset 40" in out
    assert "user stack: main (" in out and "→ step (" in out


def test_user_text_is_never_markup(report):
    out = render(report)
    assert "[bold]not markup[/bold]" in out


def test_guards_recompiles_side_effects_and_time(report):
    out = render(report, width=220)  # wide enough that no table cell wraps
    assert "L['x'] is a float32 tensor of shape (4, 8) on cpu" in out
    assert "y = x * 2" in out  # first use of L['x']
    assert "1. L['n']  0 → 1" in out and "4. L['n']  3 → 4" in out  # expected → actual
    assert "failed check: L['n'] == 3" in out
    assert "the value of L['n'] changed" in out
    assert "list.append" in out and "G['log']" in out
    assert "75% compiled" in out and "25% Python" in out
    assert "time split not measured" in out  # helper has no timing
    assert "torch.relu is a C function" in out


def test_recompile_storm_warning_names_guard_and_fix(report):
    out = " ".join(render(report, width=200).split())
    assert "recompile storm: the guard on L['n'] failed on 4 of 6 calls" in out
    assert "stop passing a changing Python scalar" in out


def test_guards_truncated_unless_verbose(report):
    quiet, loud = render(report), render(report, verbose=True)
    assert "more (--verbose shows all)" in quiet and "G['g19']" not in quiet
    assert "G['g19']" in loud and "more (--verbose" not in loud
    # Graph code and kernel source only in verbose mode.
    assert "def graph_1(y):" in loud and "def graph_1(y):" not in quiet
    assert "fused_sub_relu_0" in loud and "@triton.jit" in loud and "@triton.jit" not in quiet
    assert "aten.sort" in quiet  # ops left to torch are always listed


@pytest.mark.parametrize("width", [60, 80, 100, 160])
def test_fits_the_width(report, width):
    for verbose in (False, True):
        lines = render(report, width=width, verbose=verbose).splitlines()
        assert lines and max(len(line) for line in lines) <= width


def test_plain_without_terminal_colour_with(report):
    assert not ANSI.search(render(report))
    coloured = render(report, terminal=True)
    assert ANSI.search(coloured)
    assert "data-dependent-branch" in ANSI.sub("", coloured)


def test_empty_report_says_how_to_capture():
    out = render(Report())
    assert "0 captured functions" in out and "bcfront.capture" in out


def test_strip_trailing_removes_padding_only():
    buf = io.StringIO()
    s = StripTrailing(buf)
    s.write("a  b   \nc")
    s.write("  \n  d  ")
    s.flush()
    assert buf.getvalue() == "a  b\nc\n  d"


def _fr(**kw):
    from bcfront.report import FunctionReport

    return FunctionReport("f", "/x/f.py", 1, calls=3, **kw)


def test_recompiles_show_what_changed_field_by_field():
    from bcfront.report import Recompile

    exp = "Tensor(torch.float32, device='cpu', shape=[2, 8], stride=[8, 1], requires_grad=False)"
    act = "Tensor(torch.float32, device='cpu', shape=[2, 9], stride=[9, 1], requires_grad=False)"
    fr = _fr(
        recompiles=(Recompile("f", f"check_tensor(L['x'], {exp})", "L['x']", exp, act, "shape changed"),)
    )
    out = render(Report((fr,)), width=200)
    assert "1. L['x']  shape [2, 8] → [2, 9], stride [8, 1] → [9, 1]" in out
    assert "device" not in out.split("1. L['x']")[1].splitlines()[0]  # unchanged fields omitted


def test_identical_graphs_are_grouped():
    from bcfront.report import GraphInfo

    gs = tuple(GraphInfo("f", "eager", 66, "code") for _ in range(5)) + (
        GraphInfo("f (continuation)", "eager", 3, "code"),
    )
    out = render(Report((_fr(graphs=gs),)))
    assert "Graphs (6)" in out and "f ×5" in out and re.search(r"2\s+f \(continuation\)", out)


def test_guards_on_arguments_come_first():
    from bcfront.report import GuardInfo

    noise = tuple(GuardInfo(f"torch.nn.hooks_{i}", "LENGTH", f"len(h{i}) == 0") for i in range(20))
    gs = noise + (GuardInfo("L['x']", "TENSOR_MATCH", "x is a tensor"),)
    out = render(Report((_fr(guards=gs),)), width=200)
    assert "L['x']" in out and "Guards (21)  20 LENGTH, 1 TENSOR_MATCH" in out
    assert out.index("L['x']") < out.index("torch.nn.hooks_0")
