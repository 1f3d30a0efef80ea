"""``torch.utils.checkpoint.checkpoint`` in captured code (`semantics/checkpoint_calls.py`).

Oracle: the same module run eagerly on identical inputs and seeds: outputs, parameters'
gradients, buffers and Python state after the step.  With ``use_reentrant=False`` and a
function that writes nothing its recomputation would write again, the checkpointed
function's tensor work is in the graph (no break), run through torch's checkpoint
(`backends/checkpoints.py`); otherwise the call falls back to torch's own, and the results
are still eager's.  The memory policy is measured: the bytes autograd saves for backward
(``saved_tensors_hooks``, parameters aside) are at most eager checkpointing's, and far
fewer than without checkpointing, on the eager backend and the fx backend's joint graph.
Also the ``output.requires_grad_(True)`` of transformers' input-embedding hook (which
``gradient_checkpointing_enable()`` installs): a no-op on a tensor that requires grad.
"""

from __future__ import annotations

import copy
from contextlib import nullcontext

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import bcfront  # noqa: E402

from .saved_memory import saved_bytes  # noqa: E402


class Block(nn.Module):
    def __init__(self, bn: bool = False):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.3)
        self.bn = nn.BatchNorm1d(8) if bn else None
        self.calls = 0
        self.active = None

    def forward(self, x, scale):
        y = self.drop(torch.nn.functional.gelu(self.lin(x))) * scale
        return self.bn(y) if self.bn is not None else y


class Net(nn.Module):
    """Two checkpointed blocks, a loss and backward; returns the detached loss."""

    def __init__(self, bn=False, reentrant=False, count=False, toggle=False, branch=False, guarded=False):
        super().__init__()
        self.blocks = nn.ModuleList([Block(bn), Block(bn)])
        self.reentrant, self.count, self.toggle, self.branch = reentrant, count, toggle, branch
        self.guarded = guarded

    def run_block(self, block, x, scale):
        if self.count:
            block.calls += 1  # eager's recomputation counts again
        if self.branch and x.sum() > 0:  # (a data-dependent break after the write)
            x = x * 2
        if self.guarded:  # reset in a finally: also when the recomputation stops early
            previous, block.active = block.active, True
            try:
                return block(x, scale)
            finally:
                block.active = previous
        if self.toggle:  # set and reset: nothing is left changed
            previous, block.active = block.active, True
            out = block(x, scale)
            block.active = previous
            return out
        return block(x, scale)

    def forward(self, x):
        if self.count:
            self.blocks[0].calls += 1  # (written before the checkpoint call too)
        for block in self.blocks:
            x = checkpoint(self.run_block, block, x, 0.5, use_reentrant=self.reentrant)
        loss = x.pow(2).mean()
        loss.backward()
        return loss.detach()


def _run_both(net, calls=2):
    ref = copy.deepcopy(net)
    cf = bcfront.capture(net)
    with bcfront.explain.collect() as run:
        for i in range(calls):
            x = torch.randn(4, 8, generator=torch.Generator().manual_seed(i))
            torch.manual_seed(10 + i)
            want = ref(x.clone())
            torch.manual_seed(10 + i)
            got = cf(x.clone())
            torch.testing.assert_close(got, want, rtol=0, atol=0)
    for (name, p), q in zip(net.named_parameters(), ref.parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if q.grad is not None:
            torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0, msg=name)
    for (name, b), c in zip(net.named_buffers(), ref.buffers()):
        torch.testing.assert_close(b, c, rtol=0, atol=0, msg=name)
    return run.report(), ref


def test_checkpointed_blocks_are_in_the_graph_and_recomputed():
    torch.manual_seed(0)
    rep, _ = _run_both(Net().train())
    assert not rep.graph_breaks
    notes = [n for f in rep.functions for n in f.notes]
    assert not any("not recomputed" in n for n in notes), notes


