"""``ContextVar.set`` / ``reset`` inside captured code (`semantics/context_vars.py`).

Within one region the trace sees the value set and the region replays the writes, so
the context after the call is eager's; across a graph break the region replays ``set``
for real and the continuation gets the real token, which ``reset`` then uses.
Oracle: the same function run eagerly, with the variable's state before and after.
"""

from __future__ import annotations

import contextvars

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

CV = contextvars.ContextVar("bcfront_test_cv", default=1)
NODEF = contextvars.ContextVar("bcfront_test_nodef")


def _run(fn, *args):
    """(result, CV after, NODEF after) of `fn` run in a fresh context."""

    def go():
        out = fn(*args)
        return out, CV.get(), NODEF.get("unset")

    return contextvars.copy_context().run(go)


def _plain(x):
    if isinstance(x, torch.Tensor):
        return ("tensor", x.tolist())
    if isinstance(x, tuple):
        return tuple(_plain(i) for i in x)
    return (type(x), x)


def _check(fn, *args, fullgraph=True):
    cf = bcfront.capture(fn, compiling=False, fullgraph=fullgraph)
    for _ in range(2):
        got, want = _run(cf, *args), _run(fn, *args)
        assert _plain(got) == _plain(want)
    return cf


def set_and_reset(x):
    tok = CV.set(5)
    y = x * CV.get()
    CV.reset(tok)
    return y * CV.get()


def test_set_reset_in_one_region():
    _check(set_and_reset, torch.ones(3))


def set_and_leave(x):
    CV.set(7)
    NODEF.set(x.shape[0])
    return x * CV.get() + NODEF.get()


def test_set_left_set_is_replayed():
    _check(set_and_leave, torch.ones(2))


def nested(x):
    t1 = CV.set(2)
    t2 = CV.set(3)
    a = x * CV.get()
    CV.reset(t2)
    b = a * CV.get()
    CV.reset(t1)
    t3 = NODEF.set(4)
    NODEF.reset(t3)
    return b + CV.get(), NODEF.get(0)


def test_nested_tokens_and_reset_to_unset():
    _check(nested, torch.ones(2))


def across_break(x):
    tok = CV.set(9)
    print("between")
    y = x * CV.get()
    CV.reset(tok)
    return y + CV.get()


def test_token_crosses_a_graph_break(capsys):
    cf = _check(across_break, torch.ones(2), fullgraph=False)
    report = bcfront.explain(cf, torch.ones(2))
    assert all("ContextVar" not in b.message for b in report.graph_breaks)


def token_returned(x):
    return CV.set(int(x.shape[0])), x + 1


def test_returned_token_is_the_real_one():
    cf = bcfront.capture(token_returned, compiling=False, fullgraph=True)

    def go():
        tok, _ = cf(torch.ones(4))
        assert isinstance(tok, contextvars.Token) and tok.var is CV and CV.get() == 4
        CV.reset(tok)
        return CV.get()

    assert contextvars.copy_context().run(go) == 1


def reset_twice(x):
    tok = CV.set(2)
    CV.reset(tok)
    try:
        CV.reset(tok)
    except RuntimeError:
        return x * CV.get()
    return x


def test_used_token_raises_as_eager():
    _check(reset_twice, torch.ones(2), fullgraph=False)


def test_fullgraph_no_break():
    bcfront.capture(nested, compiling=False, fullgraph=True)(torch.ones(2))
