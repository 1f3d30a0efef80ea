"""`bcfront-explain` under torchrun: one report per rank, the rank in the file name."""

from __future__ import annotations

from bcfront.cli.ranks import output_path


def test_outside_torchrun_nothing_changes(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert output_path(None, True) is None and output_path("r.json", True) == "r.json"


def test_under_torchrun_each_rank_writes_its_own_file(monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert output_path(None, True) == "bcfront-explain.rank1.json"
    assert output_path("out/r.json", True) == "out/r.rank1.json"
    assert output_path("report", False) == "report.rank1"
    assert output_path(None, False) is None  # text goes to the rank's stdout
