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


def _fsdp_forward_captured(f: dict) -> None:
    """The checks of a captured FSDP2 training run on one rank (`workers.fsdp`)."""
    assert f["cap_losses"] == f["eager_losses"] and f["params_vs_eager"]
    assert f["native"] == [] and not f["collectives_in_graphs"]  # the collectives stay FSDP's
    bodies = [g for g in f["functions"] if not g["fsdp_call"]]
    calls = [g for g in f["functions"] if g["fsdp_call"]]
    # one capture per sharded module (the root and each block), each with its forward's
    assert sorted(g["name"] for g in calls) == ["Block.forward", "Block.forward", "GPT.forward"]
    assert sorted((g["name"], g["graphs"]) for g in bodies) == [
        ("Block.forward", 1),
        ("Block.forward", 1),
        ("GPT.forward", 1),
    ]
    # one graph per sharded module's forward, no break anywhere: the blocks' calls are
    # nodes of the root's graph
    assert f["graphs"] == 3 and f["breaks"] == []
    # no recompile: each forward is traced once, on the first step
    assert all(g["recompiles"] == [] for g in f["functions"])


def _root_forward_calls_blocks_in_its_graph(f: dict, world: int) -> None:
    """The root's forward: one graph, no break, each sharded block's call one node of it
    that explain names with its process group, FSDP's hooks said to run inside it."""
    root = f["root_forward"]
    assert root["graphs"] == 1 and root["breaks"] == []
    for i in range(2):
        node = f"fsdp_call[FSDPBlock L['self'].blocks._modules['{i}'], group '0' ({world} ranks)]("
        assert root["code"].count(node) == 1, root["code"]
    notes = [n for n in root["notes"] if "opaque node" in n]
    assert len(notes) == 2 and all("all-gather" in n and "reduce-scatter" in n for n in notes)


def test_fsdp2_forward_captures_one_graph_per_module_and_trains_like_eager(ranks):
    for r in ranks:
        _fsdp_forward_captured(r["fsdp"])


def test_fsdp2_root_forward_has_no_breaks_blocks_are_call_nodes(ranks):
    for r in ranks:
        _root_forward_calls_blocks_in_its_graph(r["fsdp"], len(ranks))
        assert r["fsdp"]["cap_losses"] == r["fsdp"]["eager_losses"] and r["fsdp"]["params_vs_eager"]


def test_fsdp2_matches_single_process_full_batch(ranks):
    mean = [sum(x) / len(ranks) for x in zip(*(r["fsdp"]["cap_losses"] for r in ranks))]
    assert _close(mean, ranks[0]["fsdp"]["single_losses"]) and ranks[0]["fsdp"]["params_vs_single"]


def test_fsdp2_autograd_saves_and_frees_what_eager_does(ranks):
    for r in ranks:
        assert any(g["graphs"] for g in r["fsdp"]["functions"])  # (captured, not native)
        eager, cap = r["fsdp"]["effects"]["eager"], r["fsdp"]["effects"]["cap"]
        assert cap["saved"] == eager["saved"]
        assert any(s.startswith("blocks.0.") for s in cap["saved"])  # the unsharded parameters
        assert cap["storage_after_forward"] == eager["storage_after_forward"]
        freed = [n for n, nbytes in cap["storage_after_forward"] if nbytes == 0]
        assert freed and all(n.startswith("blocks.") for n in freed)  # resharded after forward


@pytest.fixture(scope="module")
def one_rank():
    return run("fsdp_share", world=1)[0]


def test_fsdp2_every_forward_op_runs_in_a_graph(one_rank):
    fns = one_rank["functions"]
    block_bodies = [g for g in fns if g["name"] == "Block.forward" and not g["fsdp_call"]]
    block_calls = [g for g in fns if g["name"] == "Block.forward" and g["fsdp_call"]]
    (root_body,) = [g for g in fns if g["name"] == "GPT.forward" and not g["fsdp_call"]]
    (root_call,) = [g for g in fns if g["name"] == "GPT.forward" and g["fsdp_call"]]
    for g in block_bodies:
        assert (g["in_graphs"], g["native"]) == (one_rank["eager_block_ops"], 0)
    # the root's forward runs natively only the nested blocks' FSDP hooks (their calls' own
    # native ops); every op of its own is in a graph: eager's, less ``torch.arange(T)``,
    # which reads no input and is computed once when the graph is compiled
    assert root_body["native"] == sum(g["native"] for g in block_calls) > 0
    assert root_body["in_graphs"] == root_call["in_graphs"] == one_rank["eager_forward_ops"] - 1


