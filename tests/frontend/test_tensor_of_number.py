"""``torch.tensor(n)`` of a number that changes between calls is one entry, not one per value.

A step counter made a tensor (``torch.tensor(step)``, ``torch.as_tensor(lr)``): the
number is a symbol (an int that changed) or a runtime float (one that took a third
value), and the fake run of ``torch.tensor`` takes no symbol -- the value was read, one
entry per value until the recompile limit, then native.  `lowering.tensor_of_number`
records ``torch.scalar_tensor(n, dtype=...)`` instead, with the dtype ``torch.tensor``
infers.  Each result is compared with eager on the same values: value, dtype, device.
"""

from __future__ import annotations

import warnings

import pytest

import bcfront

torch = pytest.importorskip("torch")
X = torch.arange(6.0).reshape(2, 3)

CASES = {
    "int": (lambda x, n: x * torch.tensor(n), lambda i: i + 2),
    "int_as_float32": (lambda x, n: x + torch.tensor(n, dtype=torch.float32), lambda i: i + 2),
    "int_as_float64": (lambda x, n: x + torch.tensor(n, dtype=torch.float64), lambda i: 3 * i + 1),
    "as_tensor_int": (lambda x, n: torch.as_tensor(n) - x, lambda i: i + 5),
    "float_of_int": (lambda x, n: x * torch.tensor(n * 0.5), lambda i: i + 2),
    "float": (lambda x, s: x * torch.tensor(s), lambda i: 0.1 * i + 0.3),
    "float_as_float64": (lambda x, s: torch.tensor(s, dtype=torch.float64) + x, lambda i: 0.7 * i),
    "as_tensor_float": (lambda x, s: torch.as_tensor(s) * x, lambda i: 1.0 / (i + 1)),
}


def _check(got, want, where):
    assert type(got) is type(want) and got.dtype == want.dtype and got.device == want.device, where
    assert got.shape == want.shape and torch.equal(got, want), where


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_tensor_of_a_changing_number_is_not_one_entry_per_value(name):
    fn, value = CASES[name]
    cf = bcfront.capture(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bcfront.report.NativeFallbackWarning)
        for i in range(12):
            _check(cf(X, value(i)), fn(X, value(i)), (name, i))
    assert len(cf.entries) <= 3, name
    assert cf.report().native_fallbacks == ()


def test_a_requires_grad_tensor_of_a_number_keeps_its_own_call():
    def f(x, n):
        t = torch.tensor(n * 1.0, requires_grad=True)
        return (x * t).sum(), t.requires_grad

    cf = bcfront.capture(f)
    for i in range(5):
        got, want = cf(X, i + 2), f(X, i + 2)
        assert torch.equal(got[0], want[0]) and got[1] == want[1]


def test_as_tensor_with_a_keyword_it_does_not_take_raises_as_eager():
    def f(x, n):
        return torch.as_tensor(n, requires_grad=False) * x

    cf = bcfront.capture(f)
    for i in range(4):
        with pytest.raises(TypeError) as got:
            cf(X, i + 2)
        with pytest.raises(TypeError) as want:
            f(X, i + 2)
        assert str(got.value) == str(want.value)
