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
        for key in (
            "ratio_full_to_networkx",
            "ratio_target_phases_to_networkx",
            "ratio_core_to_networkx",
            "ratio_dominance_to_networkx",
        ):
            assert section[key] is not None and section[key] > 0
    # the instruction count against dis (caches skipped, EXTENDED_ARG folded)
    expected = sum(1 for c in codes for ins in dis.get_instructions(c) if ins.opname != "EXTENDED_ARG")
    assert res["code_objects"] == len(codes)
    assert res["instructions"] == expected


def test_vs_dis_times_both_sides_with_the_collector_on_and_off(load_tool):
    tool = load_tool("bench_analysis")
    from corpus import stdlib_code_objects

    res = tool.run_vs_dis(stdlib_code_objects(limit=40), chunk=15)
    assert res["code_objects"] == 40
    for side in ("collector_on", "collector_off"):
        r = res[side]
        assert r["dis_seconds"] > 0 and r["all_phases_seconds"] > 0 and r["target_phases_seconds"] > 0
        assert r["ratio_all_phases_to_dis"] > 0 and r["ratio_target_phases_to_dis"] > 0
    text = tool.table({**tool.run(stdlib_code_objects(limit=5), chunk=5), "vs_dis": res})
    assert "against list(dis.get_instructions(code))" in text


def test_cpu_info_reads_the_first_processor_entry_only(load_tool, tmp_path):
    tool = load_tool("bench_analysis")
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
        "model\t\t: 1\nmodel name\t: AMD EPYC\nstepping\t: 1\nflags\t\t: fpu\n\n"
        "processor\t: 1\nvendor_id\t: Other\ncpu family\t: 6\nmodel\t\t: 85\n"
    )
    assert tool.cpu_info(str(cpuinfo)) == {
        "vendor": "AuthenticAMD",
        "family": "25",
        "model": "1",
        "name": "AMD EPYC",
        "stepping": "1",
    }
    assert tool.cpu_info(str(tmp_path / "absent")) == {}


def test_results_name_the_networkx_version_they_were_measured_against(load_tool):
    from importlib.metadata import version

    env = load_tool("bench_analysis").environment()
    assert env["networkx_version"] == version("networkx")
    assert set(env) == {"machine", "cpu", "networkx_version"}


def test_by_kind_partitions_the_code_objects_as_their_tables_and_jumps_say(load_tool):
    tool = load_tool("bench_analysis")
    from corpus import stdlib_code_objects

    codes = stdlib_code_objects(limit=120)
    groups = tool.run_by_kind(codes, chunk=40)
    assert list(groups) == list(tool.KINDS)
    assert sum(g["code_objects"] for g in groups.values()) == len(codes)
    # oracles: the exception table itself, and dis's jump opcodes
    assert groups["with a handler"]["code_objects"] == sum(1 for c in codes if c.co_exceptiontable)
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    for c in codes:
        if tool.kind_of(c) == "one block":
            assert not c.co_exceptiontable
            assert not any(ins.opcode in jumps for ins in dis.get_instructions(c))
    for kind, g in groups.items():
        assert g["code_objects"] > 0, kind
        assert g["ratio_target_phases_to_networkx"] > 0 and g["errors"] == {}
        expected = sum(
            1
            for c in codes
            if tool.kind_of(c) == kind
            for ins in dis.get_instructions(c)
            if ins.opname != "EXTENDED_ARG"
        )
        assert g["instructions"] == expected
