"""Shared checker for Triton backend tests: compile, run, compare with eager.

The oracle is eager PyTorch on the same inputs; for half-precision outputs it
runs in float32 on upcast inputs and rounds once (the backend computes halves
in float32 too, so comparing with eager's per-op rounding would test eager's
error instead of ours).  Inputs are cloned for both sides, and inputs that
either side mutates are compared as well.
"""

from __future__ import annotations

import types

import torch
from torch.utils._pytree import tree_flatten

from bcfront.backends.triton import compile_fx

HALF = (torch.float16, torch.bfloat16)
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}


def _clone(ts):
    return [t.clone() if isinstance(t, torch.Tensor) else t for t in ts]


def _oracle_inputs(ts):
    return [t.float() if isinstance(t, torch.Tensor) and t.dtype in HALF else t for t in ts]


def traceable(fn, arity: int):
    """`fn` as a plain Python function of `arity` arguments (symbolic_trace needs one)."""
    if isinstance(fn, types.FunctionType):
        return fn
    names = ", ".join(f"a{i}" for i in range(arity))
    ns = {"fn": fn}
    exec(f"def wrapped({names}):\n    return fn({names})\n", ns)
    return ns["wrapped"]


def graph_of(fn, inputs):
    """An FX graph of `fn`: symbolic_trace, or make_fx where Python control flow
    iterates over tensors (split/unbind results)."""
    try:
        return torch.fx.symbolic_trace(traceable(fn, len(inputs)))
    except torch.fx.proxy.TraceError:
        from torch.fx.experimental.proxy_tensor import make_fx

        return make_fx(traceable(fn, len(inputs)))(*_clone(inputs))


def compare(fn, inputs, *, config=None, kernels=None, fallback=None, tol=None):
    """Check `fn` through the backend against eager; returns the compiled graph."""
    compiled = compile_fx(graph_of(fn, inputs), _clone(inputs), config)
    mine_in = _clone(inputs)
    got = compiled(*mine_in)
    eager_in = _clone(inputs)
    eager = fn(*eager_in)
    oracle_in = _oracle_inputs(_clone(inputs))
    oracle = fn(*oracle_in)
    got_flat, _ = tree_flatten(got)
    eager_flat, _ = tree_flatten(eager)
    oracle_flat, _ = tree_flatten(oracle)
    assert len(got_flat) == len(eager_flat)
    pairs = list(zip(got_flat, eager_flat, oracle_flat))
    pairs += [(a, b, c) for a, b, c in zip(mine_in, eager_in, oracle_in) if isinstance(a, torch.Tensor)]
    for g, e, o in pairs:
        if not isinstance(e, torch.Tensor):
            assert g == e
            continue
        assert isinstance(g, torch.Tensor), type(g)
        assert g.shape == e.shape, (g.shape, e.shape)
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        if e.is_floating_point():
            rtol, atol = tol or TOL[e.dtype]
            torch.testing.assert_close(g, o.to(e.dtype), rtol=rtol, atol=atol, equal_nan=True)
        else:
            torch.testing.assert_close(g, o)  # halves compute in float32, as in the oracle
    if kernels is not None:
        assert len(compiled.kernels) == kernels, [(k.name, k.ops) for k in compiled.kernels]
    if fallback is not None:
        assert sorted(compiled.fallback_ops) == sorted(fallback), compiled.fallback_ops
    return compiled


def special_floats(n: int, dtype=torch.float32, seed: int = 0) -> torch.Tensor:
    """Random values with nan, +-inf, +-0 and large magnitudes sprinkled in."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g) * 3
    specials = torch.tensor(
        [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e4, -1e4, 0.5, -0.5, 2.5, -2.5, 1.0]
    )
    k = min(n, len(specials))
    x[:k] = specials[:k]
    return x.to(dtype)
