"""Guard soundness, identity relations between tensor arguments: the same tensor passed twice or two
distinct ones, overlapping views, aliases reached through lists, dicts, attributes, globals.

Protocol: `state_sequences` (split by theme from issue 25's extra cases)."""

from __future__ import annotations

import pytest

from .helpers import HAS_TORCH
from .state_sequences import Case, sequence_tests

pytestmark = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")

if HAS_TORCH:
    import torch


# -- identity relations between tensor arguments -------------------------------------------------


def _two(same, make, derive=None):
    """(a, b): the same tensor twice, or b derived from a (a view), or two equal tensors."""
    a = make()
    if same:
        return (a, a if derive is None else derive(a))
    return (a, make() if derive is None else derive(make()).clone())


def _add_then_read(a, b):
    a.add_(1)
    return b * 2


def _is_same(a, b):
    return a is b, a.data_ptr() == b.data_ptr()


def _mul_then_read(a, b):
    a.mul_(2)
    return b.clone()


def _zero_then_sum(a, b):
    a.zero_()
    return b.sum()


def _out_alias(a, b):
    torch.add(a, 1, out=b)
    return a.clone()


def _list_alias(lst):
    lst[0].add_(1)
    return lst[1] + 0


def _dict_alias(d):
    d["a"].sub_(3)
    return d["b"] * 1


def _attr_alias(o1, o2):
    o1.t.add_(5)
    return o2.t + 0


def _global_alias(ns_get):
    def f(x):
        x.add_(1)
        return ns_get() + 0

    return f


def _pair_case(fn, make, derive=None, seq=(False, False, True, True, False)):
    return Case(fn, lambda v: _two(v, make, derive), seq)


def _ones3():
    return torch.ones(3)


def _overlap_views(same):
    base = torch.arange(4.0)
    if same:
        return (base[:3], base[1:])
    return (torch.arange(4.0)[:3], torch.arange(4.0)[1:])


class _Holder:
    def __init__(self, t):
        self.t = t


def _holders(same):
    t = torch.zeros(2)
    return (_Holder(t), _Holder(t if same else torch.zeros(2)))


def _global_alias_case():
    box = {"G": None}

    def make(same):
        x = torch.zeros(2)
        box["G"] = x if same else torch.zeros(2)
        return (x,)

    return Case(_global_alias(lambda: box["G"]), make, (False, False, True, True, False))


IDENTITY_CASES = {
    "same_tensor_twice_add_then_read": lambda: _pair_case(_add_then_read, _ones3),
    "same_tensor_twice_is": lambda: _pair_case(_is_same, _ones3),
    "same_tensor_twice_first_is_same": lambda: _pair_case(
        _add_then_read, _ones3, seq=(True, True, False, False, True)
    ),
    "overlapping_views_of_one_base": lambda: Case(
        _mul_then_read, _overlap_views, (False, False, True, True, False)
    ),
    "flat_view_vs_copy": lambda: _pair_case(_zero_then_sum, lambda: torch.ones(2, 2), lambda a: a.view(-1)),
    "transpose_view_vs_copy": lambda: _pair_case(
        _add_then_read, lambda: torch.arange(6.0).view(2, 3), lambda a: a.t()
    ),
    "row_view_vs_copy": lambda: _pair_case(_add_then_read, lambda: torch.ones(2, 2), lambda a: a[0]),
    "detach_shares_storage": lambda: _pair_case(_mul_then_read, _ones3, lambda a: a.detach()),
    "out_argument_aliases_input": lambda: _pair_case(_out_alias, _ones3),
    "list_with_same_tensor_twice": lambda: Case(
        _list_alias,
        lambda v: ([t := torch.ones(2), t if v else torch.ones(2)],),
        (False, False, True, True, False),
    ),
    "dict_with_same_tensor_twice": lambda: Case(
        _dict_alias,
        lambda v: ({"a": (t := torch.ones(2)), "b": t if v else torch.ones(2)},),
        (False, False, True, True, False),
    ),
    "objects_holding_one_tensor": lambda: Case(_attr_alias, _holders, (False, False, True, True, False)),
    "argument_is_also_a_global": _global_alias_case,
}


CASES = {f"identity_{k}": v for k, v in IDENTITY_CASES.items()}
test_extra_case_is_never_stale, test_extra_case_depends_on_its_state = sequence_tests(CASES)
