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
