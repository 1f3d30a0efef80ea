"""Dynamic sizes through the Triton backend (interpreter).

A capture with symbolic sizes hands the backend a graph whose inputs are fake
tensors with SymInt sizes.  The backend compiles it (not the eager fallback),
and its kernels take sizes, strides and numels as launch arguments, so the
sizes one dynamic entry serves share the same compiled kernels: after the
first sizes, a new size loads no new kernel.  Every call is compared with
eager on the same inputs, over at least 20 sizes including 0 and 1.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import bcfront  # noqa: E402
from bcfront.backends.triton import runtime  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")

GROWING = list(range(2, 22))  # served by one dynamic entry
SIZES = GROWING + [0, 1]  # 0 and 1 are specialized (an entry each), as torch does


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _clone(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def _check(fn, make, *, dynamic=None, sizes=SIZES, max_entries=4, tol=1e-5):
    """Call a triton capture of `fn` on ``make(n)`` for each size, compare with eager;
    returns (capture, kernels loaded while the dynamic entry served GROWING[4:])."""
    opts = {} if dynamic is None else {"dynamic": dynamic}
    cf = bcfront.capture(fn, backend="triton", **opts)
    loaded = 0
    for n in sizes:
        args = make(n)
        before = len(runtime._MODULES)
        got = cf(*_clone(args))
        if n in GROWING[4:]:
            loaded += len(runtime._MODULES) - before
        want = fn(*_clone(args))
        torch.testing.assert_close(
            got, want, rtol=tol, atol=tol, equal_nan=True, msg=lambda m, n=n: f"size {n}: {m}"
        )
    graphs = [g for e in cf.entries for g in e.graphs]
    assert graphs and {g.backend for g in graphs} == {"triton"}, [e.notes for e in cf.entries]
    assert len(cf.entries) <= max_entries
    return cf, loaded


POINTWISE = {
    "rows": (lambda x, b: torch.relu(x) * b + x.sin(), lambda n: [_x(n, 7), _x(7, seed=1)]),
    "cols": (lambda x, b: torch.sigmoid(x) - b * 2, lambda n: [_x(3, n), _x(3, 1, seed=1)]),
    "both": (lambda x: torch.where(x > 0, x, x.exp() - 1) + 1, lambda n: [_x(n, n + 1)]),
    "transpose": (lambda x: x.t() * 3 + 1, lambda n: [_x(n, 5)]),
    "int_arg": (lambda x, k: x * k + 1, lambda n: [_x(n, 2), n + 3]),
}

REDUCTIONS = {
    "sum_rows": (lambda x: x.sum(-1), lambda n: [_x(n, 9)]),
    "sum_cols": (lambda x: x.sum(-1) * 2, lambda n: [_x(4, n)]),
    "amax_sum": (lambda x: x.amax(1) + x.sum(), lambda n: [_x(n, 6)]),
    "var_mean": (lambda x: torch.var_mean(x, dim=1), lambda n: [_x(3, n + 2)]),
}

NORMS = {
    "softmax_row": (lambda x: torch.softmax(x, -1), lambda n: [_x(3, n)]),
    "softmax_batch": (lambda x: torch.log_softmax(x * 2, -1), lambda n: [_x(n, 10)]),
    "layer_norm": (
        lambda x, w, b: torch.nn.functional.layer_norm(x, (16,), w, b),
        lambda n: [_x(n, 16), _x(16, seed=1), _x(16, seed=2)],
    ),
    "layer_norm_wide": (
        lambda x: torch.nn.functional.layer_norm(x, (x.shape[-1],)),
        lambda n: [_x(2, n + 1)],
    ),
}

MATMULS = {
    "mm_rows": (lambda x, w: x @ w, lambda n: [_x(n, 8), _x(8, 6, seed=1)]),
    "mm_inner": (lambda a, b: a @ b, lambda n: [_x(4, n), _x(n, 3, seed=1)]),
    "linear_gelu": (
        lambda x, w, b: torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b)),
        lambda n: [_x(2, n, 8), _x(5, 8, seed=1), _x(5, seed=2)],
    ),
    "bmm": (lambda a, b: torch.bmm(a, b), lambda n: [_x(2, n, 4), _x(2, 4, n, seed=1)]),
}

VIEWS = {
    "flatten": (lambda x: x.view(x.size(0) * x.size(1)) * 2, lambda n: [_x(n, 6)]),
    "split_last": (lambda x: x.reshape(x.size(0), 3, 2).transpose(1, 2) + 1, lambda n: [_x(n, 6)]),
    "halves": (lambda x: x.view(2, x.size(0) // 2, 3).sum(1), lambda n: [_x(2 * n, 3)]),
    "slice_end": (lambda x: x[:, 1 : x.size(1) - 1] * 2, lambda n: [_x(3, n + 2)]),
    "slice_int": (lambda x, k: x[:k] + 1, lambda n: [_x(n + 2, 4), n]),
    "arange": (lambda x: x + torch.arange(x.size(-1), dtype=x.dtype), lambda n: [_x(2, n)]),
    "cat": (lambda x: torch.cat([x, x * 2], dim=0).sum(0), lambda n: [_x(n, 3)]),
    "expand": (lambda x: x[:, :1].expand(x.size(0), 4) * x[:, 1:5], lambda n: [_x(n, 5)]),
}


@pytest.mark.parametrize("case", sorted(POINTWISE))
def test_pointwise(case):
    _check(*POINTWISE[case])


@pytest.mark.parametrize("case", sorted(REDUCTIONS))
def test_reductions(case):
    _check(*REDUCTIONS[case])


@pytest.mark.parametrize("case", sorted(NORMS))
def test_softmax_and_layer_norm(case):
    _check(*NORMS[case], tol=1e-4)


@pytest.mark.parametrize("case", sorted(MATMULS))
def test_matmul(case):
    _check(*MATMULS[case], tol=1e-4)


@pytest.mark.parametrize("case", sorted(VIEWS))
def test_views_with_symbolic_sizes(case):
    _check(*VIEWS[case])


class Attention(torch.nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm = torch.nn.LayerNorm(dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.norm(x)).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(y.transpose(1, 2).reshape(B, T, C))


@pytest.mark.parametrize("dim", ["seq", "batch"])
def test_attention_block(dim):
    torch.manual_seed(0)
    m = Attention().eval()
    make = (lambda n: [_x(2, n, 16)]) if dim == "seq" else (lambda n: [_x(n, 5, 16)])
    with torch.no_grad():
        _check(m, make, tol=1e-4)


@pytest.mark.parametrize(
    "fn, make",
    [POINTWISE["rows"], REDUCTIONS["sum_cols"], NORMS["softmax_row"], MATMULS["mm_inner"], VIEWS["halves"]],
    ids=["pointwise", "reduction", "softmax", "matmul", "view"],
)
def test_one_kernel_set_serves_every_size(fn, make):
    # dynamic from the first call: one entry for 2.., one each for 0 and 1
    _, loaded = _check(fn, make, dynamic=True, max_entries=3)
    assert loaded == 0  # sizes after the first few reuse the compiled kernels


ONE_LOWERING = {
    "pointwise": POINTWISE["rows"],
    "pointwise_cols": POINTWISE["cols"],
    "reduction": REDUCTIONS["sum_rows"],
    "softmax": NORMS["softmax_row"],
    "layer_norm": NORMS["layer_norm"],
    "matmul": MATMULS["mm_inner"],
    "matmul_rows": MATMULS["mm_rows"],
    "view_chain": VIEWS["split_last"],
    "view_halves": VIEWS["halves"],
}


@pytest.mark.parametrize("case", sorted(ONE_LOWERING))
def test_one_lowering_serves_every_size(case, monkeypatch):
    # The host side too: the symbolic graph is traced, lowered, fused and generated
    # once, and each new size only evaluates its launch arguments.  Counted at
    # `lower_program` (what every host lowering calls), so the count does not rely
    # on the backend's own bookkeeping (`compile.lowerings()`, checked below).
    from bcfront.backends.triton import compile as tc

    calls = []
    real = tc.lower_program
    monkeypatch.setattr(tc, "lower_program", lambda gm: calls.append(gm) or real(gm))
    fn, make = ONE_LOWERING[case]
    cf = bcfront.capture(fn, backend="triton", dynamic=True)
    for n in GROWING + [25, 31, 40]:  # 23 sizes, one dynamic entry
        args = make(n)
        torch.testing.assert_close(
            cf(*_clone(args)), fn(*_clone(args)), rtol=1e-4, atol=1e-4, msg=lambda m, n=n: f"size {n}: {m}"
        )
    assert len(cf.entries) == 1, [e.notes for e in cf.entries]
    assert {g.backend for g in cf.entries[0].graphs} == {"triton"}
    assert len(calls) == 1
    for n in (0, 1):  # specialized by the capture: an entry (and a lowering) each
        args = make(n)
        torch.testing.assert_close(cf(*_clone(args)), fn(*_clone(args)), rtol=1e-4, atol=1e-4)
    assert len(calls) == 3


def _recording_init():
    """A `CompiledTritonGraph.__init__` that keeps each graph built, and the list."""
    from bcfront.backends.triton import compile as tc

    seen = []
    real = tc.CompiledTritonGraph.__init__

    def init(self, *a, **k):
        real(self, *a, **k)
        seen.append(self)

    return seen, init


def test_size_that_decides_the_lowering_lowers_per_range(monkeypatch):
    # A reduction row held in registers up to `persistent_max`, looped beyond: the
    # row length decides the kernel, so the symbolic lowering guards it and a row
    # past the limit gets a lowering of its own -- right either way.
    from bcfront.backends.triton import compile as tc

    seen, init = _recording_init()
    monkeypatch.setattr(tc.CompiledTritonGraph, "__init__", init)
    fn = lambda x: x.sum(-1)  # noqa: E731
    cf = bcfront.capture(fn, backend="triton", dynamic=True)
    before = tc.lowerings()
    for n in (5, 9, 4000, 5000, 6000, 4096, 4097, 7):
        x = _x(3, n)
        torch.testing.assert_close(cf(x), fn(x), rtol=1e-4, atol=1e-4)
    (g,) = seen
    assert g.symbolic is not None and any("4096" in c for c in g.symbolic.guards)
    assert g.lowerings == 4  # the symbolic one (rows <= 4096), then 5000, 6000, 4097 each
    assert tc.lowerings() - before == 4
    assert "outside the symbolic lowering's guards" in g.per_size
