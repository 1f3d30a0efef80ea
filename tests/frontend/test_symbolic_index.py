"""Basic indexing by a symbolic int stays symbolic (`semantics/symbolic_index.py`).

torch's own fake ``t[:, n]`` specializes a SymInt ``n`` (a guard ``n == 4``), so a loop
writing ``seqs[:, cur_len] = token`` recompiled at every length.  Traced as ``select``,
one entry serves every later length.  Oracle: the same function run eagerly on identical
inputs -- values, shapes, strides, the input after the call, and views staying views.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def grow(seqs, token, cur_len):
    seqs[:, cur_len] = token
    return seqs[:, cur_len] * 2 + seqs[:, : cur_len + 1].sum(1)


def test_a_growing_index_is_captured_once_more_not_per_length():
    cf = bcfront.capture(grow)
    a, b = torch.zeros(2, 12), torch.zeros(2, 12)
    for cur_len in range(3, 11):
        token = torch.full((2,), float(cur_len))
        assert torch.equal(cf(a, token, cur_len), grow(b, token, cur_len)), cur_len
        assert torch.equal(a, b), cur_len
    assert len(cf.entries) == 2  # the first length static, then one symbolic entry
    assert cf.report().graph_breaks == ()


def _set_vector(x, n):
    x[:, :, n] = torch.arange(6.0)
    return x


def _set_number(x, n):
    x[n, 0] = 7
    return x


def _set_broadcast(x, n):
    x[:, n] = torch.ones(8)
    return x


def _set_int_into_float(x, n):
    x[..., n] = 2
    return x


KEYS = {
    "last": lambda x, n: x[:, :, n] * 1,
    "first": lambda x, n: x[n] + 0,
    "ellipsis": lambda x, n: x[..., n, :] * 1,
    "none_and_slices": lambda x, n: x[None, n, 1:, None] * 1,
    "two_indices": lambda x, n: x[n, :, n] * 1,
    "negative_arithmetic": lambda x, n: x[:, -n - 1] * 1,
    "slice_and_index": lambda x, n: x[:, 1:3, n] * 1,
    "view_is_a_view": lambda x, n: x[:, :, n],
    "set_vector": _set_vector,
    "set_number": _set_number,
    "set_broadcast": _set_broadcast,
    "set_int_into_float": _set_int_into_float,
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_symbolic_basic_keys_match_eager(name):
    fn = KEYS[name]
    cf = bcfront.capture(fn)
    for n in (2, 3, 4, 3):  # static, then symbolic (not 0 or 1: torch pins those); in range
        a, b = torch.arange(5 * 6 * 8.0).reshape(5, 6, 8), torch.arange(5 * 6 * 8.0).reshape(5, 6, 8)
        got, want = cf(a, n), fn(b, n)
        assert torch.equal(got, want) and got.shape == want.shape and got.stride() == want.stride(), n
        assert torch.equal(a, b), n
        if name == "view_is_a_view":
            got.add_(1)
            want.add_(1)
            assert torch.equal(a, b), "a returned view writes through to the input, as eager's"
    assert len(cf.entries) == 2  # not one per index
