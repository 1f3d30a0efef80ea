"""The graphs of captured collectives, in one process: no ranks spawned.

torch's ``fake`` process-group backend (`torch.testing._internal.distributed.fake_pg`)
accepts every collective and communicates nothing, so these tests check the graph's
shape -- which nodes, in which order, which group -- and compare results with eager
only where the fake backend's eager result is defined (it leaves tensors as they are).
What the values are on real ranks: `test_distributed.py` (gloo).  On NCCL (marked
``gpu``): one rank on the GPU, the same shape.
"""

from __future__ import annotations

import time

import pytest
import torch
import torch.distributed as dist

import bcfront

fc = pytest.importorskip("torch.distributed._functional_collectives")

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not built")


@pytest.fixture(scope="module")
def fake_group():
    from torch.testing._internal.distributed.fake_pg import FakeStore

    assert not dist.is_initialized()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    try:
        yield dist.group.WORLD
    finally:
        dist.destroy_process_group()


def _ops(code: str) -> list[str]:
    """The c10d ops and the copies of a graph's code, in order."""
    out = []
    for line in code.splitlines():
        if line.lstrip().startswith("#"):
            continue
        if "_c10d_functional." in line:
            out.append(line.split("_c10d_functional.")[1].split(".")[0])
        elif ".copy_(" in line:
            out.append("copy_")
    return out


