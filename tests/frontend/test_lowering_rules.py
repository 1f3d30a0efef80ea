"""`semantics/lowering.py`'s rules of torch builtins (``torch.full`` of a 0-d tensor,
``torch.tensor`` / ``torch.as_tensor`` of a symbolic number), which `inspect` gives no
signature: the signature spelled for each must take only what the builtin takes (a call
it binds is rewritten; one it does not keeps its own call and eager's error), and the
keyword spellings of a call must be rewritten as the positional ones are.  Oracle: eager
on the same inputs (values, dtypes, exceptions)."""

from __future__ import annotations

import inspect
import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.frontend.semantics import lowering  # noqa: E402

from .test_torch_semantics import assert_same  # noqa: E402

VALUES = {
    "size": (2, 3),
    "fill_value": 7,
    "data": 3,
    "dtype": torch.float64,
    "device": "cpu",
    "layout": torch.strided,
    "pin_memory": False,
    "requires_grad": False,
}


@pytest.mark.parametrize("fn", sorted(lowering._SPELLED, key=lambda f: f.__name__))
def test_a_spelled_signature_binds_only_calls_the_builtin_takes(fn):
    sig = lowering._SIGNATURES[fn]
    positional = [p.name for p in sig.parameters.values() if p.kind != inspect.Parameter.KEYWORD_ONLY]
    keywords = [p.name for p in sig.parameters.values() if p.kind != inspect.Parameter.POSITIONAL_ONLY]
    args = [VALUES[n] for n in positional]
    for name in keywords:  # each keyword the rule binds, as eager takes it
        i = positional.index(name) if name in positional else len(positional)
        call, kwargs = args[:i], {n: VALUES[n] for n in [*positional[i:], name]}
        sig.bind(*call, **kwargs)
        fn(*call, **kwargs)
    with pytest.raises(TypeError):
        sig.bind(*args, not_a_keyword=1)


def _same_and_unbroken(fn, *args):
    cf = bcfront.capture(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bcfront.report.NativeFallbackWarning)
        with bcfront.explain.collect() as calls:
            got = cf(*args)
    assert_same(got, fn(*args))
    report = calls.report()
    assert not report.graph_breaks, report.graph_breaks


@pytest.mark.parametrize(
    "call",
    [
        lambda t: torch.full((2,), t, dtype=torch.int64),
        lambda t: torch.full(size=(2,), fill_value=t, dtype=torch.int64),
        lambda t: torch.full((2,), fill_value=t, device="cpu", dtype=torch.int64),
        lambda t: torch.full((2, 1), t),
    ],
)
def test_full_of_a_tensor_by_keyword_is_captured_as_by_position(call):
    def f(x, n):
        return x * call((n > 0).sum())

    _same_and_unbroken(f, torch.ones(2), torch.arange(3))


@pytest.mark.parametrize(
    "call",
    [
        lambda t: torch.full((2,), t, names=None),  # a keyword the rule does not bind
        lambda t: torch.full((2,), t, 1),  # one argument too many: eager's TypeError
        lambda t: torch.full((2,), t, size=(2,)),  # bound twice: eager's TypeError
        lambda n: torch.tensor(data=n),  # data by keyword: the call as it is
        lambda n: torch.tensor(n, dtype=torch.float64, bogus=1),
    ],
)
def test_a_call_the_rule_does_not_bind_does_what_eager_does(call):
    def f(x, n):
        return x * call(n)

    for n in (2, 3, 4):
        try:
            want = f(torch.ones(2), n)
        except Exception as e:  # noqa: BLE001 - the exception is the behaviour to match
            want = (type(e), str(e))
        try:
            got = bcfront.capture(f)(torch.ones(2), n)
        except Exception as e:  # noqa: BLE001 - the exception is the behaviour to match
            got = (type(e), str(e))
        if isinstance(want, tuple):
            assert got == want
        else:
            assert_same(got, want)
