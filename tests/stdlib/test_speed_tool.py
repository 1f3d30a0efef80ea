"""`tools/stdlib_coverage.py --speed` (#30's last target): one ratio of cached-call time to
native time per function captured whole, and their geometric mean.  No timing is asserted,
only that the measurement covers what it names (a cached call, not a first one)."""

from __future__ import annotations

import math


def test_speed_reports_a_cached_ratio_per_function(load_tool, monkeypatch):
    monkeypatch.setenv("BCFRONT_STRICT", "1")  # the tool sets it; restored after the test
    tool = load_tool("stdlib_coverage")
    names = ["heapq.heappush", "posixpath.basename"]
    data = tool.speed(names)
    assert data["functions"] == 2
    assert set(data["ratios"]) == set(names)
    assert all(r > 0 and math.isfinite(r) for r in data["ratios"].values())
    assert math.isclose(data["geomean_ratio"], math.prod(data["ratios"].values()) ** 0.5, rel_tol=1e-2)
    # beside it, in the same run, the Python checks (the reference of the C ones)
    assert math.isfinite(data["geomean_python_links"]) and data["geomean_python_links"] > 0
    assert 0 <= data["slower_python_links"] <= 2


def test_varied_lists_report_entries_and_fallbacks(load_tool, monkeypatch):
    """The varied measure makes its entries first and counts the native fallbacks: on lists
    of 0-8 random ints, each function settles in a few entries and none falls back."""
    monkeypatch.setenv("BCFRONT_STRICT", "1")
    tool = load_tool("stdlib_coverage")
    data = tool.varied_speed(calls=40)
    assert set(data) == set(tool.VARIED)
    for v in data.values():
        assert v["ratio"] > 0 and math.isfinite(v["ratio"])
        assert v["fallbacks"] == 0 and v["entries"] <= 4, v


def test_ratios_of_several_processes_combine_as_their_medians(load_tool):
    tool = load_tool("stdlib_coverage")

    def run(a, b, c):
        ratios = {"f": a, "g": b, "c_entry": c}
        slower = sorted(n for n in ("f", "g") if ratios[n] > 1)
        return {"ratios": ratios, "vs_entry": dict(ratios), "c_entries": ["c_entry"], "slower_python": slower,
                "geomean_python_links": 0.5, "slower_python_links": 1, "c_path": True}  # fmt: skip

    data = tool.combine_speeds([run(0.9, 1.2, 3.0), run(1.1, 0.8, 2.0), run(0.95, 0.7, 2.5)])
    assert data["ratios"] == {"c_entry": 2.5, "f": 0.95, "g": 0.8}
    assert data["slower_python"] == [] and data["python_functions"] == 2 and data["processes"] == 3
    assert data["slower_python_in_processes"] == {"f": 1, "g": 1}
    assert data["slower_python_per_process"] == [1, 1, 0]
    assert math.isclose(data["geomean_ratio_python"], (0.95 * 0.8) ** 0.5, rel_tol=1e-3)


def test_speed_in_processes_measures_in_each_and_combines(load_tool, monkeypatch):
    monkeypatch.setenv("BCFRONT_STRICT", "1")
    tool = load_tool("stdlib_coverage")
    data = tool.speed_in_processes(["heapq.heappush", "posixpath.basename"], 2)
    assert data["processes"] == 2 and data["functions"] == 2
    assert len(data["slower_python_per_process"]) == 2
    assert all(r > 0 and math.isfinite(r) for r in data["ratios"].values())
