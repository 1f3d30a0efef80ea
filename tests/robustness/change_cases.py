"""The one-change cases of `test_guard_soundness`, and its nn.Module tree cases.

A `Case` is a function whose result depends on one piece of state, a way to make
its arguments, and a `change` that alters that state (`restore` puts it back).
The tree cases build a fresh ``Outer(Inner(Linear, ReLU, scale))`` each and change,
in every way there is, what a nested submodule call does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest


@dataclass(frozen=True)
class Case:
    """fn(*args()) depends on the state `change()` alters."""

    fn: Callable
    args: Callable[[], tuple]
    change: Callable[[], None]
    restore: Callable[[], None] = lambda: None


def torch_or_skip():
    return pytest.importorskip("torch")


def module_with_act(torch):
    """An instance of a fresh module class whose forward calls its child `act` (a ReLU)."""

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = torch.nn.ReLU()

        def forward(self, x):
            return self.act(x) + 1

    return M()


# -- nn.Module trees: every way to change what a nested submodule call does -----------------------


def _tree():
    """A fresh Outer(Inner(Linear, ReLU, scale)) whose classes belong to this case alone (so a
    case may patch a class), with a python branch on the inner module's `.training`."""
    torch = torch_or_skip()

    class Inner(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.act = torch.nn.ReLU()
            self.scale = 2

        def forward(self, x):
            y = self.act(self.lin(x)) * self.scale
            return y + 1 if self.training else y - 1

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.layers = torch.nn.ModuleList([torch.nn.Identity(), torch.nn.Sigmoid()])

        def forward(self, x):
            x = self.inner(x)
            for layer in self.layers:
                x = layer(x)
            return x

    torch.manual_seed(0)
    return Outer(), Inner


def _tree_case(change, restore=None):
    torch = torch_or_skip()
    m, Inner = _tree()
    x = torch.linspace(-1, 1, 6).reshape(2, 3)
    return Case(
        m, lambda: (x,), lambda: change(m, Inner), (lambda: restore(m, Inner)) if restore else (lambda: None)
    )


def tree_child_via_setattr():
    """A nested submodule is replaced through setattr (nn.Module.__setattr__)."""
    torch = torch_or_skip()
    return _tree_case(lambda m, _: setattr(m.inner, "act", torch.nn.Tanh()))


def tree_child_via_modules_dict():
    """A nested submodule is replaced by writing its parent's `_modules` dict directly."""
    torch = torch_or_skip()
    return _tree_case(lambda m, _: m.inner._modules.__setitem__("act", torch.nn.Tanh()))


def tree_child_shadowed_in_instance_dict():
    """A module is stored in the parent's instance `__dict__` under the child's name: attribute
    lookup finds it before nn.Module.__getattr__ consults `_modules`."""
    torch = torch_or_skip()
    return _tree_case(lambda m, _: m.inner.__dict__.__setitem__("act", torch.nn.Tanh()))


def tree_child_forward_on_instance():
    """A nested submodule gets an instance-level `forward` (shadows its class's)."""
    return _tree_case(lambda m, _: setattr(m.inner.act, "forward", lambda x: x * 100))


def tree_class_forward_replaced():
    """The class of a nested submodule gets a new `forward`."""

    def change(m, Inner):
        Inner.forward = lambda self, x: self.lin(x) * 10

    return _tree_case(change)


def tree_child_class_swapped():
    """A nested submodule's `__class__` is reassigned to a subclass with another forward."""

    def change(m, Inner):
        class Sub(Inner):
            def forward(self, x):
                return self.lin(x) - 100

        m.inner.__class__ = Sub

    return _tree_case(change)


def tree_child_training():
    """Only the nested submodule switches to eval mode (`.training` of a child)."""
    return _tree_case(lambda m, _: m.inner.eval())


def tree_parameter_via_parameters_dict():
    """A nested parameter is replaced by writing the `_parameters` dict directly."""
    torch = torch_or_skip()

    def change(m, _):
        m.inner.lin._parameters["weight"] = torch.nn.Parameter(torch.full((3, 3), 0.25))

    return _tree_case(change)


def tree_parameter_data_reshaped():
    """A parameter keeps its object but `.data` is swapped for a tensor of another shape."""
    torch = torch_or_skip()

    def change(m, _):
        with torch.no_grad():
            m.inner.lin.bias.data = torch.full((1,), 3.0)

    return _tree_case(change)


def tree_plain_attribute():
    """A plain attribute of a nested submodule changes."""
    return _tree_case(lambda m, _: setattr(m.inner, "scale", -4))


def tree_instance_dict_replaced():
    """A nested submodule's whole `__dict__` is replaced by a copy with one attribute changed."""

    def change(m, _):
        m.inner.__dict__ = {**m.inner.__dict__, "scale": 7}

    return _tree_case(change)


def tree_child_hook():
    """A forward hook is registered on a nested submodule."""
    handles = []

    def change(m, _):
        handles.append(m.inner.act.register_forward_hook(lambda mod, inp, out: out + 5))

    return _tree_case(change, lambda m, _: [h.remove() for h in handles])


def tree_child_hooks_dict_replaced():
    """A nested submodule's `_forward_pre_hooks` dict is replaced wholesale."""
    import collections

    def change(m, _):
        m.inner.lin._forward_pre_hooks = collections.OrderedDict({0: lambda mod, inp: (inp[0] * 0,)})

    return _tree_case(change)


def tree_global_hook():
    """A global forward hook (every module) is registered."""
    torch = torch_or_skip()
    handles = []

    def change(m, _):
        handles.append(
            torch.nn.modules.module.register_module_forward_hook(
                lambda mod, inp, out: out * 2 if isinstance(out, torch.Tensor) else out
            )
        )

    return _tree_case(change, lambda m, _: [h.remove() for h in handles])


def tree_module_list_item():
    """An item of a ModuleList iterated by the forward is replaced."""
    torch = torch_or_skip()
    return _tree_case(lambda m, _: m.layers.__setitem__(1, torch.nn.Tanh()))


def tree_module_list_append():
    """A ModuleList iterated by the forward grows."""
    torch = torch_or_skip()
    return _tree_case(lambda m, _: m.layers.append(torch.nn.Softplus()))


def tree_class_attribute_shadows_child():
    """A class attribute (a property) named like a submodule is added after capture: Python's
    normal lookup finds it before nn.Module.__getattr__ looks in _modules (L2)."""
    torch = torch_or_skip()
    m = module_with_act(torch)
    cls, tanh = type(m), torch.nn.Tanh()
    return Case(
        m,
        lambda: (torch.linspace(-2, 2, 5),),
        lambda: setattr(cls, "act", property(lambda self: tanh)),
        lambda: delattr(cls, "act"),
    )
