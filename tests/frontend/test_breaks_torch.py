"""Graph breaks in tensor code: data-dependent control flow, .item(), I/O, grad-mode blocks.

Oracle: eager PyTorch on identical inputs; inputs are chosen so calls take
different paths.  The number of graphs and breaks is asserted where fixed.
"""

from __future__ import annotations

import contextlib
import io

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.errors import GraphBreakError  # noqa: E402

from .test_torch_semantics import assert_same  # noqa: E402


def branchy(x):
    y = x.sin() * 2
    if y.sum() > 0:
        y = y + 1
    else:
        y = y - 1
    return y.cos()


def item_in_python(x):
    s = x.sum().item()
    k = int(s > 0) + 1
    return x * k, s > 0


def tolist_and_len(x):
    vals = x.tolist()
    return torch.tensor([v * 2 for v in vals]) + x, len(vals)


def bool_and_int(x):
    n = int(x.abs().max() * 3)
    flag = bool((x > 0).any())
    return x[:n] if flag else x, n


def break_in_no_grad(x, w):
    with torch.no_grad():
        y = x @ w
        print("inside no_grad", y.shape)
        z = y * 2
    out = x @ w
    return z, out, z.requires_grad, out.requires_grad, torch.is_grad_enabled()


def break_in_loop_over_tensor(x):
    acc = torch.zeros(x.shape[1])
    for row in x:
        if row.sum() > 0:
            acc = acc + row
        else:
            acc = acc - row
    return acc


def break_mid_expression(x):
    return [x * 2, x.sum().item(), x + 1]


def helper_that_breaks(t):
    t = t * 3
    if t.mean() > 0:
        return t + 1
    return t - 1


def breaks_in_callee(x):
    a = x.exp()
    b = helper_that_breaks(a - 1.5)
    return a * b


def print_order(x):
    print("start", x.shape[0])
    y = x * 2
    print("middle", y.shape)
    return y + 1


def break_in_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x
        print("in autocast", torch.is_autocast_enabled("cpu"))
        z = y @ x
    return y.dtype, z.dtype, (z + 1).dtype, torch.is_autocast_enabled("cpu")


def break_in_nested_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = x @ x
        with torch.autocast("cpu", enabled=False):
            b = x @ x
            print("inner", torch.is_autocast_enabled("cpu"))
            c = x @ x
        d = x @ x
    return a.dtype, b.dtype, c.dtype, d.dtype, torch.is_autocast_enabled("cpu")


def raise_after_break_in_autocast(x):
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            print("before")
            if x.shape[0] > 2:
                raise ValueError("big")
            y = x @ x
    except ValueError:
        y = x * 0
    return y.dtype, torch.is_autocast_enabled("cpu")


def _scaled(x, n):
    for i in range(n):
        yield x * (i - 1)


def branch_on_generated_tensors(x):
    """A data-dependent branch while a generator over tensors is suspended (replayed)."""
    total = torch.zeros_like(x)
    for t in _scaled(x, 3):
        if t.sum() > 0:
            total = total + t
        else:
            total = total - t
    return total


CASES = {
    "branch_on_generated_tensors": (
        branch_on_generated_tensors,
        lambda s: (torch.randn(4, generator=torch.Generator().manual_seed(s)),),
    ),
    "break_in_autocast": (break_in_autocast, lambda s: (torch.randn(3, 3),)),
    "break_in_nested_autocast": (break_in_nested_autocast, lambda s: (torch.randn(2, 2),)),
    "raise_after_break_in_autocast": (
        raise_after_break_in_autocast,
        lambda s: (torch.randn(2 + s % 2, 2 + s % 2),),
    ),
    "branchy": (
        branchy,
        lambda s: (torch.randn(4, generator=torch.Generator().manual_seed(s)) + (2 if s % 2 else -2),),
    ),
    "item_in_python": (
        item_in_python,
        lambda s: (torch.randn(5, generator=torch.Generator().manual_seed(s)),),
    ),
    "tolist_and_len": (
        tolist_and_len,
        lambda s: (torch.randn(3, generator=torch.Generator().manual_seed(s)),),
    ),
    "bool_and_int": (bool_and_int, lambda s: (torch.randn(6, generator=torch.Generator().manual_seed(s)),)),
    "break_in_no_grad": (
        break_in_no_grad,
        lambda s: (torch.randn(3, 4, requires_grad=True), torch.randn(4, 4)),
    ),
    "break_in_loop_over_tensor": (
        break_in_loop_over_tensor,
        lambda s: (torch.randn(4, 3, generator=torch.Generator().manual_seed(s)),),
    ),
    "break_mid_expression": (
        break_mid_expression,
        lambda s: (torch.randn(2, generator=torch.Generator().manual_seed(s)),),
    ),
    "breaks_in_callee": (
        breaks_in_callee,
        lambda s: (torch.randn(3, generator=torch.Generator().manual_seed(s)),),
    ),
    "print_order": (print_order, lambda s: (torch.randn(2 + s % 2, 2),)),
}


def _run(fn, args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*args)
    return out, buf.getvalue()


@pytest.mark.parametrize("name", sorted(CASES))
def test_break_matches_eager(name):
    fn, make = CASES[name]
    cf = bcfront.capture(fn, backend="eager")
    for seed in (1, 2, 3, 4, 1):
        torch.manual_seed(seed)
        args = make(seed)
        cap_args = tuple(a.detach().clone().requires_grad_(a.requires_grad) for a in args)
        expected, out_ref = _run(fn, args)
        actual, out_cap = _run(cf, cap_args)
        assert_same(actual, expected, f"{name} seed {seed}")
        assert out_cap == out_ref
        assert torch.is_grad_enabled() and not torch.is_autocast_enabled("cpu")
    first = cf.entries[0]
    assert first.breaks, f"{name}: expected a graph break"
    assert not first.native, f"{name}: no continuation: {first.notes}"


def test_branch_counts_graphs_and_breaks():
    cf = bcfront.capture(branchy, backend="eager")
    x = torch.ones(4)
    report = bcfront.explain(cf, x)
    assert [b.reason for b in report.graph_breaks] == ["data-dependent-branch"]
    # graph before the branch, graph of the taken side
    assert len(report.graphs) == 2
    assert report.graph_breaks[0].source_line.startswith("if y.sum() > 0")


def test_fullgraph_raises_on_item():
    cf = bcfront.capture(item_in_python, fullgraph=True)
    with pytest.raises(GraphBreakError) as info:
        cf(torch.randn(3))
    assert info.value.reason == "data-dependent"
    assert "item" in info.value.message


def test_callee_break_keeps_caller_graphs():
    cf = bcfront.capture(breaks_in_callee, backend="eager")
    x = torch.randn(3)
    report = bcfront.explain(cf, x)
    names = [f.function for f in report.functions]
    assert "helper_that_breaks" in names
    root = report.functions[0]
    assert root.graphs and root.graphs[0].op_count >= 2  # exp and the subtraction
    assert any(f.graphs for f in report.functions[1:])  # the code after the call
