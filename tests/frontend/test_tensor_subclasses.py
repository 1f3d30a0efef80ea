"""Tensor subclasses with ``__torch_function__`` met by captured code.

bcfront does not trace a subclass's ``__torch_function__``: every way such a tensor
reaches the trace -- an argument, an item of one, a global, a parameter whose data is
one (`nn.Parameter` of a subclass keeps the subclass), ``as_subclass`` inside the
function -- is a ``tensor-subclass`` break, and that code runs natively.  Never a wrong
result: values, the result's type and the subclass's own log of calls match eager.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402


class LogT(torch.Tensor):
    """Logs every torch call and keeps the subclass on results (torch's default)."""

    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})


class PlainOut(torch.Tensor):
    """Returns plain tensors, doubling every floating result."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            return out * 2
        return out


G = torch.ones(2).as_subclass(LogT)
LINEAR = torch.nn.Linear(2, 2)
LINEAR.weight = torch.nn.Parameter(torch.ones(2, 2).as_subclass(LogT))


def arith(x):
    y = x * 2 + 1
    return y, type(y) is LogT, isinstance(y, PlainOut)


def in_list(xs):
    return arith(xs[0])


def with_global(x):
    return x + G, type(x + G)


def made_inside(x):
    return arith(x.as_subclass(LogT)), arith((x + 1).as_subclass(PlainOut))


def parameter_data(x):
    y = LINEAR(x)
    return y, type(y) is LogT


def _facts(out):
    if isinstance(out, torch.Tensor):
        return (type(out), out.as_subclass(torch.Tensor).tolist())
    if isinstance(out, (tuple, list)):
        return tuple(_facts(o) for o in out)
    return out


CASES = [
    (arith, lambda: (torch.ones(3).as_subclass(LogT),)),
    (arith, lambda: (torch.ones(3).as_subclass(PlainOut),)),
    (in_list, lambda: ([torch.ones(3).as_subclass(LogT)],)),
    (with_global, lambda: (torch.ones(2),)),
    (made_inside, lambda: (torch.ones(2),)),
    (parameter_data, lambda: (torch.ones(2),)),
]


@pytest.mark.parametrize("fn,make", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_same_values_types_and_calls_as_eager(fn, make):
    cf = bcfront.capture(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            LogT.calls.clear()
            want = _facts(fn(*make()))
            want_calls = list(LogT.calls)
            LogT.calls.clear()
            got = _facts(cf(*make()))
            assert got == want
            assert LogT.calls == want_calls


@pytest.mark.parametrize("fn,make", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_subclass_is_a_clear_break(fn, make):
    with pytest.raises(bcfront.GraphBreakError) as e:
        bcfront.capture(fn, fullgraph=True)(*make())
    assert e.value.reason == BreakReason.TENSOR_SUBCLASS
    assert "subclass" in str(e.value)


def test_plain_parameters_still_capture():
    lin = torch.nn.Linear(2, 2)
    out = bcfront.capture(lin, fullgraph=True)(torch.ones(2))
    assert type(out) is torch.Tensor and torch.equal(out, lin(torch.ones(2)))
