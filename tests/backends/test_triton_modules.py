"""nn.Module graphs through the Triton backend: parameters, buffers, mutation of running stats."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from bcfront.backends.triton import compile_fx  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")


class Block(nn.Module):
    """A pre-norm transformer block: RMSNorm, attention (sdpa), RMSNorm, SwiGLU."""

    def __init__(self, d=16, h=2):
        super().__init__()
        self.h = h
        self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.w1, self.w3 = nn.Linear(d, 32, bias=False), nn.Linear(d, 32, bias=False)
        self.w2 = nn.Linear(32, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        hdn = self.n2(x)
        return x + self.w2(F.silu(self.w1(hdn)) * self.w3(hdn))


def _run(module, *inputs, kernels=None, tol=1e-5):
    torch.manual_seed(0)
    ref_module = copy.deepcopy(module)
    try:
        gm = torch.fx.symbolic_trace(module)
    except Exception:  # noqa: BLE001 - fx cannot trace it (any reason): make_fx
        from torch.fx.experimental.proxy_tensor import make_fx

        gm = make_fx(copy.deepcopy(module))(*inputs)
    compiled = compile_fx(gm, list(inputs))
    with torch.no_grad():  # with autograd recording the graph would run eagerly
        got = compiled(*inputs)
        ref = ref_module(*inputs)
    torch.testing.assert_close(got, ref, rtol=tol, atol=tol)
    for (name, b), (_, rb) in zip(module.named_buffers(), ref_module.named_buffers()):
        torch.testing.assert_close(b, rb, msg=name)
    if kernels is not None:
        assert len(compiled.kernels) == kernels, [k.ops for k in compiled.kernels]
    return compiled


def _x(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(1))


def test_conv_bn_relu_eval_folds_bn_into_one_kernel():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).eval()
    c = _run(m, _x(2, 3, 8, 8), kernels=1)
    assert c.fallback_ops == []  # the convolution is a Triton reduction too


def test_batchnorm_training_updates_running_stats():
    m = nn.Sequential(nn.BatchNorm2d(4), nn.ReLU()).train()
    c = _run(m, _x(3, 4, 5, 5))
    assert c.fallback_ops.count("aten.copy_") == 3  # running mean, var, batch count


def test_group_norm():
    m = nn.GroupNorm(2, 6)
    c = _run(m, _x(3, 6, 4, 4))
    assert "aten.as_strided" not in c.fallback_ops


def test_mlp_with_layernorm_gelu_dropout_eval():
    m = nn.Sequential(
        nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.2), nn.LayerNorm(16), nn.Linear(16, 4), nn.Tanh()
    ).eval()
    _run(m, _x(5, 8), kernels=3)  # linear+gelu, layernorm, linear+tanh


def test_autograd_recording_runs_eagerly():
    """Kernels compute no gradients, so while autograd records, eager runs."""
    m = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
    x = _x(3, 4)
    compiled = compile_fx(torch.fx.symbolic_trace(m), [x])
    out = compiled(x)
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    assert m[0].weight.grad is not None
    with torch.no_grad():
        assert compiled(x).grad_fn is None
        torch.testing.assert_close(compiled(x), m(x))


def test_transformer_block():
    c = _run(Block().eval(), _x(2, 6, 16), tol=1e-4)
    assert c.fallback_ops == []  # small attention is fused too (matmul, softmax, matmul)
    # rms-norms, residual adds and the SwiGLU gate fuse into the matmuls' kernels
    assert len(c.kernels) == 11


def _example_gpt():
    import importlib.util
    import os
    import sys

    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gpt.py")
    spec = importlib.util.spec_from_file_location("bcfront_example_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_gpt_example_embeddings_fuse():
    """examples/gpt.py: the token and position embeddings are gathered inside the
    first LayerNorm's kernel (before gathers were lowered: 14 kernels and both
    embeddings left to torch); the matmuls are Triton reductions too."""
    gpt = _example_gpt()
    torch.manual_seed(1)
    cfg = gpt.Config()
    model = gpt.GPT(cfg).eval()
    idx = torch.randint(0, cfg.vocab_size, (2, 8), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        c = _run(model, idx, tol=1e-4)
    assert c.fallback_ops == [], c.fallback_ops
    assert len(c.kernels) == 24
    assert "aten.embedding" in c.kernels[0].ops
    # one check (the token ids); the positions are an arange, provably in range
    assert sum(k.source.count("tl.device_assert") for k in c.kernels) == 1
