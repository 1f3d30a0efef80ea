"""Guard soundness: after a capture, change one piece of state a guard must cover; never stale.

Each case builds a function whose result depends on one kind of state, a way
to make its arguments, and a `change` that alters that state.  The test calls
the captured function twice (capture, then a cached call), applies the change,
and calls again twice: every call must agree with the plain function called
right after it (recompiling or not is the capture's business; a stale result
is a bug).  Pure-Python cases run without torch (3.12/3.13 too); tensor and
module cases need torch.  Device: a CUDA device is used when there is one,
otherwise the "meta" device stands in for a second device (the CPU-only CI
checks that a meta tensor after a CPU capture is not served a CPU entry).  `Case` and the
nn.Module tree cases live in `change_cases`.
"""

from __future__ import annotations

import types

import pytest

import bcfront
from bcfront.testing.differential import diff

from .change_cases import (
    Case,
    module_with_act,
    torch_or_skip,
    tree_child_class_swapped,
    tree_child_forward_on_instance,
    tree_child_hook,
    tree_child_hooks_dict_replaced,
    tree_child_shadowed_in_instance_dict,
    tree_child_training,
    tree_child_via_modules_dict,
    tree_child_via_setattr,
    tree_class_attribute_shadows_child,
    tree_class_forward_replaced,
    tree_global_hook,
    tree_instance_dict_replaced,
    tree_module_list_append,
    tree_module_list_item,
    tree_parameter_data_reshaped,
    tree_parameter_via_parameters_dict,
    tree_plain_attribute,
)
from .helpers import HAS_TORCH, assert_agree, make_namespace, outcome


def _run_case(case: Case, name: str, compile_fn=bcfront.capture) -> None:
    cf = compile_fn(case.fn)
    try:
        for i in range(2):
            assert_agree(cf, case.fn, *case.args(), where=f"{name}: call {i} before the change")
        case.change()
        for i in range(2):
            assert_agree(cf, case.fn, *case.args(), where=f"{name}: call {i} after the change")
    finally:
        case.restore()


# -- pure-Python state --------------------------------------------------------------------------


def global_int():
    """A global read by the function is rebound."""
    ns = make_namespace("""
        SCALE = 2
        def f(x):
            return x * SCALE
    """)
    return Case(ns["f"], lambda: (3,), lambda: ns.__setitem__("SCALE", 5))


def global_function():
    """A global function the function calls is replaced (identity of a callee)."""
    ns = make_namespace("""
        def helper(x):
            return x + 1
        def f(x):
            return helper(x)
    """)
    return Case(ns["f"], lambda: (3,), lambda: ns.__setitem__("helper", lambda x: x * 100))


def global_shadows_builtin():
    """A module global named like a builtin (`len`) appears after capture."""
    ns = make_namespace("""
        def f(xs):
            return len(xs)
    """)
    return Case(ns["f"], lambda: ([1, 2, 3],), lambda: ns.__setitem__("len", lambda xs: -1))


def closure_cell():
    """A closure cell is rebound through `nonlocal` after capture."""

    def outer():
        k = 2

        def f(x):
            return x * k

        def set_k(v):
            nonlocal k
            k = v

        return f, set_k

    f, set_k = outer()
    return Case(f, lambda: (3,), lambda: set_k(7))


def module_attribute():
    """An attribute of a module the function reads is rebound."""
    mod = types.ModuleType("robust_cfg")
    mod.factor = 2
    ns = make_namespace(
        """
        def f(x):
            return x * cfg.factor
    """,
        cfg=mod,
    )
    return Case(ns["f"], lambda: (3,), lambda: setattr(mod, "factor", 9))


def object_attribute():
    """An attribute of an argument object changes between calls (same object)."""

    class Obj:
        v = 1

    o = Obj()
    o.v = 4
    return Case(lambda obj: obj.v + 1, lambda: (o,), lambda: setattr(o, "v", 10))


def object_identity():
    """A global object is replaced by another of a different class with the same attributes."""

    class A:
        def scale(self, x):
            return x * 2

    class B:
        def scale(self, x):
            return x * 3

    ns = make_namespace(
        """
        def f(x):
            return OBJ.scale(x) + isinstance(OBJ, Base)
    """,
        OBJ=A(),
        Base=A,
    )
    return Case(ns["f"], lambda: (5,), lambda: ns.__setitem__("OBJ", B()))


