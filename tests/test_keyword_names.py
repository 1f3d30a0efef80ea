"""A call's keywords may be named as bcfront's own call machinery names its parameters
(``self``, ``fn``, ``obj``, ``module``): they are the user's, bound as the function binds
them -- the wrappers take their own first arguments positionally only."""

from __future__ import annotations

import pytest

import bcfront


def takes_any(a, **kw):
    return a, sorted(kw.items())


def positional_only(a, /, b=2, **kw):
    return a, b, sorted(kw.items())


def _outcome(fn, /, *args, **kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except TypeError as e:
        return "TypeError", str(e)


@pytest.mark.parametrize("fn", [takes_any, positional_only], ids=["keywords-bind", "positional-only"])
@pytest.mark.parametrize("name", ["self", "fn", "obj", "module", "args", "kwargs"])
def test_a_keyword_named_like_a_wrapper_parameter_reaches_the_function(fn, name):
    cf = bcfront.capture(fn)
    for value in (1, 2, 2):  # the first call captures, the others are cached
        assert _outcome(cf, 7, **{name: value}) == _outcome(fn, 7, **{name: value})
    assert _outcome(cf, **{name: 1}) == _outcome(fn, **{name: 1})  # `a` missing: Python's error


def test_explain_passes_a_keyword_named_fn_to_the_function():
    report = bcfront.explain(takes_any, 1, fn=2)
    assert report.functions and report.functions[0].calls == 1


def test_a_module_called_with_a_keyword_named_obj():
    torch = pytest.importorskip("torch")

    class M(torch.nn.Module):
        def forward(self, x, obj=0, module=0):
            return x + obj + module

    m = M()
    m.register_forward_pre_hook(lambda mod, args: None)  # the call goes through _call_object
    cf = bcfront.capture(m)
    x = torch.ones(2)
    for _ in range(2):
        torch.testing.assert_close(cf(x, obj=2, module=3), m(x, obj=2, module=3))
