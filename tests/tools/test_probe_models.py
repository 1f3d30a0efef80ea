"""tools/probe_models.py on two tiny models: the JSON holds each measurement, the
summary counts them, and an unknown name is refused (no timing asserted)."""

from __future__ import annotations

import importlib.util
import json

import pytest

# find_spec, not importorskip: timm and transformers import torchvision, which must be
# imported through tests/models/vision_cpu.py beside the CPU torch (the tool does that).
missing = [m for m in ("torch", "torchvision", "transformers", "timm") if importlib.util.find_spec(m) is None]
if missing:
    pytest.skip(f"needs {', '.join(missing)}", allow_module_level=True)

MODELS = ("fnet", "hubert")  # an encoder with torch.fft; the weight-normed positional conv


def test_probe_two_models(load_tool, tmp_path, capsys):
    tool = load_tool("probe_models")
    out = tmp_path / "probe.json"
    assert tool.main(["--models", ",".join(MODELS), "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert list(res["models"]) == list(MODELS)
    for name in MODELS:
        row = res["models"][name]
        assert "error" not in row, row
        assert row["matches_eager"] is True and row["mismatch"] == []
        assert row["reference_ops"] > 0 and row["ops"] > 0 and 0.0 <= row["share"] <= 1.0
        assert row["breaks"] == len(row["break_list"]) and row["fullgraph"] in (True, False)
        assert row["recompiles"] >= 1  # the second call's new shape
    assert res["summary"]["models"] == 2 and res["summary"]["errors"] == 0
    printed = capsys.readouterr().out
    assert all(name in printed for name in MODELS) and "whole" in printed


def test_unknown_model_is_refused(load_tool, tmp_path):
    tool = load_tool("probe_models")
    with pytest.raises(SystemExit):
        tool.main(["--models", "no_such_model", "--out", str(tmp_path / "x.json")])
