"""`bcfront.capture` on tiny real library models (tests/models/real_zoo.py) against eager.

For each entry, the same calls run on the captured module and on an identical
deep copy run eagerly: three calls, the third at a new shape.  Outputs must
equal eager's, always and strictly (`torch.testing.assert_close`; ModelOutput
objects and caches field by field); for the training steps the parameters'
``.grad`` and the buffers must too.  How much was captured is checked against
the entry's row of `EXPECT` (a ratchet at today's numbers, beside the goal):
graph breaks and the share of reference ops captured on the first call,
recompiles over all the calls, and whether ``fullgraph=True`` passes.  An entry
whose row says fullgraph need not pass may raise `GraphBreakError`, but if it
returns, its output must equal eager's too.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
from .vision_cpu import import_torchvision  # noqa: E402

try:
    import_torchvision()  # before timm and transformers, which import torchvision
except ImportError:
    pytest.skip("torchvision is not installed", allow_module_level=True)
pytest.importorskip("transformers")
pytest.importorskip("timm")

import bcfront  # noqa: E402

from .real_zoo import EXPECT, REAL_ZOO, assert_same, grad_context, reference_ops  # noqa: E402

CALLS = ((1, 0), (2, 0), (3, 1))  # (seed, variant): twice at one shape, then a new one


def assert_training_state(mod, ref, where: str) -> None:
    """Every parameter, its .grad and every buffer equal eager's, and the modules' modes."""
    got, want = dict(mod.named_parameters()), dict(ref.named_parameters())
    assert any(p.grad is not None for p in want.values()), f"{where}: eager produced no gradients"
    assert [m.training for m in mod.modules()] == [m.training for m in ref.modules()], where
    for name, p in want.items():
        assert_same(got[name].detach(), p.detach(), f"{where}: {name}")
        if p.grad is None:
            assert got[name].grad is None, f"{where}: {name}.grad is set, eager's is None"
        else:
            assert_same(got[name].grad, p.grad, f"{where}: {name}.grad")
    got_b = dict(mod.named_buffers())
    for name, b in ref.named_buffers():
        assert_same(got_b[name], b, f"{where}: buffer {name}")


def run_entry(name: str):
    """Run CALLS captured and eagerly, comparing as they go; returns (first-call report,
    all-calls report, reference ops of the first call)."""
    factory = REAL_ZOO[name]
    mod, make_inputs = factory()
    ref = copy.deepcopy(mod)
    cf = bcfront.capture(mod)
    first = ref_ops = None
    with bcfront.explain.collect() as all_calls:
        for i, (seed, variant) in enumerate(CALLS):
            here = f"{name}, call {i} (seed={seed}, variant={variant})"
            ref_args, ref_kwargs = make_inputs(seed, variant)
            args, kwargs = make_inputs(seed, variant)
            with grad_context(factory.kind):
                expected, ops = reference_ops(ref, ref_args, ref_kwargs)
                if i == 0:
                    ref_ops = ops
                    with bcfront.explain.collect() as first_call:
                        actual = cf(*args, **kwargs)
                    first = first_call.report()
                else:
                    actual = cf(*args, **kwargs)
            assert_same(actual, expected, f"{here}: output")
            if factory.kind == "train":
                assert_training_state(mod, ref, here)
    return first, all_calls.report(), ref_ops


def share(report, ref_ops: int) -> float:
    """The share of the call's tensor ops that ran inside compiled graphs, as explain measured
    it (aten ops executed in graphs vs natively; the outermost captured function's counts
    include its continuations and callees).  `ref_ops`, the eager run's count at the torch
    level, checks that the call did run tensor work at all."""
    root = max(report.functions, key=lambda f: f.ops_in_graphs + f.ops_native)
    total = root.ops_in_graphs + root.ops_native
    assert ref_ops > 0 and total > 0, f"no tensor ops counted (eager: {ref_ops}, explain: {total})"
    return root.ops_in_graphs / total


def test_every_entry_has_one_row_of_expectations():
    assert sorted(EXPECT) == sorted(REAL_ZOO)
    for name, exp in EXPECT.items():
        kind = REAL_ZOO[name].kind
        assert exp.breaks is not None and exp.share is not None, name
        assert (exp.fullgraph is not None) == (kind != "train"), name
        # every decoding loop has a recompile ratchet; others where state changes each call
        assert exp.recompiles is not None or kind != "generate", name
        assert exp.target is not None and exp.target.breaks == 0, name


def test_reference_ops_count_tensor_results_only():
    x = torch.ones(2, 3)

    def fn(x):
        n = x.dim() + x.size(0) + x.shape[1]  # metadata: not ops
        y = torch.nn.functional.layer_norm(x, (3,))  # one op, not two
        y[0] = n  # __setitem__ counts
        return y.sum().item()  # sum counts, item does not

    assert reference_ops(fn, (x,), {})[1] == 3


def test_generation_with_and_without_cache_agree_eagerly():
    """The zoo's two decoding loops give the same tokens (so either is a fair oracle)."""
    with_cache, make_inputs = REAL_ZOO["gen_gpt2_cache"]()
    without, _ = REAL_ZOO["gen_gpt2_nocache"]()
    args, _ = make_inputs(1, 0)
    with torch.no_grad():
        tokens = with_cache(*args)
        assert tokens.shape == (args[0].shape[0], args[0].shape[1] + 6)
        assert torch.equal(tokens, without(*args))


def params(names):
    """The entries as test parameters, a slow one marked so."""
    return [pytest.param(n, marks=pytest.mark.slow) if REAL_ZOO[n].slow else n for n in names]


@pytest.mark.parametrize("name", params(sorted(REAL_ZOO)))
def test_real_model_matches_eager_within_expectations(name):
    exp = EXPECT[name]
    first, everything, ref_ops = run_entry(name)
    got = {
        "breaks": len(first.graph_breaks),
        "share": share(first, ref_ops),
        "recompiles": len(everything.recompiles),
    }
    worse = [
        f"{k} {got[k]:.3g} {'<' if k == 'share' else '>'} {getattr(exp, k)}"
        for k in got
        if getattr(exp, k) is not None
        and (got[k] < getattr(exp, k) if k == "share" else got[k] > getattr(exp, k))
    ]
    breaks = [(b.reason.value, b.message[:80], b.lineno) for b in first.graph_breaks[:5]]
    assert not worse, f"{name}: {', '.join(worse)} (measured {got}; first breaks {breaks})"


FULLGRAPH = sorted(n for n, f in REAL_ZOO.items() if f.kind != "train")


@pytest.mark.parametrize("name", params(FULLGRAPH))
def test_real_model_fullgraph(name):
    """fullgraph=True passes where the table says it must; wherever it returns, it is right."""
    factory = REAL_ZOO[name]
    mod, make_inputs = factory()
    ref = copy.deepcopy(mod)
    args, kwargs = make_inputs(1, 0)
    with torch.no_grad():
        expected = ref(*make_inputs(1, 0)[0], **make_inputs(1, 0)[1])
        try:
            actual = bcfront.capture(mod, fullgraph=True)(*args, **kwargs)
        except bcfront.GraphBreakError as e:
            if EXPECT[name].fullgraph:
                raise AssertionError(f"{name}: fullgraph=True must pass: {e}") from e
            return
    assert_same(actual, expected, f"{name}: fullgraph output")
