"""A module whose ``forward`` is wrapped by a ``(*args, **kwargs)`` decorator (issue #24).

``functools.wraps``-style decorators (transformers' ``deprecate_kwarg``,
``can_return_tuple``, ...) make the traced root ``wrapper(*args, **kwargs)``:
the module arrives as ``args[0]``, not as a parameter of its own.  The guards
meant for the module (no hooks, no instance ``forward``) must land on
``L['args'][0]``, else every fresh entry fails its own guards and the call runs
natively.  Oracle: eager PyTorch on the same module and inputs.
"""

from __future__ import annotations

import functools
import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def passthrough(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper


class Wrapped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    @passthrough
    def forward(self, x, scale=1.0):
        return self.lin(x).relu() * scale


def _module():
    torch.manual_seed(0)
    return Wrapped().eval()


def test_wrapped_forward_captures_and_hits_its_cache():
    m = _module()
    cf = bcfront.capture(m)
    for seed in (1, 2, 3):
        x = torch.randn(2, 4, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(cf(x), m(x), rtol=0, atol=0)
        torch.testing.assert_close(cf(x, scale=2.0), m(x, scale=2.0), rtol=0, atol=0)
    assert not cf.warnings, cf.warnings
    assert len(cf.entries) == 2  # one per value of the constant `scale`
    rep = cf.report()
    assert sum(g.op_count for g in rep.graphs) >= 2
    sources = {str(g.source) for g in rep.guards}
    assert "L['args'][0]" in sources  # the module, reached through *args


def test_wrapped_forward_module_guards_see_hooks():
    m = _module()
    cf = bcfront.capture(m)
    x = torch.randn(2, 4)
    torch.testing.assert_close(cf(x), m(x), rtol=0, atol=0)
    handle = m.register_forward_hook(lambda mod, args, out: out + 100)
    torch.testing.assert_close(cf(x), m(x), rtol=0, atol=0)
    handle.remove()
    torch.testing.assert_close(cf(x), m(x), rtol=0, atol=0)
    m.forward = lambda x, scale=1.0: x - 1  # an instance forward shadows the class's
    torch.testing.assert_close(cf(x), x - 1, rtol=0, atol=0)
    assert not cf.warnings, cf.warnings


def test_explain_wrapped_forward_has_a_graph():
    m = _module()
    x = torch.randn(3, 4)
    rep = bcfront.explain(m, x)
    assert len(rep.graphs) == 1 and not rep.graph_breaks
    assert not [w for f in rep.functions for w in f.warnings]


# -- zero-argument super() in a continuation: it reads the frame's first local ----------------


class Base(dict):
    def pick(self, key, default):
        return dict.get(self, key, default)


class Registry(Base):
    def pick(self, key, default):
        if key is None:
            print("no key")
        elif key != "eager" and key not in self:  # iterating a dict subclass breaks
            raise KeyError(key)
        return super().pick(key, default)


def test_zero_argument_super_after_a_break():
    r = Registry(a=1, b=2)
    cf = bcfront.capture(Registry.pick)
    for key, default in (("a", 0), ("eager", 5), ("b", 0), ("eager", 6)):
        assert cf(r, key, default) == Registry.pick(r, key, default)
    with pytest.raises(KeyError):
        cf(r, "zzz", 0)


# -- a transformers attention module (deprecate_kwarg wraps its forward) ------------------------


def _transformers():
    try:
        from models.vision_cpu import import_torchvision

        import_torchvision()  # transformers imports torchvision, whose wheels need a CUDA torch
    except Exception:  # noqa: BLE001 - no torchvision: transformers may still import
        pass
    return pytest.importorskip("transformers")


@pytest.mark.parametrize("which", ["gpt2", "bert"])
def test_transformers_attention_module(which):
    T = _transformers()
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if which == "gpt2":
            from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

            m = GPT2Attention(T.GPT2Config(n_embd=32, n_head=4, n_layer=1), layer_idx=0).eval()
        else:
            from transformers.models.bert.modeling_bert import BertSelfAttention

            m = BertSelfAttention(T.BertConfig(hidden_size=32, num_attention_heads=4)).eval()
    assert m.forward.__code__.co_argcount == 0  # the (*args, **kwargs) wrapper is the root
    cf = bcfront.capture(m)
    with torch.no_grad():
        for seed in (1, 2, 3):
            x = torch.randn(2, 5, 32, generator=torch.Generator().manual_seed(seed))
            got, want = cf(x), m(x)
            assert len(got) == len(want)
            for a, b in zip(got, want):
                if b is None:
                    assert a is None
                else:
                    torch.testing.assert_close(a, b, rtol=0, atol=0)
        rep = bcfront.explain(m, x)
    assert not cf.warnings, cf.warnings
    assert len(cf.entries) == 1 and not cf.recompiles
    assert sum(g.op_count for g in rep.graphs) >= 5  # the projections and attention captured
