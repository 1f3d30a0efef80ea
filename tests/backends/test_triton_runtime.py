"""Runtime of the Triton backend: cache safety, specialization, externs, readable source."""

from __future__ import annotations

import json
import os
import stat

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn.functional as F  # noqa: E402

from bcfront.backends.triton import TritonConfig, compile_fx, runtime  # noqa: E402
from bcfront.errors import BcfrontError  # noqa: E402

from .triton_env import GPU_RUN  # noqa: E402
from .triton_util import compare, graph_of  # noqa: E402

pytestmark = pytest.mark.skipif(GPU_RUN, reason="interpreter tests (BCFRONT_GPU_TESTS is set)")


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _private(path):
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
    return path


# ------------------------------------------------------------------ cache


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_cache_dir_writable_by_others_is_refused(tmp_path, mode):
    root = tmp_path / "cache"
    root.mkdir()
    os.chmod(root, mode)
    with pytest.raises(runtime.CacheDirError, match="writable by group or others"):
        compile_fx(torch.fx.symbolic_trace(lambda x: x + 1), [_x(3)], TritonConfig(cache_dir=str(root)))
    assert isinstance(runtime.CacheDirError("x"), BcfrontError)


def test_cache_dir_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(runtime.CacheDirError):
        runtime.private_dir(f)


def test_new_cache_dir_is_private(tmp_path):
    root = tmp_path / "fresh" / "bcfront"
    compile_fx(torch.fx.symbolic_trace(lambda x: x * 3), [_x(3)], TritonConfig(cache_dir=str(root)))
    for d in (root, root / "kernels"):
        assert stat.S_IMODE(os.stat(d).st_mode) & 0o077 == 0


def test_kernel_files_are_named_by_content_hash_and_repaired(tmp_path, monkeypatch):
    import hashlib

    root = _private(tmp_path / "c")
    source = "import triton\nimport triton.language as tl\nVALUE = 41 + 1\n"
    monkeypatch.setattr(runtime, "_MODULES", {})
    mod = runtime.load_module(source, root)
    digest = hashlib.sha256(source.encode()).hexdigest()
    path = root / "kernels" / f"k{digest}.py"
    assert path.read_text() == source and mod.VALUE == 42
    path.write_text("VALUE = 'planted'\n")  # a tampered file is not trusted
    monkeypatch.setattr(runtime, "_MODULES", {})
    assert runtime.load_module(source, root).VALUE == 42
    assert path.read_text() == source


def test_nothing_is_unpickled():
    import importlib
    import inspect

    for name in ("runtime", "compile", "wrapper", "codegen"):
        src = inspect.getsource(importlib.import_module(f"bcfront.backends.triton.{name}"))
        for word in ("import pickle", "pickle.", "import marshal", "marshal.", "torch.load"):
            assert word not in src


def test_autotune_records_are_json_and_validated(tmp_path):
    root = _private(tmp_path / "c")
    compiled = compile_fx(
        torch.fx.symbolic_trace(lambda x: x.exp()), [_x(10**5)], TritonConfig(cache_dir=str(root))
    )
    launcher = runtime.Launcher(runtime.KernelSource(*_ks_fields(compiled)), root)
    launcher.configs = runtime.candidate_configs(launcher.ks, interpret=False)
    best = launcher.configs[1]
    launcher._remember("Fake GPU", best)
    assert launcher._recall("Fake GPU") == best
    assert launcher._recall("Other GPU") is None
    path = launcher._record_path()
    rec = json.loads(path.read_text())
    rec["Fake GPU"]["blocks"]["XBLOCK"] = 3  # not a candidate: ignored
    path.write_text(json.dumps(rec))
    assert launcher._recall("Fake GPU") is None
    path.write_text("not json")
    assert launcher._recall("Fake GPU") is None


def _ks_fields(compiled):
    k = compiled.kernels[0]
    # rebuild the KernelSource the launcher needs from the public TritonKernel
    return (k.name, k.source, ("arg0", "buf0"), k.kind, k.numels, k.ops, 0)


def test_gpu_candidate_configs_are_sane():
    from bcfront.backends.triton.codegen import KernelSource

    for kind, numels, rb in [
        ("pointwise", (10**6,), 0),
        ("tiled", (4096, 4096), 0),
        ("persistent", (8192, 4096), 4096),
        ("looped", (4096, 32768), 0),
        ("persistent", (3, 17), 32),
        ("pointwise", (5,), 0),
    ]:
        ks = KernelSource("k", "", (), kind, numels, (), rb)
        cfgs = runtime.candidate_configs(ks, interpret=False)
        assert 1 <= len(cfgs) <= 5
        for c in cfgs:
            blocks = dict(c.blocks)
            assert all(v & (v - 1) == 0 for v in blocks.values())  # powers of two
            assert 1 <= c.num_warps <= 16
            if kind == "persistent":
                assert blocks["RBLOCK"] == rb
        assert runtime.grid_for(ks, cfgs[0])[0] >= 1


# ------------------------------------------------------------------ specialization


