"""Guard soundness, sizes that keep changing after they became symbolic: parity, loop bounds, 0 and 1,
comparisons, strides and offsets of views into growing buffers, int arguments.

Protocol: `state_sequences` (split by theme from issue 25's extra cases)."""

from __future__ import annotations

import math

import pytest

from .helpers import HAS_TORCH
from .state_sequences import Case, int_arg_case, sequence_tests, sizes_case

pytestmark = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")

if HAS_TORCH:
    import torch


# -- dynamic sizes ------------------------------------------------------------------------------


def _parity(x):
    if x.shape[0] % 2 == 0:
        return x * 2
    return x - 1


def _loop_bound(x):
    acc = x.new_zeros(x.shape[1:])
    for i in range(x.shape[0]):
        acc = acc + x[i] * i
    return acc


def _compare_const(x):
    return x.sum() * (1 if x.size(0) > 4 else -1), x.size(0) >= 4


def _size_is_one(x):
    if x.size(0) == 1:
        return x.squeeze(0)
    return x.sum(0)


def _mean_by_numel(x):
    return x.sum() / x.numel(), x.numel() == 0


def _strides(v):
    return v.stride(), v.is_contiguous(), v.sum(0)


def _growing_buffer_view(k):
    buf = torch.arange(3.0 * k).view(3, k)
    return (buf[:, :2],)


def _growing_buffer_offset(n):
    buf = torch.arange(float(n))
    return (buf[n - 2 :],)


def _offset_and_sum(v):
    return v.storage_offset(), v * 1


def _int_sign(x, n):
    return x * n, n > 0, abs(n)


def _ones_n(x, n):
    return torch.ones(n) * x.sum()


def _py_loop_n(x, n):
    out = x
    for _ in range(n):
        out = out + 1
    return out


def _slice_n(x, n):
    return x[:n]


def _floordiv_n(x, n):
    return x * (12 // n)


def _view_n(x, n):
    return x.view(n, -1)


def _square(x):
    return x.shape[0] == x.shape[1], x.sum()


def _broadcast_from_other(x, y):
    return torch.zeros(y.shape[0]) + x


def _size_str(x):
    return f"n={x.shape[0]}", str(x.shape)


def _area(x):
    return x.shape[0] * x.shape[1] > 10, x.mean()


def _truthy_n(x, n):
    if n:
        return x * n
    return x - 1


def _float_arg(x, s):
    return x * s, math.copysign(1.0, s)


def _flat_view(v):
    return v.view(-1)


def _size_as_fill(x):
    return torch.full((2,), x.shape[0]) * x.sum()


def _index_n(x, n):
    return x[n] * 2


DYNAMIC_CASES = {
    "growing_buffer_view_needs_contiguity": lambda: Case(_flat_view, _growing_buffer_view, (3, 4, 2, 5)),
    "size_used_as_fill_value": lambda: sizes_case(_size_as_fill, [2, 3, 4, 0, 1]),
    "int_arg_tensor_index_sign": lambda: int_arg_case(_index_n, [1, 2, 3, -1, 0, -12]),
    "parity_branch": lambda: sizes_case(_parity, [2, 4, 6, 7, 8, 3]),
    "size_as_loop_bound": lambda: sizes_case(_loop_bound, [2, 3, 5, 1, 0], lambda n: torch.ones(n, 2)),
    "size_compared_to_constant": lambda: sizes_case(_compare_const, [2, 3, 4, 5, 6, 4]),
    "size_hits_one": lambda: sizes_case(_size_is_one, [3, 4, 1, 5], lambda n: torch.ones(n, 2)),
    "size_hits_zero": lambda: sizes_case(_mean_by_numel, [2, 3, 0, 5]),
    "growing_buffer_stride": lambda: Case(_strides, _growing_buffer_view, (3, 4, 5, 2, 6)),
    "growing_buffer_offset": lambda: Case(_offset_and_sum, _growing_buffer_offset, (3, 4, 6, 2, 5)),
    "square_relation": lambda: Case(
        _square, lambda v: (torch.ones(*v),), ((2, 2), (3, 3), (3, 4), (4, 4), (5, 2))
    ),
    "size_of_other_tensor_broadcast": lambda: Case(
        _broadcast_from_other,
        lambda v: (torch.ones(v[0]), torch.ones(v[1])),
        ((3, 3), (4, 4), (1, 4), (4, 1), (4, 5)),
    ),
    "size_formatted_in_string": lambda: sizes_case(_size_str, [2, 3, 4, 1]),
    "size_product_compared": lambda: Case(
        _area, lambda v: (torch.ones(*v),), ((2, 3), (3, 3), (3, 4), (1, 11))
    ),
    "int_arg_changes_sign": lambda: int_arg_case(_int_sign, [2, 3, 4, -1, 0, 1]),
    "int_arg_factory_size": lambda: int_arg_case(_ones_n, [2, 3, 0, 1, 4]),
    "int_arg_python_loop": lambda: int_arg_case(_py_loop_n, [2, 3, 0, -2, 1]),
    "int_arg_slice_bound": lambda: int_arg_case(_slice_n, [1, 2, 3, -1, 0, 20]),
    "int_arg_divides_then_zero": lambda: int_arg_case(_floordiv_n, [2, 3, 4, 0, 1]),
    "int_arg_view_then_invalid": lambda: int_arg_case(_view_n, [1, 2, 4, 5, 3, 0]),
    "int_arg_truthiness": lambda: int_arg_case(_truthy_n, [3, 4, 0, 5, -1]),
    "float_arg_sign_and_zero": lambda: int_arg_case(_float_arg, [0.5, 1.5, -0.0, 0.0, -2.0]),
}


CASES = {f"dynamic_{k}": v for k, v in DYNAMIC_CASES.items()}
test_extra_case_is_never_stale, test_extra_case_depends_on_its_state = sequence_tests(CASES)
