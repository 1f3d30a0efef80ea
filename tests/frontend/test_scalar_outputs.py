"""Numbers read from tensors kept in the graph: the option ``capture_scalar_outputs``.

``t.item()``, ``int(t)``/``float(t)``/``bool(t)`` and ``t.tolist()`` become graph nodes;
arithmetic with the number and its use as a value operand of tensor ops stay in the
same graph (``fullgraph=True`` proves it), a use whose result depends on the value (a
branch, a shape, a dict key, ``is``) is a data-dependent break after which native code
sees the real number.  Default off: every read is a break, as before.
Oracle: the same function run eagerly on the same inputs (values, dtypes, types).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402


def _same(a, b):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b), (a, b)
        return
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert type(a) is type(b) and a == b, (a, b)


def _check(fn, *inputs, fullgraph=True, calls=2):
    """`fn` captured (one graph when `fullgraph`) against eager on each of `inputs`."""
    cf = bcfront.capture(fn, capture_scalar_outputs=True, fullgraph=fullgraph, backend="eager")
    for args in inputs[:calls] if len(inputs) > 1 else inputs * calls:
        _same(cf(*args), fn(*args))
    return cf


def scale_by_sum(x):
    return x * x.sum().item() + 1


def test_item_feeds_tensor_arithmetic_in_one_graph():
    cf = _check(scale_by_sum, (torch.randn(5),), (torch.randn(5),))
    report = bcfront.explain(cf, torch.randn(5))
    assert len(report.graphs) == 1 and not report.graph_breaks
    assert not report.recompiles  # the value is not specialized on


def python_arithmetic(x):
    s = x.max().item()
    n = x.numel()
    m = (s * 2 - 1) / n + abs(-s)
    return x - m, m, s > 0.5, -s


def test_python_arithmetic_on_the_number_is_captured_and_returned_as_python():
    x = torch.randn(6)
    cf = _check(python_arithmetic, (x,), (x * 3,))
    out = cf(x)
    assert type(out[1]) is float and type(out[2]) is bool


def conversions(x, i):
    a = int(i)
    b = float(x.sum())
    c = bool(x.sum() > 0)
    return x * a + b * c, a, b, c


def test_int_float_bool_of_a_tensor_feed_arithmetic():
    x = torch.randn(4)
    _check(conversions, (x, torch.tensor(3)), (-x, torch.tensor(-2)))


def unpack_tolist(x, t):
    a, b = t.tolist()
    return x * a + b, t.tolist()


def test_tolist_items_are_graph_numbers():
    t1, t2 = torch.tensor([2.0, 0.5]), torch.tensor([1.0, 4.0])
    _check(unpack_tolist, (torch.randn(3), t1), (torch.ones(3), t2))


def int_times_float(x, t):
    # a float64 0-d tensor would promote an int tensor to float64; a Python float does not
    return torch.arange(4) * t.item(), x * (t.item() * 2)


def test_promotion_follows_python_number_rules():
    _check(int_times_float, (torch.randn(2), torch.tensor(2.5, dtype=torch.float64)))


def value_operands(x):
    s = x.mean().item()
    return (
        x.clamp(min=s),
        torch.full_like(x, s),
        torch.where(x > 0, x, s),
        torch.tensor([s, 1.0]),
        x.masked_fill(x < 0, s),
        x.add(x, alpha=s),
    )


def test_value_operands_of_tensor_ops():
    _check(value_operands, (torch.randn(5),), (torch.randn(5),))


def branch(x):
    s = x.sum().item()
    if s > 0:
        return x + s
    return x - s


def test_branch_on_the_number_is_a_data_dependent_break():
    cf = _check(branch, (torch.ones(3),), (-torch.ones(3),), fullgraph=False)
    report = bcfront.explain(cf, torch.ones(3))
    assert [b.reason for b in report.graph_breaks] == [BreakReason.DATA_DEPENDENT_BRANCH]


def as_shape(x):
    n = int(x.sum())
    return torch.arange(n) * 2, x.new_zeros(n)


def as_pow(x):
    n = int(x.sum())
    return n**-1, n**2, x * n**2


def as_key(x):
    n, two = int(x.sum()), 2
    return {n: 1, 2: 2}.get(n), n is two


@pytest.mark.parametrize("fn", [as_shape, as_pow, as_key])
def test_value_dependent_uses_break_and_stay_correct(fn):
    cf = _check(fn, (torch.tensor([1.0, 1.0]),), (torch.tensor([2.0, 1.0]),), fullgraph=False)
    with pytest.raises(bcfront.GraphBreakError) as e:
        bcfront.capture(fn, capture_scalar_outputs=True, fullgraph=True)(torch.tensor([1.0, 1.0]))
    assert e.value.reason in (BreakReason.DATA_DEPENDENT, BreakReason.UNSUPPORTED_IDENTITY)
    assert cf is not None


def printed(x):
    s = x.sum().item()
    print("sum", s)
    return x * s


def test_printing_sees_the_real_number(capsys):
    x = torch.tensor([1.5, 2.0])
    cf = bcfront.capture(printed, capture_scalar_outputs=True)
    _same(cf(x), printed(x))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[1] == "sum 3.5"


def divide(x):
    return x / (1 / x.sum().item())


def test_errors_of_the_number_raise_as_eager():
    cf = bcfront.capture(divide, capture_scalar_outputs=True)
    _same(cf(torch.ones(2)), divide(torch.ones(2)))
    with pytest.raises(ZeroDivisionError):
        divide(torch.zeros(2))
    with pytest.raises(ZeroDivisionError):
        cf(torch.zeros(2))


def many(x):
    return x.item()


def test_item_of_many_elements_raises_as_eager():
    cf = bcfront.capture(many, capture_scalar_outputs=True)
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        cf(torch.ones(3))
    assert cf(torch.ones(1)) == 1.0


def test_default_off_is_a_break():
    report = bcfront.explain(bcfront.capture(scale_by_sum), torch.randn(3))
    assert [b.reason for b in report.graph_breaks] == [BreakReason.DATA_DEPENDENT]


def test_fx_backend():
    cf = bcfront.capture(python_arithmetic, capture_scalar_outputs=True, fullgraph=True, backend="fx")
    x = torch.randn(4)
    _same(cf(x), python_arithmetic(x))


def attributes(x):
    s = x.sum().item()
    return hasattr(s, "shape"), type(s), isinstance(s, float), s.real


def test_attributes_are_the_numbers_not_a_tensors():
    _check(attributes, (torch.randn(3),), fullgraph=False)
