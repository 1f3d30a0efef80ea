"""Guard soundness for values that compare equal yet differ: dict keys and set members of
equal hash (``1``, ``1.0``, ``True``), tuples mixing them, a tensor's storage offset and
leafness (issue 25, items 6, 7 and 8).  Same protocol as `test_guard_soundness`."""

from __future__ import annotations

import pytest

import bcfront

from .helpers import HAS_TORCH, outcome
from .test_guard_soundness import Case, _run_case


def _switch(first, then, make):
    """A case whose argument is make(first) until the change, make(then) after."""
    state = {"v": first}

    def f(x):
        return [type(k).__name__ + repr(k) for k in x] if not isinstance(x, tuple) else repr(x)

    return Case(f, lambda: (make(state["v"]),), lambda: state.__setitem__("v", then))


PY_CASES = {
    "dict_key_int_to_float": lambda: _switch(1, 1.0, lambda k: {k: 0}),
    "dict_key_int_to_bool": lambda: _switch(1, True, lambda k: {k: 0}),
    "dict_key_bool_to_int": lambda: _switch(False, 0, lambda k: {"a": 1, k: 0}),
    "dict_key_float_to_int_kwargs_like": lambda: _switch(2.0, 2, lambda k: {"x": 1, k: 2}),
    "set_member_int_to_float": lambda: _switch(1, 1.0, lambda k: {k}),
    "frozenset_member_int_to_bool": lambda: _switch(1, True, lambda k: frozenset({k, "a"})),
}


@pytest.mark.parametrize("name", sorted(PY_CASES))
def test_equal_hash_keys_are_never_confused(name):
    _run_case(PY_CASES[name](), name)


def test_enumerate_start_of_equal_value():
    """A tuple constant inside an iterator's state (enumerate's start) of another type."""
    state = {"start": 1}

    def f(it):
        return [repr(i) for i, _ in it]

    _run_case(
        Case(f, lambda: (enumerate("ab", state["start"]),), lambda: state.__setitem__("start", True)),
        "enumerate_start",
    )


def _torch():
    import torch

    return torch


def _offset(read):
    torch = _torch()
    state = {"off": 0}
    base = torch.arange(10.0)
    return Case(read, lambda: (base[state["off"] : state["off"] + 4],), lambda: state.__setitem__("off", 2))


def _leaf(read, first_leaf):
    torch = _torch()
    state = {"leaf": first_leaf}

    def args():
        a = torch.ones(3, requires_grad=True)
        return (a if state["leaf"] else a * 2,)

    return Case(read, args, lambda: state.__setitem__("leaf", not first_leaf))


def _storage_offset_method(x):
    return x.storage_offset() + 1


def _storage_offset_of_view(x):
    return x[1:].storage_offset()


def _storage_offset_function(x):
    import torch

    return torch.Tensor.storage_offset(x) * 2


def _storage_offset_with_graph(x):
    return x * 2, x.storage_offset()


def _is_leaf(x):
    return 1 if x.is_leaf else 2


def _is_leaf_with_graph(x):
    return x + 1, x.is_leaf


TORCH_CASES = {
    "storage_offset_method": lambda: _offset(_storage_offset_method),
    "storage_offset_of_view": lambda: _offset(_storage_offset_of_view),
    "storage_offset_function": lambda: _offset(_storage_offset_function),
    "storage_offset_with_graph": lambda: _offset(_storage_offset_with_graph),
    "is_leaf_becomes_false": lambda: _leaf(_is_leaf, True),
    "is_leaf_becomes_true": lambda: _leaf(_is_leaf, False),
    "is_leaf_with_graph": lambda: _leaf(_is_leaf_with_graph, True),
}


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_tensor_offset_and_leafness_are_never_stale(name):
    _run_case(TORCH_CASES[name](), name)


@pytest.mark.parametrize("name", sorted(PY_CASES) + sorted(TORCH_CASES if HAS_TORCH else ()))
def test_value_case_depends_on_its_state(name):
    case = (PY_CASES.get(name) or TORCH_CASES[name])()
    before = outcome(case.fn, *case.args())
    case.change()
    after = outcome(case.fn, *case.args())
    assert repr(before) != repr(after), f"{name}: the change does not affect the result"


def _plain_function():
    pass


def test_a_function_attribute_set_after_capture_is_seen():
    """``getattr(f, "foo", None)`` folded the absence: setting ``f.foo`` must recompile."""

    def g():
        return getattr(_plain_function, "foo", None)

    cf = bcfront.capture(g)
    try:
        assert cf() is None
        _plain_function.foo = 1
        assert cf() == g() == 1
        del _plain_function.foo
        assert cf() is None
    finally:
        _plain_function.__dict__.pop("foo", None)
