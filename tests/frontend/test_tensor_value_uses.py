"""Uses of a tensor's value in generation code: where they break, and what is captured.

From the tail of Hugging Face's beam search: ``seqs[:, :n]`` with `n` a 0-d tensor breaks
at the subscript, whose native step runs it, so the code before and after it is captured
(it broke at ``BUILD_SLICE``, which cannot run on its own: the whole function ran
natively); ``not t`` is a truth test like ``if t:`` (one break, the same wherever it is
met, not one per fake-tensor exception); ``torch.full(size, t)`` with `t` a 0-d tensor
is ``torch.empty(size).fill_(t)`` in the graph where that gives what eager's gives.
Oracle: the plain function on the same inputs (values, dtypes, exceptions).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402

from .test_torch_semantics import assert_same  # noqa: E402


def _report(fn, *args):
    """`fn` captured against eager on `args` (cloned each time); the report of the call."""
    cf = bcfront.capture(fn)
    with bcfront.explain.collect() as calls:
        got = cf(*[a.clone() for a in args])
    assert_same(got, fn(*[a.clone() for a in args]))
    return calls.report()


def crop(seqs, used):
    n = (used > 0).sum(dim=1).max()  # a 0-d tensor
    out = seqs[:, : n + 1] * 2
    head = [10, 20, 30, 40, 50][:n]
    seqs[:, n:] = 0
    return out, head, seqs.sum(), seqs + 1


def test_a_slice_bound_that_is_a_tensor_breaks_at_the_subscript():
    seqs = torch.arange(20).view(2, 10)
    used = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 0]])
    report = _report(crop, seqs, used)
    assert not any(f.native_fallbacks for f in report.functions), report
    assert {b.message for b in report.graph_breaks} == {"a slice bound that is a tensor"}
    root = max(report.functions, key=lambda f: f.ops_in_graphs + f.ops_native)
    assert root.ops_in_graphs >= root.ops_native, root.op_share  # was 0%: all of it natively


def grow(x):
    done = False
    while not done:
        x = torch.cat([x, x[-1:] + 1])
        done = not (x.sum() < 40)
    return x


def test_not_of_a_tensor_is_one_truth_test_break():
    # the continuations' fake runs failed differently (static sizes, then symbolic): the
    # same `not` was listed as two breaks, "not_ depends on tensor values (...)"
    report = _report(grow, torch.ones(2))
    assert [(b.reason, b.message) for b in report.graph_breaks] == [
        (BreakReason.DATA_DEPENDENT_BRANCH, "the truth value of a tensor depends on its data")
    ]


def full_of(fill, **kwargs):
    def f(x):
        return torch.full((2, 3), fill_value=torch.where(x.sum() > 0, fill, fill), **kwargs) + x.sum().long()

    return f


@pytest.mark.parametrize(
    "fill, dtype",
    [
        (torch.tensor(7), torch.int64),  # beam search's pad token
        (torch.tensor(7), None),
        (torch.tensor(7, dtype=torch.int32), torch.int64),
        (torch.tensor(2**40), torch.float32),
        (torch.tensor(True), None),
        (torch.tensor(True), torch.uint8),
        (torch.tensor(1.5), torch.float64),
    ],
)
def test_full_of_a_tensor_is_captured(fill, dtype):
    fn = full_of(fill, **({} if dtype is None else {"dtype": dtype}))
    report = _report(fn, torch.ones(2))
    assert not report.graph_breaks, report.graph_breaks


@pytest.mark.parametrize(
    "fill, dtype",
    [
        (torch.tensor(2**40), torch.int32),  # eager: "cannot be converted ... without overflow"
        (torch.tensor(300), torch.uint8),
        (torch.tensor(1.5), None),  # the default dtype
        (torch.tensor(1.5, dtype=torch.float64), torch.float32),
        (torch.tensor([7]), torch.int64),  # eager: must be Number, not Tensor
    ],
)
def test_full_of_a_tensor_that_eager_converts_checked_stays_eager(fill, dtype):
    fn = full_of(fill, **({} if dtype is None else {"dtype": dtype}))
    x = torch.ones(2)
    try:
        want = fn(x)
    except Exception as e:  # noqa: BLE001 - the exception is the behaviour to match
        want = type(e)
    try:
        got = bcfront.capture(fn)(x)
    except Exception as e:  # noqa: BLE001 - the exception is the behaviour to match
        got = type(e)
    if isinstance(want, type):
        assert got is want
    else:
        assert_same(got, want)
