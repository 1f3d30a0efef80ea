"""Errors raised by a compiled graph at run time behave as in eager, handlers included.

Fake tensors cannot foresee every error: an index out of range, an embedding
index past the table, a Cholesky factorization of a matrix that is not
positive definite.  Raised inside the compiled region, such an error must
still reach the user's ``except`` and ``finally`` blocks, with the writes
the function made before it (in-place tensor writes, module buffers, list
appends, prints, random draws) exactly as eager leaves them.

Oracle: the plain function run eagerly on identical inputs; compared are the
result (or the exception's type and message), everything printed, the inputs
after the call (tensors, lists, module state) and the random-number stream.
Each case runs a sequence of calls mixing raising and non-raising inputs, so
a cached entry is reused across both.
"""

from __future__ import annotations

import contextlib
import copy
import io

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.explain import family  # noqa: E402

from .corpus_region_errors import (  # noqa: E402
    CASES,
    OVERLAP_CASES,
    SPLIT_CASES,
    Case,
    _idx_ok,
    _t_bad,
    _t_ok,
    except_after_inplace,
    no_handler_no_effects,
    state_blocks_only,
    transpose_in_place_then_index,
)
from .test_torch_semantics import _loss, assert_same  # noqa: E402

# -- the harness --------------------------------------------------------------------------------


def _run(fn, make, seed):
    """(outcome, printed text, arguments after the call, random stream after the call,
    autograd facts: the argument histories and the leaves' grads of a backward from the result)."""
    args = make()
    buf = io.StringIO()
    torch.manual_seed(seed)
    with contextlib.redirect_stdout(buf):
        try:
            outcome = ("return", fn(*args))
        except Exception as e:  # noqa: BLE001 - compared by type and message
            outcome = ("raise", type(e), str(e))
    rand = torch.rand(2)
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    history = [type(a.grad_fn).__name__ for a in tensors]
    backward = None
    if outcome[0] == "return" and any(t.requires_grad for t in tensors):
        loss = _loss(outcome[1])
        if isinstance(loss, torch.Tensor):
            try:
                loss.backward()
            except RuntimeError as e:  # (a saved tensor written in place, as in eager)
                backward = str(e)
    grads = [a.grad for a in tensors if a.is_leaf and a.requires_grad]
    return outcome, buf.getvalue(), args, rand, (history, grads, backward)


def check_case(case: Case, backend: str):
    if case.module:
        torch.manual_seed(0)
        ref = case.fn()
        mod = copy.deepcopy(ref)
        fn_ref, fn_cap = ref, bcfront.capture(mod, backend=backend)
    else:
        ref = mod = None
        fn_ref, fn_cap = case.fn, bcfront.capture(case.fn, backend=backend)
    for i, make in enumerate(case.calls):
        where = f"call {i} ({make.__name__})"
        exp = _run(fn_ref, make, i)
        got = _run(fn_cap, make, i)
        assert got[0][0] == exp[0][0], f"{where}: {got[0]} vs {exp[0]}"
        if exp[0][0] == "raise":
            assert got[0][1:] == exp[0][1:], where
        else:
            assert_same(got[0][1], exp[0][1], where)
        assert got[1] == exp[1], f"{where}: printed {got[1]!r} vs {exp[1]!r}"
        assert_same(list(got[2]), list(exp[2]), where + " args")
        assert_same(got[3], exp[3], where + " random stream")
        if backend == "eager":  # (fx writes inputs back by copy_: CopyBackwards)
            assert got[4][0] == exp[4][0], f"{where}: argument autograd histories"
        assert_same(got[4][1], exp[4][1], where + " grads")
        assert got[4][2] == exp[4][2], f"{where}: backward error"
        if case.module:
            assert_same(dict(mod.state_dict()), dict(ref.state_dict()), where + " state")
    return fn_cap


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_error_matches_eager(name):
    cf = check_case(CASES[name], "eager")
    assert cf.entries and not all(e.native for e in cf.entries), "the function never compiled"


