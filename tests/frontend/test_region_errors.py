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
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import bcfront  # noqa: E402

from .test_torch_semantics import assert_same  # noqa: E402


@dataclass(frozen=True)
class Case:
    fn: object                  # a function, or a zero-argument module factory (module=True)
    calls: tuple                # each a zero-argument function making fresh arguments
    module: bool = False


# -- the corpus ---------------------------------------------------------------------------------

def _idx_ok():
    return (torch.arange(3.0), torch.tensor([0, 2]))


def _idx_bad():
    return (torch.arange(3.0), torch.tensor([0, 5]))


def except_after_inplace(x, idx):
    """An index out of range after an in-place write to an argument, caught by except."""
    try:
        x.add_(1)
        y = x[idx] * 2
    except IndexError as e:
        print("caught", e)
        return x * 10
    return y


def finally_after_inplace(x, idx):
    """The same error, with only a finally block: it runs, then the error propagates."""
    try:
        x.mul_(3)
        return x[idx].sum()
    finally:
        print("finally", x.sum().item())


def nested_try(x, idx):
    """Inner finally, outer except; writes before and between them."""
    x.add_(1)
    try:
        x.mul_(2)
        try:
            x.sub_(1)
            y = x[idx]
        finally:
            print("inner finally")
    except (IndexError, RuntimeError) as e:
        print("outer", type(e).__name__)
        y = x.neg()
    return y


def error_after_print(x, idx):
    """A print (a graph break) and a list append, then the write and the failing op."""
    log = []
    try:
        print("start")
        log.append(1)
        x.add_(5)
        log.append(2)
        y = x[idx]
    except IndexError:
        print("caught", log)
        return log
    return y, log


def no_handler(x, idx, log):
    """No try at all: the error propagates after the same writes (a list argument too)."""
    log.append(len(log))
    x.add_(1)
    return x[idx]


def no_handler_no_effects(x, idx):
    """No handler and no Python write: the graph keeps its in-place ops; the error leaves
    the writes before it done, as in eager."""
    x.add_(1)
    y = x[idx]
    x.mul_(2)
    return y


def try_around_no_grad(x, idx):
    """The write and the error inside no_grad, the handler outside it."""
    try:
        with torch.no_grad():
            x.add_(1)
            y = x[idx]
    except IndexError:
        return x.clone()
    return y


def no_grad_in_loop_with_finally(x, idx):
    """A finally around a no_grad block, in a loop (the iterator below the with on the stack)."""
    for _ in range(2):
        try:
            with torch.no_grad():
                x.add_(1)
                y = x[idx]
        finally:
            print("finally", x.sum().item())
    return y


def state_blocks_only(x, idx):
    """Nested torch state blocks and no try: their exits only restore the grad mode."""
    with torch.no_grad():
        with torch.enable_grad():
            x.mul_(3)
            y = x[idx]
    return y


def _log_ok():
    return (*_idx_ok(), [7])


def _log_bad():
    return (*_idx_bad(), [7])


def embedding_out_of_range(w, ids, acc):
    """F.embedding's meta kernel accepts any index; the real one rejects ids past the table."""
    try:
        acc.add_(w.sum())
        return torch.nn.functional.embedding(ids, w).sum(0)
    except IndexError as e:
        print("bad id", e)
        return acc.clone()


def _emb_ok():
    return (torch.arange(12.0).reshape(4, 3), torch.tensor([1, 3]), torch.zeros(()))


def _emb_bad():
    return (torch.arange(12.0).reshape(4, 3), torch.tensor([1, 9]), torch.zeros(()))


def cholesky_not_positive_definite(a, out):
    """A check only the real kernel makes (positive definiteness), after a write to `out`."""
    try:
        out.copy_(a.diagonal())
        return torch.linalg.cholesky(a)
    except RuntimeError as e:
        print("not pd:", type(e).__name__)
        return out * 2


def _chol_ok():
    return (torch.eye(3) * 2, torch.zeros(3))


def _chol_bad():
    return (-torch.eye(3), torch.zeros(3))


def random_draw_before_error(x, idx):
    """A random draw, an in-place write, then the error: the handler's draw continues the
    same random stream as in eager."""
    try:
        noise = torch.rand(3)
        x.add_(noise)
        y = x[idx]
    except IndexError:
        return torch.rand(2)
    return y


