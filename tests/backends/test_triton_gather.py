"""Gathers through index tensors in the Triton backend: embedding, index_select,
gather, advanced indexing (aten.index.Tensor), against eager PyTorch.

They lower to loads at data-dependent offsets inside fused kernels (no torch
fallback, asserted), read views in place, and check their indices: an index
out of range raises IndexError (the interpreter's stand-in for the device-side
assert the GPU build keeps) instead of reading outside the tensor.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn.functional as F  # noqa: E402

from bcfront.backends.triton import TritonConfig, compile_fx  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402
from .triton_util import compare, graph_of  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")


def _x(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _i(high, *shape, seed=1, dtype=torch.int64, low=0):
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _emb_pos(w, p, idx):
    """GPT input: token embedding plus position embedding of an arange."""
    return F.embedding(idx, w) + F.embedding(torch.arange(idx.shape[1]), p)


def _emb_ln(w, idx, g, b):
    """Embedding feeding LayerNorm: the gather is the reduction's prologue."""
    return F.layer_norm(F.embedding(idx, w) * 2.0, (w.shape[1],), g, b)


def _cat_two_gathers(w, i, j):
    """Two gathers under a cat: each one's lanes are masked by the selection."""
    return torch.cat([w[i], w[j] * 2], dim=0)


# (fn, inputs, kernels): every case leaves nothing to torch
CASES = {
    "embedding_2d": (lambda w, i: F.embedding(i, w), lambda: [_x(11, 8), _i(11, 3, 5)], 1),
    "embedding_int32": (
        lambda w, i: F.embedding(i, w) * 3,
        lambda: [_x(11, 8), _i(11, 7, dtype=torch.int32)],
        1,
    ),
    "embedding_0d": (lambda w, i: F.embedding(i, w), lambda: [_x(11, 8), torch.tensor(4)], 1),
    "embedding_padding_idx": (lambda w, i: F.embedding(i, w, padding_idx=0), lambda: [_x(6, 4), _i(6, 9)], 1),
    "embedding_of_transposed_table": (
        lambda w, i: F.embedding(i, w.t()),
        lambda: [_x(8, 11), _i(11, 2, 6)],
        1,
    ),
    "embedding_of_computed_table": (
        lambda w, i: F.embedding(i, w.exp() * 0.5),
        lambda: [_x(11, 8), _i(11, 4, 3)],
        1,
    ),
    "embedding_plus_positions": (_emb_pos, lambda: [_x(13, 16), _x(9, 16, seed=2), _i(13, 2, 7)], 1),
    "embedding_layernorm": (_emb_ln, lambda: [_x(13, 32), _i(13, 3, 5), _x(32, seed=3), _x(32, seed=4)], 1),
    "embedding_row_sum": (lambda w, i: F.embedding(i, w).sum(-1), lambda: [_x(13, 40), _i(13, 6)], 1),
    "index_select_dim0": (lambda x, i: torch.index_select(x, 0, i), lambda: [_x(7, 5), _i(7, 9)], 1),
    "index_select_dim1": (lambda x, i: torch.index_select(x, 1, i) + 1, lambda: [_x(4, 7, 3), _i(7, 5)], 1),
    "index_select_last_strided": (
        lambda x, i: torch.index_select(x.t(), -1, i),
        lambda: [_x(9, 4), _i(9, 6)],
        1,
    ),
    "index_select_0d_index": (
        lambda x, i: torch.index_select(x, 0, i),
        lambda: [_x(7, 5), torch.tensor(3)],
        1,
    ),
    "gather_dim1": (lambda x, i: torch.gather(x, 1, i), lambda: [_x(5, 9), _i(9, 5, 4)], 1),
    "gather_dim0_smaller": (lambda x, i: torch.gather(x, 0, i) * 2, lambda: [_x(8, 6), _i(8, 3, 4)], 1),
    "gather_transposed": (lambda x, i: torch.gather(x.t(), 1, i), lambda: [_x(9, 5), _i(9, 5, 3)], 1),
    "gather_3d_max": (lambda x, i: torch.gather(x, 2, i).amax(-1), lambda: [_x(2, 3, 8), _i(8, 2, 3, 5)], 1),
    "index_first": (lambda x, i: x[i], lambda: [_x(10, 4), _i(10, 2, 3)], 1),
    "index_negative": (lambda x, i: x[i] + 1, lambda: [_x(10, 4), _i(0, 6, low=-10)], 1),
    "index_middle": (lambda x, i: x[:, i], lambda: [_x(3, 10, 4), _i(10, 5)], 1),
    "index_two_adjacent": (
        lambda x, i, j: x[:, i, j],
        lambda: [_x(2, 6, 7, 3), _i(6, 4), _i(7, 4, seed=2)],
        1,
    ),
    "index_two_apart": (lambda x, i, j: x[i, :, j], lambda: [_x(6, 3, 7), _i(6, 2, 1), _i(7, 5, seed=2)], 1),
    "index_broadcast": (lambda x, i, j: x[i, j], lambda: [_x(6, 7), _i(6, 4, 1), _i(7, 5, seed=2)], 1),
    "index_after_reshape": (lambda x, i: x.t().reshape(-1)[i], lambda: [_x(4, 6), _i(24, 10)], 2),
    "index_int32": (lambda x, i: x[i], lambda: [_x(10, 4), _i(10, 5, dtype=torch.int32)], 1),
    "cat_two_gathers": (_cat_two_gathers, lambda: [_x(5, 3), _i(5, 4), _i(5, 2, seed=2)], 1),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t), lambda: [_x(6, 10), _i(10, 6)], 2),
    "argmax_then_embedding": (lambda w, x: F.embedding(x.argmax(-1), w), lambda: [_x(7, 5), _x(4, 7)], 2),
    "softmax_then_gather": (
        lambda x, i: torch.gather(x.softmax(-1), 1, i),
        lambda: [_x(4, 9), _i(9, 4, 2)],
        2,
    ),
    "computed_index": (lambda x, i: x[(i * 3 + 1) % 10], lambda: [_x(10, 4), _i(50, 8)], 1),
    "iota_index": (lambda x: x[torch.arange(x.shape[0] // 2) * 2 + 1] * 2, lambda: [_x(10, 4)], 1),
    "gather_of_gather": (lambda x, i, j: x[i][j], lambda: [_x(10, 4), _i(10, 6), _i(6, 3, seed=2)], 1),
    "gather_from_cat": (
        lambda a, b, i: torch.cat([a, b * 2])[i],
        lambda: [_x(3, 4), _x(5, 4, seed=2), _i(8, 9)],
        1,
    ),
    "gather_from_pad_flip": (lambda x, i: F.pad(x.flip(1), (2, 1))[:, i], lambda: [_x(3, 6), _i(9, 7)], 1),
    "gather_from_roll": (lambda x, i: torch.roll(x, 2, 0)[i], lambda: [_x(6, 3), _i(6, 5)], 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gather_matches_eager(name):
    fn, inputs, kernels = CASES[name]
    compare(fn, inputs(), kernels=kernels, fallback=[])


@pytest.mark.parametrize("rblock", [8, 32])
def test_gathers_in_looped_reductions(rblock):
    """Index loads and checks along x are hoisted out of the loop; along r they
    are redone per chunk (and per phase of a multi-loop kernel)."""
    cfg = TritonConfig(looped_rblock=rblock)
    compare(
        _emb_ln,
        [_x(13, 40), _i(13, 3, 5), _x(40, seed=3), _x(40, seed=4)],
        config=cfg,
        kernels=1,
        fallback=[],
    )
    c = compare(
        lambda x, i: torch.gather(x, 1, i).softmax(-1),
        [_x(4, 50), _i(50, 4, 45)],
        config=cfg,
        kernels=1,
        fallback=[],
    )
    assert c.kernels[0].kind == "looped"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_tables(dtype):
    compare(
        _emb_ln,
        [_x(13, 32, dtype=dtype), _i(13, 3, 5), _x(32, seed=3, dtype=dtype), _x(32, seed=4, dtype=dtype)],
        kernels=1,
        fallback=[],
    )
    compare(lambda x, i: x[:, i], [_x(3, 10, dtype=dtype), _i(10, 17)], kernels=1, fallback=[])


@pytest.mark.parametrize("n", [0, 1, 17, 4097])
def test_sizes(n):
    compare(lambda w, i: F.embedding(i, w) * 2, [_x(5, 3), _i(5, n)], kernels=1 if n else 0, fallback=[])
    compare(
        lambda x, i: torch.gather(x, 1, i),
        [_x(3, max(n, 1)), _i(max(n, 1), 3, n)],
        kernels=1 if n else 0,
        fallback=[],
    )


def _compiled(fn, inputs):
    return compile_fx(graph_of(fn, inputs), inputs)


def _asserts(compiled) -> int:
    return sum(k.source.count("tl.device_assert") for k in compiled.kernels)


BAD = {
    "embedding_too_big": (lambda w, i: F.embedding(i, w), lambda i: [_x(5, 3), i], 5),
    "embedding_negative": (lambda w, i: F.embedding(i, w), lambda i: [_x(5, 3), i], -1),
    "index_select_too_big": (lambda x, i: torch.index_select(x, 1, i), lambda i: [_x(2, 5), i], 5),
    "gather_negative": (lambda x, i: torch.gather(x, 0, i), lambda i: [_x(5, 3), i.view(3, 1)], -1),
    "index_below_wrap": (lambda x, i: x[i], lambda i: [_x(5, 3), i], -6),
    "index_too_big": (lambda x, i: x[:, i] * 2, lambda i: [_x(2, 5), i], 5),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_out_of_range_index_raises(name):
    fn, inputs, bad = BAD[name]
    good = torch.tensor([0, 2, 1])
    compiled = _compiled(fn, inputs(good))
    assert _asserts(compiled) == 1 and compiled.fallback_ops == []
    with pytest.raises((IndexError, RuntimeError)):
        fn(*inputs(torch.tensor([0, bad, 1])))  # eager raises too
    with pytest.raises(IndexError):
        compiled(*inputs(torch.tensor([0, bad, 1])))
    torch.testing.assert_close(compiled(*inputs(good)), fn(*inputs(good)))


def test_ranges_proven_statically_need_no_assert():
    """Position embeddings index with an arange: provably in range, no check;
    the token ids are data and keep theirs."""
    inputs = [_x(13, 16), _x(9, 16, seed=2), _i(13, 2, 7)]
    compiled = _compiled(_emb_pos, inputs)
    assert _asserts(compiled) == 1
    compiled = _compiled(lambda p, t: F.embedding(torch.arange(t.shape[0]), p) + t, [_x(9, 4), _x(6, 4)])
    assert _asserts(compiled) == 0 and compiled.fallback_ops == []


def test_iota_index_out_of_range_is_not_proven():
    """An arange index (traced from a shape, not a constant tensor) is checked
    exactly: in range, no assert; one past, eager and the kernel both raise."""
    ok = _compiled(lambda x: x[torch.arange(x.shape[0])] + 1, [_x(10, 3)])
    assert _asserts(ok) == 0
    with pytest.raises(IndexError):
        _x(10, 3)[torch.arange(11)]
    bad = _compiled(lambda x: torch.index_select(x, 0, torch.arange(x.shape[0] + 1)) + 1, [_x(10, 3)])
    assert _asserts(bad) == 1
    with pytest.raises(IndexError):
        bad(_x(10, 3))


def test_kernel_checks_are_launched_with_debug_on():
    from bcfront.backends.triton.runtime import CHECKED_OPTIONS

    compiled = _compiled(lambda w, i: F.embedding(i, w), [_x(5, 3), _i(5, 4)])
    (ks,) = [k for k in compiled.kernels]
    assert "tl.device_assert" in ks.source
    assert CHECKED_OPTIONS == {"debug": True, "sanitize_overflow": False}
