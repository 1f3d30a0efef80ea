"""The corpus of `test_region_errors`: functions whose compiled graph raises at run time.

Each `Case` is a function (or a module factory) and a sequence of calls, each making
fresh arguments, that mix inputs that raise and inputs that do not.  `CASES` holds
them all; `SPLIT_CASES` are those with a write no functional graph can undo (the
region ends before it), `OVERLAP_CASES` those whose writes partially overlap an
operand (only the real kernel raises).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn


@dataclass(frozen=True)
class Case:
    fn: object  # a function, or a zero-argument module factory (module=True)
    calls: tuple  # each a zero-argument function making fresh arguments
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


def unused_failing_op(x, idx):
    """The failing op's result is never used: the functional graph must still run it."""
    try:
        x.add_(1)
        _unused = x[idx]
        return x * 2
    except IndexError:
        print("caught")
        return x.clone()


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


# -- writes no functional graph can undo: the region ends before them -----------------------------


def _t_ok():
    return (torch.arange(6.0).reshape(2, 3), torch.tensor([0, 1]))


def _t_bad():
    return (torch.arange(6.0).reshape(2, 3), torch.tensor([0, 7]))


def transpose_in_place_then_index(x, idx):
    """``t_`` changes the argument's metadata in place: no pure graph expresses it."""
    try:
        x.t_()
        y = x[idx] + 1
    except IndexError as e:
        print("caught", e, tuple(x.shape))
        return x * 2
    return y


def transpose_outside_try(x, idx):
    """The write before the try, the failing op inside it."""
    x.mul_(2)
    x.t_()
    try:
        return x[idx].sum(0)
    except IndexError:
        print("caught", x.stride())
        return x.clone()


def transpose_finally(x, idx):
    """Only a finally block: it sees the transposed argument, then the error propagates."""
    try:
        x.t_()
        x.add_(1)
        return x[idx]
    finally:
        print("finally", tuple(x.shape), x.sum().item())


def _unfold_ok():
    return (torch.arange(6.0), torch.tensor([0, 2]))


def _unfold_bad():
    return (torch.arange(6.0), torch.tensor([1, 9]))


def write_through_unfold(x, idx):
    """A write through overlapping ``unfold`` windows (no inverse, no as_strided_scatter)."""
    try:
        x.unfold(0, 2, 1).mul_(2)
        y = x[idx] - 1
    except IndexError as e:
        print("caught", e)
        y = x.neg()
    return y


def failing_write_through_unfold(x, idx):
    """The write itself fails at run time (an index past the windows), so it must run where
    eager runs it: inside the try."""
    w = x.unfold(0, 2, 1)
    try:
        w[idx] = 0.5
        y = x * 3
    except IndexError:
        print("caught")
        y = x.clone()
    return y


def _in_callee(x):
    x.t_()
    return x


def transpose_in_callee(x, idx):
    """The un-undoable write sits in an inlined callee; the handler in the caller."""
    try:
        y = _in_callee(x)[idx]
    except IndexError:
        print("caught", tuple(x.shape))
        y = x.sum(1)
    return y


def transpose_in_loop(x, idx):
    """Each iteration writes and may fail; the handler sees each iteration's state."""
    out = []
    for i in range(3):
        try:
            x.t_()
            out.append(x[idx].sum() + i)
        except IndexError:
            out.append(x.sum(0))
    return out


def pending_append_then_transpose(x, idx, log):
    """No handler, but a list append the region replays precedes the failing op: the
    caller must see the append, the transposed argument and the error."""
    log.append("before")
    x.t_()
    return x[idx]


def _t_log_ok():
    return (*_t_ok(), [])


def _t_log_bad():
    return (*_t_bad(), [])


def _grad_ok():
    w = torch.arange(3.0, requires_grad=True)
    return (w * 1, torch.tensor([0, 2]), w)


def _grad_bad():
    w = torch.arange(3.0, requires_grad=True)
    return (w * 1, torch.tensor([0, 5]), w)


def grad_recorded_write(x, idx, w):
    """An input that requires grad written in place with grad mode on: autograd records
    the write, so a pure graph would give it another history.  Grads flow to `w`."""
    try:
        x.mul_(w + 1)
        y = x[idx] * 3
    except IndexError:
        print("caught", x.grad_fn is not None)
        y = x.exp()
    return y


