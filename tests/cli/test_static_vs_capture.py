"""The static predictor scored against the breaks capture really takes (needs torch and capture)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


# Floors, not targets: tools/results/static_precision.json has the measured numbers.
MIN_PRECISION = 0.8
MIN_RECALL = 0.7


# A quick sample by default (one file per kind of break, plus the held-out
# file); the whole corpus with -m slow.
SAMPLE = ("branches.py", "scalars.py", "io_calls.py", "holdout.py")


@pytest.fixture(scope="module")
def result(load_tool):
    tool = load_tool("static_precision")
    return tool.evaluate([f for f in tool.default_files() if f.name in SAMPLE])


@pytest.fixture(scope="module")
def full_result(load_tool):
    tool = load_tool("static_precision")
    return tool.evaluate(tool.default_files())


@pytest.mark.slow
def test_whole_corpus_precision_and_recall(full_result):
    assert not [e["file"] for e in full_result["per_file"] if e["actual"] is None]
    s = full_result["against_actual"]["0.5"]
    assert s["precision"] >= MIN_PRECISION and s["recall"] >= MIN_RECALL, s


def test_every_corpus_script_runs_under_capture(result):
    bad = [(e["file"], e["actual_status"]) for e in result["per_file"] if e["actual"] is None]
    assert not bad


def test_precision_and_recall_against_actual_breaks(result):
    s = result["against_actual"]["0.5"]
    assert s["precision"] is not None and s["precision"] >= MIN_PRECISION, s
    assert s["recall"] is not None and s["recall"] >= MIN_RECALL, s


def test_higher_threshold_never_lowers_precision_much(result):
    table = result["against_actual"]
    assert table["0.9"]["fp"] <= table["0.5"]["fp"] <= table["0.3"]["fp"]
