"""More guard-soundness cases (issue 25's list): Enum members, dataclasses, partials,
Python scalars (``-0.0``, ``nan``), ``__class__`` assignment, memory of every input kind,
torch global state and sizes that become symbolic.  Same protocol as
`test_guard_soundness`; the slow test reruns every pure-Python case of the suite under
``torch.compile(backend="eager")`` as a reference."""

from __future__ import annotations

import dataclasses
import enum
import functools
import gc
import math
import weakref

import pytest

import bcfront

from .helpers import HAS_TORCH, assert_agree
from .test_guard_soundness import PY_CASES as BASE_PY_CASES
from .test_guard_soundness import Case, _run_case


class Mode(enum.Enum):
    A = 1
    B = 2


def _switch(fn, first, then):
    state = {"v": first}
    return Case(fn, lambda: (state["v"],), lambda: state.__setitem__("v", then))


@dataclasses.dataclass
class Cfg:
    scale: int = 2


def _dataclass_field():
    c = Cfg()
    return Case(lambda o: o.scale * 3, lambda: (c,), lambda: setattr(c, "scale", 5))


def _dataclass_frozen_replaced():
    @dataclasses.dataclass(frozen=True)
    class F:
        k: int = 1

    state = {"v": F()}
    return Case(lambda o: o.k + 1, lambda: (state["v"],), lambda: state.__setitem__("v", F(7)))


def _partial_args():
    state = {"p": functools.partial(max, 1)}
    return Case(
        lambda p: p(0), lambda: (state["p"],), lambda: state.__setitem__("p", functools.partial(max, 9))
    )


def _partial_keywords():
    def g(a, *, b=0):
        return a - b

    state = {"p": functools.partial(g, b=1)}
    return Case(
        lambda p: p(5), lambda: (state["p"],), lambda: state.__setitem__("p", functools.partial(g, b=4))
    )


def _class_assignment():
    class A:
        def v(self):
            return 1

    class B:
        def v(self):
            return 2

    o = A()
    return Case(lambda x: x.v(), lambda: (o,), lambda: setattr(o, "__class__", B))


def _copysign(x):
    return math.copysign(1.0, x), repr(x)


def _nan_compare(x):
    return x == x, x != x, repr(x)


def _is_mode_a(m):
    return m is Mode.A


def _eq_mode_a(m):
    return m == Mode.A


def _in_modes(m):
    return m in (Mode.A,), m.name


PY_CASES = {
    "enum_identity": lambda: _switch(_is_mode_a, Mode.A, Mode.B),
    "enum_equality": lambda: _switch(_eq_mode_a, Mode.A, Mode.B),
    "enum_membership": lambda: _switch(_in_modes, Mode.A, Mode.B),
    "dataclass_field": _dataclass_field,
    "dataclass_frozen_replaced": _dataclass_frozen_replaced,
    "partial_args": _partial_args,
    "partial_keywords": _partial_keywords,
    "class_assignment": _class_assignment,
    "float_zero_to_negative_zero": lambda: _switch(_copysign, 0.0, -0.0),
    "float_negative_zero_to_zero": lambda: _switch(_copysign, -0.0, 0.0),
    "float_to_nan": lambda: _switch(_nan_compare, 1.0, float("nan")),
    "nan_to_float": lambda: _switch(_nan_compare, float("nan"), 1.0),
    "int_to_float_equal": lambda: _switch(repr, 2, 2.0),
    "str_to_str_subclass": lambda: _switch(lambda s: type(s).__name__ + s, "a", type("S", (str,), {})("a")),
}


@pytest.mark.parametrize("name", sorted(PY_CASES))
def test_more_python_cases_are_never_stale(name):
    _run_case(PY_CASES[name](), name)


def _torch():
    import torch

    return torch


def _torch_state(flag_get, flag_set, a, b, fn):
    torch = _torch()
    before = flag_get()

    def change():
        flag_set(b)

    flag_set(a)
    return Case(fn, lambda: (torch.ones(3),), change, lambda: flag_set(before))