def test_the_random_state_after_the_step_is_eagers():
    torch.manual_seed(0)
    net = Net().train()
    ref = copy.deepcopy(net)
    x = torch.randn(4, 8)
    torch.manual_seed(3)
    ref(x)
    want = torch.rand(5)
    torch.manual_seed(3)
    bcfront.capture(net)(x)
    assert torch.equal(torch.rand(5), want)


def test_an_attribute_set_and_reset_is_left_set_as_eager_leaves_it():
    """The recomputation stops early (at the last saved tensor remade), before the reset."""
    torch.manual_seed(0)
    net = Net(toggle=True).train()
    rep, ref = _run_both(net)
    assert [b.active for b in net.blocks] == [b.active for b in ref.blocks] == [True, True]
    assert any("recomputation" in b.message for b in rep.graph_breaks)


def test_an_attribute_reset_in_a_finally_is_no_write():
    """transformers' kernels layers: ``token = var.set(v)``, ``try: ... finally: var.reset(token)``."""
    torch.manual_seed(0)
    net = Net(guarded=True).train()
    rep, ref = _run_both(net)
    assert [b.active for b in net.blocks] == [b.active for b in ref.blocks] == [None, None]
    assert not rep.graph_breaks


def test_a_counter_the_recomputation_bumps_again_is_eagers():
    torch.manual_seed(0)
    net = Net(count=True).train()
    rep, ref = _run_both(net)
    assert [b.calls for b in net.blocks] == [b.calls for b in ref.blocks] == [6, 4]
    assert any("recomputation" in b.message for b in rep.graph_breaks)


def test_a_write_before_a_break_inside_is_eagers():
    torch.manual_seed(0)
    net = Net(count=True, branch=True).train()
    rep, ref = _run_both(net)
    assert [b.calls for b in net.blocks] == [b.calls for b in ref.blocks] == [6, 4]
    assert any("breaks the graph" in b.message for b in rep.graph_breaks)


def test_batch_norm_statistics_updated_twice_as_eager():
    torch.manual_seed(0)
    net = Net(bn=True).train()
    rep, ref = _run_both(net)  # (the buffers compared there: the running statistics)
    assert int(net.blocks[0].bn.num_batches_tracked) == int(ref.blocks[0].bn.num_batches_tracked) == 4


def test_reentrant_checkpoint_without_grad_inputs_is_eagers():
    """The reentrant variant's output needs no grad when no input does (eager warns, and
    backward then raises): a single inline run would give the parameters gradients."""
    torch.manual_seed(0)
    net = Net(reentrant=True).train()
    ref = copy.deepcopy(net)
    x = torch.randn(4, 8)
    for run in (ref, bcfront.capture(net)):
        with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="does not require grad"):
            run(x)
    assert all(p.grad is None for p in net.parameters())


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.lin = nn.Linear(8, 2)
        self.emb.register_forward_hook(lambda module, inputs, output: output.requires_grad_(True))
        self.busy = False

    def forward(self, ids):
        try:  # (a handler after the write: it must not end the graph there)
            self.busy = True
            loss = self.lin(self.emb(ids)).sum()
        finally:
            self.busy = False
        if torch.is_grad_enabled():
            loss.backward()
        return loss.detach()


@pytest.mark.parametrize("grad", [True, False])
def test_requires_grad_true_on_a_tensor_that_requires_it_is_no_break(grad):
    torch.manual_seed(0)
    net = Hooked()
    ids = torch.tensor([[1, 2, 3]])
    with torch.set_grad_enabled(grad):
        want = net(ids)
        rep = bcfront.explain(net, ids)
        got = bcfront.capture(net)(ids)
    torch.testing.assert_close(got, want)
    assert got.requires_grad == want.requires_grad
    if grad:
        assert not rep.graph_breaks


# -- the memory policy --------------------------------------------------------------------------


class Wide(nn.Module):
    """Several activations per block, dropout among them: recomputing them must redraw
    the forward's masks (eager's checkpoint preserves the random state for that)."""

    def __init__(self, width=64):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)
        self.drop = nn.Dropout(0.2)

    def forward(self, x, scale, shift):
        h = self.drop(torch.tanh(torch.nn.functional.gelu(self.up(x)) * scale))
        return x + self.drop(self.down(h)).sin() + shift, h.amax()