def class_attribute():
    """A class attribute read through an instance is changed on the class."""

    class K:
        bonus = 1

    k = K()
    return Case(
        lambda x: x + k.bonus, lambda: (1,), lambda: setattr(K, "bonus", 50), lambda: setattr(K, "bonus", 1)
    )


def dict_keys():
    """A key is added to a dict the function iterates over (same dict object)."""
    d = {"a": 1, "b": 2}
    return Case(lambda m: [k + str(v) for k, v in m.items()], lambda: (d,), lambda: d.__setitem__("c", 3))


def dict_value():
    """A value in a global dict changes (same keys)."""
    ns = make_namespace("""
        CFG = {"mode": "add"}
        def f(x):
            return x + 1 if CFG["mode"] == "add" else x * 10
    """)
    return Case(ns["f"], lambda: (4,), lambda: ns["CFG"].__setitem__("mode", "mul"))


def list_length():
    """A list argument grows (same list object)."""
    xs = [1, 2, 3]
    return Case(lambda v: sum(x * 2 for x in v), lambda: (xs,), lambda: xs.append(10))


def list_element():
    """An element of a global list changes (same length)."""
    ns = make_namespace("""
        WEIGHTS = [1, 2]
        def f(x):
            return x * WEIGHTS[0] + WEIGHTS[1]
    """)
    return Case(ns["f"], lambda: (3,), lambda: ns["WEIGHTS"].__setitem__(0, 100))


def int_to_bool():
    """An int argument becomes a bool of equal value (type, not value, changes)."""
    state = {"arg": 1}
    return Case(
        lambda x: (type(x).__name__, repr(x), x + 1),
        lambda: (state["arg"],),
        lambda: state.__setitem__("arg", True),
    )


def default_argument():
    """A function's defaults tuple is replaced."""

    def f(x, k=2):
        return x * k

    return Case(f, lambda: (3,), lambda: setattr(f, "__defaults__", (5,)))


def string_argument():
    """A string argument (with quotes and a newline) changes to another."""
    state = {"s": "it's"}
    return Case(
        lambda s: s.upper() + "|" + str(len(s)),
        lambda: (state["s"],),
        lambda: state.__setitem__("s", 'q"\n\u00e9'),
    )


def method_replaced():
    """A method is replaced on the class of an argument after capture."""

    class C:
        def scale(self):
            return 2

    c = C()
    return Case(
        lambda obj, x: obj.scale() * x,
        lambda: (c, 3),
        lambda: setattr(C, "scale", lambda self: 10),
        lambda: setattr(C, "scale", lambda self: 2),
    )


def callee_closure_cell():
    """A function the captured function calls (inlined) reads a cell that is rebound."""

    def make():
        k = 1

        def g(x):
            return x + k

        def set_k(v):
            nonlocal k
            k = v

        return g, set_k

    g, set_k = make()
    return Case(lambda x: g(x) * 2, lambda: (3,), lambda: set_k(40))


def instance_attribute_shadows_method():
    """An instance attribute that shadows a class method appears after capture."""

    class C:
        def get(self):
            return 1

    c = C()
    return Case(lambda obj: obj.get(), lambda: (c,), lambda: setattr(c, "get", lambda: 99))


def arguments_alias():
    """Two distinct arguments become the same object (`is`, and `==` by identity) -- L1."""

    class Plain:
        pass

    a, b = Plain(), Plain()
    state = {"args": (a, b)}
    return Case(
        lambda x, y: (x is y, x == y, x in [y]),
        lambda: state["args"],
        lambda: state.__setitem__("args", (a, a)),
    )


PY_CASES = {
    f.__name__: f
    for f in (
        global_int,
        global_function,
        global_shadows_builtin,
        closure_cell,
        module_attribute,
        object_attribute,
        object_identity,
        class_attribute,
        dict_keys,
        dict_value,
        list_length,
        list_element,
        int_to_bool,
        default_argument,
        string_argument,
        method_replaced,
        callee_closure_cell,
        instance_attribute_shadows_method,
        arguments_alias,
    )
}


@pytest.mark.parametrize("name", sorted(PY_CASES))
def test_python_state_change_is_never_stale(name):
    _run_case(PY_CASES[name](), name)