def grad_write_after_pure_work(x, idx, w):
    """Pure work first (it stays in the graph), then the recorded write, then the error."""
    try:
        z = (x.detach() * w).sin()
        x.add_(z)
        y = x[idx]
    except IndexError:
        y = (x * 2).sum()
    return y


class TransposeBuffer(nn.Module):
    """A buffer transposed in place, then an index of it fails."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.arange(6.0).reshape(2, 3))

    def forward(self, x, idx):
        try:
            self.buf.t_()
            return self.buf[idx] + x
        except IndexError:
            print("caught", tuple(self.buf.shape))
            return None


def _buf_ok():
    return (torch.ones(3), torch.tensor([2]))


def _buf_bad():
    return (torch.ones(3), torch.tensor([5]))


def foreach_then_index(a, b, idx):
    """A multi-output writer (``_foreach_mul_``) on two arguments, then the error."""
    try:
        torch._foreach_mul_([a, b], 2.0)
        y = a[idx] + b[idx]
    except IndexError as e:
        print("caught", e)
        y = a + b
    return y


def _two_ok():
    return (torch.arange(3.0), torch.ones(3), torch.tensor([0, 2]))


def _two_bad():
    return (torch.arange(3.0), torch.ones(3), torch.tensor([0, 3]))


def fill_through_expand(x, idx):
    """A fill through an expanded view writes each element many times."""
    try:
        x.unsqueeze(0).expand(2, 3).fill_(7)
        y = x[idx]
    except IndexError:
        y = x * 2
    return y


def _idx3_ok():
    return (torch.arange(3.0), torch.tensor([0, 2]))


def _idx3_bad():
    return (torch.arange(3.0), torch.tensor([0, 3]))


def shared_storage_two_dtypes(x, xi, idx):
    """Two arguments viewing one storage with different dtypes, both written."""
    try:
        x.add_(1)
        xi.add_(1)
        y = x[idx]
    except IndexError:
        y = x.clone()
    return y


def _shared_dtypes(i):
    base = torch.zeros(6)
    return (base[:3], base[3:].view(torch.int32), torch.tensor([0, i]))


def _shared_ok():
    return _shared_dtypes(2)


def _shared_bad():
    return _shared_dtypes(4)


def resized_out(a, o, idx):
    """An ``out=`` tensor of the wrong size is resized by the call (a metadata write)."""
    try:
        torch.add(a, 1, out=o)
        y = o[idx]
    except IndexError:
        y = o * 3
    return y


def _out_ok():
    return (torch.arange(3.0), torch.empty(0), torch.tensor([1]))


def _out_bad():
    return (torch.arange(3.0), torch.empty(0), torch.tensor([6]))


def metadata_write_after_split(x, idx):
    """The first trace runs on to ``unsqueeze_``, changing the fake of `x` in place; the
    retrace (and the continuation after the split) must still see `x` as it really is."""
    try:
        x.unfold(0, 2, 1).mul_(2)
        v = x.reshape(2, -1)
        x.unsqueeze_(0)
        y = x[0, idx] + v.sum()
    except IndexError:
        print("caught", tuple(x.shape))
        y = x.sum()
    return y


def saved_then_written(x, idx, w):
    """A tensor autograd saved for backward is then written in place: eager's backward
    fails on the version check, and so must the captured function's."""
    try:
        z = x * w
        x.mul_(2)
        y = x[idx] + z.sum()
    except IndexError:
        y = z.sum()
    return y


# -- writes partially overlapping an operand: only the real kernel raises ----------------------------


def _sq():
    return (torch.arange(9.0).reshape(3, 3), torch.ones(3))


def add_transpose_of_itself(x, w):
    """``x.add_(x.t())``: same bytes, other strides (a partial overlap in ATen's terms)."""
    try:
        w.mul_(2)
        x.add_(x.t())
        return x
    except RuntimeError as e:
        print("caught", e)
        return x + w


def shifted_copy(x, w):
    """``x[1:].copy_(x[:-1])`` and ``x[1:] = x[:-1]``: overlapping shifted rows."""
    x.add_(w)
    try:
        x[1:].copy_(x[:-1])
    except RuntimeError:
        print("copy_ refused")
    try:
        x[1:] = x[:-1]
    except RuntimeError:
        print("setitem refused")
    return x * 2