class Deep(nn.Module):
    def __init__(self, ckpt=True, inner_backward=True):
        super().__init__()
        self.blocks = nn.ModuleList([Wide() for _ in range(3)])
        self.ckpt, self.inner_backward = ckpt, inner_backward

    def forward(self, x):
        peaks = []
        shift = torch.linspace(0, 1, 64)  # (the same every call: computed once at capture)
        for block in self.blocks:
            if self.ckpt:
                x, peak = checkpoint(block, x, 0.5, shift, use_reentrant=False)
            else:
                x, peak = block(x, 0.5, shift)
            peaks.append(peak)
        loss = x.pow(2).mean() + torch.stack(peaks).sum()
        if not self.inner_backward:
            return loss
        loss.backward()
        return loss.detach()


@pytest.mark.parametrize("backend", ["eager", "fx-joint"])
@pytest.mark.parametrize("inner_backward", [True, False])
def test_checkpointed_activations_are_recomputed_not_saved(backend, inner_backward):
    """Eager checkpointing against bcfront's: the same bytes saved (or fewer), far fewer
    than without checkpointing; outputs, gradients and the random state after each step
    bit for bit eager's, with dropout inside the checkpointed blocks."""
    if backend == "fx-joint" and not inner_backward:
        pytest.skip("the joint graph is for a backward inside the captured function")
    torch.manual_seed(0)
    net = Deep(inner_backward=inner_backward).train()
    ref = copy.deepcopy(net)
    plain = copy.deepcopy(net)
    plain.ckpt = False
    if backend == "eager":
        cf = bcfront.capture(net, backend="eager")
    else:
        cf = bcfront.capture(net, backend="fx", joint_graph=True)
    params = [*net.parameters(), *ref.parameters(), *plain.parameters()]
    for i in range(3):
        x = torch.randn(8, 64, generator=torch.Generator().manual_seed(i))
        for p in params:
            p.grad = None
        torch.manual_seed(10 + i)
        want, eager_bytes = saved_bytes(ref, x, params, not inner_backward)
        after = torch.rand(3)
        torch.manual_seed(10 + i)
        _, plain_bytes = saved_bytes(plain, x, params, not inner_backward)
        torch.manual_seed(10 + i)
        if i < 2:  # (these calls compile: their tracing would count fake tensors)
            got = cf(x)
            if not inner_backward:
                got.backward()
                got = got.detach()
        else:
            got, our_bytes = saved_bytes(cf, x, params, not inner_backward)
        assert torch.equal(torch.rand(3), after)  # the random state after the step
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        for (name, p), q in zip(net.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0, msg=name)
    assert our_bytes <= eager_bytes, (our_bytes, eager_bytes, plain_bytes)
    assert 4 * eager_bytes < plain_bytes, (eager_bytes, plain_bytes)
    with bcfront.explain.collect() as run:
        cf(x)
    functions = run.report().functions
    notes = [n for f in functions for n in f.notes]
    assert not any("not recomputed" in n for n in notes), notes
    # the graph's code ran, not eager's (which the region reruns where the graph raises)
    assert sum(f.ops_native for f in functions) == 0, [(f.function, f.ops_native) for f in functions]