def test_inplace_collectives_are_op_wait_copy(fake_group):
    def f(x):
        y = x * 2
        dist.all_reduce(y)
        out = torch.zeros(2 * x.shape[0], x.shape[1])
        dist.all_gather_into_tensor(out, x)
        rs = torch.zeros(x.shape[0] // 2, x.shape[1])
        dist.reduce_scatter_tensor(rs, x)
        b = x.clone()
        dist.broadcast(b, src=1)
        a2a = torch.zeros_like(x)
        dist.all_to_all_single(a2a, x)
        return y + 1, out.shape, rs.shape, b, a2a.shape

    x = torch.arange(12.0).reshape(4, 3)
    report = bcfront.explain(f, x)
    assert report.graph_breaks == [] and len(report.graphs) == 1
    want = ["all_reduce", "wait_tensor", "copy_", "all_gather_into_tensor", "wait_tensor", "copy_"]
    want += ["reduce_scatter_tensor", "wait_tensor", "copy_", "broadcast", "wait_tensor", "copy_"]
    want += ["all_to_all_single", "wait_tensor", "copy_"]
    assert _ops(report.graphs[0].code) == want
    got, eager = bcfront.capture(f)(x.clone()), f(x.clone())
    assert torch.equal(got[0], eager[0]) and got[1:3] == eager[1:3] and torch.equal(got[3], eager[3])


def test_newer_names_are_the_same_collectives(fake_group):
    if not hasattr(dist, "all_gather_single"):
        pytest.skip("torch without dist.all_gather_single")

    def f(x):
        out = torch.zeros(2 * x.shape[0], x.shape[1])
        dist.all_gather_single(out, x)
        rs = torch.zeros(x.shape[0] // 2, x.shape[1])
        dist.reduce_scatter_single(rs, x)
        return out, rs

    report = bcfront.explain(f, torch.ones(4, 3))
    assert report.graph_breaks == []
    assert _ops(report.graphs[0].code)[::3] == ["all_gather_into_tensor", "reduce_scatter_tensor"]


def test_group_identity_rank_and_size_are_guarded(fake_group):
    def f(x):
        dist.all_reduce(x)
        return x * dist.get_world_size() + dist.get_rank()

    report = bcfront.explain(f, torch.ones(3))
    sources = [g.source for g in report.guards]
    assert any("group.WORLD" in s for s in sources) and any("get_rank" in s for s in sources)
    assert "'sum', '0')" in report.graphs[0].code  # the default group's name


def test_async_wait_is_where_wait_is_called(fake_group):
    def f(x):
        y = x * 2
        work = dist.all_reduce(y, async_op=True)
        h = x.cos()
        work.wait()
        return y + h

    x = torch.arange(6.0)
    report = bcfront.explain(f, x)
    assert report.graph_breaks == [] and len(report.graphs) == 1
    code = [ln for ln in report.graphs[0].code.splitlines() if not ln.lstrip().startswith("#")]
    issue = next(i for i, ln in enumerate(code) if "all_reduce" in ln)
    wait = next(i for i, ln in enumerate(code) if "wait_tensor" in ln)
    assert any("cos" in ln for ln in code[issue:wait])  # the other work overlaps the collective
    assert ".copy_(" in code[wait + 1]
    assert torch.equal(bcfront.capture(f)(x), f(x))


def test_async_handle_that_escapes_is_a_real_pending_work(fake_group):
    def f(x):
        y = x + 1
        return y, dist.all_reduce(y, async_op=True)

    report = bcfront.explain(f, torch.ones(3))
    assert report.graph_breaks == []
    assert _ops(report.graphs[0].code) == ["all_reduce"]  # not waited in the graph
    y, work = bcfront.capture(f)(torch.ones(3))
    assert isinstance(work, dist.Work) and work.wait() and work.is_completed()
    assert torch.equal(y, torch.full((3,), 2.0))


def test_async_wait_after_a_break_is_in_the_continuation(fake_group):
    def f(x):
        b = x.clone()
        work = dist.broadcast(b, src=0, async_op=True)
        time.sleep(0)  # a graph break: a C call with effects
        work.wait()
        return b * 2

    report = bcfront.explain(f, torch.ones(3))
    assert report.graph_breaks and len(report.graphs) == 2
    assert _ops(report.graphs[0].code) == ["broadcast"]
    assert _ops(report.graphs[1].code) == ["wait_tensor", "copy_"]
    assert torch.equal(bcfront.capture(f)(torch.ones(3)), f(torch.ones(3)))


def test_async_handle_methods_outside_the_model_break(fake_group, lenient):
    def f(x):
        work = dist.all_reduce(x, async_op=True)
        fut = work.get_future()
        return fut.wait()

    report = bcfront.explain(f, torch.ones(3))
    first = report.graph_breaks[0]  # (then Future.wait, which is torch's Python)
    assert str(first.reason) == "collective" and "get_future" in first.message
    assert torch.equal(bcfront.capture(f)(torch.ones(3))[0], torch.ones(3))


def test_async_handle_dropped_unwaited_still_completes(fake_group):
    def f(x):
        y = x * 5
        dist.all_reduce(y, async_op=True)
        return y

    report = bcfront.explain(f, torch.ones(3))
    assert _ops(report.graphs[0].code) == ["all_reduce"]
    assert torch.equal(bcfront.capture(f)(torch.ones(3)), torch.full((3,), 5.0))


def _issued(fn, *args) -> tuple:
    """(what `fn(*args)` returned, or the name of the error it raised; how many all_reduces
    it issued), counted by torch's profiler."""
    from torch.autograd.profiler_legacy import profile

    with profile() as p:
        try:
            out = fn(*args)
        except IndexError as e:
            out = type(e).__name__
    return out, sum(e.name == "_c10d_functional::all_reduce" for e in p.function_events)


def _reduce_then_index(x, i):
    y = fc.all_reduce(x * 2, "sum", dist.group.WORLD)
    return y[i] + 1  # an index out of range: only the real kernel sees it


def _reduce_then_index_in_try(x, i):
    try:
        y = fc.all_reduce(x * 2, "sum", dist.group.WORLD)
        return y[i] + 1
    except IndexError:
        return "handled"


@pytest.mark.filterwarnings("ignore::bcfront.report.NativeFallbackWarning")  # (the split's rest)
@pytest.mark.parametrize("fn", [_reduce_then_index, _reduce_then_index_in_try])
def test_an_error_after_a_collective_never_issues_it_again(fake_group, fn):
    """A graph that fails past a collective must not rerun the function natively: the
    rerun would issue the collective a second time on this rank alone, and the ranks'
    collectives would no longer pair up (on gloo: one collective's bytes read into
    another's buffer, a rank aborting).  The error reaches the caller -- or, under a try,
    the handler -- after the one collective eager issues."""
    x, good, bad = torch.ones(4, 3), torch.tensor([1]), torch.tensor([10])
    cf = bcfront.capture(fn)
    cf(x, good)  # (captured: the counts below are of the cached entry's calls)
    want, got = _issued(fn, x, good), _issued(cf, x, good)
    assert got[1] == want[1] == 1 and torch.equal(got[0], want[0])
    outcome = "handled" if "try" in fn.__name__ else "IndexError"
    assert _issued(cf, x, bad) == _issued(fn, x, bad) == (outcome, 1)


@pytest.mark.filterwarnings("ignore::bcfront.report.NativeFallbackWarning")  # (the split's rest)
def test_a_collective_a_handler_could_see_fail_after_ends_the_graph(fake_group):
    """Under a try, the region is split before the collective (it runs at the break), so
    the error after it reaches the handler; outside one the graph holds it."""
    inside = bcfront.explain(_reduce_then_index_in_try, torch.ones(4, 3), torch.tensor([1]))
    (split,) = [b for b in inside.graph_breaks if str(b.reason) == "write-before-error"]
    assert "before a collective" in split.message and "fc.all_reduce" in split.source_line
    outside = bcfront.explain(_reduce_then_index, torch.ones(4, 3), torch.tensor([1]))
    assert outside.graph_breaks == [] and _ops(outside.graphs[0].code) == ["all_reduce", "wait_tensor"]


@pytest.mark.filterwarnings("ignore::bcfront.report.NativeFallbackWarning")  # (after the break)
def test_a_collective_of_a_tensor_autograd_records_breaks_with_the_reason(fake_group):
    def f(w):
        return fc.all_reduce(w * 2, "sum", dist.group.WORLD) + 1

    w = torch.ones(3, requires_grad=True)
    report = bcfront.explain(f, w)
    assert [str(b.reason) for b in report.graph_breaks][:1] == ["collective"]
    assert "requires grad: autograd would record the collective" in report.graph_breaks[0].message
    assert torch.equal(bcfront.capture(f)(w), f(w))


@pytest.mark.gpu
def test_nccl_capture_has_the_same_graph_shape(tmp_path):
    """One NCCL rank on the GPU: op, wait (sunk to first use), copy; values as eager."""
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        pytest.skip("needs CUDA and NCCL")
    import torch.distributed._functional_collectives as fc

    assert not dist.is_initialized()
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("nccl", store=store, rank=0, world_size=1, device_id=torch.device("cuda", 0))
    try:

        def f(x):
            y = x * 2
            dist.all_reduce(y)
            a = fc.all_reduce(x, "sum", dist.group.WORLD)
            h = x.cos()
            w = dist.broadcast(h, src=0, async_op=True)
            w.wait()
            return y + 1, a + h

        x = torch.arange(6.0, device="cuda")
        report = bcfront.explain(f, x)
        assert report.graph_breaks == [] and len(report.graphs) == 1
        ops = _ops(report.graphs[0].code)
        assert ops[:3] == ["all_reduce", "wait_tensor", "copy_"] and ops.count("wait_tensor") == 3
        got, want = bcfront.capture(f)(x.clone()), f(x.clone())
        torch.cuda.synchronize()
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    finally:
        dist.destroy_process_group()
