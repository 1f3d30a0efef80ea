"""Eager-backend rewrites keep eager's bits: in-place ops on dead temporaries, folded views.

Oracle: the plain function under the same grad mode -- results must be bit-for-bit
equal (``torch.equal``) with the same shape, stride and dtype, over several calls
with changing values (a folded constant or an input written by mistake would make a
later call differ), and the differential snapshot (aliasing between results,
arguments after the call) must agree.  White-box: the region source shows whether
the rewrite was made, so each case also checks that it was made exactly where the
conditions of `bcfront.backends.eager.reusable` hold, and view chains of a temporary
become as_strided calls only where that saves calls (`view_plan`).
"""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.testing.differential import diff  # noqa: E402

F = torch.nn.functional
W = torch.randn(4, 4)
MASK = torch.tril(torch.ones(4, 4, dtype=torch.bool))


def attention_like(x):
    """matmul -> scale -> masked_fill -> softmax: the scaled scores are rewritten in place."""
    s = (x @ x.transpose(-2, -1)) * 0.5
    s = s.masked_fill(~MASK, float("-inf"))
    return F.softmax(s, dim=-1) @ x


def residual_mlp(x):
    """x + gelu(x @ W) chains: the activation and both adds reuse their buffers."""
    h = x @ W
    h = F.gelu(h)
    y = h + x
    z = y - 1
    return torch.relu(z) / 3


def method_forms(x):
    """Tensor methods with keywords: add(alpha=), div(rounding_mode=), mul."""
    y = (x * 3).add(x, alpha=2)
    y = y.mul(2).div(3, rounding_mode="floor")
    return y


def three_ops(x):
    """The benchmark's 3-op function: the sum and the relu reuse the product's buffer."""
    return (x * 2 + 1).relu()


def temp_is_returned(x):
    """The temporary is an output too: it must keep its value."""
    y = x * 2
    return y + 1, y


def view_of_temp_alive(x):
    """A view of the temporary outlives the op: writing the temporary would change it."""
    y = x * 2
    v = y.view(-1)
    z = y + 1
    return z, v


def temp_used_later(x):
    """`y + 1` keeps y (used by the product); the product may write the dead sum."""
    y = x * 2
    z = y + 1
    return z * y


def dtype_changes(x):
    """The int sum is made in place; the int temporary / 2 is float: no in-place form."""
    y = x.long() + 1
    return y / 2


def broadcast_grows(x):
    """(4, 1) + (4, 4): the result is bigger than the temporary."""
    y = x[:, :1] * 2
    return y + x


def non_contiguous_temp(x):
    """A transposed temporary: masked_fill's fresh result would be contiguous."""
    y = (x * 2).t()
    return y.masked_fill(MASK, 0.0)


def folded_constant(x):
    """An input-independent temporary is computed once at capture: never written."""
    c = torch.ones(4, 4) * 2
    return c + x


def same_operand_twice(x):
    y = x * 2
    return y * y


def input_operand(x):
    return x + 1


# function -> how many of its ops run in place
REWRITES = {
    attention_like: 2,
    residual_mlp: 5,
    method_forms: 3,
    three_ops: 2,
    temp_is_returned: 0,
    view_of_temp_alive: 0,
    temp_used_later: 1,
    dtype_changes: 1,
    broadcast_grows: 0,
    non_contiguous_temp: 0,
    folded_constant: 0,
    same_operand_twice: 0,
    input_operand: 0,
}

INPLACE = re.compile(r"^\s+t\d+ = .*(\.(add|sub|mul|div|masked_fill|relu)_\(|_inplace\()", re.M)


def _inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(4, 4, generator=g)


def _agree(fn, cf, x):
    expected, actual = fn(x.clone()), cf(x.clone())
    exp = expected if isinstance(expected, tuple) else (expected,)
    act = actual if isinstance(actual, tuple) else (actual,)
    for e, a in zip(exp, act, strict=True):
        assert e.dtype == a.dtype and e.shape == a.shape and e.stride() == a.stride()
        assert torch.equal(e, a), (fn.__name__, e, a)
    assert diff(expected, actual) is None


def test_input_is_not_written():
    cf = bcfront.capture(residual_mlp, backend="eager")
    x = _inputs(7)
    before = x.clone()
    with torch.no_grad():
        cf(x)
        cf(x)
    assert torch.equal(x, before)


def test_in_place_ops_fall_back_when_the_temporary_is_not_contiguous():
    """The run-time contiguity check guards each in-place op: forced false, the op runs as
    written (same bits)."""
    cf = bcfront.capture(residual_mlp, backend="eager")
    x = _inputs(4)
    with torch.no_grad():
        cf(x)
        region, src = cf.entries[0].region, cf.entries[0].region_source
        assert src.count(".is_contiguous() else ") == REWRITES[residual_mlp]
        scope = dict(region.__globals__)
        exec(compile(src.replace(".is_contiguous()", ".is_contiguous() and False"), "<r>", "exec"), scope)
        got = scope[region.__name__](x.clone())
        assert torch.equal(got, residual_mlp(x.clone()))


def test_no_rewrite_when_autograd_records():
    """With grad on and a weight that requires grad, temporaries are saved for backward."""
    w = torch.randn(4, 4, requires_grad=True)

    def f(x):
        return F.gelu(x @ w) * 2 + 1

    cf = bcfront.capture(f, backend="eager")
    x = _inputs(3)
    out, ref = cf(x), f(x)
    assert torch.equal(out, ref)
    assert not INPLACE.search(cf.entries[0].region_source)
    (g1,) = torch.autograd.grad(out.sum(), w)
    (g2,) = torch.autograd.grad(ref.sum(), w)
    assert torch.equal(g1, g2)


