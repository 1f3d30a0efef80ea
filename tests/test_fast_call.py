"""The generated ``__call__`` of a captured function (`bcfront.fast_call`) does what the plain
loop over its entries (``CapturedFunction.__call__``) does: same entry taken, same result or
exception, same call count, misses and keyword calls handed to the loop.  Oracle: the plain
loop on the same entries, and the plain Python function.  Pure Python."""

from __future__ import annotations

import pytest

import bcfront
from bcfront.capture import CapturedFunction


def pick(x, y=10):
    if x > 2:
        return x * y
    return [x, y]


def fails(x):
    return x[0] + 1  # a TypeError for an int: raised by the region, not a miss


class Box:
    def __init__(self, k):
        self.k = k

    def scaled(self, x):
        return self.k * x


def _both(cf, *args, **kwargs):
    """The call through the generated __call__, then through the plain loop."""
    before = cf.calls
    fast = cf(*args, **kwargs)
    plain = CapturedFunction.__call__(cf, *args, **kwargs)
    assert cf.calls == before + 2
    return fast, plain


def test_a_captured_function_gets_its_own_generated_call():
    cf = bcfront.capture(pick)
    assert type(cf).__call__ is CapturedFunction.__call__  # no entry yet
    cf(3)
    assert type(cf).__call__ is not CapturedFunction.__call__
    assert isinstance(cf, CapturedFunction) and type(cf).__name__ == "CapturedFunction"
    other = bcfront.capture(pick)
    assert type(other) is not type(cf)  # each its own: one's entries are not the other's


@pytest.mark.parametrize("args", [(3,), (1,), (5, 2), (0, 0), (3,), (1,)])
def test_generated_call_and_plain_loop_agree(args):
    cf = bcfront.capture(pick)
    for a in [(3,), (1,), (5, 2)]:  # several entries, in this order
        cf(*a)
    fast, plain = _both(cf, *args)
    assert fast == plain == pick(*args)


def test_keyword_calls_go_through_the_plain_loop():
    cf = bcfront.capture(pick)
    cf(3)
    assert cf(3, y=2) == pick(3, y=2) == 6
    assert cf(x=4) == pick(x=4)


def test_an_exception_from_the_region_is_raised_not_taken_for_a_miss():
    cf = bcfront.capture(fails)
    with pytest.raises(TypeError) as native:
        fails(1)
    for _ in range(3):
        with pytest.raises(TypeError) as got:
            cf(1)
        assert str(got.value) == str(native.value)
    assert len(cf.entries) == 1
    assert cf([1]) == 2


def test_a_call_that_does_not_bind_raises_pythons_error():
    cf = bcfront.capture(pick)
    cf(3)
    with pytest.raises(TypeError) as native:
        pick(1, 2, 3)
    with pytest.raises(TypeError) as got:
        cf(1, 2, 3)
    assert str(got.value) == str(native.value)


def test_bound_methods_pass_their_self():
    b = Box(3)
    cf = bcfront.capture(b.scaled)
    for x in (1, 2, 2, 1):
        fast, plain = _both(cf, x)
        assert fast == plain == b.scaled(x)


def test_reset_goes_back_to_the_plain_loop_and_recaptures():
    cf = bcfront.capture(pick)
    cf(3)
    cf.reset()
    assert type(cf).__call__ is CapturedFunction.__call__
    assert cf(3) == pick(3) and len(cf.entries) == 1


def test_after_the_recompile_limit_calls_run_natively_and_count():
    cf = bcfront.capture(pick, recompile_limit=2)
    with pytest.warns(bcfront.report.NativeFallbackWarning):
        for x in range(3, 9):
            assert cf(x) == pick(x)
    assert len(cf.entries) == 2 and cf.calls == 6
