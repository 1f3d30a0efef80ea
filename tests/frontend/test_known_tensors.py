"""`semantics.known_tensors`: a branch on a tensor made from constants in the trace (HF
``generate()``'s checks of its eos/pad token tensors) is decided while tracing instead of
breaking the graph; a tensor that reads an input, a random draw or a later in-place write
still breaks.  The oracle is plain Python on the same arguments."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402


def special_tokens(x, eos, pad):
    """The shape of generate()'s ``_prepare_special_tokens`` checks."""
    eos_t = torch.tensor(eos, dtype=torch.long)
    if eos_t.ndim == 0:
        eos_t = eos_t.unsqueeze(0)
    pad_t = torch.tensor(pad)
    out = x + 1
    if torch.isin(eos_t, pad_t).any():
        out = out * 2
    if torch.is_floating_point(eos_t) or (eos_t < 0).any():
        out = out - 5
    return out


TOKENS = [(0, 0), (3, 0), ([1, 0], 0), (-1, 2), ([2, 5], 5), (3, 0), ([1, 0], 0)]


def test_checks_on_constant_tensors_do_not_break():
    x = torch.ones(2)
    cf = bcfront.capture(special_tokens)
    for eos, pad in TOKENS:  # one captured function: the guards on the tokens pick the entry
        assert torch.equal(cf(x, eos, pad), special_tokens(x, eos, pad)), (eos, pad)
    for eos, pad in TOKENS[:4]:
        report = bcfront.explain(special_tokens, x, eos, pad)
        assert not report.graph_breaks, report


def drawn(x):
    r = torch.rand(()) if x.dim() else torch.zeros(())
    if r > 0.5:  # a random draw: never decided while tracing
        return x + 1
    return x - 1


def written_from_input(x):
    c = torch.zeros(1)
    c.add_(x.sum())  # written in place from an input
    if c.any():
        return x + 1
    return x - 1


def view_written_from_input(x):
    c = torch.zeros(2)
    c[0:1].add_(x.sum())  # through a view
    if c.any():
        return x + 1
    return x - 1


def ambiguous(x):
    c = torch.tensor([1, 2])
    if c:  # more than one value: Python's RuntimeError, raised natively
        return x
    return x


@pytest.mark.parametrize("fn", [written_from_input, view_written_from_input])
def test_constant_tensors_written_from_inputs_still_break(fn):
    for x in (torch.zeros(2), torch.ones(2), torch.zeros(2)):
        assert torch.equal(bcfront.capture(fn)(x), fn(x))
    report = bcfront.explain(fn, torch.zeros(2))
    assert BreakReason.DATA_DEPENDENT_BRANCH in {b.reason for b in report.graph_breaks}


def test_a_random_tensor_still_breaks():
    torch.manual_seed(0)
    report = bcfront.explain(drawn, torch.ones(2))
    assert BreakReason.DATA_DEPENDENT_BRANCH in {b.reason for b in report.graph_breaks}
    torch.manual_seed(1)
    expected = [drawn(torch.ones(2)) for _ in range(6)]
    torch.manual_seed(1)
    cf = bcfront.capture(drawn)
    assert all(torch.equal(cf(torch.ones(2)), e) for e in expected)


def test_an_ambiguous_truth_value_raises_as_python():
    with pytest.raises(RuntimeError) as native:
        ambiguous(torch.ones(1))
    with pytest.raises(RuntimeError) as captured:
        bcfront.capture(ambiguous)(torch.ones(1))
    assert str(captured.value) == str(native.value)


def big(x):
    c = torch.zeros(5000)  # made from constants, but too big to compute while tracing
    if c.any():
        return x + 1
    return x - 1


def test_a_big_constant_tensor_is_not_computed_while_tracing():
    assert torch.equal(bcfront.capture(big)(torch.ones(2)), big(torch.ones(2)))
    report = bcfront.explain(big, torch.ones(2))
    assert BreakReason.DATA_DEPENDENT_BRANCH in {b.reason for b in report.graph_breaks}
