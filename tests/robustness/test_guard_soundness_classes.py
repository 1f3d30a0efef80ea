"""Guard soundness for what a class says: its special methods, the root module's `forward` and
`__call__`, attributes absent at capture time, and closure cells empty at capture time.

Each case follows `test_guard_soundness`: the captured function and the plain one are called
on identically rebuilt arguments twice, the change is applied, then twice again; every call
must agree (issue 25, items 1, 2, 3 and 10).
"""

from __future__ import annotations

import pytest

from .helpers import HAS_TORCH, make_namespace, outcome
from .test_guard_soundness import Case, _run_case

# -- special methods replaced on the class (item 3) ------------------------------------------------

_CLASS = """
class C:
    def __init__(self):
        self.v = [1, 2, 3]
    def __len__(self): return len(self.v)
    def __getitem__(self, i): return self.v[i]
    def __iter__(self): return iter(self.v)
    def __bool__(self): return True
    def __add__(self, o): return 1
    def __radd__(self, o): return 2
    def __iadd__(self, o): return 3
    def __eq__(self, o): return True
    def __lt__(self, o): return True
    def __hash__(self): return 1
    def __contains__(self, x): return True
    def __neg__(self): return 1
    def __getattr__(self, n):
        if n.startswith("__"):  # copy.deepcopy looks up __deepcopy__
            raise AttributeError(n)
        return 7
    def __int__(self): return 3
    def __float__(self): return 3.5
    def __str__(self): return "c"
    def __repr__(self): return "C()"
    def __format__(self, spec): return "fmt"
    def __reversed__(self): return iter([3, 2, 1])
    def __setitem__(self, k, x): self.v[0] = x
    def __delitem__(self, k): self.v.pop()
    def __index__(self): return 1

class Plain:
    pass
"""


def _getattr9(n):
    if n.startswith("__"):
        raise AttributeError(n)
    return 9


# dunder -> (function body over x, the replacement, or None to delete it from the class)
DUNDERS = {
    "__len__": ("return len(x)", lambda s: 9),
    "__getitem__": ("return x[0]", lambda s, i: 9),
    "__iter__": ("return list(x)", lambda s: iter([9])),
    "__bool__": ("return 1 if x else 2", lambda s: False),
    "__add__": ("return x + 1", lambda s, o: 9),
    "__radd__": ("return 1 + x", lambda s, o: 9),
    "__iadd__": ("x += 1\n    return x", lambda s, o: 9),
    "__eq__": ("return x == 1", lambda s, o: False),
    "__lt__": ("return x < 1", lambda s, o: False),
    "__contains__": ("return 1 in x", lambda s, o: False),
    "__neg__": ("return -x", lambda s: 9),
    "__getattr__": ("return x.missing", lambda s, n: _getattr9(n)),
    "__int__": ("return int(x)", lambda s: 9),
    "__float__": ("return float(x)", lambda s: 9.5),
    "__str__": ("return str(x)", lambda s: "new"),
    "__repr__": ("return repr(x)", lambda s: "new"),
    "__format__": ("return f'{x}'", lambda s, spec: "new"),
    "__reversed__": ("return list(reversed(x))", lambda s: iter([9])),
    "__setitem__": ("x[0] = 5\n    return x.v[0]", lambda s, k, v: None),
    "__delitem__": ("del x[0]\n    return len(x.v)", lambda s, k: None),
    "__index__": ("return [10, 20, 30][x]", lambda s: 2),
    "__hash__": ("return {x: 1}.get(x)", None),  # None: unhashable from then on
}

_TRY = "try:\n        return %s\n    except TypeError:\n        return 'no'"

# dunder -> body, for a class that gains the special method after capture
ADDED = {
    "__bool__": ("return 1 if x else 2", lambda s: False),
    "__len__": ("return 1 if x else 2", lambda s: 0),
    "__eq__": ("return x == 1", lambda s, o: True),
    "__add__": ("try:\n        return x + 1\n    except TypeError:\n        return 'no'", lambda s, o: 9),
    "__radd__": ("try:\n        return 1 + x\n    except TypeError:\n        return 'no'", lambda s, o: 9),
    "__contains__": (
        "try:\n        return 1 in x\n    except TypeError:\n        return 'no'",
        lambda s, o: True,
    ),
    "__getattr__": ("return getattr(x, 'missing', 'no')", lambda s, n: _getattr9(n)),
    "__hash__": ("return hash(x) == 1", lambda s: 1),
}


def _dunder_case(name, body, new, cls_name="C"):
    ns = make_namespace(_CLASS + f"\nobj = {cls_name}()\ndef f(x):\n    {body}\n")
    cls = ns[cls_name]

    return Case(ns["f"], lambda: (ns[cls_name](),), lambda: setattr(cls, name, new))


def _sub_dunder_case(name, body, new):
    """The special method is replaced on the base class; the argument is a subclass instance."""
    ns = make_namespace(_CLASS + f"\nclass D(C):\n    pass\ndef f(x):\n    {body}\n")
    base = ns["C"]
    return Case(ns["f"], lambda: (ns["D"](),), lambda: setattr(base, name, new))


def _shadow_dunder_case(name, body, new):
    """A subclass gains its own special method, shadowing the base's."""
    ns = make_namespace(_CLASS + f"\nclass D(C):\n    pass\ndef f(x):\n    {body}\n")
    sub = ns["D"]
    return Case(ns["f"], lambda: (ns["D"](),), lambda: setattr(sub, name, new))


