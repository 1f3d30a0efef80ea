"""``torch.utils.checkpoint.checkpoint`` in captured code (`semantics/checkpoint_calls.py`).

Oracle: the same module run eagerly on identical inputs and seeds: outputs, parameters'
gradients, buffers and Python state after the step.  With ``use_reentrant=False`` and a
function that writes nothing its recomputation would write again, the checkpointed
function's tensor work is in the graph (no break) and a note says its activations are
kept; otherwise the call falls back to torch's own, and the results are still eager's.
Also the ``output.requires_grad_(True)`` of transformers' input-embedding hook (which
``gradient_checkpointing_enable()`` installs): a no-op on a tensor that requires grad.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import bcfront  # noqa: E402


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


def test_checkpointed_blocks_are_in_the_graph_with_a_note():
    torch.manual_seed(0)
    rep, _ = _run_both(Net().train())
    assert not rep.graph_breaks
    notes = [n for f in rep.functions for n in f.notes]
    assert any("torch.utils.checkpoint.checkpoint" in n and "not recomputed" in n for n in notes), notes


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