def fresh_write_then_error(x, idx):
    """In-place writes only to a tensor made inside the function, then the error."""
    try:
        t = x * 2
        t.add_(1)
        return t[idx]
    except IndexError:
        print("caught")
        return x.sum()


class BNThenIndex(nn.Module):
    """Batch norm in training mode updates its running statistics (a hidden write), then
    an index fails."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x, idx):
        try:
            y = self.bn(x)
            return y[idx]
        except IndexError:
            print("caught")
            return None


class ClipThenIndex(nn.Module):
    """A parameter clamped in place under no_grad (it keeps its autograd identity, so the
    graph stays in place; the region puts the parameter back before a native rerun)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, idx):
        try:
            with torch.no_grad():
                self.lin.weight.clamp_(-0.1, 0.1)
            return self.lin(x)[idx]
        except IndexError:
            print("caught")
            return None


def _bn_ok():
    return (torch.arange(12.0).reshape(4, 3), torch.tensor([0, 3]))


def _bn_bad():
    return (torch.arange(12.0).reshape(4, 3), torch.tensor([0, 8]))


def _clip_ok():
    return (torch.arange(6.0).reshape(2, 3), torch.tensor([1]))


def _clip_bad():
    return (torch.arange(6.0).reshape(2, 3), torch.tensor([4]))


CASES = {
    "except_after_inplace": Case(except_after_inplace, (_idx_ok, _idx_bad, _idx_ok, _idx_bad)),
    "finally_after_inplace": Case(finally_after_inplace, (_idx_ok, _idx_bad, _idx_bad, _idx_ok)),
    "nested_try": Case(nested_try, (_idx_bad, _idx_ok, _idx_bad)),
    "error_after_print": Case(error_after_print, (_idx_ok, _idx_bad, _idx_ok, _idx_bad)),
    "no_handler": Case(no_handler, (_log_ok, _log_bad, _log_ok)),
    "no_handler_no_effects": Case(no_handler_no_effects, (_idx_ok, _idx_bad, _idx_ok)),
    "try_around_no_grad": Case(try_around_no_grad, (_idx_ok, _idx_bad, _idx_ok, _idx_bad)),
    "no_grad_in_loop_with_finally": Case(no_grad_in_loop_with_finally, (_idx_ok, _idx_bad, _idx_ok)),
    "state_blocks_only": Case(state_blocks_only, (_idx_ok, _idx_bad, _idx_ok)),
    "embedding_out_of_range": Case(embedding_out_of_range, (_emb_ok, _emb_bad, _emb_ok, _emb_bad)),
    "cholesky_not_positive_definite": Case(cholesky_not_positive_definite,
                                           (_chol_ok, _chol_bad, _chol_ok)),
    "random_draw_before_error": Case(random_draw_before_error, (_idx_ok, _idx_bad, _idx_ok, _idx_bad)),
    "fresh_write_then_error": Case(fresh_write_then_error, (_idx_ok, _idx_bad, _idx_ok)),
    "bn_then_index": Case(BNThenIndex, (_bn_ok, _bn_bad, _bn_ok, _bn_bad), module=True),
    "clip_then_index": Case(ClipThenIndex, (_clip_ok, _clip_bad, _clip_ok, _clip_bad), module=True),
}


# -- the harness --------------------------------------------------------------------------------

def _run(fn, make, seed):
    """(outcome, printed text, arguments after the call, random stream after the call)."""
    args = make()
    buf = io.StringIO()
    torch.manual_seed(seed)
    with contextlib.redirect_stdout(buf):
        try:
            outcome = ("return", fn(*args))
        except Exception as e:  # compared by type and message
            outcome = ("raise", type(e), str(e))
    return outcome, buf.getvalue(), args, torch.rand(2)


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
        if case.module:
            assert_same(dict(mod.state_dict()), dict(ref.state_dict()), where + " state")
    return fn_cap


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_error_matches_eager(name):
    cf = check_case(CASES[name], "eager")
    assert cf.entries and not all(e.native for e in cf.entries), "the function never compiled"


@pytest.mark.parametrize("name", ["except_after_inplace", "nested_try", "bn_then_index",
                                  "random_draw_before_error"])
def test_runtime_error_matches_eager_fx(name):
    check_case(CASES[name], "fx")


def test_writes_to_inputs_come_after_the_computation():
    """The region writes argument storage only once the graph computed everything."""
    cf = bcfront.capture(except_after_inplace, backend="eager")
    cf(*_idx_ok())
    src = cf.entries[0].region_source
    body = src[src.index("try:"):]
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