def _made_inside_case(name, body, new):
    """The instance is made inside the captured function from a global class."""
    ns = make_namespace(_CLASS + f"\ndef f():\n    x = C()\n    {body}\n")
    cls = ns["C"]
    return Case(ns["f"], lambda: (), lambda: setattr(cls, name, new))


CASES = {}
for _n, (_body, _new) in DUNDERS.items():
    CASES[f"replaced_{_n}"] = (_dunder_case, _n, _body, _new)
    CASES[f"replaced_on_base_{_n}"] = (_sub_dunder_case, _n, _body, _new)
    CASES[f"shadowed_in_subclass_{_n}"] = (_shadow_dunder_case, _n, _body, _new)
for _n in ("__len__", "__getitem__", "__bool__", "__add__", "__eq__", "__contains__", "__iter__"):
    CASES[f"made_inside_{_n}"] = (_made_inside_case, _n, *DUNDERS[_n])
for _n, (_body, _new) in ADDED.items():
    CASES[f"added_{_n}"] = (lambda n, b, new: _dunder_case(n, b, new, "Plain"), _n, _body, _new)


def _case(name):
    make, *rest = CASES[name]
    return make(*rest)


@pytest.mark.parametrize("name", sorted(CASES))
def test_class_special_method_patch_is_never_stale(name):
    _run_case(_case(name), name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_class_case_depends_on_its_state(name):
    case = _case(name)
    before = outcome(case.fn, *case.args())
    case.change()
    after = outcome(case.fn, *case.args())
    assert before != after, f"{name}: the change does not affect the result"


# -- a closure cell empty at capture (item 10) -----------------------------------------------------


def _empty_cell_case():
    def outer():
        def f(x):
            return x + v

        def bind():
            nonlocal v
            v = 5

        return f, bind
        v = 0  # never reached: `v` is a cell, empty until bind() runs

    f, bind = outer()
    return Case(f, lambda: (1,), bind)


def _empty_cell_in_callee_case():
    ns = make_namespace("""
        def outer():
            def g(x):
                return x + v
            def bind():
                nonlocal v
                v = 5
            return g, bind
            v = 0
        g, bind = outer()
        def f(x):
            try:
                return g(x)
            except NameError:
                return "unbound"
    """)
    return Case(ns["f"], lambda: (1,), ns["bind"])


def test_closure_cell_bound_after_capture():
    _run_case(_empty_cell_case(), "empty_cell")


def test_callee_closure_cell_bound_after_capture():
    _run_case(_empty_cell_in_callee_case(), "empty_cell_in_callee")


# -- the root module's class: forward and __call__ (item 1); an absent submodule (item 2) -----------


def _torch():
    import torch

    return torch


def _root(attr):
    torch = _torch()

    class M(torch.nn.Module):
        def forward(self, x):
            return x + 1

    def change():
        setattr(M, attr, lambda self, x: x * 10)

    return Case(M(), lambda: (torch.ones(3),), change)


def _root_base_forward():
    torch = _torch()

    class Base(torch.nn.Module):
        def forward(self, x):
            return x + 1

    class M(Base):
        pass

    return Case(M(), lambda: (torch.ones(3),), lambda: setattr(M, "forward", lambda self, x: x - 1))


def _plain_callable_root():
    class C:
        def __call__(self, x):
            return x + 1

    return Case(C(), lambda: (3,), lambda: setattr(C, "__call__", lambda self, x: x * 10))


def _absent_submodule(add):
    torch = _torch()

    class M(torch.nn.Module):
        def forward(self, x):
            n = getattr(self, "norm", None)
            return x if n is None else n(x)

    m = M()
    return Case(m, lambda: (torch.linspace(-1, 1, 4),), lambda: add(m, torch))


def _nested_absent_submodule():
    torch = _torch()

    class Inner(torch.nn.Module):
        def forward(self, x):
            return x * 2 if hasattr(self, "extra") else x

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) + 1

    m = Outer()
    return Case(m, lambda: (torch.ones(2),), lambda: setattr(m.inner, "extra", torch.nn.Identity()))


TORCH_CASES = {
    "root_forward_replaced": lambda: _root("forward"),
    "root_call_replaced": lambda: _root("__call__"),
    "root_forward_shadowed_in_class": _root_base_forward,
    "absent_submodule_added": lambda: _absent_submodule(lambda m, t: setattr(m, "norm", t.nn.Tanh())),
    "absent_submodule_added_to_modules_dict": lambda: _absent_submodule(
        lambda m, t: m._modules.__setitem__("norm", t.nn.Tanh())
    ),
    "absent_submodule_added_to_instance_dict": lambda: _absent_submodule(
        lambda m, t: m.__dict__.__setitem__("norm", lambda x: x * 3)
    ),
    "nested_absent_submodule_added": _nested_absent_submodule,
}
PY_ROOT_CASES = {"plain_callable_call_replaced": _plain_callable_root}


@pytest.mark.parametrize("name", sorted(PY_ROOT_CASES))
def test_callable_root_patch_is_never_stale(name):
    _run_case(PY_ROOT_CASES[name](), name)


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_module_root_patch_is_never_stale(name):
    _run_case(TORCH_CASES[name](), name)


def test_catch_all_getattr_is_not_run_by_the_call_lookup():
    """Calling an object whose __getattr__ answers every name: bcfront's own lookups must not
    run it (it answered `__objclass__` with an int, an internal error)."""
    from .helpers import assert_agree

    ns = make_namespace("""
        class C:
            def __getattr__(self, n):
                return 7
            def __call__(self):
                return 5
        def f(x):
            return x()
    """)
    import bcfront

    cf = bcfront.capture(ns["f"])
    for _ in range(2):
        assert_agree(cf, ns["f"], ns["C"]())