def test_fsdp2_captures_keep_nothing_alive(one_rank):
    assert any(g["graphs"] for g in one_rank["functions"])  # (captured, not native)
    assert not one_rank["model_alive_after_del"]


def test_fsdp2_state_changed_between_calls_matches_eager(one_rank):
    c = dict(one_rank["changed_states"])
    fns = c.pop("functions")
    assert all(c.values()), c
    # the forwards ran captured, and no_grad was caught by a guard (a recompile), not assumed
    assert all(g["graphs"] for g in fns if not g["fsdp_call"] and g["name"].endswith("Block.forward"))
    assert any(g["recompiles"] for g in fns if g["name"] == "GPT.forward" and not g["fsdp_call"])


def test_fsdp2_block_with_a_users_hook_breaks_with_the_reason(one_rank):
    for h in one_rank["hooked_block"].values():
        assert h["same"] and h["native"] == []
        assert (
            h["breaks"][0].startswith("module-hooks") and "forward hooks other than FSDP's" in h["breaks"][0]
        )
        assert h["block_graphs"] == 2  # each block's forward in its own graph, hooked or not
    # hooked block 1: block 0's call is a node of the root's graph, the hooked call the break
    assert one_rank["hooked_block"]["block1"]["nodes"] == 1
    assert len(one_rank["hooked_block"]["block1"]["breaks"]) == 1


def test_fsdp2_module_without_nested_ones_is_one_graph_under_fullgraph(one_rank):
    assert one_rank["single_module"] == {"same": True, "breaks": [], "graphs": 1}


def test_fsdp2_model_called_from_a_captured_function(one_rank):
    v = one_rank["via_function"]
    assert v["same"]
    assert [g["name"] for g in v["functions"] if g["fsdp_call"]] == ["GPT.forward"] + ["Block.forward"] * 2
    assert sum(g["graphs"] for g in v["functions"] if g["name"] == "Block.forward") == 2
    assert all(b.startswith("module-hooks: FSDP") and "fully_shard'ed" in b for b in v["breaks"])


def test_fsdp2_model_called_from_a_captured_function_is_not_kept_alive():
    assert run("fsdp_via_function_keeps_model", world=1)[0] == {"alive": False}


@pytest.mark.slow
def test_four_ranks_ddp_and_fsdp():
    res = run("all", world=4, timeout=600)
    for r in res:
        assert all(c["same"] for c in r["collectives"].values())
        assert r["ddp"]["breaks"] == [] and r["ddp"]["cap_losses"] == r["ddp"]["eager_losses"]
        assert r["ddp"]["params_vs_eager"] and r["ddp"]["params_vs_single"]
        _fsdp_forward_captured(r["fsdp"])
        _root_forward_calls_blocks_in_its_graph(r["fsdp"], 4)
        assert r["fsdp"]["params_vs_single"]
        assert r["fsdp"]["effects"]["cap"] == r["fsdp"]["effects"]["eager"]


def test_an_error_on_one_rank_after_a_graphs_collectives_keeps_the_ranks_paired():
    """The CI flake of session 20: rank 0's graph failed after issuing collectives and the
    function reran natively, issuing them again on rank 0 alone; the ranks' collectives no
    longer paired up and a rank aborted.  Now the error propagates as eager's does, and
    every later collective still pairs up."""
    ranks = run("error_after_collectives", world=2, timeout=120)
    ok = ["ok"] * 6
    assert ranks[0]["outcomes"] == ["ok", "ok", "IndexError", "IndexError", "ok", "ok"]
    assert ranks[1]["outcomes"] == ok
    assert all(r["summed"] == [True] * 3 for r in ranks)


def test_a_raising_rank_does_not_hang_the_others():
    from .launch import RankFailed

    with pytest.raises(RankFailed, match="rank 1"):
        run("raise_on_rank1", world=2, timeout=120)


def test_a_rank_killed_by_a_signal_is_reported_with_its_python_stacks():
    """A rank that aborts (a corrupted heap, a gloo thread's ``terminate``) fails the run
    loudly, its output first: the signal, and faulthandler's stacks of its threads."""
    from .launch import RankFailed

    with pytest.raises(RankFailed) as e:
        run("abort_on_rank1", world=2, timeout=120)
    msg = str(e.value)
    assert msg.startswith("abort_on_rank1: rank 1 exited with -6 (SIGABRT)\n--- rank 1 ")
    dead = msg.split("--- rank 0 ")[0]
    assert "Fatal Python error: Aborted" in dead and "in abort_on_rank1" in dead
