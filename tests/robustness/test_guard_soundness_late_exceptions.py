"""Guard soundness, exceptions that first appear on a later call: a value, key, attribute, index,
shape or dtype that only fails on the second state.

Protocol: `state_sequences` (split by theme from issue 25's extra cases)."""

from __future__ import annotations

import pytest

from .helpers import HAS_TORCH
from .state_sequences import Case, ab, int_arg_case, sequence_tests, sizes_case

pytestmark = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")

if HAS_TORCH:
    import torch


# -- exceptions that appear on a later call -------------------------------------------------------


def _check_positive(x, n):
    if n < 0:
        raise ValueError(f"negative: {n}")
    return x * n


def _key_of(x, d):
    return x * d["w"]


class _O:
    k = None


def _attr_of(x, o):
    return x * o.k


def _index(x, i):
    return x[i]


def _mm_dtypes(x, y):
    return torch.mm(x, y)


def _item_div(x):
    return 1 // int(x.sum().item())


def _assert_size(x):
    assert x.shape[0] < 4, "too long"
    return x * 2


def _exc_attr_case():
    def make(v):
        o = _O()
        if v:
            o.k = 3
        return (torch.ones(2), o)

    return Case(_attr_of, make, ab(True, False))


EXCEPTION_CASES = {
    "raise_on_negative_int": lambda: int_arg_case(_check_positive, [2, 3, -1, 4], lambda: torch.ones(2)),
    "missing_dict_key": lambda: Case(_key_of, lambda v: (torch.ones(2), {v: 2}), ab("w", "v")),
    "attribute_none_later": _exc_attr_case,
    "tensor_index_out_of_range": lambda: int_arg_case(_index, [1, 2, 3, 5, -2], lambda: torch.arange(4.0)),
    "shape_mismatch_later": lambda: Case(
        lambda x, y: x + y, lambda v: (torch.ones(3), torch.ones(v)), (3, 3, 1, 2, 3)
    ),
    "dtype_mismatch_later": lambda: Case(
        _mm_dtypes, lambda v: (torch.ones(2, 2), torch.ones(2, 2, dtype=v)), ab(torch.float32, torch.int64)
    ),
    "item_then_zero_division": lambda: sizes_case(_item_div, [2, 3, 1, 0], lambda n: torch.ones(n)),
    "assert_on_size": lambda: sizes_case(_assert_size, [1, 2, 3, 5, 2]),
}


CASES = {f"exception_{k}": v for k, v in EXCEPTION_CASES.items()}
test_extra_case_is_never_stale, test_extra_case_depends_on_its_state = sequence_tests(CASES)