# -- tensors, modules, torch global state ----------------------------------------------------------


def tensor_dtype():
    """The input's dtype changes (float32 -> float64)."""
    torch = torch_or_skip()
    state = {"dtype": torch.float32}
    return Case(
        lambda x: x * 2 + 1,
        lambda: (torch.arange(6.0, dtype=state["dtype"]),),
        lambda: state.__setitem__("dtype", torch.float64),
    )


def tensor_shape():
    """The input's shape changes (python code reads it, too)."""
    torch = torch_or_skip()
    state = {"n": 3}
    return Case(
        lambda x: x.sum(0) * x.shape[0],
        lambda: (torch.ones(state["n"], 2),),
        lambda: state.__setitem__("n", 5),
    )


def tensor_stride():
    """Same shape, transposed layout: `.view` works on one and raises on the other."""
    torch = torch_or_skip()
    state = {"t": False}

    def make():
        x = torch.arange(6.0).reshape(2, 3)
        return (x.t().contiguous().t() if state["t"] else x,)

    return Case(lambda x: (x.view(-1) * 2, x.stride()), make, lambda: state.__setitem__("t", True))


def tensor_device():
    """The input moves to another device (CUDA if present, else meta)."""
    torch = torch_or_skip()
    other = "cuda" if torch.cuda.is_available() else "meta"
    state = {"device": "cpu"}

    def f(x):
        y = x * 2 + 1
        return y.device.type, tuple(y.shape), y.dtype

    return Case(
        f, lambda: (torch.ones(3, device=state["device"]),), lambda: state.__setitem__("device", other)
    )


def tensor_requires_grad():
    """The input starts requiring grad (python code branches on it)."""
    torch = torch_or_skip()
    state = {"rg": False}

    def f(x):
        y = x * 3
        return (y, "grad") if x.requires_grad else (y, "no grad")

    return Case(f, lambda: (torch.ones(2, requires_grad=state["rg"]),), lambda: state.__setitem__("rg", True))


def grad_mode():
    """Global grad mode is switched off after capture."""
    torch = torch_or_skip()
    w = torch.ones(3, requires_grad=True)
    return Case(
        lambda x: (x * w, torch.is_grad_enabled()),
        lambda: (torch.ones(3),),
        lambda: torch.set_grad_enabled(False),
        lambda: torch.set_grad_enabled(True),
    )


def default_dtype():
    """The default dtype changes: factory calls inside the function follow it."""
    torch = torch_or_skip()
    old = torch.get_default_dtype()
    return Case(
        lambda x: torch.ones(2) + x.sum(),
        lambda: (torch.ones(2, dtype=torch.float64),),
        lambda: torch.set_default_dtype(torch.float64),
        lambda: torch.set_default_dtype(old),
    )


def global_tensor_replaced():
    """A global tensor is rebound to a tensor with other values (same metadata)."""
    torch = torch_or_skip()
    ns = make_namespace(
        """
        def f(x):
            return x + BIAS
    """,
        BIAS=torch.ones(3),
    )
    return Case(ns["f"], lambda: (torch.zeros(3),), lambda: ns.__setitem__("BIAS", torch.full((3,), 7.0)))


def module_training():
    """`.eval()` after capture: dropout and a python branch on `self.training` switch off."""
    torch = torch_or_skip()

    class M(torch.nn.Module):
        def forward(self, x):
            return x * (2 if self.training else 3)

    m = M()
    return Case(m, lambda: (torch.ones(2),), m.eval)


def module_parameter_replaced():
    """A module's parameter is replaced by a new Parameter object."""
    torch = torch_or_skip()
    m = torch.nn.Linear(3, 2)

    def change():
        with torch.no_grad():
            m.weight = torch.nn.Parameter(torch.full((2, 3), 0.5))

    return Case(m, lambda: (torch.ones(1, 3),), change)


def module_parameter_in_place():
    """A parameter is updated in place (an optimizer step): same object, new values."""
    torch = torch_or_skip()
    m = torch.nn.Linear(3, 2)

    def change():
        with torch.no_grad():
            m.weight.mul_(-3)

    return Case(m, lambda: (torch.ones(1, 3),), change)


