"""Bound builtin methods are guarded by their pieces, not their identity (issue #24, cause 3).

``d.get`` (a builtin method), ``o.__eq__`` (a method-wrapper), ``t.add`` (a tensor
method) are new objects on every attribute read.  One on the stack at a graph
break (``d.get(k, getattr(cfg, k))`` where the getattr breaks) reaches the
continuation as an input; guarded by identity, every call would recompile up to
the limit.  It is guarded as the method its class's descriptor gives bound to
its ``__self__``, with ``__self__`` guarded on its own source.  Oracle: plain
Python / eager torch on the same inputs; counts from the captured functions.
"""

from __future__ import annotations

import collections
import contextlib
import io

import pytest

import bcfront

torch = pytest.importorskip("torch")


class Cfg:
    """Attribute reads on it break the graph (it defines __getattribute__)."""

    k = 3

    def __getattribute__(self, name):
        return object.__getattribute__(self, name)


def dict_get(d, cfg, x):
    v = d.get("k", getattr(cfg, "k"))
    return x + v


def list_index(lst, cfg, x):
    v = lst.index(1, getattr(cfg, "k") - 3)
    return x * v


def tensor_method(x, cfg):
    return x.add(getattr(cfg, "k")).relu()


def method_wrapper(o, cfg, x):
    same = o.__eq__(getattr(cfg, "k"))
    return x + (1 if same is True else 2)


def bound_input(method, x):
    return x + method("k", 5)


def _all(cf):
    return [cf] + [cap for fam in cf.continuations.values() for cap, _loop in fam.values()]


CASES = {
    "dict.get": (dict_get, lambda x: ({"k": 2}, Cfg(), x)),
    "list.index": (list_index, lambda x: ([0, 1, 2], Cfg(), x)),
    "Tensor.add": (tensor_method, lambda x: (x, Cfg())),
    "method-wrapper": (method_wrapper, lambda x: (object(), Cfg(), x)),
    "bound input": (bound_input, lambda x: ({"k": 4}.get, x)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fresh_bound_methods_do_not_recompile(name):
    fn, make = CASES[name]
    cf = bcfront.capture(fn)
    for seed in range(5):
        x = torch.randn(3, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(cf(*make(x)), fn(*make(x)), rtol=0, atol=0)
    for c in _all(cf):
        assert len(c.entries) == 1 and not c.recompiles, (c, [r.guard for r in c.recompiles])
    assert not [w for c in _all(cf) for w in c.warnings]


def test_the_guard_still_tells_methods_apart():
    cf = bcfront.capture(bound_input)
    x = torch.randn(3)
    d = {"k": 1}
    od = collections.OrderedDict(k=2)
    for method in (d.get, d.setdefault, od.get, {"k": 3}.get, {}.get, d.get):
        torch.testing.assert_close(cf(method, x), bound_input(method, x), rtol=0, atol=0)
    # a base class's descriptor bound to a subclass instance is not the subclass's method
    popper = dict.pop.__get__(collections.OrderedDict(k=7))
    torch.testing.assert_close(cf(popper, x), x + 7, rtol=0, atol=0)


def test_dict_get_after_a_break_mutation_between_calls():
    cf = bcfront.capture(dict_get)
    d = {"k": 2}
    x = torch.randn(3)
    for v in (2, 5, None):
        if v is None:
            del d["k"]
        else:
            d["k"] = v
        torch.testing.assert_close(cf(d, Cfg(), x), dict_get(dict(d), Cfg(), x), rtol=0, atol=0)


def test_transformers_style_loop_with_bound_get():
    """The config-defaults pattern: a loop over names, `kwargs.get(name, getattr(...))`."""

    def defaults(cfg, kwargs, x):
        for name in ("k",):
            kwargs[name] = kwargs.get(name, getattr(cfg, name))
        print("after", end="")
        return x * kwargs["k"]

    cf = bcfront.capture(defaults)
    for seed in range(4):
        x = torch.randn(2, generator=torch.Generator().manual_seed(seed))
        with contextlib.redirect_stdout(io.StringIO()):
            got = cf(Cfg(), {}, x)
        torch.testing.assert_close(got, x * 3, rtol=0, atol=0)
    assert all(not c.recompiles for c in _all(cf)), [r.guard for c in _all(cf) for r in c.recompiles]
