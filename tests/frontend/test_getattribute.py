"""Attribute reads on classes with a ``__getattribute__``: a Python one (transformers'
PretrainedConfig maps names through ``attribute_map`` and calls ``super().__getattribute__``)
is inlined, then ``__getattr__`` on AttributeError as CPython does; a C one inherited from a
builtin (dict, list, str) is the normal lookup.  Neither breaks the graph, and a change to
what the user's ``__getattribute__`` read, or to the method itself, recompiles.
Oracle: the plain function; ``fullgraph=True`` shows there is no break.
"""

from __future__ import annotations

import collections

import pytest

import bcfront

torch = pytest.importorskip("torch")


class Config:
    """A PretrainedConfig-like class: aliases read through ``attribute_map``."""

    attribute_map = {"hidden_size": "n_embd", "num_layers": "n_layer"}

    def __init__(self, n_embd=4, n_layer=2, scale=2.0):
        self.n_embd = n_embd
        self.n_layer = n_layer
        self.scale = scale

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)


class Lazy(Config):
    """``__getattribute__`` then ``__getattr__`` for what it does not find."""

    def __getattr__(self, key):
        if key.startswith("default_"):
            return len(key)
        raise AttributeError(key)


class Direct:
    def __init__(self):
        self.a = 3

    def __getattribute__(self, key):
        if key == "double":
            return object.__getattribute__(self, "a") * 2
        return object.__getattribute__(self, key)


class Bag(dict):  # dict's C __getattribute__: the normal lookup
    kind = "bag"

    def total(self):
        return sum(self.values())


class Names(list):
    pass


def use_config(x, cfg):
    y = x * cfg.hidden_size + cfg.num_layers
    if cfg.n_layer > 1:
        y = y * cfg.scale
    return y, cfg.hidden_size, getattr(cfg, "num_layers"), hasattr(cfg, "missing")


def use_lazy(x, cfg):
    return x + cfg.default_size + cfg.hidden_size, hasattr(cfg, "other")


def use_direct(x, d):
    return x * d.double + d.a


def use_builtin_subclasses(x, bag, names):
    names.tag = "t"
    return x * bag.total(), bag.kind, names.tag, bag["a"]


def test_python_getattribute_is_inlined():
    x = torch.arange(3.0)
    cf = bcfront.capture(use_config, fullgraph=True)
    for cfg in (Config(), Config(n_embd=5), Config(n_layer=1)):
        got, want = cf(x, cfg), use_config(x, cfg)
        torch.testing.assert_close(got[0], want[0])
        assert got[1:] == want[1:]


def test_getattr_after_getattribute_raises():
    x = torch.arange(3.0)
    cf = bcfront.capture(use_lazy, fullgraph=True)
    got, want = cf(x, Lazy()), use_lazy(x, Lazy())
    torch.testing.assert_close(got[0], want[0])
    assert got[1] == want[1]


def test_object_getattribute_inside():
    x = torch.arange(3.0)
    cf = bcfront.capture(use_direct, fullgraph=True)
    d = Direct()
    torch.testing.assert_close(cf(x, d), use_direct(x, d))
    d.a = 5
    torch.testing.assert_close(cf(x, d), use_direct(x, d))


def test_what_getattribute_read_is_guarded():
    x = torch.arange(3.0)
    cf = bcfront.capture(use_config, fullgraph=True)
    cfg = Config()
    torch.testing.assert_close(cf(x, cfg)[0], use_config(x, cfg)[0])
    cfg.attribute_map = {"hidden_size": "scale", "num_layers": "n_layer"}  # a new alias target
    torch.testing.assert_close(cf(x, cfg)[0], use_config(x, cfg)[0])
    cfg.n_embd = 7
    torch.testing.assert_close(cf(x, cfg)[0], use_config(x, cfg)[0])


def test_replaced_getattribute_recompiles():
    class Swappable(Config):
        pass

    x = torch.arange(3.0)
    cf = bcfront.capture(use_config)
    cfg = Swappable()
    torch.testing.assert_close(cf(x, cfg)[0], use_config(x, cfg)[0])
    old = Config.__getattribute__
    try:
        Swappable.__getattribute__ = lambda self, key: 3 if key == "hidden_size" else old(self, key)
        torch.testing.assert_close(cf(x, cfg)[0], use_config(x, cfg)[0])
    finally:
        del Swappable.__getattribute__
    report = bcfront.explain(use_config, x, cfg)
    assert any("__getattribute__" in g.source for g in report.guards), report.guards


def test_builtin_getattribute_is_the_normal_lookup():
    x = torch.arange(3.0)
    cf = bcfront.capture(use_builtin_subclasses, fullgraph=True)
    got = cf(x, Bag(a=1, b=2), Names([1, 2]))
    want = use_builtin_subclasses(x, Bag(a=1, b=2), Names([1, 2]))
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:]


def test_ordered_dict_subclass_attributes():
    class Out(collections.OrderedDict):
        def first(self):
            return next(iter(self.values()))

    def f(x, out):
        return x + out.first() + out["b"], list(out.keys()), out.note

    out = Out(a=1, b=2)
    out.note = "n"
    cf = bcfront.capture(f, fullgraph=True)
    x = torch.arange(3.0)
    got, want = cf(x, out), f(x, out)
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:]


def test_real_pretrained_config():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=2, n_embd=8, n_head=2, vocab_size=10)

    def f(x, cfg):
        return x * cfg.hidden_size + cfg.num_hidden_layers * cfg.n_head, cfg.num_attention_heads

    cf = bcfront.capture(f, fullgraph=True)
    x = torch.arange(3.0)
    got, want = cf(x, cfg), f(x, cfg)
    torch.testing.assert_close(got[0], want[0])
    assert got[1] == want[1]
