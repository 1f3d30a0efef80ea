"""``joint_graph=True`` with changing numbers: a float (a loss scale) and sizes (the batch).

Since a changing float is a SymFloat graph input and a changing int or size a SymInt, a
training step with a scheduler-like float, or with a batch size that changes, hands its
segments SymFloats and SymInts; they go to AOT autograd as TorchDynamo hands them
(`backends/joint_numbers.py`) instead of sending the whole graph to the eager backend.

Oracle: the same steps run eagerly on a deep copy of the model with its own optimizer, on
the same batches: losses, parameters and gradients bit for bit equal with the fx backend
(AOT autograd's aten graphs run as they are), to float32 rounding with Inductor.  The
fast Inductor tests hand the segment to a stand-in spelled as Inductor's entry point
that runs it as it is (what reaches it is what Inductor gets); the slow ones run Inductor.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def inductor_stand_in(gm, example_inputs):  # spelled as Inductor's entry point; runs gm as it is
    inductor_stand_in.seen.append([type(e).__name__ for e in example_inputs])
    return gm


inductor_stand_in.__module__ = "torch._inductor.compile_fx"
inductor_stand_in.__name__ = "compile_fx"
inductor_stand_in.seen = []


def make_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def scaled_step(model, opt, x, scale):
    opt.zero_grad(set_to_none=True)
    loss = (model(x) * scale).sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # a second segment, after the backward
    opt.step()
    return loss


def per_sample_step(model, opt, x, scale):
    """The batch size read before ``zero_grad`` (a cut): the forward takes it as a SymInt;
    half of it returned after the step: a segment takes ``s0 // 2``."""
    b = x.shape[0]
    opt.zero_grad(set_to_none=True)
    loss = (model(x) * scale).sum() / b
    loss.backward()
    opt.step()
    return loss.detach() + b // 2


def leaky_step(model, opt, x, scale):
    """The float reaches an op as its number argument."""
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.leaky_relu(model(x), scale).sum()
    loss.backward()
    opt.step()
    return loss


def clamp_step(model, opt, x, scale):
    """The float reaches an op AOT autograd's tensorify pass leaves a Python number."""
    opt.zero_grad(set_to_none=True)
    loss = model(x).clamp(max=scale).sum()
    loss.backward()
    opt.step()
    return loss


def run(step, backend, steps=6, sizes=(4,), exact=True):
    model = make_net()
    ref = copy.deepcopy(model)
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    cf = bcfront.capture(step, backend=backend, joint_graph=True)
    same = torch.equal if exact else lambda a, b: torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    for i in range(steps):
        x = torch.randn(sizes[i % len(sizes)], 6, generator=torch.Generator().manual_seed(i))
        scale = 0.5 + 0.125 * i
        got, want = cf(model, opt, x, scale), step(ref, ref_opt, x, scale)
        assert same(got, want), f"step {i}: loss {got} != {want}"
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            assert same(p, q), f"step {i}: {name}"
            assert same(p.grad, q.grad), f"step {i}: {name}.grad"
    return cf


def kernels_of_last_entry(cf) -> list:
    return [k.name for k in cf.entries[-1].graphs[0].kernels]


def assert_compiled(cf, forward="forward 0", backward="backward 0"):
    report = cf.report()
    assert not any("joint graph not built" in n or "eager backend" in n for n in report.notes), report.notes
    for entry in cf.entries:  # each entry compiled, the symbolic one (the last) included
        names = [k.name for k in entry.graphs[0].kernels]
        assert forward in names and (backward is None or backward in names), names
    assert len(cf.entries) <= 3, [r.guard for r in report.recompiles]  # static, static, symbolic


def test_changing_scale_fx():
    cf = run(scaled_step, "fx")
    assert_compiled(cf)
    assert "inference 0" in kernels_of_last_entry(cf)  # the clipping: a segment without the float


def test_changing_batch_size_fx():
    cf = run(per_sample_step, "fx", sizes=(4, 5, 6, 7, 8, 9))
    assert_compiled(cf)


def test_float_an_op_takes_as_a_number_fx():
    """The fx backend takes the SymFloat as it is: leaky_relu's slope stays symbolic."""
    cf = run(leaky_step, "fx")
    assert_compiled(cf)


def test_inductor_gets_floats_as_tensors_and_a_symbol_per_size():
    inductor_stand_in.seen.clear()
    cf = run(per_sample_step, inductor_stand_in, sizes=(4, 5, 6, 7, 8, 9))
    names = "forward 0 (Inductor: its own AOT autograd)"
    assert_compiled(cf, forward=names, backward=None)
    # the symbolic entry's forward: the float a 0-d float64 tensor, the batch a SymInt
    # input of its own (as TorchDynamo passes them); the last segment ``loss + s0 // 2``
    # recomputes the size from the input tensor, so it gets the bare symbol too
    *_, forward, last = inductor_stand_in.seen
    assert forward.count("SymInt") == 1 and "SymFloat" not in forward, forward
    assert last.count("SymInt") == 1, last


def test_float_inductor_cannot_take_is_named_in_the_note():
    from torch._dynamo.exc import TensorifyScalarRestartAnalysis

    def compile_fx(gm, example_inputs):  # as AOT autograd's tensorify pass asks TorchDynamo
        raise TensorifyScalarRestartAnalysis

    compile_fx.__module__ = "torch._inductor.compile_fx"
    cf = run(scaled_step, compile_fx, steps=3)
    notes = [n for n in cf.report().notes if "tensorify pass could not make float input(s) L_scale" in n]
    assert notes, cf.report().notes


def test_segment_passing_other_values_says_why():
    from types import SimpleNamespace

    from bcfront.backends import joint_numbers

    x, flag = SimpleNamespace(name="x", meta=torch.empty(2)), SimpleNamespace(name="flag", meta=True)
    with pytest.raises(NotImplementedError, match=r"not tensors, SymInts or SymFloats \(flag: bool\)"):
        joint_numbers.check_values(SimpleNamespace(inputs=[x], outputs=[x, flag]))


def _inductor():
    compile_fx = pytest.importorskip("torch._inductor.compile_fx").compile_fx
    return compile_fx


def _or_skip(fn):
    try:
        return fn()
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001 - no C++ compiler or similar environment problem
        pytest.skip(f"inductor unavailable here: {type(e).__name__}: {e}")


@pytest.mark.slow  # Inductor compiles 3 entries of 2-3 graphs: a minute or more on 2 cores
def test_changing_scale_and_batch_size_inductor():
    inductor = _inductor()
    cf = _or_skip(lambda: run(per_sample_step, inductor, sizes=(4, 5, 6, 7, 8, 9), exact=False))
    assert_compiled(cf, forward="forward 0 (Inductor: its own AOT autograd)", backward=None)


@pytest.mark.slow
def test_float_inductor_pins_is_named_in_a_note():
    inductor = _inductor()
    from torch._inductor import config

    with config.patch(force_disable_caches=True):  # the pass runs (a cached graph skips it)
        cf = _or_skip(lambda: run(clamp_step, inductor, steps=4, exact=False))
    notes = [n for n in cf.report().notes if "specialized to this call's value" in n]
    assert notes and "L_scale" in notes[0], cf.report().notes
    assert "forward 0 (Inductor: its own AOT autograd)" in kernels_of_last_entry(cf)