@pytest.mark.parametrize(
    "name",
    ["except_after_inplace", "nested_try", "bn_then_index", "random_draw_before_error", "unused_failing_op"],
)
def test_runtime_error_matches_eager_fx(name):
    check_case(CASES[name], "fx")


def test_writes_to_inputs_come_after_the_computation():
    """The region writes argument storage only once the graph computed everything."""
    cf = bcfront.capture(except_after_inplace, backend="eager")
    cf(*_idx_ok())
    src = cf.entries[0].region_source
    body = src[src.index("try:") :]
    assert "copy_(" in body
    assert body.index("clean") < body.index("copy_(") and "add_(" not in body


@pytest.mark.parametrize("fn", [no_handler_no_effects, state_blocks_only])
def test_unobservable_errors_keep_the_in_place_graph(fn):
    """Without a handler or a pending Python write nothing can see a half-done graph: no
    functional copies (a KV cache update stays one in-place write).  A torch state
    manager's with block is no such handler."""
    cf = bcfront.capture(fn, backend="eager")
    cf(*_idx_ok())
    src = cf.entries[0].region_source
    assert "mul_(" in src and "copy_(" not in src


@pytest.mark.parametrize(
    "name",
    ["transpose_in_place_then_index", "write_through_unfold", "grad_recorded_write", "transpose_in_loop"],
)
def test_split_cases_match_eager_fx(name):
    check_case(SPLIT_CASES[name], "fx")


def _all_entries(cf):
    """The entries of a captured function and of every continuation it made, transitively."""
    return [e for c in family(cf) for e in c.entries]


@pytest.mark.parametrize(
    "name", ["transpose_in_place_then_index", "write_through_unfold", "grad_recorded_write"]
)
def test_region_ends_before_the_write_and_the_rest_is_captured(name):
    """The write that no pure graph can undo ends the region (a graph break explain names);
    the work after it is still compiled, in the continuation's own graph."""
    cf = check_case(SPLIT_CASES[name], "eager")
    entries = _all_entries(cf)
    reasons = [b.reason for e in entries for b in e.breaks]
    assert "write-before-error" in reasons
    after = [
        e
        for e in entries
        if not e.native and e.graphs and any("getitem" in g.code or "[" in g.code for g in e.graphs)
    ]
    assert after, "the indexing after the write was not compiled"
    assert not any("propagates as it is" in n for e in entries for n in e.notes)


def transpose_unobserved(x, idx):
    """No handler and nothing pending: no region split, the in-place graph stays whole."""
    x.t_()
    return x[idx]


def test_unobservable_write_does_not_split():
    case = Case(transpose_unobserved, (_t_ok, _t_bad, _t_ok))
    cf = check_case(case, "eager")
    assert not any(b.reason == "write-before-error" for e in _all_entries(cf) for b in e.breaks)


def test_fullgraph_names_the_split():
    """fullgraph=True cannot end the region early: the capture says why."""
    cf = bcfront.capture(transpose_in_place_then_index, fullgraph=True)
    with pytest.raises(bcfront.GraphBreakError) as info:
        cf(*_t_ok())
    assert "write-before-error" in str(info.value.reason)


@pytest.mark.parametrize("name", sorted(OVERLAP_CASES))
def test_partial_overlap_cases_match_eager_fx(name):
    check_case(OVERLAP_CASES[name], "fx")


def test_full_overlap_does_not_break():
    cf = check_case(OVERLAP_CASES["same_tensor_operand"], "eager")
    assert not any(e.breaks for e in _all_entries(cf))


# -- Python writes followed only by nodes that cannot raise (`ir.raise_free`) ----------------------


class _Schedule:
    """A learning-rate scheduler's state: a step count and a parameter group (with a
    parameter whose grad a ``zero_grad(set_to_none=True)`` drops)."""

    def __init__(self):
        self.count = 0
        self.mode = "train"
        self.group = {"lr": 1.0}
        self.bias = torch.nn.Parameter(torch.zeros(3))
        self.bias.grad = torch.ones(3)