def _dynamic_sizes(n0, n1, dim=0):
    torch = _torch()
    state = {"n": n0}

    def f(x):
        return x.sum(dim) * x.shape[dim] + (x.shape[dim] > 3)

    return Case(
        f,
        lambda: (torch.ones(state["n"], 2) if dim == 0 else torch.ones(2, state["n"]),),
        lambda: state.__setitem__("n", n1),
    )


def _grad_case():
    torch = _torch()
    return _torch_state(
        torch.is_grad_enabled, torch.set_grad_enabled, True, False, lambda x: (x * 2).requires_grad
    )


def _deterministic_case():
    torch = _torch()
    return _torch_state(
        torch.are_deterministic_algorithms_enabled,
        torch.use_deterministic_algorithms,
        False,
        True,
        lambda x: x + int(torch.are_deterministic_algorithms_enabled()),
    )


def _scalar_vs_tensor():
    torch = _torch()
    state = {"v": 2.0}
    return Case(
        lambda x, s: x * s,
        lambda: (torch.ones(2), state["v"]),
        lambda: state.__setitem__("v", torch.tensor(3.0)),
    )


TORCH_CASES = {
    "grad_mode": _grad_case,
    "deterministic_algorithms": _deterministic_case,
    "python_scalar_to_0dim_tensor": _scalar_vs_tensor,
    "dynamic_size_grows": lambda: _dynamic_sizes(2, 5),
    "dynamic_size_shrinks": lambda: _dynamic_sizes(5, 2),
    "dynamic_size_crosses_a_branch": lambda: _dynamic_sizes(3, 4),
    "dynamic_size_to_one": lambda: _dynamic_sizes(4, 1),
    "dynamic_size_last_dim": lambda: _dynamic_sizes(2, 6, dim=1),
}


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_more_torch_cases_are_never_stale(name):
    case = TORCH_CASES[name]()
    cf = bcfront.capture(case.fn)
    try:
        for i in range(3):  # a size seen twice becomes symbolic: a third size must be right too
            assert_agree(cf, case.fn, *case.args(), where=f"{name}: call {i} before the change")
            if i == 1:
                case.change()
    finally:
        case.restore()


def _dead_after_call(make, fn):
    cf = bcfront.capture(fn)
    args = make()
    cf(*args)
    cf(*args)
    refs = [weakref.ref(a) for a in args]
    del args
    gc.collect()
    return [r() is None for r in refs]


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize(
    "kind",
    ["tensor", "parameter", "module", "module_with_id", "plain_object_with_id", "plain_object_is_global"],
)
def test_guards_never_keep_an_input_alive(kind):
    torch = _torch()

    class Obj:
        k = 2

    g = {"G": None}
    makes = {
        "tensor": (lambda: (torch.ones(2),), lambda t: t + 1),
        "parameter": (lambda: (torch.nn.Parameter(torch.ones(2)),), lambda t: t * 2),
        "module": (lambda: (torch.nn.Linear(2, 2),), lambda m: m(torch.ones(2))),
        "module_with_id": (lambda: (torch.nn.ReLU(),), lambda m: id(m) > 0),
        "plain_object_with_id": (lambda: (Obj(),), lambda o: (id(o) > 0, o.k)),
        "plain_object_is_global": (lambda: (Obj(),), lambda o: o is g["G"]),
    }
    make, fn = makes[kind]
    assert _dead_after_call(make, fn) == [True]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", sorted(BASE_PY_CASES) + sorted(PY_CASES))
def test_reference_torch_compile_agrees(name):
    """The same protocol with torch.compile(backend="eager") in place of bcfront: the
    reference the suite is checked against (a failure here is a torch finding, not ours)."""
    import torch

    case = (BASE_PY_CASES.get(name) or PY_CASES[name])()
    torch._dynamo.reset()
    cf = torch.compile(case.fn, backend="eager")
    try:
        for _ in range(2):
            assert_agree(cf, case.fn, *case.args(), where=f"{name}: torch.compile before the change")
        case.change()
        for _ in range(2):
            assert_agree(cf, case.fn, *case.args(), where=f"{name}: torch.compile after the change")
    finally:
        case.restore()