def module_submodule_replaced():
    """A submodule is swapped for a different module type."""
    torch = torch_or_skip()
    m = module_with_act(torch)
    return Case(m, lambda: (torch.linspace(-2, 2, 5),), lambda: setattr(m, "act", torch.nn.Tanh()))


def module_plain_attribute():
    """A plain Python attribute of a module (not a parameter) changes."""
    torch = torch_or_skip()

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2

        def forward(self, x):
            return x * self.scale

    m = M()
    return Case(m, lambda: (torch.ones(2),), lambda: setattr(m, "scale", 5))


def module_buffer_replaced():
    """A registered buffer is reassigned to a new tensor."""
    torch = torch_or_skip()

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", torch.zeros(3))

        def forward(self, x):
            return x + self.offset

    m = M()
    return Case(m, lambda: (torch.ones(3),), lambda: setattr(m, "offset", torch.full((3,), 4.0)))


def module_hook_added():
    """A forward hook is registered after capture: it must run and change the output."""
    torch = torch_or_skip()
    m = torch.nn.Linear(2, 2)
    handles = []

    def change():
        handles.append(m.register_forward_hook(lambda mod, inp, out: out * 0 + 7))

    return Case(m, lambda: (torch.ones(1, 2),), change, lambda: [h.remove() for h in handles])


def torch_function_patched():
    """A torch function the code calls is monkeypatched after capture (module attribute of torch)."""
    torch = torch_or_skip()
    original = torch.nn.functional.gelu

    def change():
        torch.nn.functional.gelu = lambda x, approximate="none": x * 100

    return Case(
        lambda x: torch.nn.functional.gelu(x) + 1,
        lambda: (torch.ones(2),),
        change,
        lambda: setattr(torch.nn.functional, "gelu", original),
    )


def python_scalar_into_tensor_op():
    """An int argument combined with a tensor changes value."""
    torch = torch_or_skip()
    state = {"k": 2}
    return Case(lambda x, k: x * k, lambda: (torch.ones(2), state["k"]), lambda: state.__setitem__("k", 5))


TORCH_CASES = {
    f.__name__: f
    for f in (
        tensor_dtype,
        tensor_shape,
        tensor_stride,
        tensor_device,
        tensor_requires_grad,
        grad_mode,
        default_dtype,
        global_tensor_replaced,
        module_training,
        module_parameter_replaced,
        module_parameter_in_place,
        module_submodule_replaced,
        python_scalar_into_tensor_op,
        module_plain_attribute,
        module_buffer_replaced,
        module_hook_added,
        torch_function_patched,
        tree_child_via_setattr,
        tree_child_via_modules_dict,
        tree_child_shadowed_in_instance_dict,
        tree_child_forward_on_instance,
        tree_class_forward_replaced,
        tree_child_class_swapped,
        tree_child_training,
        tree_parameter_via_parameters_dict,
        tree_parameter_data_reshaped,
        tree_plain_attribute,
        tree_instance_dict_replaced,
        tree_child_hook,
        tree_child_hooks_dict_replaced,
        tree_global_hook,
        tree_module_list_item,
        tree_module_list_append,
        tree_class_attribute_shadows_child,
    )
}


# case name -> reason, for cases that expose an open bug (strict xfail; docs/known-bugs.md).
# torch_function_patched was one (O2), fixed: torch module attributes are guarded.
OPEN_BUGS: dict[str, str] = {}


def _torch_params():
    return [
        pytest.param(
            n, marks=(pytest.mark.xfail(strict=True, reason=OPEN_BUGS[n]),) if n in OPEN_BUGS else ()
        )
        for n in sorted(TORCH_CASES)
    ]


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", _torch_params())
def test_torch_state_change_is_never_stale(name):
    _run_case(TORCH_CASES[name](), name)


@pytest.mark.parametrize("name", sorted(PY_CASES) + sorted(TORCH_CASES if HAS_TORCH else ()))
def test_case_depends_on_its_state(name):
    """The change really changes what the plain function does; else the case could not catch staleness."""
    case = (PY_CASES.get(name) or TORCH_CASES[name])()
    try:
        before = outcome(case.fn, *case.args())
        case.change()
        after = outcome(case.fn, *case.args())
    finally:
        case.restore()
    assert diff(before, after) is not None, f"{name}: the change does not affect the result"
