"""Float arguments that change between calls reach tensor ops as graph inputs.

A float argument that has taken a third value is known only at run time (a runtime
value, `semantics.runtime_values`).  Where it reaches a tensor op as an operand (``x *
scale``, ``x.clamp(min=lo)``), it used to be read there: guarded equal, one entry per
value until the recompile limit, then a native fallback.  Now it is a SymFloat graph
input (`semantics.symbolic.float_input`), as torch.compile makes such a float: one entry
serves every finite value.  A factory's fill value (``torch.full(size, s)``) is one too;
a size (``torch.arange(s)``) is guarded by the ShapeEnv.  Each result is compared with
eager torch on the same values, bit for bit, and with its dtype.
"""

from __future__ import annotations

import math
import warnings

import pytest

import bcfront

torch = pytest.importorskip("torch")


def _same(cf, fn, calls):
    for args in calls:
        want, got = fn(*args), cf(*args)
        pairs = zip(want, got) if isinstance(want, tuple) else [(want, got)]
        assert type(got) is type(want), args
        for w, g in pairs:
            assert type(g) is type(w), args
            if isinstance(w, torch.Tensor):
                assert g.dtype == w.dtype and g.shape == w.shape, args
                assert torch.equal(g, w) or torch.allclose(g, w, equal_nan=True, rtol=0, atol=0), args
            else:
                assert g == w or (g != g and w != w), args


def _varied(make, n=12):
    return [make(0.5 + 0.37 * i) for i in range(n)]


X = torch.linspace(-2.0, 2.0, 12).reshape(3, 4)


def _scale(x, s):
    return torch.relu(x * s) + s


def _clamp_kw(x, lo):
    return x.clamp(min=lo, max=lo + 1.0)


def _python_then_tensor(x, s):
    t = s * 2.0 - 1.0  # Python arithmetic on the runtime float: computed by the region
    return x / t


def _tuple_item(x, pair):
    return x * pair[0] - pair[1]


def _two_uses(x, s):
    return (x + s) * s, torch.sigmoid(x * s)


def _int_tensor(x, s):
    return x.to(torch.int32) * s  # int tensor times a float: float32, as eagerly


def _reversed_operands(x, s):
    return s - x, s / (x.abs() + 1.0), s ** x.abs()


def _where_scalar(x, s):
    return torch.where(x > 0, x, s)


CASES = {
    "scale": (_scale, lambda s: (X, s)),
    "clamp_keywords": (_clamp_kw, lambda s: (X, -s)),
    "python_arithmetic_first": (_python_then_tensor, lambda s: (X, s + 1.0)),
    "tuple_item": (_tuple_item, lambda s: (X, (s, s / 3))),
    "two_uses": (_two_uses, lambda s: (X, s)),
    "int_tensor": (_int_tensor, lambda s: (X, s)),
    "reversed_operands": (_reversed_operands, lambda s: (X, s)),
    "where_scalar": (_where_scalar, lambda s: (X, -s)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_changing_float_operand_is_one_entry_not_one_per_value(name):
    fn, make = CASES[name]
    cf = bcfront.capture(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile-limit warning, no native fallback
        _same(cf, fn, _varied(make))
    # the first two values keep constant entries (`ShapePolicy.value_dynamic`), then one
    assert len(cf.entries) <= 3, name
    assert cf.report().native_fallbacks == ()


def test_the_float_is_a_graph_input_not_a_constant():
    cf = bcfront.capture(_scale)
    _same(cf, _scale, _varied(lambda s: (X, s), 4))
    last = cf.entries[-1]
    on_s = {g.kind.name for g in last.guards if getattr(g.source, "name", None) == "s"}
    assert on_s == {"TYPE_MATCH"}  # its type, not its value
    assert "L_s: 'SymFloat'" in last.graphs[0].code  # the graph reads it as an input


@pytest.mark.parametrize("odd", [math.inf, -math.inf, math.nan])
def test_a_nan_or_infinite_float_is_read_as_a_constant(odd):
    cf = bcfront.capture(_scale)
    calls = [*_varied(lambda s: (X, s), 4), (X, odd), (X, 2.25), (X, odd)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(cf, _scale, calls)
    assert len(cf.entries) <= 4


def test_a_factory_takes_the_float_as_an_input():
    def f(x, s):
        return torch.full((2,), s) + x.sum() + torch.scalar_tensor(s) * torch.linspace(0, s, 2)

    cf = bcfront.capture(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(cf, f, _varied(lambda s: (X, s)))
    assert len(cf.entries) <= 3


def test_a_factory_whose_size_is_the_float_reads_it():
    def f(x, s):
        return torch.arange(0.0, s * 4)[:2] + x[0, :2]

    cf = bcfront.capture(f)
    _same(cf, f, _varied(lambda s: (X, s), 6))  # one entry per size, as torch.compile


def test_a_branch_on_the_float_guards_the_answer_not_the_value():
    def f(x, s):
        if s > 2.0:
            return x * s
        return x - s

    cf = bcfront.capture(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(cf, f, _varied(lambda s: (X, s)))
    assert len(cf.entries) <= 4  # two constant entries, then one per answer


def test_a_float_operand_under_a_non_eager_backend():
    cf = bcfront.capture(_scale, backend="fx")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(cf, _scale, _varied(lambda s: (X, s), 8))
    assert len(cf.entries) <= 3


@pytest.mark.parametrize("backend", ["eager", "fx"])
def test_an_in_place_write_of_a_changing_float_is_not_baked_in(backend):
    def f(x, s):
        x.mul_(s)
        return x.add_(s)

    cf = bcfront.capture(f, backend=backend)
    for i in range(8):
        s = 0.5 + 0.37 * i
        a, b = X.clone(), X.clone()
        got, want = cf(a, s), f(b, s)
        assert torch.equal(got, want) and torch.equal(a, b), (backend, s)
    assert len(cf.entries) <= 3


def _times_size(x, s):
    out = x * 2
    return out * (s * out.shape[0]), s * out.shape[0]  # a SymFloat: to a tensor op and returned


def _times_int(x, n, s):
    return x * (n * s), n * s


@pytest.mark.parametrize("fn,make", [
    (_times_size, lambda i, s: (torch.linspace(-1.0, 1.0, 2 * (2 + i % 3)).reshape(-1, 2), s)),
    (_times_int, lambda i, s: (X, 2 + i, s)),
])  # fmt: skip
def test_a_changing_float_times_a_symbolic_int_is_one_entry(fn, make):
    # a symbolic int (a dynamic size, a changing int argument) times the runtime float: the
    # float was read as a constant (``_symbolic_int_and_object`` read its value), an entry per
    # value until the recompile limit, natively after it
    cf = bcfront.capture(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(cf, fn, [make(i, 0.5 + 0.37 * i) for i in range(12)])
    assert len(cf.entries) <= 3
    assert cf.report().native_fallbacks == ()
