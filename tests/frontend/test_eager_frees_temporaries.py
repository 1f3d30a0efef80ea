"""The eager backend drops each temporary after the statement that last uses it, as eager
Python does, so a forward's activations that autograd does not save are freed (and their
memory reused) before the next op instead of living to the end of the region.

Oracle: the plain function run eagerly (values and grads); the region's source: no
temporary named after its ``del``, no graph output deleted.
"""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def _region_lines(cf) -> list[str]:
    return cf.entries[-1].region_source.splitlines()


def _check_dels(lines: list[str]) -> set:
    """Every deleted name is never mentioned again; returns the deleted names."""
    deleted: set = set()
    for i, line in enumerate(lines):
        m = re.match(r"\s*del (.*)$", line)
        if m:
            for name in m.group(1).split(", "):
                later = [ln for ln in lines[i + 1 :] if re.search(rf"\b{name}\b", ln)]
                assert not later, (name, later)
                deleted.add(name)
    return deleted


def step(lin, x, y):
    h = torch.relu(lin(x) * 2)  # lin(x) * 2 is not saved by autograd: freed before relu's output is used
    out = torch.tanh(h + 1).sum(dim=1)
    loss = torch.nn.functional.mse_loss(out, y)
    loss.backward()
    return loss, out


def test_temporaries_are_deleted_after_their_last_use():
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 4)
    ref = torch.nn.Linear(4, 4)
    ref.load_state_dict(lin.state_dict())
    cf = bcfront.capture(step)
    for i in range(3):
        x, y = torch.randn(3, 4) + i, torch.randn(3)
        got, want = cf(lin, x, y), step(ref, x, y)
        for a, b in zip(got, want):
            assert torch.equal(a, b)
        for p, q in zip(lin.parameters(), ref.parameters()):
            assert torch.equal(p.grad, q.grad)
            p.grad = q.grad = None
    lines = _region_lines(cf)
    deleted = _check_dels(lines)
    assert len(deleted) >= 3, "\n".join(lines)
    # the graph's outputs, read after its statements (the results), are not deleted
    after = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("except "))
    returned = set(re.findall(r"\bt\d+\b", "\n".join(lines[after:])))
    assert len(returned) >= 2, returned
    assert not returned & deleted


def attention(x, w):
    with torch.no_grad():  # the eager backend's in-place and view-folding rewrites apply
        q, k, v = (x @ w).split(8, dim=-1)
        q, k, v = (t.view(2, 5, 2, 4).transpose(1, 2) for t in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return torch.nn.functional.gelu(y.transpose(1, 2).reshape(2, 5, 8) * 2 + 1)


def test_with_folded_views_and_in_place_rewrites():
    cf = bcfront.capture(attention)
    g = torch.Generator().manual_seed(0)
    for _ in range(3):
        x, w = torch.randn(2, 5, 8, generator=g), torch.randn(8, 24, generator=g)
        assert torch.equal(cf(x, w), attention(x, w))
    _check_dels(_region_lines(cf))
