"""explain reports, per function, the share of its tensor ops that ran inside compiled graphs.

Oracle: the ops of the same call run eagerly, counted by this test's own
TorchFunctionMode (every top-level torch call it sees), not by bcfront.
"""

from __future__ import annotations

import warnings

import pytest

import bcfront
from bcfront.report import NativeFallbackWarning

torch = pytest.importorskip("torch")

from torch.overrides import TorchFunctionMode  # noqa: E402


class CountOps(TorchFunctionMode):
    """Counts the top-level torch calls of an eager run (the mode is off inside each call)."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def eager_ops(fn, *args) -> list[str]:
    with CountOps() as c:
        fn(*args)
    return c.names


def with_a_print_break(x):
    a = x.sin()
    b = torch.cos(a) + 1
    print(end="")  # the break: no tensor op runs natively
    c = b * a
    return c.relu().sum()


def with_a_native_op(x):
    y = x * 2
    z = torch.tanh(y)
    n = int(z.sum().item())  # the break: .item() runs natively
    w = z - n
    return w.exp().mean()


def _explain(fn, *args):
    return bcfront.explain(fn, *args)


def test_a_break_that_runs_no_op_leaves_every_op_in_graphs():
    x = torch.randn(5)
    eager = eager_ops(with_a_print_break, x)
    assert len(eager) == 6
    top = _explain(with_a_print_break, x).functions[0]
    assert (top.ops_in_graphs, top.ops_native) == (len(eager), 0)
    assert top.op_share == f"100% of tensor ops in compiled graphs ({len(eager)} of {len(eager)})"


def test_the_native_op_at_a_break_is_counted_native():
    x = torch.randn(5)
    eager = eager_ops(with_a_native_op, x)
    assert eager.count("item") == 1
    report = _explain(with_a_native_op, x)
    top = report.functions[0]
    assert top.ops_in_graphs + top.ops_native == len(eager)
    assert top.ops_native == 1  # the .item()
    k = len(eager)
    assert top.op_share == f"{100 * (k - 1) // k}% of tensor ops in compiled graphs ({k - 1} of {k})"
    # the continuation has its own count, part of its function's (like the run time)
    cont = report.functions[1]
    assert cont.function.startswith("with_a_native_op.")
    assert 0 < cont.ops_in_graphs < top.ops_in_graphs and cont.ops_native == 0
    assert top.op_share in str(report)


def test_a_function_that_runs_natively_counts_native():
    x = torch.randn(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NativeFallbackWarning)
        top = _explain(torch.relu, x).functions[0]
    assert (top.ops_in_graphs, top.ops_native) == (0, len(eager_ops(torch.relu, x)))
    assert top.op_share.startswith("0% of tensor ops")


def test_ops_are_counted_for_every_call_while_collecting():
    cf = bcfront.capture(with_a_native_op)
    x = torch.randn(5)
    k = len(eager_ops(with_a_native_op, x))
    with bcfront.explain.collect() as run:
        for _ in range(3):
            cf(x)
    top = run.report().functions[0]
    assert (top.ops_in_graphs, top.ops_native) == (3 * (k - 1), 3)


def test_calls_nobody_watches_count_nothing():
    cf = bcfront.capture(with_a_native_op)
    cf(torch.randn(5))
    cf(torch.randn(5))
    assert (cf.ops_in_graphs, cf.ops_native) == (0, 0)
    assert not torch.autograd._profiler_enabled()


def test_a_profiler_already_running_leaves_the_counts_empty():
    x = torch.randn(5)
    with torch.autograd.profiler.profile():
        top = _explain(with_a_native_op, x).functions[0]
    assert (top.ops_in_graphs, top.ops_native) == (0, 0) and top.op_share == ""
    assert top.graphs  # captured as usual
