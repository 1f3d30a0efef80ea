"""A size marked with `bcfront.mark_dynamic` that the code specializes is never silent.

By default the result stays right and the size is specialized (each size is a capture
of its own): a note in explain and a `DynamicDimSpecializedWarning`.  Under
``fullgraph=True`` the capture raises `DynamicDimSpecializedError`, as torch does for a
violated ``mark_dynamic``.  `maybe_mark_dynamic` specializes silently.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.shapes import DynamicDimSpecializedError, DynamicDimSpecializedWarning  # noqa: E402


def _loop(x):
    return sum(x[i] for i in range(x.shape[0]))  # the size is a loop bound: specialized


def _marked(n, how=bcfront.mark_dynamic):
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(n))
    how(x, 0)
    return x


def test_a_specialized_mark_warns_and_stays_right():
    cf = bcfront.capture(_loop)
    with pytest.warns(DynamicDimSpecializedWarning, match=r"L\['x'\]\.shape\[0\] was marked dynamic"):
        x = _marked(4)
        torch.testing.assert_close(cf(x), _loop(x))
    for n in (5, 6):
        x = _marked(n)
        with pytest.warns(DynamicDimSpecializedWarning, match=f"specialized to {n}"):
            torch.testing.assert_close(cf(x), _loop(x))
    assert len(cf.entries) == 3


def test_a_specialized_mark_raises_under_fullgraph():
    cf = bcfront.capture(_loop, fullgraph=True)
    with pytest.raises(DynamicDimSpecializedError, match=r"shape\[0\] was marked dynamic"):
        cf(_marked(4))
    # a size the code keeps symbolic is fine under fullgraph
    ok = bcfront.capture(lambda x: x * x.shape[0], fullgraph=True)
    for n in (3, 4, 9):
        x = _marked(n)
        torch.testing.assert_close(ok(x), x * n)
    assert len(ok.entries) == 1


def test_maybe_mark_dynamic_specializes_silently():
    cf = bcfront.capture(_loop, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DynamicDimSpecializedWarning)
        x = _marked(4, bcfront.maybe_mark_dynamic)
        torch.testing.assert_close(cf(x), _loop(x))
