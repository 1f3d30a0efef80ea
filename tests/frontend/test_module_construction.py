"""nn.Module objects constructed inside captured code (issue #24, cause 5).

``layers[:n]`` (ModuleList/Sequential slicing builds a new container), containers and
user modules built in ``forward``: captured without a break, checked against eager.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import bcfront  # noqa: E402


def _both(make, *args):
    """(eager result, captured result) of the same module (fullgraph), same RNG seed."""
    m = make()
    torch.manual_seed(123)
    ref = m(*args)
    cf = bcfront.capture(m, fullgraph=True)
    torch.manual_seed(123)
    out = cf(*args)
    return m, ref, out


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))


def test_modulelist_slice_iterated_and_called():
    class M(Stack):
        def forward(self, x, n):
            for layer in self.layers[:n]:
                x = layer(x)
            tail = self.layers[1:]
            return tail[-1](x) + len(tail)

    x = torch.randn(2, 4)
    m, ref, out = _both(M, x, 2)
    assert torch.allclose(out, ref)
    cf = bcfront.capture(m, fullgraph=True)
    assert torch.allclose(cf(x, 3), m(x, 3))  # another slice: guarded, recaptured


def test_sequential_slice_called():
    class M(Stack):
        def forward(self, x):
            return self.seq[:2](x) + self.seq[1:](x)

    x = torch.randn(2, 4)
    _, ref, out = _both(M, x)
    assert torch.allclose(out, ref)


def test_escaping_slice_is_a_real_module_of_the_same_submodules():
    class M(Stack):
        def forward(self, x):
            return self.layers[1:]

    x = torch.randn(2, 4)
    m, ref, out = _both(M, x)
    assert type(out) is nn.ModuleList
    assert list(out) == list(ref) and out[0] is m.layers[1]
    assert list(out._modules) == ["0", "1"] and out.training
    assert [n for n, _ in out.named_parameters()] == [n for n, _ in ref.named_parameters()]


def test_containers_built_in_forward():
    class M(Stack):
        def forward(self, x):
            d = nn.ModuleDict({"a": self.layers[0], "b": self.seq})
            for _name, mod in d.items():
                x = mod(x)
            s = nn.Sequential(self.layers[2], nn.ReLU())
            lst = nn.ModuleList()
            lst.append(self.layers[1])
            return s(x) + lst[0](x), "a" in d, len(d), len(lst)

    x = torch.randn(2, 4)
    _, ref, out = _both(M, x)
    assert torch.allclose(out[0], ref[0]) and out[1:] == ref[1:]


class Scale(nn.Module):
    def __init__(self, inner, k):
        super().__init__()
        self.inner = inner
        self.k = k

    def forward(self, x):
        return self.inner(x) * self.k


def test_user_module_built_in_forward_and_stored_on_self():
    class M(Stack):
        def forward(self, x):
            s = Scale(self.layers[0], 3.0)
            self.last = s
            return s(x) + Scale(nn.Identity(), 2.0)(x)

    x = torch.randn(2, 4)
    eager = M()
    ref = eager(x)
    m = M()
    out = bcfront.capture(m, fullgraph=True)(x)
    assert torch.allclose(out, ref)
    assert type(m.last) is Scale and m.last.k == 3.0 and m.last.inner is m.layers[0]
    assert m._modules["last"] is m.last  # registered as a submodule, as in eager
    assert list(m.last._modules) == list(eager.last._modules)


def test_dropout_built_in_forward_draws_like_eager():
    class M(Stack):
        def forward(self, x):
            return nn.Dropout(0.5)(self.layers[0](x))  # a new module is in training mode

    x = torch.randn(8, 4)
    _, ref, out = _both(lambda: M().eval(), x)
    assert torch.equal(out, ref)


def test_errors_of_init_are_raised_in_the_trace():
    class M(Stack):
        def forward(self, x):
            try:
                nn.ModuleList(3)
            except TypeError as e:
                return x + 1, e.args
            return x, ()

    x = torch.randn(2, 4)
    _, ref, out = _both(M, x)
    assert torch.equal(out[0], ref[0]) and out[1] == ref[1]


def test_linear_built_in_forward_breaks_and_matches_eager():
    """A parameter made in the trace (nn.Linear's weights) is not captured: the construction
    runs natively (a clear reason), and the RNG draws are eager's."""

    class M(nn.Module):
        def forward(self, x):
            return nn.Linear(4, 3)(x) * 2

    x = torch.randn(2, 4)
    m = M()
    torch.manual_seed(7)
    ref = m(x)
    torch.manual_seed(7)
    rep = bcfront.explain(m, x)
    torch.manual_seed(7)
    out = bcfront.capture(m)(x)
    assert torch.allclose(out, ref)
    assert [b.reason for b in rep.graph_breaks] == ["parameter-construction"]


def transformers_or_skip():
    try:
        from models.vision_cpu import import_torchvision

        import_torchvision()  # transformers imports torchvision, whose wheels need a CUDA torch
    except Exception:  # noqa: BLE001 - no torchvision: transformers may still import
        pass
    return pytest.importorskip("transformers")


def test_llama_layers_slice_captures_without_break():
    """transformers' ``for layer in self.layers[: self.config.num_hidden_layers]``."""
    transformers = transformers_or_skip()
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        num_hidden_layers=2,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=100,
        max_position_embeddings=64,
    )
    m = transformers.LlamaModel(cfg).eval()
    ids = torch.randint(0, 100, (2, 8), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref = m(ids).last_hidden_state
        rep = bcfront.explain(m, ids)
        out = bcfront.capture(m)(ids).last_hidden_state
    assert torch.allclose(out, ref, atol=1e-5)
    assert not [b for b in rep.graph_breaks if b.reason == "module-construction"], rep.graph_breaks
    assert len(rep.graph_breaks) == 0


def test_del_submodule_of_a_new_module_like_eager():
    class M(Stack):
        def forward(self, x):
            s = Scale(self.layers[0], 2.0)
            del s.inner
            return x * 2, hasattr(s, "inner"), list(s._modules)

    x = torch.randn(2, 4)
    m = M()
    ref = m(x)
    out = bcfront.capture(m)(x)
    assert torch.equal(out[0], ref[0]) and out[1:] == ref[1:]