class Shapes(nn.Module):
    """Checkpoint call sites of other shapes: nested, under autocast, under no_grad, one
    whose first node is a constant, a tuple result holding a number and an input, a
    function computing nothing."""

    def __init__(self, case):
        super().__init__()
        self.case = case
        self.a, self.b = Wide(), Wide()

    def inner(self, x):
        return self.b(x, 2.0, 0.0)[0]

    def outer(self, x):
        y = checkpoint(self.inner, torch.relu(x), use_reentrant=False)
        return self.a(y, 0.5, 1.0)[0]

    def constant_first(self, x):  # (its first node is input-independent: computed once)
        return self.b(x, 2.0, torch.full((64,), 0.25))[0]

    def parts(self, x):
        y = self.a(x, 0.5, 0.0)[0]
        return y, x.shape[0], x, None

    def forward(self, x):
        if self.case == "nested":
            y = checkpoint(self.outer, x, use_reentrant=False)
        elif self.case == "autocast":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                y = checkpoint(self.inner, x, use_reentrant=False).float()
        elif self.case == "no_grad":
            with torch.no_grad():
                z = checkpoint(self.inner, x, use_reentrant=False)
            y = checkpoint(self.inner, x + z, use_reentrant=False)
        elif self.case == "constant_first":
            y = checkpoint(self.constant_first, x, use_reentrant=False)
        elif self.case == "parts":
            y, n, same, none = checkpoint(self.parts, x, use_reentrant=False)
            assert same is x and none is None
            y = y * n
        else:
            y = checkpoint(lambda t: t, x, use_reentrant=False) + self.inner(x)
        loss = y.pow(2).mean()
        loss.backward()
        return loss.detach()


@pytest.mark.parametrize("case", ["nested", "autocast", "no_grad", "constant_first", "parts", "nothing"])
def test_other_call_sites_are_eagers_and_save_no_more(case):
    torch.manual_seed(0)
    net = Shapes(case).train()
    ref = copy.deepcopy(net)
    cf = bcfront.capture(net, backend="eager")
    params = [*net.parameters(), *ref.parameters()]
    for i in range(3):
        x = torch.randn(8, 64, generator=torch.Generator().manual_seed(i))
        for p in params:
            p.grad = None
        torch.manual_seed(10 + i)
        want, eager_bytes = saved_bytes(ref, x, params)
        after = torch.rand(3)
        torch.manual_seed(10 + i)
        got, our_bytes = (cf(x), 0) if i < 2 else saved_bytes(cf, x, params)
        assert torch.equal(torch.rand(3), after)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        for (name, p), q in zip(net.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0, msg=name)
    assert our_bytes <= eager_bytes, (our_bytes, eager_bytes)
    with bcfront.explain.collect() as run:
        cf(x)
    functions = run.report().functions
    assert not run.report().graph_breaks
    assert not any("not recomputed" in n for f in functions for n in f.notes)
    assert sum(f.ops_native for f in functions) == 0


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x):
        return checkpoint(lambda t: torch.tanh(self.lin(t)) * 2, x, use_reentrant=False).sum()


def test_a_functionalized_fx_graph_says_its_activations_are_kept():
    """Without a backward inside, the fx backend compiles the functionalized graph, whose
    nodes are new: the call site is not outlined there, and the note says so."""
    torch.manual_seed(0)
    net = Plain()
    ref = copy.deepcopy(net)
    x = torch.randn(4, 16)
    cf = bcfront.capture(net, backend="fx")
    with bcfront.explain.collect() as run:
        got = cf(x)
    want = ref(x)
    got.backward()
    want.backward()
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    for p, q in zip(net.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0)
    notes = [n for f in run.report().functions for n in f.notes]
    assert any("not recomputed there (the graph was functionalized" in n for n in notes), notes


