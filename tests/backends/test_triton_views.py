"""Views, data movement and input mutation through the Triton backend.

Views are folded into index arithmetic: kernels read strided, sliced,
transposed and expanded inputs in place (asserted by the absence of copy
kernels), and outputs that are views of inputs stay views of them.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from .triton_env import GPU_RUN  # noqa: E402
from .triton_util import compare  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


VIEW_FNS = {
    "view_merge": lambda x: (x.view(6, 20) * 2).sum(-1),
    "view_split": lambda x: x.reshape(2, 3, 4, 5).permute(3, 0, 2, 1) + 1,
    "permute_3d": lambda x: x.permute(2, 0, 1).exp(),
    "transpose_then_view": lambda x: x.transpose(0, 1).reshape(4, -1) * 3,
    "expand": lambda x: x[:, :1, :].expand(2, 3, 20) * x,
    "select": lambda x: x[1] - x[:, 2, None, :].squeeze(1)[0],
    "slice_step": lambda x: x[:, ::2, 3:17:3] * 2,
    "negative_index": lambda x: x[-1, -2:, :-1] + 1,
    "unsqueeze_squeeze": lambda x: x.unsqueeze(1).unsqueeze(-1).squeeze(1).squeeze(-1) * 0.5,
    "unbind": lambda x: sum(t * (i + 1) for i, t in enumerate(x.unbind(1))),
    "split_sizes": lambda x: [t.sin() for t in x.split([7, 13], dim=-1)],
    "chunk_cat": lambda x: torch.cat([c * k for k, c in enumerate(x.chunk(4, dim=-1))], dim=1),
    "cat_computed_and_input": lambda x: torch.cat([x.exp(), x, x.sum(-1, keepdim=True)], dim=-1),
    "cat_dim0": lambda x: torch.cat([x[:1], x * 2, x[1:] + 1], dim=0),
    "stack": lambda x: torch.stack([x, x * 2], dim=2).sum(2),
    "pad": lambda x: torch.nn.functional.pad(x, (2, 3, 1, 0), value=-1.5),
    "pad_negative": lambda x: torch.nn.functional.pad(x, (-2, 1)),
    "flip": lambda x: x.flip(-1, 0) * 2,
    "roll": lambda x: torch.roll(x, shifts=(3, -1), dims=(2, 1)) + x,
    "repeat": lambda x: x[:, :2, :5].repeat(2, 1, 3) + 1,
    "t_and_mm_free": lambda x: x[0].t() + x[1].t().contiguous(),
    "diag_like_as_strided": lambda x: x.as_strided((3, 3), (21, 1)) * 2,
}


@pytest.mark.parametrize("name", sorted(VIEW_FNS))
def test_views(name):
    compare(VIEW_FNS[name], [_x(2, 3, 20)])


@pytest.mark.parametrize(
    "make",
    [
        lambda: _x(20, 12).t(),  # transposed
        lambda: _x(12, 40)[:, 5:25],  # column slice (storage offset)
        lambda: _x(24, 20)[::2],  # row stride
        lambda: _x(20).expand(12, 20),  # stride 0
        lambda: _x(3, 12, 20)[1],  # offset into storage
        lambda: _x(4, 5, 20).permute(1, 0, 2).reshape(20, 20)[:12],
    ],
)
def test_noncontiguous_inputs_need_no_copies(make):
    x = make()
    b = _x(20, seed=3)

    def fn(x, b):
        return torch.softmax(x * 2 + b, dim=-1), (x - b).abs().sum(0)

    compiled = compare(fn, [x, b])
    # the inputs are read in place: no copy kernels, just the two fused reductions
    assert len(compiled.kernels) <= 2
    assert all("copy" not in k.name for k in compiled.kernels)


def test_strided_output_matches_eager_strides():
    x = _x(6, 9)
    compiled = compare(lambda x: (x.t() * 2).exp(), [x], kernels=1)
    out = compiled(x)
    assert out.stride() == (x.t() * 2).exp().stride()


def test_outputs_that_are_views_of_inputs_alias_them():
    x = _x(4, 6)

    def fn(x):
        return x.t(), x[1:3], x.view(24), x * 2

    compiled = compare(fn, [x], kernels=1)
    t, s, v, _ = compiled(x)
    for o in (t, s, v):
        assert o.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_input_mutation_is_copied_back():
    def fn(x, y):
        x.add_(1)
        y.mul_(x.sum())
        return x * 2

    compiled = compare(fn, [_x(5, 7), _x(3, seed=2)])
    assert compiled.fallback_ops.count("aten.copy_") == 2


def test_slice_assignment_becomes_scatter():
    def fn(x, y):
        x[1:3].copy_(y * 2)
        x[0, ::2].fill_(-1.0)
        return x.sum(-1)

    compare(fn, [_x(4, 6), _x(2, 6, seed=5)])


def test_select_scatter_from_indexed_assignment():
    def fn(x, y):
        x.select(1, 2).copy_(y)
        return x + 1

    compare(fn, [_x(4, 5), _x(4, seed=9)], kernels=1)


def test_empty_and_zero_dim():
    compare(lambda x: (x * 2).sum(-1), [_x(0, 5)], kernels=0)  # output has no elements
    compare(lambda x: (x * 2).sum(0), [_x(0, 5)], kernels=1)  # five zeros
    compare(lambda x: x.exp() + 1, [_x(0, 5)], kernels=0)
    compare(lambda x: x.sum() * 2, [_x(4, 5)], kernels=1)
    compare(lambda x: x * 3 + 1, [torch.tensor(2.5)], kernels=1)


def test_reshape_that_needs_a_copy():
    x = _x(4, 6).t()  # non-contiguous: reshape copies in eager
    compare(lambda x: x.reshape(24) * 2, [x], kernels=1)
