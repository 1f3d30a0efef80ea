"""Guard soundness, closures, defaults and globals: default values replaced or mutated, cells
reassigned, globals rebound, a callee's code or defaults replaced.

Protocol: `state_sequences` (split by theme from issue 25's extra cases)."""

from __future__ import annotations

import types

import pytest

from .helpers import HAS_TORCH, make_namespace
from .state_sequences import Case, ab, sequence_tests

pytestmark = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")

if HAS_TORCH:
    import torch
    from torch import nn


# -- closures, defaults, globals ------------------------------------------------------------------


def _defaults_case(kind):
    def f(x, k=2, *, m=3):
        return x * k + m

    orig = (f.__defaults__, f.__kwdefaults__)

    def setup(v):
        if kind == "positional":
            f.__defaults__ = (v,)
        else:
            f.__kwdefaults__ = {"m": v}

    def restore():
        f.__defaults__, f.__kwdefaults__ = orig

    return Case(f, lambda v: (torch.ones(2),), ab(2, 5), setup, restore=restore)


def _mutable_default():
    def f(x, acc=[1]):  # noqa: B006 - the mutable default is the state
        return x * len(acc)

    acc = f.__defaults__[0]
    return Case(f, lambda v: (torch.ones(2),), ab(1, 3), lambda v: acc.__setitem__(slice(None), [0] * v))


def _cell_case(first, then, fn):
    def outer():
        val = first

        def f(x):
            return fn(x, val)

        def set_(v):
            nonlocal val
            val = v

        return f, set_

    f, set_ = outer()
    return Case(f, lambda v: (torch.ones(3),), ab(first, then), set_)


def _cell_list():
    items = [1]

    def f(x):
        return x * sum(items), len(items)

    return Case(f, lambda v: (torch.ones(2),), ab(1, 3), lambda v: items.__setitem__(slice(None), [2] * v))


def _global_case(source, key, values, make=lambda v: (torch.ones(2),)):
    ns = make_namespace(source, torch=torch)

    def setup(v):
        if v is _MISSING:
            ns.pop(key, None)
        else:
            ns[key] = v

    return Case(ns["f"], make, tuple(values), setup)


_MISSING = object()

_GLOBAL_SRC = """
    def f(x):
        return x * G
"""


def _callee_defaults():
    def helper(x, k=2):
        return x * k

    def f(x):
        return helper(x) + 1

    return Case(f, lambda v: (torch.ones(2),), ab(2, 9), lambda v: setattr(helper, "__defaults__", (v,)))


def _callee_code():
    def helper(x):
        return x + 1

    def other(x):
        return x - 1

    codes = {0: helper.__code__, 1: other.__code__}

    def f(x):
        return helper(x) * 2

    return Case(f, lambda v: (torch.ones(2),), ab(0, 1), lambda v: setattr(helper, "__code__", codes[v]))


def _global_counter():
    ns = make_namespace(
        """
        COUNT = 0
        def f(x):
            global COUNT
            COUNT += 1
            return x * COUNT
        """
    )
    return Case(
        ns["f"],
        lambda v: (torch.ones(2),),
        (0, 0, 5, 5, 0),
        lambda v: ns.__setitem__("COUNT", v),
        observe=lambda: ns["COUNT"],
    )


def _cfg_module_attr():
    cfg = types.ModuleType("extra_cfg")
    ns = make_namespace(
        """
        def f(x):
            return x * cfg.factor
        """,
        cfg=cfg,
    )

    def setup(v):
        if v is _MISSING:
            cfg.__dict__.pop("factor", None)
        else:
            cfg.factor = v

    return Case(ns["f"], lambda v: (torch.ones(2),), (2, 2, _MISSING, 3, _MISSING), setup)


CLOSURE_CASES = {
    "positional_default_replaced": lambda: _defaults_case("positional"),
    "keyword_default_replaced": lambda: _defaults_case("keyword"),
    "mutable_default_mutated": _mutable_default,
    "cell_int_rebound": lambda: _cell_case(2, 5, lambda x, v: x * v),
    "cell_tensor_rebound": lambda: _cell_case(torch.ones(3), torch.full((2, 1), 3.0), lambda x, v: x + v),
    "cell_module_rebound": lambda: _cell_case(nn.ReLU(), nn.Tanh(), lambda x, m: m(x - 0.5)),
    "cell_list_mutated": _cell_list,
    "global_bool_flag": lambda: _global_case(
        """
        def f(x):
            if FLAG:
                return x.exp()
            return x.neg()
        """,
        "FLAG",
        ab(True, False),
    ),
    "global_tensor_dtype": lambda: _global_case(
        _GLOBAL_SRC, "G", ab(torch.ones(2), torch.ones(2, dtype=torch.float64))
    ),
    "global_tensor_requires_grad": lambda: _global_case(
        """
        def f(x):
            return (x * G).requires_grad
        """,
        "G",
        ab(torch.ones(2), torch.ones(2, requires_grad=True)),
    ),
    "global_function_to_none": lambda: _global_case(
        """
        def f(x):
            return H(x)
        """,
        "H",
        ab(torch.relu, None),
    ),
    "global_deleted": lambda: _global_case(_GLOBAL_SRC, "G", ab(3, _MISSING)),
    "global_dict_key_removed": lambda: _global_case(
        """
        def f(x):
            return x * D["k"]
        """,
        "D",
        ab({"k": 2}, {"j": 2}),
    ),
    "global_list_shrinks": lambda: _global_case(
        """
        def f(x):
            return x * L[2]
        """,
        "L",
        ab([1, 2, 3], [1, 2]),
    ),
    "global_rebound_by_the_function": _global_counter,
    "module_attribute_deleted": _cfg_module_attr,
    "callee_default_replaced": _callee_defaults,
    "callee_code_replaced": _callee_code,
}


CASES = {f"closure_{k}": v for k, v in CLOSURE_CASES.items()}
test_extra_case_is_never_stale, test_extra_case_depends_on_its_state = sequence_tests(CASES)
