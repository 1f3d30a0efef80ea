"""``inspect.signature`` / ``inspect.unwrap`` folded at capture, under guards on what the
signature depends on (``__wrapped__``, ``__signature__``, ``__code__``, defaults).
Checked against plain Python, ``fullgraph=True`` for no break."""

from __future__ import annotations

import functools
import inspect

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import bcfront  # noqa: E402


def g(a, b=2, *args, c=1, **kw):
    return a


@functools.wraps(g)
def wrapped(*args, **kw):
    return g(*args, **kw)


def describe(x):
    s = inspect.signature(g)
    p = s.parameters
    n = len(p) + len(inspect.signature(wrapped).parameters)
    return (
        x + n,
        [k for k in p],
        "c" in p,
        "z" in p,
        [(k, v.kind, v.default) for k, v in p.items()],
        p["a"].name,
        list(p.keys()),
        [v.name for v in p.values()],
        p.get("b").default,
        inspect.unwrap(wrapped) is g,
        s.parameters is p,
    )


def test_signature_parameters_like_python():
    x = torch.randn(3)
    ref = describe(x)
    out = bcfront.capture(describe, fullgraph=True)(x)
    assert torch.equal(out[0], ref[0]) and out[1:] == ref[1:]


def test_bound_method_signature_skips_self():
    class M(nn.Module):
        def chunk(self, x, y=None):
            return x

        def forward(self, x):
            return x * len(inspect.signature(self.chunk).parameters)

    m = M()
    x = torch.randn(3)
    assert torch.equal(bcfront.capture(m, fullgraph=True)(x), m(x))


def test_mappingproxy_store_raises_as_in_python():
    def f(x):
        p = inspect.signature(g).parameters
        try:
            p["q"] = 1
        except TypeError as e:
            return x, e.args
        return x, None

    x = torch.randn(3)
    assert bcfront.capture(f, fullgraph=True)(x)[1] == f(x)[1]


def test_signature_guards_see_changes():
    def h(a, b):
        return a

    def f(x):
        return x * len(inspect.signature(h).parameters)

    cf = bcfront.capture(f, fullgraph=True)
    x = torch.randn(3)
    assert torch.equal(cf(x), f(x))
    h.__signature__ = inspect.Signature([inspect.Parameter("only", inspect.Parameter.POSITIONAL_ONLY)])
    assert torch.equal(cf(x), f(x))  # __signature__ appeared: recaptured
    del h.__signature__

    def h2(a, b, c):
        return a

    h.__code__ = h2.__code__
    assert torch.equal(cf(x), f(x))  # __code__ replaced
    h.__wrapped__ = g
    assert torch.equal(cf(x), f(x))  # a __wrapped__ chain now


def test_unwrap_follows_the_guarded_chain():
    def f(x):
        return x + (inspect.unwrap(wrapped) is g) + (inspect.unwrap(g) is g)

    x = torch.randn(3)
    assert torch.equal(bcfront.capture(f, fullgraph=True)(x), f(x))


def test_apply_chunking_to_forward():
    try:
        from models.vision_cpu import import_torchvision

        import_torchvision()  # transformers imports torchvision, whose wheels need a CUDA torch
    except Exception:  # noqa: BLE001 - no torchvision: transformers may still import
        pass
    pytest.importorskip("transformers")
    from transformers.pytorch_utils import apply_chunking_to_forward

    class Chunked(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def chunk(self, h):
            return self.lin(h) * 2

        def forward(self, h):
            return apply_chunking_to_forward(self.chunk, 0, 1, h)

    torch.manual_seed(0)
    m = Chunked()
    x = torch.randn(2, 3, 4)
    assert torch.allclose(bcfront.capture(m, fullgraph=True)(x), m(x))


def test_signature_none_and_follow_wrapped_false():
    def h(a, b):
        return a

    h.__signature__ = None  # present but None: computed from the function after all

    def f(x):
        n = len(inspect.signature(h).parameters)
        return x * n + len(inspect.signature(wrapped, follow_wrapped=False).parameters)

    cf = bcfront.capture(f, fullgraph=True)
    x = torch.randn(3)
    assert torch.equal(cf(x), f(x))

    def h3(a, b, c):
        return a

    h.__code__ = h3.__code__
    assert torch.equal(cf(x), f(x))
    wrapped.__signature__ = inspect.signature(h3)
    try:
        assert torch.equal(cf(x), f(x))
    finally:
        del wrapped.__signature__
