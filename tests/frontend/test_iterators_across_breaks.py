"""A builtin iterator carried across a graph break stays a modelled iterator.

A region that ends inside ``for v in d.values():`` hands its continuation the
iterator.  CPython's dict and set iterators do not show what they iterate, so
the region hands over a `HashIterator` (a real builtin iterator of the same
container that shows it): the continuation steps it in its trace instead of
breaking on every ``next()`` (issue #24: t5's loop over ``self.block``, a
ModuleList, i.e. ``iter(self._modules.values())``).  Natively it must behave
exactly like the builtin one, "changed size during iteration" included.
Oracle: CPython running the same function on equal inputs (results, printed
output, exceptions); graph and break counts come from `bcfront.explain`.
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections import OrderedDict

import pytest

import bcfront
from bcfront.frontend.model.hash_iters import HashIterator

from .outcomes import assert_same_outcome, quiet_outcome

torch = pytest.importorskip("torch")


def _check(fn, *args):
    """Same as CPython on fresh copies of the inputs, twice; returns the explain report."""
    for _ in range(2):
        cf = bcfront.capture(fn)
        assert_same_outcome(quiet_outcome(cf, *copy.deepcopy(args)), quiet_outcome(fn, *copy.deepcopy(args)))
        assert_same_outcome(quiet_outcome(cf, *copy.deepcopy(args)), quiet_outcome(fn, *copy.deepcopy(args)))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(RuntimeError):
        return bcfront.explain(fn, *copy.deepcopy(args))


def _reasons(rep):
    return [b.reason for b in rep.graph_breaks]


def _tensors(n=3):
    return {f"k{i}": torch.full((2,), float(i + 1)) for i in range(n)}


def loop_values(x, d):
    for v in d.values():
        x = x + v
        print("step")
        x = x * 2
    return x


def loop_keys(x, d):
    for k in d:
        x = x + d[k]
        print(k)
        x = x * 2
    return x


def loop_items_data_dependent(x, d):
    for k, v in d.items():
        x = x + v * len(k)
        if x.sum() > 0:
            x = x * 2
    return x


def loop_set(x, s):
    for i in s:
        x = x + i
        print("step")
    return x


@pytest.mark.parametrize(
    "fn, arg",
    [
        (loop_values, _tensors()),
        (loop_keys, _tensors()),
        (loop_items_data_dependent, _tensors()),
        (loop_values, OrderedDict(_tensors())),
        (loop_keys, _tensors(1)),
        (loop_values, _tensors(7)),
        (loop_values, {}),
        (loop_set, {1, 2, 3}),
    ],
)
def test_hash_iterator_steps_in_the_continuation(fn, arg):
    rep = _check(fn, torch.zeros(2), arg)
    assert "unsupported-iterator" not in _reasons(rep)
    assert len(rep.graph_breaks) <= 1


def test_module_list_loop_with_a_break():
    """t5's loop: ``for layer in self.block`` over a ModuleList, a break in the body."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))

        def forward(self, x):
            for layer in self.block:
                x = layer(x)
                print("layer")
                x = torch.relu(x)
            return x

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(2, 4)
    assert_same_outcome(quiet_outcome(bcfront.capture(net), x), quiet_outcome(net, x))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rep = bcfront.explain(net, x)
    assert _reasons(rep) == ["io"]


def grow(x, d):
    for k in d:
        x = x + d[k]
        print(k)
        d[k + "!"] = torch.ones(2)  # the iterator raises at its next step
    return x


def write_values(x, d):
    for k, v in d.items():
        d[k] = v * 2  # same keys: iteration goes on
        print(k)
        x = x + d[k]
    return x, list(d.values())


def shrink_then_grow_natively(x, d):
    for k in d:
        print(k)
        if k == "k0":
            del d["k2"]
            d["k3"] = torch.ones(2)  # same size, other keys
        x = x + d[k]
    return x


def resume_after_early_exit(x, d):
    it = iter(d.values())
    for v in it:
        x = x + v
        print("first")
        break
    for v in it:  # the same iterator, past the item taken above
        x = x * v
        print("rest")
    return x, next(it, None)


@pytest.mark.parametrize("fn", [grow, write_values, shrink_then_grow_natively, resume_after_early_exit])
def test_mutations_and_positions_match_cpython(fn):
    _check(fn, torch.zeros(2), _tensors())


def test_hash_iterator_natively_is_the_builtin_one():
    for kind in ("keys", "values", "items"):
        d = {"a": 1, "b": 2, "c": 3}
        it, real = HashIterator(d, kind, 1), iter(getattr(d, kind)())
        next(real)
        assert list(copy.copy(it).__reduce__()[1][0]) == list(copy.copy(real).__reduce__()[1][0])
        assert next(it) == next(real)
        d["z"] = 0
        with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
            next(it)
        assert it.state is None
    s = {1, 2}
    it = HashIterator(s, "set")
    assert it.state == ("set", 0)
    s.add(3)
    with pytest.raises(RuntimeError, match="Set changed size during iteration"):
        next(it)
    d = {"a": 1, "b": 2}
    it = HashIterator(d, "keys", 2)
    assert it.state == ("keys", 2)
    del d["b"]
    d["b"] = 2  # same keys, same order, but the builtin iterator would yield "b" again
    assert it.state is None
    with pytest.raises(RuntimeError, match="dictionary keys changed during iteration"):
        next(it)
