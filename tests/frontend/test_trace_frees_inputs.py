"""A finished trace keeps none of the call's tensors: once the call returns, what the caller
drops is freed as in eager Python -- by reference counting, not at some later cyclic
collection -- and a module that a tensor's autograd graph holds (a hook: C++ keeps it,
where the collector cannot see) goes with one collection, as in eager (O60: an FSDP2
model, whose hooks hang on the loss's graph, outlived ``del`` and ``gc.collect()``).

Oracle: the plain function run eagerly, under the same deletions.  The collector is paused
around each call (this test's own, so that no collection hides a kept tensor).
"""

from __future__ import annotations

import contextlib
import gc
import io
import weakref

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def whole(x):
    return (x * 2).sum()


def across_a_break(x):
    y = x * 2
    print("break")  # the continuation gets y as an input
    return y


def loss_across_a_break(x):
    loss = (x * 2).sum()
    print("break")
    return loss * 3


@contextlib.contextmanager
def collector_paused():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _freed_on_del(fn) -> tuple[bool, bool]:
    """(input, result) freed as soon as the caller deletes them, with no collection."""
    x = torch.randn(4, requires_grad=True)
    with collector_paused(), contextlib.redirect_stdout(io.StringIO()):
        out = fn(x)
        xr, outr = weakref.ref(x), weakref.ref(out)
        del x, out
        return xr() is None, outr() is None


@pytest.mark.parametrize("fn", [whole, across_a_break, loss_across_a_break], ids=lambda f: f.__name__)
def test_first_call_keeps_no_tensor(fn):
    bcfront.capture(lambda t: t + 1)(torch.ones(2))  # torch's lazy imports are done
    cf = bcfront.capture(fn)
    assert _freed_on_del(cf) == _freed_on_del(fn) == (True, True)
    assert _freed_on_del(cf) == (True, True)  # (the cached entry too)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.me = self  # a reference cycle: only the collector frees it

    def forward(self, x):
        return self.lin(x)

    def hook(self, grad):
        return grad


def _module_freed_by_one_collection(wrap) -> bool:
    net = Net()
    h = net(torch.randn(2, 4)) * 1
    h.register_hook(net.hook)  # h's graph holds net, from C++
    step = wrap(lambda t: t.sum())
    with collector_paused():
        step(h).backward()
        alive = weakref.ref(net)
        del net, h, step
    gc.collect()
    return alive() is None


def test_module_held_by_a_tensors_hook_goes_with_one_collection():
    bcfront.capture(lambda t: t + 1)(torch.ones(2))
    assert _module_freed_by_one_collection(lambda f: f)
    assert _module_freed_by_one_collection(bcfront.capture)
