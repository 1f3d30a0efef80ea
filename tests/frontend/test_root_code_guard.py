"""The captured function's own ``__code__``, ``__defaults__`` and ``__kwdefaults__`` replaced in
place (what IPython's autoreload does) are seen by the next call.  Oracle: the plain function
after the same change.  Pure Python.
"""

from __future__ import annotations

import bcfront


def _fresh():
    def f(a, b=1):
        return a + b

    return f


def test_code_replaced():
    f = _fresh()
    cf = bcfront.capture(f)
    assert cf(2) == f(2) == 3
    f.__code__ = (lambda a, b=1: a - b).__code__
    assert cf(2) == f(2) == 1


def test_code_replaced_with_another_signature():
    f = _fresh()
    cf = bcfront.capture(f)
    assert cf(2) == f(2)
    f.__code__ = (lambda a, b, c: a * b * c).__code__
    f.__defaults__ = None
    assert cf(2, 3, 4) == f(2, 3, 4) == 24


def test_code_replaced_back_and_forth():
    f = _fresh()
    old = f.__code__
    cf = bcfront.capture(f)
    new = (lambda a, b=1: a * 10 + b).__code__
    for code in (old, new, old, new):
        f.__code__ = code
        assert cf(4) == f(4)


def test_defaults_replaced_and_added():
    def g(a, *, k=None):
        return a if k is None else (a, k)

    cg = bcfront.capture(g)
    assert cg(1) == g(1) == 1
    g.__kwdefaults__ = {"k": 3}
    assert cg(1) == g(1) == (1, 3)
    f = _fresh()
    cf = bcfront.capture(f)
    assert cf(1) == f(1)
    f.__defaults__ = (7,)
    assert cf(1) == f(1) == 8


def test_unchanged_function_does_not_recompile():
    f = _fresh()
    cf = bcfront.capture(f)
    for _ in range(3):
        assert cf(2) == f(2)
    assert len(cf._entries) == 1
