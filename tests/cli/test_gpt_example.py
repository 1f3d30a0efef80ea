"""The main job: `bcfront-explain examples/gpt.py`, end to end (needs torch and capture)."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("torch")

from bcfront.cli.schema import validate

from .helpers import EXAMPLES, expected_breaks, run_cli

GPT = EXAMPLES / "gpt.py"
BREAK_LINE = next(iter(expected_breaks(GPT)))


@pytest.fixture(scope="module")
def main_run():
    return run_cli(str(GPT))


@pytest.fixture(scope="module")
def json_run():
    return run_cli("--json", str(GPT))


def test_script_output_then_report(main_run):
    r = main_run
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.count("matches eager: True") == 2  # forward and generation agree
    assert out.index("generated:") < out.index("bcfront explain:")
    assert "Traceback" not in r.stderr


def test_report_shows_the_deliberate_break(main_run):
    out = main_run.stdout
    assert "pick_next" in out
    assert f"gpt.py:{BREAK_LINE}" in out
    assert "data-dependent-branch" in out or "branch" in out
    assert "(best[:, :1] == prev).any()" in out  # the source line itself


def test_dynamic_shapes_leave_one_recompile_per_function(main_run):
    text = " ".join(main_run.stdout.split())
    assert "recompile storm" not in text
    assert "dynamic sizes: s0 = L['idx'].shape[1]" in text
    m = re.search(r"(\d+) captured functions, \d+ graphs, \d+ graph breaks, (\d+) recompiles", text)
    assert m and int(m.group(2)) <= int(m.group(1)), text[:300]


def test_static_report_names_the_recompile_storm_and_the_fix():
    r = run_cli(str(GPT), "--static")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "recompile storm" in text
    assert re.search(r"the guard on \S*idx\S* failed on \d+ of \d+ calls", text)
    assert "bcfront.mark_dynamic(idx, 1)" in text


def test_fixed_window_has_no_storm():
    r = run_cli(str(GPT), "--static", "--fixed-window")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("matches eager: True") == 2
    assert "recompile storm" not in r.stdout


def test_json_report(json_run):
    r = json_run
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert validate(data) == []
    assert "matches eager: True" in r.stderr  # the script's stdout moved aside
    fns = {f["function"]: f for f in data["functions"]}
    pick = next(f for name, f in fns.items() if "pick_next" in name)
    assert pick["calls"] >= 6
    lines = {b["lineno"] for b in pick["graph_breaks"]}
    assert BREAK_LINE in lines
    model = next(f for name, f in fns.items() if "pick_next" not in name)
    # the second length recaptures with a symbolic length, which serves the rest
    assert model["graphs"] and len(model["recompiles"]) == 1
    assert any(g["kind"] == "SHAPE" for g in model["guards"])
    assert not any("recompile storm" in w for w in model["warnings"])


def test_time_split_shown_exactly_when_measured(main_run, json_run):
    for f in json.loads(json_run.stdout)["functions"]:
        measured = f["compiled_seconds"] + f["python_seconds"] > 0
        calls_line = main_run.stdout.split(f"{f['function']}  ", 1)[1].splitlines()[1]
        assert ("time split not measured" in calls_line) is not measured, calls_line
        assert ("% compiled" in calls_line) is measured


def test_every_call_of_the_script_is_timed(json_run):
    fns = json.loads(json_run.stdout)["functions"]
    for f in fns:
        assert f["timed_calls"] == f["calls"] > 0, f["function"]
        assert f["compiled_seconds"] + f["python_seconds"] <= f["total_seconds"] + 1e-9
        assert f["capture_seconds"] <= f["total_seconds"] + 1e-9
    model = next(f for f in fns if "pick_next" not in f["function"])
    assert model["compiled_seconds"] > 0  # its graphs ran, and were timed
