"""tools/bench_models.py on one tiny model, few repeats: the JSON and the Markdown table
hold every measurement, consistent with each other and with the zoo (no timing asserted)."""

from __future__ import annotations

import importlib.util
import json

import pytest

# find_spec, not importorskip: timm and transformers import torchvision, which must be
# imported through tests/models/vision_cpu.py beside the CPU torch (the tool does that).
missing = [m for m in ("torch", "torchvision", "transformers", "timm") if importlib.util.find_spec(m) is None]
if missing:
    pytest.skip(f"needs {', '.join(missing)}", allow_module_level=True)

MODEL = "hf_bert"  # the quickest entry to capture with both systems


def test_bench_one_model(load_tool, tmp_path, capsys):
    tool = load_tool("bench_models")
    out, md = tmp_path / "bench.json", tmp_path / "bench.md"
    argv = ["--models", MODEL, "--repeats", "2", "--inner", "1", "--out", str(out), "--markdown", str(md)]
    assert tool.main(argv) == 0
    res = json.loads(out.read_text())
    row = res["models"][MODEL]
    assert "error" not in row, row
    assert row["matches_eager"] is True
    assert 0.0 <= row["share"] <= 1.0 and row["reference_ops"] > 0 and row["ops"] > 0
    assert row["share"] >= tool.real_zoo.EXPECT[MODEL].share
    assert row["breaks"] <= tool.real_zoo.EXPECT[MODEL].breaks
    assert row["attn"] == "sdpa" and row["kind"] == "inference" and isinstance(row["fullgraph"], bool)
    for key in ("bcfront_first_s", "torch_compile_first_s", "eager_ms", "bcfront_ms", "torch_compile_ms"):
        assert row[key] > 0, key
    assert row["bcfront_cached_over_eager"] == pytest.approx(row["bcfront_ms"] / row["eager_ms"])
    geo = res["geomean"]["bcfront_cached_over_eager"]
    assert geo == pytest.approx(row["bcfront_cached_over_eager"])  # one model: its own ratio
    meta = res["meta"]
    assert meta["repeats"] == 2 and meta["torch"] and meta["transformers"] and meta["timm"]
    table = md.read_text()
    assert "| model | attn | breaks |" in table and f"| {MODEL} | sdpa | {row['breaks']} |" in table
    assert meta["transformers"] in table and "Geomean cached/eager" in table
    assert MODEL in capsys.readouterr().out


def test_unknown_model_is_refused(load_tool, tmp_path):
    tool = load_tool("bench_models")
    with pytest.raises(SystemExit):
        tool.main(["--models", "no_such_model", "--out", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


def test_torch_compile_breaks_are_each_models_own(load_tool, tmp_path):
    """torch._dynamo.reset() leaves dynamo's counters: breaks counted before (another model,
    here planted) must not be reported as this model's."""
    import torch

    tool = load_tool("bench_models")
    torch._dynamo.utils.counters["graph_break"]["planted by the test"] += 3
    out = tmp_path / "bench.json"
    assert tool.main(["--models", MODEL, "--repeats", "1", "--inner", "1", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["models"][MODEL]["torch_compile_breaks"] == 0