def shifted_index_put(x, w):
    """index_put_ whose values are a shifted view of the written tensor."""
    try:
        x.index_put_((torch.tensor([0, 1]),), x[1:3])
    except RuntimeError:
        print("refused")
    x[0] = x[0] + w  # (a full overlap: allowed)
    return x


def same_tensor_operand(x, w):
    """``x.add_(x)`` and ``x.mul_(x.view(3, 3))``: full overlaps, allowed; no break needed."""
    try:
        x.add_(x)
        x.mul_(x.view(3, 3))
        y = x + w
    except RuntimeError:
        y = None
    return y


OVERLAP_CASES = {
    "add_transpose_of_itself": Case(add_transpose_of_itself, (_sq, _sq, _sq)),
    "shifted_copy": Case(shifted_copy, (_sq, _sq, _sq)),
    "shifted_index_put": Case(shifted_index_put, (_sq, _sq, _sq)),
    "same_tensor_operand": Case(same_tensor_operand, (_sq, _sq, _sq)),
}


SPLIT_CASES = {
    "metadata_write_after_split": Case(
        metadata_write_after_split, (_unfold_ok, _unfold_bad, _unfold_ok, _unfold_bad)
    ),
    "foreach_then_index": Case(foreach_then_index, (_two_ok, _two_bad, _two_ok, _two_bad)),
    "fill_through_expand": Case(fill_through_expand, (_idx3_ok, _idx3_bad, _idx3_ok, _idx3_bad)),
    "shared_storage_two_dtypes": Case(
        shared_storage_two_dtypes, (_shared_ok, _shared_bad, _shared_ok, _shared_bad)
    ),
    "resized_out": Case(resized_out, (_out_ok, _out_bad, _out_ok, _out_bad)),
    "saved_then_written": Case(saved_then_written, (_grad_ok, _grad_bad, _grad_ok, _grad_bad)),
    "transpose_in_place_then_index": Case(transpose_in_place_then_index, (_t_ok, _t_bad, _t_ok, _t_bad)),
    "transpose_outside_try": Case(transpose_outside_try, (_t_bad, _t_ok, _t_bad)),
    "transpose_finally": Case(transpose_finally, (_t_ok, _t_bad, _t_ok, _t_bad)),
    "write_through_unfold": Case(write_through_unfold, (_unfold_ok, _unfold_bad, _unfold_ok, _unfold_bad)),
    "failing_write_through_unfold": Case(
        failing_write_through_unfold, (_unfold_ok, _unfold_bad, _unfold_ok, _unfold_bad)
    ),
    "transpose_in_callee": Case(transpose_in_callee, (_t_ok, _t_bad, _t_ok, _t_bad)),
    "transpose_in_loop": Case(transpose_in_loop, (_t_ok, _t_bad, _t_ok)),
    "pending_append_then_transpose": Case(
        pending_append_then_transpose, (_t_log_ok, _t_log_bad, _t_log_ok, _t_log_bad)
    ),
    "grad_recorded_write": Case(grad_recorded_write, (_grad_ok, _grad_bad, _grad_ok, _grad_bad)),
    "grad_write_after_pure_work": Case(
        grad_write_after_pure_work, (_grad_ok, _grad_bad, _grad_ok, _grad_bad)
    ),
    "transpose_buffer": Case(TransposeBuffer, (_buf_ok, _buf_bad, _buf_ok, _buf_bad), module=True),
}


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
    "cholesky_not_positive_definite": Case(cholesky_not_positive_definite, (_chol_ok, _chol_bad, _chol_ok)),
    "random_draw_before_error": Case(random_draw_before_error, (_idx_ok, _idx_bad, _idx_ok, _idx_bad)),
    "unused_failing_op": Case(unused_failing_op, (_idx_ok, _idx_bad, _idx_ok, _idx_bad)),
    "fresh_write_then_error": Case(fresh_write_then_error, (_idx_ok, _idx_bad, _idx_ok)),
    "bn_then_index": Case(BNThenIndex, (_bn_ok, _bn_bad, _bn_ok, _bn_bad), module=True),
    "clip_then_index": Case(ClipThenIndex, (_clip_ok, _clip_bad, _clip_ok, _clip_bad), module=True),
    **SPLIT_CASES,
    **OVERLAP_CASES,
}
