"""Differential tests: `bcfront.capture` on small models and tensor idioms vs eager PyTorch.

The oracle is eager PyTorch on an identical deep copy of the module (or on
equal, separately built inputs for plain functions).  Every test makes several
calls with changing inputs: the same shape repeatedly, then a new shape (a
recompile under static-shape guards), then the first shape again.  After each
call it compares outputs (values, dtype, device, strides, requires_grad and
container structure), the arguments (input mutations), parameters, buffers and
plain Python attributes of every submodule, and, where inputs require grad, the
gradients of a fixed random projection of the outputs.  Whole models and
idioms must capture with zero graph breaks.  Further tests change things
between calls that guards must notice: grad mode, .training, submodules,
attributes, parameters, hooks, the default dtype, optimizer steps.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .idioms import IDIOMS  # noqa: E402
from .zoo import MAY_BREAK, ZOO  # noqa: E402

# (seed, variant): three calls at one shape, two at a new one, back to the first.
CALLS = ((1, 0), (2, 0), (3, 0), (4, 1), (5, 1), (6, 0))
GRAD_CALLS = ((1, 0), (2, 0), (3, 1))
WHOLE_MODELS = sorted(set(ZOO) - MAY_BREAK)
GRAD_IDIOMS = sorted(n for n, c in IDIOMS.items() if c.grad)


# -- comparison helpers -------------------------------------------------------


def _children(value, path):
    if isinstance(value, dict):
        return [(k, f"{path}[{k!r}]") for k in value]
    return [(i, f"{path}[{i}]") for i in range(len(value))]


def assert_same(actual, expected, where: str) -> None:
    """`actual` equals `expected` as a result of the same Python call would.

    Containers: same type, length and keys.  Tensors: `assert_close` with its
    default float tolerances, plus dtype, device, strides (a caller can observe
    them: ``.view`` works on one layout and not another) and requires_grad.
    Anything else: same type and ``==``.
    """
    work = [(actual, expected, where)]
    while work:
        a, e, path = work.pop()
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor), f"{path}: expected a tensor, got {type(a).__name__}"
            torch.testing.assert_close(a, e, check_stride=True, msg=lambda m, p=path: f"{p}: {m}")
            assert a.requires_grad == e.requires_grad, (
                f"{path}: requires_grad is {a.requires_grad}, eager gives {e.requires_grad}"
            )
        elif isinstance(e, (tuple, list, dict)):
            assert type(a) is type(e), f"{path}: expected {type(e).__name__}, got {type(a).__name__}"
            assert len(a) == len(e), f"{path}: length {len(a)}, eager gives {len(e)}"
            if isinstance(e, dict):
                assert list(a) == list(e), f"{path}: keys {list(a)}, eager gives {list(e)}"
            work.extend((a[k], e[k], p) for k, p in _children(e, path))
        else:
            assert type(a) is type(e) and a == e, f"{path}: got {a!r}, eager gives {e!r}"


PLAIN = (bool, int, float, str, type(None))


def assert_state(mod, ref, where: str) -> None:
    """Parameters, buffers (persistent or not) and plain Python attributes of every submodule."""
    for kind in ("parameters", "buffers"):
        got = dict(getattr(mod, f"named_{kind}")())
        want = dict(getattr(ref, f"named_{kind}")())
        assert got.keys() == want.keys(), f"{where}: {kind} {sorted(got)} vs {sorted(want)}"
        for name, value in want.items():
            assert_same(got[name], value, f"{where}: {kind[:-1]} {name}")
    subs = dict(mod.named_modules())
    for name, ref_sub in ref.named_modules():
        plain = {k: v for k, v in vars(ref_sub).items() if isinstance(v, PLAIN)}
        got = {k: v for k, v in vars(subs[name]).items() if isinstance(v, PLAIN)}
        assert got == plain, f"{where}: attributes of module {name or 'root'!r}: {got} vs {plain}"


def assert_param_grads(mod, ref, where: str) -> None:
    """Every parameter's .grad matches eager's (None where eager's is None); some are set."""
    got = dict(mod.named_parameters())
    want = dict(ref.named_parameters())
    assert any(p.grad is not None for p in want.values()), f"{where}: eager produced no gradients"
    for name, p in want.items():
        assert_same(got[name].grad, p.grad, f"{where}: {name}.grad")


def _tensors(value) -> list:
    out, work = [], [value]
    while work:
        v = work.pop()
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            work.extend(reversed(v))
        elif isinstance(v, dict):
            work.extend(reversed(list(v.values())))
    return out


def weighted_loss(outputs, seed: int):
    """A scalar that depends on every differentiable output through fixed random weights.

    Plain ``.sum()`` would give zero or constant gradients for softmax and
    normalization outputs, and so could not tell right gradients from wrong.
    """
    gen = torch.Generator().manual_seed(10_000 + seed)
    terms = [
        (t.float() * torch.randn(t.shape, generator=gen)).sum() for t in _tensors(outputs) if t.requires_grad
    ]
    assert terms, "no output requires grad"
    return sum(terms)


def build_args(make_inputs, seed: int, variant: int, grad: bool) -> tuple:
    args = make_inputs(seed, variant)
    if grad:
        for a in args:
            if isinstance(a, torch.Tensor) and a.is_floating_point():
                a.requires_grad_()
    return args


def compare_calls(cap_fn, ref_fn, make_inputs, calls, where, *, cap_mod=None, ref_mod=None, grad=False):
    """Call both sides on equal fresh inputs for each (seed, variant) and compare everything."""
    for i, (seed, variant) in enumerate(calls):
        here = f"{where}, call {i} (seed={seed}, variant={variant})"
        ref_args = build_args(make_inputs, seed, variant, grad)
        cap_args = build_args(make_inputs, seed, variant, grad)
        expected = ref_fn(*ref_args)
        actual = cap_fn(*cap_args)
        assert_same(actual, expected, f"{here}: output")
        if grad:
            weighted_loss(expected, seed).backward()
            weighted_loss(actual, seed).backward()
            assert_same(
                [a.grad for a in _tensors(cap_args)],
                [a.grad for a in _tensors(ref_args)],
                f"{here}: input grads",
            )
            if ref_mod is not None:
                assert_param_grads(cap_mod, ref_mod, here)
                ref_mod.zero_grad(set_to_none=True)
                cap_mod.zero_grad(set_to_none=True)
        assert_same(cap_args, ref_args, f"{here}: arguments after the call")
        if ref_mod is not None:
            assert_state(cap_mod, ref_mod, here)


def assert_whole_graph(report, where: str) -> None:
    breaks = [(b.reason, b.message, b.lineno) for b in report.graph_breaks]
    assert report.graph_breaks == [], f"{where}: graph breaks {breaks}"
    assert len(report.graphs) >= 1, f"{where}: no graph captured"
    assert sum(g.op_count for g in report.graphs) > 0, f"{where}: captured graphs hold no ops"


def _pair(name):
    """A zoo model and an identical deep copy of it (the eager oracle)."""
    mod, make_inputs = ZOO[name]()
    return mod, copy.deepcopy(mod), make_inputs


# -- models -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ZOO))
def test_model_matches_eager(name):
    mod, ref, make_inputs = _pair(name)
    compare_calls(bcfront.capture(mod), ref, make_inputs, CALLS, name, cap_mod=mod, ref_mod=ref)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_model_gradients(name):
    mod, ref, make_inputs = _pair(name)
    compare_calls(
        bcfront.capture(mod), ref, make_inputs, GRAD_CALLS, name, cap_mod=mod, ref_mod=ref, grad=True
    )


@pytest.mark.parametrize("name", WHOLE_MODELS)
def test_model_captures_without_breaks(name):
    mod, make_inputs = ZOO[name]()
    assert_whole_graph(bcfront.explain(mod, *make_inputs(1, 0)), name)


@pytest.mark.parametrize("name", ["mlp", "gpt2_block", "conv_bn_train", "grad_mode_blocks"])
def test_model_under_no_grad(name):
    """Calls alternate between torch.no_grad() and grad mode (a grad-mode guard must recompile)."""
    mod, ref, make_inputs = _pair(name)
    cf = bcfront.capture(mod)
    for i, no_grad in enumerate((True, False, True, False)):
        here = f"{name}, call {i} ({'under no_grad' if no_grad else 'grad mode'})"
        ref_args, cap_args = make_inputs(i, 0), make_inputs(i, 0)
        with torch.set_grad_enabled(not no_grad):
            expected = ref(*ref_args)
        if no_grad:
            with torch.no_grad():
                actual = cf(*cap_args)
        else:
            actual = cf(*cap_args)
        assert_same(actual, expected, f"{here}: output")
        assert_state(mod, ref, here)


def test_train_eval_switch():
    """Flipping .train()/.eval() after capture changes BatchNorm's behaviour (a .training guard)."""
    mod, ref, make_inputs = _pair("conv_bn_train")
    cf = bcfront.capture(mod)
    for i, training in enumerate((True, False, True, False)):
        mod.train(training)
        ref.train(training)
        here = f"conv_bn_train, call {i} (training={training})"
        assert_same(cf(*make_inputs(i, 0)), ref(*make_inputs(i, 0)), f"{here}: output")
        assert_state(mod, ref, here)


@pytest.mark.parametrize("name", ["mlp", "gpt2_model", "llama_block", "conv_bn_train"])
def test_training_loop(name):
    """SGD steps update parameters in place between calls; the capture must read the new values."""
    mod, ref, make_inputs = _pair(name)
    cf = bcfront.capture(mod)
    opt_cap = torch.optim.SGD(mod.parameters(), lr=0.1, momentum=0.9)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        here = f"{name}, step {step}"
        expected = ref(*make_inputs(step, 0))
        actual = cf(*make_inputs(step, 0))
        assert_same(actual, expected, f"{here}: output")
        weighted_loss(expected, step).backward()
        weighted_loss(actual, step).backward()
        assert_param_grads(mod, ref, here)
        opt_ref.step()
        opt_cap.step()
        opt_ref.zero_grad()
        opt_cap.zero_grad()
        assert_state(mod, ref, f"{here}, after the optimizer step")


def _swap_activation(m):
    m.act = torch.nn.Tanh()


def _change_eps(m):
    m.eps = 0.5


def _attention_flags(m):
    m.use_sdpa, m.causal = True, False


def _new_parameters(m):
    m.fc1.weight = torch.nn.Parameter(torch.linspace(-1, 1, 32 * 16).view(32, 16))
    m.fc2.bias = None


def _add_hook(m):
    m.fc2.register_forward_hook(lambda module, args, out: out * 3 + args[0][..., :8])


def _remove_hooks(m):
    m.fc1._forward_pre_hooks.clear()
    m.fc2._forward_hooks.clear()


# Changes made to a module between calls; each must be seen by the next call.
MODULE_CHANGES = {
    "swap_submodule": ("mlp", _swap_activation),
    "float_attribute": ("layernorm_manual", _change_eps),
    "bool_flags": ("mha_causal_softmax", _attention_flags),
    "parameter_reassigned": ("mlp", _new_parameters),
    "hook_added": ("mlp", _add_hook),
    "hooks_removed": ("mlp_with_hooks", _remove_hooks),
}


@pytest.mark.parametrize("change", sorted(MODULE_CHANGES))
def test_module_changed_after_capture(change):
    name, mutate = MODULE_CHANGES[change]
    mod, ref, make_inputs = _pair(name)
    cf = bcfront.capture(mod)
    for i in range(4):
        if i == 2:
            mutate(mod)
            mutate(ref)
        here = f"{name}, call {i} ({'after' if i >= 2 else 'before'} {change})"
        assert_same(cf(*make_inputs(i, 0)), ref(*make_inputs(i, 0)), f"{here}: output")
        assert_state(mod, ref, here)


# -- backends -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["mlp", "gpt2_model"])
def test_fx_backend(name):
    mod, ref, make_inputs = _pair(name)
    cf = bcfront.capture(mod, backend="fx")
    compare_calls(cf, ref, make_inputs, CALLS, f"{name} (fx)", cap_mod=mod, ref_mod=ref)
    report = bcfront.explain(cf, *make_inputs(7, 0))
    assert_whole_graph(report, f"{name} (fx)")
    assert {g.backend for g in report.graphs} == {"fx"}


@pytest.mark.parametrize("name", ["llama_block", "conv_bn_train"])
def test_callable_backend(name):
    """A callable backend gets a torch.fx.GraphModule and its result is what runs."""
    compiled, runs = [], []

    def backend(gm, example_inputs):
        compiled.append((gm, list(example_inputs)))

        def run(*args, **kwargs):
            runs.append(1)
            return gm(*args, **kwargs)

        return run

    mod, ref, make_inputs = _pair(name)
    cf = bcfront.capture(mod, backend=backend)
    for i, (seed, variant) in enumerate(CALLS):
        here = f"{name} (callable backend), call {i}"
        before = len(runs)
        assert_same(cf(*make_inputs(seed, variant)), ref(*make_inputs(seed, variant)), f"{here}: output")
        assert_state(mod, ref, here)
        assert len(runs) > before, f"{here}: the backend's compiled callable did not run"
    assert compiled, "the backend was never called"
    for gm, example_inputs in compiled:
        assert isinstance(gm, torch.fx.GraphModule)
        assert any(n.op in ("call_function", "call_method", "call_module") for n in gm.graph.nodes)
        assert all(isinstance(t, torch.Tensor) for t in example_inputs if not isinstance(t, (int, float)))


# -- plain functions with everyday tensor idioms --------------------------------


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_idiom_matches_eager(name):
    case = IDIOMS[name]
    cf = bcfront.capture(case.fn)
    for i, (seed, variant) in enumerate(CALLS):
        here = f"{name}, call {i} (seed={seed}, variant={variant})"
        ref_args, cap_args = case.make_inputs(seed, variant), case.make_inputs(seed, variant)
        expected, actual = case.fn(*ref_args), cf(*cap_args)
        assert_same(actual, expected, f"{here}: output")
        assert_same(cap_args, ref_args, f"{here}: arguments after the call")
        # Outputs that are views of inputs in eager must stay views: write to the inputs.
        for a in _tensors(ref_args) + _tensors(cap_args):
            if a.is_floating_point():
                a.add_(1.5)
        assert_same(actual, expected, f"{here}: output after writing to the inputs")


def test_factories_follow_default_dtype():
    """torch.ones/full/linspace/eye follow torch.get_default_dtype(), a global the capture must guard."""
    case = IDIOMS["factories"]
    cf = bcfront.capture(case.fn)
    saved = torch.get_default_dtype()
    try:
        for i, dtype in enumerate((torch.float32, torch.float64, torch.float32, torch.float64)):
            torch.set_default_dtype(dtype)
            assert_same(
                cf(*case.make_inputs(i, 0)),
                case.fn(*case.make_inputs(i, 0)),
                f"factories, call {i} (default dtype {dtype})",
            )
    finally:
        torch.set_default_dtype(saved)


@pytest.mark.parametrize("name", GRAD_IDIOMS)
def test_idiom_gradients(name):
    case = IDIOMS[name]
    compare_calls(bcfront.capture(case.fn), case.fn, case.make_inputs, GRAD_CALLS, name, grad=True)


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_idiom_captures_without_breaks(name):
    case = IDIOMS[name]
    assert_whole_graph(bcfront.explain(case.fn, *case.make_inputs(1, 0)), name)
