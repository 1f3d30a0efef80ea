"""A break inside a function with keyword-only parameters after a bare ``*`` goes on in
a captured continuation.

The continuation's signature is spelled from the code object; the bare ``*``
marker was read as a parameter named "" (not an identifier), so the rest of
such a function ran natively (issue #24: bert's ``inspect.signature(obj, *,
follow_wrapped=True, globals=None, ...)``).  Oracle: CPython running the same
function; counts and notes from `bcfront.explain`.
"""

from __future__ import annotations

import contextlib
import io

import pytest

import bcfront

torch = pytest.importorskip("torch")


def bare_star(x, *, scale=2, globals=None):
    y = x * scale
    print("break")
    return y + 1


def posonly_and_kwonly(x, /, k, *, scale, **extra):
    y = x * scale + k
    print("break")
    return y + len(extra)


def calls_bare_star(x):
    return bare_star(x, scale=3) * 2


def calls_posonly_and_kwonly(x):
    return posonly_and_kwonly(x, 1, scale=3, z=0) * 2


@pytest.mark.parametrize("fn", [calls_bare_star, calls_posonly_and_kwonly])
def test_the_code_after_the_break_is_captured(fn):
    x = torch.randn(3)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rep = bcfront.explain(fn, x)
        got, want = bcfront.capture(fn)(x), fn(x)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    notes = [n for f in rep.functions for n in f.notes]
    assert not any("no continuation" in n for n in notes), notes
    assert len(rep.graphs) >= 3  # before the break, after it in the callee, in the caller