class Closure(nn.Module):
    """`fn` reads a tensor from its closure, which is changed in place after the call:
    eager's checkpoint was given only `x`, so it saves that alone, and its recomputation
    reads the changed tensor, with no error (a tensor given to it and changed would fail
    the backward's version check)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x):
        gate = self.lin(x).detach() * 2
        y = checkpoint(lambda t: torch.tanh(self.lin(t)) * gate, x, use_reentrant=False)
        gate.mul_(0.5)
        loss = (y * 3).sum()
        loss.backward()
        return loss.detach()


def test_a_closed_over_tensor_is_not_given_to_checkpoint():
    torch.manual_seed(0)
    net = Closure()
    ref = copy.deepcopy(net)
    cf = bcfront.capture(net, backend="eager")
    params = [*net.parameters(), *ref.parameters()]
    for i in range(3):
        x = torch.randn(4, 16, generator=torch.Generator().manual_seed(i))
        for p in params:
            p.grad = None
        want, eager_bytes = saved_bytes(ref, x, params)
        got, our_bytes = (cf(x), 0) if i < 2 else saved_bytes(cf, x, params)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        for p, q in zip(net.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0)
    # (the backward runs natively, after a break: the trace's backward on fake tensors
    # checks the version of the `gate` its inlined `fn` saved; the graph before runs the call)
    assert our_bytes == eager_bytes


class GivenUnused(nn.Module):
    """A tensor made inside one checkpointed function, returned, and given to the next
    checkpoint call whose function does not read it."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def first(self, x):
        h = torch.tanh(self.lin(x))
        return h * 2, h

    def second(self, y, _unused):
        return self.lin(y).sin()

    def forward(self, x):
        y, h = checkpoint(self.first, x, use_reentrant=False)
        z = checkpoint(self.second, y, h, use_reentrant=False)
        loss = z.pow(2).sum()
        loss.backward()
        return loss.detach()


def test_a_given_tensor_the_function_does_not_read():
    torch.manual_seed(0)
    net = GivenUnused()
    ref = copy.deepcopy(net)
    cf = bcfront.capture(net, backend="eager")
    for i in range(3):
        x = torch.randn(4, 16, generator=torch.Generator().manual_seed(i))
        for p in [*net.parameters(), *ref.parameters()]:
            p.grad = None
        torch.testing.assert_close(cf(x), ref(x), rtol=0, atol=0)
        for p, q in zip(net.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0)
    with bcfront.explain.collect() as run:
        cf(x)
    assert sum(f.ops_native for f in run.report().functions) == 0


class Keywords(nn.Module):
    def __init__(self, dropout: bool, **keywords):
        super().__init__()
        self.lin = nn.Linear(16, 16)
        self.drop = nn.Dropout(0.5) if dropout else nn.Identity()
        self.keywords = keywords

    def forward(self, x):
        y = checkpoint(lambda t: self.drop(torch.tanh(self.lin(t))), x, **self.keywords)
        loss = y.pow(2).sum()
        loss.backward()
        return loss.detach()


@pytest.mark.parametrize(
    ("dropout", "keywords", "why"),
    [
        (False, {"use_reentrant": False, "preserve_rng_state": False}, None),
        (False, {"use_reentrant": False, "determinism_check": "none", "debug": False}, None),
        (True, {"use_reentrant": False, "preserve_rng_state": False}, "preserve_rng_state=False"),
        (False, {"use_reentrant": True}, "without use_reentrant=False"),
        (False, {"use_reentrant": False, "context_fn": lambda: (nullcontext(), nullcontext())}, "context_fn"),
    ],
)
def test_checkpoints_keywords_are_kept_or_named(dropout, keywords, why):
    """Keywords under which one traced run is eager's go to torch's checkpoint as given;
    the others fall back to torch's call with a break that names the keyword."""
    torch.manual_seed(0)
    net = Keywords(dropout, **keywords).train()
    ref = copy.deepcopy(net)
    cf = bcfront.capture(net, backend="eager")
    with bcfront.explain.collect() as run:
        for i in range(2):
            # (requiring grad: the reentrant variant gives no gradient otherwise)
            x = torch.randn(4, 16, generator=torch.Generator().manual_seed(i)).requires_grad_()
            for p in [*net.parameters(), *ref.parameters()]:
                p.grad = None
            torch.manual_seed(i)
            want = ref(x)
            torch.manual_seed(i)
            got = cf(x)
            torch.testing.assert_close(got, want, rtol=0, atol=0)
            for p, q in zip(net.parameters(), ref.parameters()):
                torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0)
    breaks = run.report().graph_breaks
    if why is None:
        assert not breaks
    else:
        assert any(why in b.message and "torch.utils.checkpoint" in b.message for b in breaks), breaks