def test_benchmark_gpt_bits_match_eager():
    """tools/bench_frontend.py's 2-layer GPT under no_grad: rewrites made, outputs identical."""
    import os
    import runpy

    bench = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "..", "tools", "bench_frontend.py"))
    torch.manual_seed(0)
    model = bench["GPT"]().eval()
    cf = bcfront.capture(model, backend="eager")
    with torch.no_grad():
        for i in range(3):
            idx = torch.randint(0, 128, (2, 32), generator=torch.Generator().manual_seed(i))
            a, b = model(idx), cf(idx)
            assert a.stride() == b.stride() and torch.equal(a, b)
    assert len(cf.entries) == 1
    src = cf.entries[0].region_source
    assert len(INPLACE.findall(src)) == 11 and len(FOLD.findall(src)) == 6, src


# -- view chains --------------------------------------------------------------------------------


def heads(x):
    """qkv-style split of a temporary into heads: 8 view calls become 3 as_strided."""
    b, t, d = x.shape
    q, k, v = (x * 2).split(d // 3, dim=2)
    q = q.view(b, t, 2, d // 6).transpose(1, 2)
    k = k.view(b, t, 2, d // 6).transpose(1, 2)
    v = v.view(b, t, 2, d // 6).transpose(1, 2)
    return (q @ k.transpose(-2, -1)) @ v


def heads_output_view(x):
    """A view in the chain is also returned: it (and what it needs) stays as written."""
    b, t, d = x.shape
    q, k, v = (x + 1).split(d // 3, dim=2)
    q = q.view(b, t, 2, d // 6).transpose(1, 2)
    k = k.view(b, t, 2, d // 6)
    return q @ k.transpose(1, 2).transpose(-2, -1), k


def single_view(x):
    """One view call: folding would not save a call."""
    return (x * 2).transpose(1, 2) + 1


AS_STRIDED = {heads: 3, heads_output_view: 2, single_view: 0}
FOLD = re.compile(r"\.as_strided\(")


def _x(i):
    return torch.randn(2, 4, 12, generator=torch.Generator().manual_seed(i))


def size_one_dims(v):
    """Fuzz seed 20250033: on a (2, 1) input with strides (1, 2), eager's ``v + 0.5`` keeps
    those strides (the fake tensor says (1, 1)) and the sum of two such makes (1, 1)."""
    return (v + 0.5) + v.detach()


def _column(i):
    return torch.randn(1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(i)).t()


# (function, its inputs, the rewrite's pattern in the region source, how many)
CASES = (
    [(fn, _inputs, INPLACE, n) for fn, n in REWRITES.items()]
    + [(fn, _x, FOLD, n) for fn, n in AS_STRIDED.items()]
    + [(size_one_dims, _column, INPLACE, 0)]
)


@pytest.mark.parametrize("fn, inputs, pattern, count", CASES, ids=[c[0].__name__ for c in CASES])
def test_results_are_eager_bits_across_calls(fn, inputs, pattern, count):
    cf = bcfront.capture(fn, backend="eager")
    with torch.no_grad():
        for i in range(4):
            _agree(fn, cf, inputs(i))
    assert len(cf.entries) == 1
    assert len(pattern.findall(cf.entries[0].region_source)) == count, cf.entries[0].region_source


def test_folded_views_fall_back_when_the_layout_differs():
    """The layout check guards the folded views: forced false, the original chain runs."""
    cf = bcfront.capture(heads, backend="eager")
    x = _x(5)
    with torch.no_grad():
        cf(x)
        region = cf.entries[0].region
        src = cf.entries[0].region_source
        assert ".stride() == (" in src
        broken = src.replace(".stride() == (", ".stride() == (-1, ")
        scope = dict(region.__globals__)
        exec(compile(broken, "<broken region>", "exec"), scope)
        got = scope[region.__name__](x.clone())
        assert torch.equal(got, heads(x.clone()))


def test_no_folding_when_autograd_records():
    w = torch.randn(2, 4, 12, requires_grad=True)

    def f(x):
        return heads(x * w)

    cf = bcfront.capture(f, backend="eager")
    x = _x(2)
    out, ref = cf(x), f(x)
    assert torch.equal(out, ref)
    assert not FOLD.search(cf.entries[0].region_source)
    assert torch.equal(torch.autograd.grad(out.sum(), w)[0], torch.autograd.grad(ref.sum(), w)[0])


def test_no_rewrite_across_an_inference_mode_change():
    """Made inside inference_mode, a temporary cannot be written outside it."""

    def f(x):
        with torch.inference_mode():
            y = x * 2
        z = y + 1
        return z * 3

    cf = bcfront.capture(f, backend="eager")
    for i in range(3):
        x = _inputs(i)
        out, ref = cf(x), f(x)
        assert torch.equal(out, ref) and out.is_inference() == ref.is_inference()
    src = cf.entries[0].region_source
    assert "with " in src and re.search(r"t\d+ = t\d+\.mul_\(3\)", src), src  # one graph
    assert re.search(r"t\d+ = t\d+ \+ 1", src), src  # not add_ on the inference tensor