def step_then_schedule(x, w, sched, idx):
    """A training step's shape: a backward accumulating into ``w.grad`` (lasting), then the
    scheduler's writes (a dict store of a new value), then only nodes that raise nothing
    at run time: a detach, float arithmetic, a ``.grad = None``."""
    loss = (x * w).sum()
    loss.backward()
    sched.count += 1
    sched.group["lr"] = sched.group["lr"] * 0.5
    sched.bias.grad = None
    return loss.detach() * 2.0 + 1.0


def step_then_index(x, w, sched, idx):
    """The same, but an index that may be out of range at run time follows the writes."""
    loss = (x * w).sum()
    loss.backward()
    sched.count += 1
    sched.group["lr"] = sched.group["lr"] * 0.5
    return x[idx] * loss.detach()


def flag_index_then_schedule(x, w, sched, idx):
    """A constant flag written before an index that may raise (made among the graph's
    statements: `placed_writes`), the scheduler's dict store only after it."""
    loss = (x * w).sum()
    loss.backward()
    sched.mode = "eval"
    y = x[idx] * 2.0
    sched.group["lr"] = sched.group["lr"] * 0.5
    return y + loss.detach()


def _schedule_state():
    w = torch.nn.Parameter(torch.arange(3.0))
    w.grad = torch.ones(3)  # the backward accumulates into it: a lasting write
    return w, _Schedule()


def _run_schedule(fn, calls):
    """Each call's outcome and the state after it (grads, the scheduler), the state kept
    across the calls as a training loop keeps it; the caller catches the errors."""
    w, sched = _schedule_state()
    seen = []
    for i, idx in enumerate(calls):
        x = torch.linspace(0.0, 1.0, 3) + i
        try:
            outcome = ("return", fn(x, w, sched, torch.tensor(idx)))
        except Exception as e:  # noqa: BLE001 - compared by type and message
            outcome = ("raise", type(e), str(e))
        state = (sched.count, sched.mode, dict(sched.group), sched.bias.grad is None)
        seen.append((outcome, w.grad.clone(), w.detach().clone(), *state))
    return seen


def _check_schedule(fn, calls):
    cf = bcfront.capture(fn)
    got, exp = _run_schedule(cf, calls), _run_schedule(fn, calls)
    for i, (g, e) in enumerate(zip(got, exp)):
        assert g[0][0] == e[0][0], f"call {i}: {g[0]} vs {e[0]}"
        if e[0][0] == "raise":
            assert g[0][1:] == e[0][1:], f"call {i}"
        else:
            assert_same(g[0][1], e[0][1], f"call {i}")
        assert_same(list(g[1:3]), list(e[1:3]), f"call {i}: grad, weight")
        assert g[3:] == e[3:], f"call {i}: scheduler state"
    return cf


def test_writes_before_raise_free_nodes_do_not_split():
    """The scheduler's writes precede only nodes that cannot raise: no error can see them
    missing, so the region keeps the backward and everything after it."""
    cf = _check_schedule(step_then_schedule, [[0, 2]] * 4)
    entries = _all_entries(cf)
    assert not any(b.reason == "write-before-error" for e in entries for b in e.breaks)
    assert any("backward" in g.code and "detach" in g.code for e in entries for g in e.graphs)


def test_writes_before_an_index_still_split():
    """An index after the writes may raise: the region still ends before the backward, and
    the caller's ``except`` sees the grads and the scheduler as eager leaves them."""
    cf = _check_schedule(step_then_index, [[0, 2], [0, 5], [1, 2], [9, 0]])
    reasons = [b.reason for e in _all_entries(cf) for b in e.breaks]
    assert "write-before-error" in reasons


def test_writes_after_the_last_raising_node_need_no_placing():
    """Only the flag precedes the index: it is made before it inside the graph, the dict
    store after it is replayed after the graph.  No split; a failed index leaves the grads,
    the flag and the untouched group as eager does."""
    cf = _check_schedule(flag_index_then_schedule, [[0, 2], [0, 5], [1, 2], [9, 0]])
    assert not any(b.reason == "write-before-error" for e in _all_entries(cf) for b in e.breaks)
