"""tools/bench_analysis.py on a small sample: both measurements (collector on and off)
are made and reported, and the counts it reports agree with `dis`."""
from __future__ import annotations

import dis

import pytest

pytest.importorskip("networkx")


def test_reports_every_phase_with_the_collector_on_and_off(load_tool):
    tool = load_tool("bench_analysis")
    from corpus import stdlib_code_objects
    codes = stdlib_code_objects(limit=60)
    res = tool.run(codes, chunk=25)
    phases = [p for p, _ in tool.available_phases()[0]]
    assert list(res["phases"]) == phases
    assert list(res["collector_off"]["phases"]) == phases
    assert all(r["errors"] == 0 for r in res["phases"].values())
    for section in (res, res["collector_off"]):
        for key in ("ratio_full_to_networkx", "ratio_target_phases_to_networkx",
                    "ratio_core_to_networkx", "ratio_dominance_to_networkx"):
            assert section[key] is not None and section[key] > 0
    # the instruction count against dis (caches skipped, EXTENDED_ARG folded)
    expected = sum(1 for c in codes for ins in dis.get_instructions(c)
                   if ins.opname != "EXTENDED_ARG")
    assert res["code_objects"] == len(codes)
    assert res["instructions"] == expected
