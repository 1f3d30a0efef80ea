"""The static break predictor against hand labels (torch-free: files are compiled, never run)."""

from __future__ import annotations

import json

import pytest

from bcfront.cli.static import predict_file

from .helpers import CORPUS, EXAMPLES, expected_breaks, run_cli
from .static_cases import CASES, labels

THRESHOLD = 0.5  # the default a person would use: "likely"


def predicted(path, threshold=THRESHOLD) -> dict[int, str]:
    report = predict_file(str(path))
    return {p.lineno: p.reason for p in report.predictions if p.confidence >= threshold}


@pytest.mark.parametrize("name", sorted(CASES))
def test_named_cases(tmp_path, name, low_recursion_limit):
    src = CASES[name].lstrip("\n")
    p = tmp_path / f"{name}.py"
    p.write_text(src)
    assert predicted(p) == labels(src)


CORPUS_FILES = sorted(CORPUS.glob("*.py")) + [EXAMPLES / "gpt.py"]


# Labelled breaks static analysis cannot see, each with the reason why.
KNOWN_MISSES = {
    ("hard.py", 25): "the function is picked from a dict at run time (OPS[name](x))",
}


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_example_corpus_labels(path):
    want = {
        line: reason
        for line, reason in expected_breaks(path).items()
        if (path.name, line) not in KNOWN_MISSES
    }
    assert predicted(path) == want


def test_known_misses_are_still_labelled_and_missed():
    for name, line in KNOWN_MISSES:
        path = CORPUS / name
        assert line in expected_breaks(path) and line not in predicted(path)


def test_confidence_is_lower_for_guessed_tensors(tmp_path):
    p = tmp_path / "guess.py"
    p.write_text(
        "import bcfront\n@bcfront.capture\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"
    )
    (pred,) = predict_file(str(p)).predictions
    assert pred.lineno == 4 and 0 < pred.confidence < 0.9
    assert "if the value involved is a tensor" in pred.message


def test_every_prediction_is_well_formed():
    for path in CORPUS_FILES:
        report = predict_file(str(path))
        for p in report.predictions:
            assert 0.0 < p.confidence <= 1.0
            assert p.lineno and p.source_line
            assert p.message and p.reason and p.instruction
            assert any(f.function == p.function and f.captured for f in report.functions)


def test_cli_static_text_and_json(tmp_path):
    path = CORPUS / "scalars.py"
    r = run_cli("--static", str(path))
    assert r.returncode == 0, r.stderr
    assert "4 predicted graph breaks" in r.stdout and "(not run)" in r.stdout
    assert "data-dependent" in r.stdout and "m = x.mean().item()" in r.stdout
    js = run_cli("--static", str(path), "--json")
    data = json.loads(js.stdout)
    assert data["kind"] == "static-predictions" and data["schema_version"] == 1
    lines = sorted(p["lineno"] for f in data["functions"] for p in f["predictions"])
    assert lines == sorted(expected_breaks(path))
    assert {f["function"] for f in data["functions"]} >= {"threshold", "no_conversion"}


def test_cli_static_min_confidence_filters(tmp_path):
    p = tmp_path / "mixed.py"
    p.write_text(
        "import torch\nimport bcfront\n@bcfront.capture\ndef f(x, t: torch.Tensor):\n"
        "    if x.sum() > 0:\n        x = x + 1\n    if t.sum() > 0:\n"
        "        x = x - 1\n    return x\n"
    )

    def lines(*extra):
        data = json.loads(run_cli("--static", str(p), "--json", *extra).stdout)
        return sorted(q["lineno"] for f in data["functions"] for q in f["predictions"])

    assert lines() == [5, 7]
    assert lines("--min-confidence", "0.8") == [7]


@pytest.mark.parametrize(
    "args, code, words",
    [
        (["--static", "nope.py"], 2, "no such file"),
        (["--static", "{bad}"], 1, "syntax error"),
    ],
)
def test_cli_static_errors(tmp_path, args, code, words):
    bad = tmp_path / "bad.py"
    bad.write_text("if True\n  pass\n")
    r = run_cli(*[a.format(bad=bad) for a in args], cwd=tmp_path)
    assert r.returncode == code and words in r.stderr and "Traceback" not in r.stderr
