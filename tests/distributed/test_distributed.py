"""Captured code on torch.distributed: 2 gloo ranks on loopback, one spawn for every check.

The ranks (`workers.py`) run the collectives, a small GPT trained with DDP and with FSDP2
(``fully_shard``), each under bcfront and in eager on the same ranks, and a single-process
run on the full batch; these tests assert on what they report.  4 ranks: ``slow``.
"""

from __future__ import annotations

import pytest

from .launch import run

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def ranks():
    return run("all", world=2)


def _close(a, b, tol=1e-5):
    return len(a) == len(b) and all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b))


@pytest.mark.parametrize("fn", ["inplace", "functional"])
def test_collectives_match_eager_in_one_graph(ranks, fn):
    for r in ranks:
        c = r["collectives"][fn]
        assert c["same"], fn
        assert c["breaks"] == [] and c["graphs"] == 1 and c["recompiles"] == 0
        assert "_c10d_functional.all_reduce" in c["code"] and "wait_tensor" in c["code"]


def test_collective_waits_sink_to_first_use(ranks):
    code = ranks[0]["collectives"]["functional"]["code"].splitlines()
    calls = [i for i, line in enumerate(code) if "_c10d_functional." in line and "wait_tensor" not in line]
    first_wait = next(i for i, line in enumerate(code) if "wait_tensor" in line)
    # the all_reduce's wait comes after the cos computed between it and its use
    assert first_wait > calls[0] + 1
    assert any("cos" in line for line in code[calls[0] : first_wait])


def test_rank_and_world_size_are_guarded(ranks):
    guards = ranks[0]["collectives"]["inplace"]["guards"]
    assert any("get_rank" in g for g in guards) and any("group.WORLD" in g for g in guards)


@pytest.mark.parametrize("fn", ["async_op", "async_poll", "async_escapes", "async_dropped"])
def test_async_work_handles_match_eager_in_one_graph(ranks, fn):
    for r in ranks:
        c = r["collectives"][fn]
        assert c["same"], fn
        assert c["breaks"] == [] and c["graphs"] == 1 and c["recompiles"] == 0


def test_async_wait_after_a_break_matches_eager(ranks):
    for r in ranks:
        c = r["collectives"]["async_across_break"]
        assert c["same"] and c["graphs"] == 2 and "collective" not in c["breaks"]
        assert "wait_tensor" in c["code"].split("def ")[-1]  # waited in the continuation


def test_ddp_forward_captures_and_trains_like_eager(ranks):
    for r in ranks:
        d = r["ddp"]
        assert d["breaks"] == [] and d["native"] == [] and d["graphs"] >= 1
        assert d["recompiles"] == 0
        assert d["cap_losses"] == d["eager_losses"]
        assert d["params_vs_eager"]
        assert "_pre_forward" in d["code"] and "_post_forward" in d["code"]


def test_ddp_matches_single_process_full_batch(ranks):
    mean = [sum(x) / len(ranks) for x in zip(*(r["ddp"]["cap_losses"] for r in ranks))]
    assert _close(mean, ranks[0]["ddp"]["single_losses"])
    assert ranks[0]["ddp"]["params_vs_single"]


def test_ddp_no_sync_keeps_gradients_local(ranks):
    for r in ranks:
        assert r["ddp"]["no_sync_local"] and r["ddp"]["synced_after_no_sync"]


def test_fsdp2_trains_like_eager_and_reports_what_runs_natively(ranks):
    for r in ranks:
        f = r["fsdp"]
        assert f["cap_losses"] == f["eager_losses"] and f["params_vs_eager"]
        assert f["graphs"] >= 1 or f["breaks"], "FSDP2 ran natively without a reported reason"
        assert all(":" in b for b in f["breaks"])
    mean = [sum(x) / len(ranks) for x in zip(*(r["fsdp"]["cap_losses"] for r in ranks))]
    assert _close(mean, ranks[0]["fsdp"]["single_losses"]) and ranks[0]["fsdp"]["params_vs_single"]


@pytest.mark.slow
def test_four_ranks_ddp_and_fsdp():
    res = run("all", world=4, timeout=600)
    for r in res:
        assert all(c["same"] for c in r["collectives"].values())
        assert r["ddp"]["breaks"] == [] and r["ddp"]["cap_losses"] == r["ddp"]["eager_losses"]
        assert r["ddp"]["params_vs_eager"] and r["ddp"]["params_vs_single"]
        assert r["fsdp"]["params_vs_eager"] and r["fsdp"]["params_vs_single"]


def test_a_raising_rank_does_not_hang_the_others():
    from .launch import RankFailed

    with pytest.raises(RankFailed, match="rank 1"):
        run("raise_on_rank1", world=2, timeout=120)