def test_recompiles_for_new_shapes_and_strides():
    fn = lambda x: torch.softmax(x * 2, -1)  # noqa: E731
    x = _x(4, 9)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x])
    for inp in (x, _x(3, 33), _x(9, 4).t(), x):
        torch.testing.assert_close(compiled(inp), fn(inp))
    assert len(compiled._specs) == 3


def test_aliased_inputs_with_mutation_run_eagerly():
    def fn(x, y):
        x.add_(1)
        return y * 2

    base = _x(6)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [_x(6), _x(6)])
    assert compiled.kernels
    a = base.clone()
    out = compiled(a, a)  # y aliases x: must see the mutation
    b = base.clone()
    torch.testing.assert_close(out, fn(b, b))
    torch.testing.assert_close(a, b)
    c, d = base.clone(), base.clone()  # distinct again: the fused path
    torch.testing.assert_close(compiled(c, d), base * 2)


def test_view_of_mutated_input_sees_the_mutation():
    def fn(x):
        y = x.t()
        x.mul_(3)
        return y + 1

    compare(fn, [_x(3, 4)])


# ------------------------------------------------------------------ externs


def test_kernels_fuse_around_extern_calls():
    def fn(x, w):
        h = (x * 2).exp() + w
        y = torch.sort(h, -1).values  # sort stays a torch call (matmul no longer does)
        return (y + 1).relu(), torch.cumsum(y, -1) * 2

    # the relu output is only materialized when outputs are, so it joins the epilogue
    # that scales cumsum's result (the scan itself is a kernel of its own)
    compiled = compare(fn, [_x(5, 6), _x(5, 6, seed=1)], kernels=3)
    assert sorted(compiled.fallback_ops) == ["aten.sort"]
    assert [k.ops for k in compiled.kernels][1] == ("aten.cumsum",)


def test_dependencies_across_externs_keep_order():
    def fn(x, w):
        a = x.exp()
        s = a @ w
        return x.sin() + s, a

    compare(fn, [_x(4, 4), _x(4, 4, seed=1)], kernels=2)


def test_attention_and_random_are_left_to_torch_embedding_is_not():
    def fn(idx, table, q, k, v):
        e = F.embedding(idx, table) * 2
        a = F.scaled_dot_product_attention(q, k, v) + 1
        r = (torch.rand_like(q) >= 0).sum()
        return e, a, r

    idx = torch.tensor([[0, 3, 2], [1, 1, 0]])
    q, k, v = _x(1, 2, 5, 8), _x(1, 2, 5, 8, seed=1), _x(1, 2, 5, 8, seed=2)
    # attention_max=0: attention of any size is a library call (small attention is
    # fused by default, test_triton_transformers)
    compiled = compare(fn, [idx, _x(4, 8), q, k, v], config=TritonConfig(attention_max=0))
    ops = set(compiled.fallback_ops)
    assert "aten.embedding" not in ops  # a gather kernel (test_triton_gather)
    assert any("scaled_dot_product" in o for o in ops)
    assert any(o in ("aten.rand", "aten.rand_like", "aten.uniform") for o in ops), ops


# ------------------------------------------------------------------ source


def test_generated_source_is_readable_and_free_of_user_names():
    def fn(secret_input_name, other):
        secret_local_name = secret_input_name * 1e-300 + float("nan") * 0 + other
        return torch.softmax(secret_local_name, -1)

    compiled = compare(fn, [_x(3, 8), _x(8, seed=1)], kernels=1)
    k = compiled.kernels[0]
    assert "@triton.jit" in k.source and f"def {k.name}(" in k.source
    assert "# fused: " in k.source and "aten.amax" in k.ops
    for text in (k.source, compiled.wrapper_source):
        assert "secret" not in text
    assert 'float("nan")' in k.source or "nan" not in k.source
    compile(k.source, "<kernel>", "exec")  # valid Python


def test_kernel_info_contract():
    compiled = compile_fx(graph_of(lambda x: x.sum(-1) + 1, [_x(3, 5)]), [_x(3, 5)])
    (k,) = compiled.kernels
    assert isinstance(k.name, str) and isinstance(k.ops, tuple) and isinstance(k.source, str)
    assert all(isinstance(o, str) for o in compiled.fallback_ops)


def test_int64_indexing_for_huge_tensors():
    """Index arithmetic switches to int64 past 2**31 elements (generated, not run)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from bcfront.backends.triton import codegen, fuse, lower
    from bcfront.backends.triton.frontend import trace_aten

    with FakeTensorMode():
        big = torch.empty(2**16, 2**16 + 1)
        small = torch.empty(64, 64)
    for t, want in ((big, True), (small, False)):
        g, _, _ = trace_aten(torch.fx.symbolic_trace(lambda x: (x * 2).sum(-1)), [t])
        prog, _ = lower.lower_program(g)
        (plan,) = fuse.schedule(prog)
        src = codegen.generate(plan, prog.arena, prog.layouts, interpret=True).source
        assert ("tl.program_id(0).to(tl.int64)" in src) == want
