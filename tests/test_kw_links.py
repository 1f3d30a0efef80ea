"""The C cached call (`bcfront/_cfast.c`'s `DispatchBase`, armed by `bcfront.fast_call._arm`
with exact links) for roots with ``**kwargs`` and/or keyword-only parameters that all have
defaults: a call without keywords takes it (and one with keywords: `test_kw_calls.py`), and
a ``__kwdefaults__`` rebound or changed in place after capture is seen as plain Python sees
it.  Oracle: the plain Python function (same arguments, same change), and for the C call
on its own the calling convention its docstring states.  Pure Python."""

from __future__ import annotations

import pytest
from frontend.check_programs import needs_c_call

import bcfront
from bcfront import fast_call

needs_c_call(globals())


def star_kw(*a, **k):
    return [a, sorted(k.items())]


def kwonly(a, *, k=10):
    return a * k


def both(a, *rest, k=10, **kw):
    return [a, rest, k, sorted(kw.items())]


def _c_armed(cf) -> bool:
    """`cf`'s call is the C one, armed with its first entry's exact link."""
    return type(cf).__dict__["__call__"] is fast_call.DispatchBase.__call__ and cf.entries[0].link_names.exact


def _fast_calls(cf, *args, **kwargs):
    """The result of ``cf(*args, **kwargs)`` and whether it took the C call's fast way."""
    before = cf._dispatch_calls
    return cf(*args, **kwargs), cf._dispatch_calls == before + 1


def _error(fn, *args, **kwargs) -> str:
    with pytest.raises(TypeError) as raised:
        fn(*args, **kwargs)
    return str(raised.value)


@pytest.mark.parametrize(
    "fn, calls",
    [
        (star_kw, [(), (1,), (1, 2), ("a", "b", "c")]),
        (kwonly, [(2,), (3,), ("x",)]),
        (both, [(1,), (1, 2), (1, 2, 3)]),
    ],
)
def test_a_positional_call_takes_the_c_call(fn, calls):
    cf = bcfront.capture(fn)
    for args in calls:  # one entry each
        cf(*args)
    assert _c_armed(cf)
    for args in calls * 2:
        assert _fast_calls(cf, *args) == (fn(*args), True)
    assert len(cf.entries) == len(calls) and cf.calls == 3 * len(calls)


@pytest.mark.parametrize(
    "fn, args, kwargs",
    [
        (star_kw, (1,), {"z": 2}),
        (star_kw, (), {"a": 1}),
        (kwonly, (2,), {"k": 3}),
        (kwonly, (), {"a": 2, "k": 3}),
        (both, (1, 2), {"k": 3, "z": 4}),
        (both, (1,), {"z": 4}),
        (both, (), {"a": 1}),
    ],
)
def test_a_call_with_keywords_takes_the_c_call_too(fn, args, kwargs):
    cf = bcfront.capture(fn)
    cf(1)
    assert _c_armed(cf)
    for _ in range(2):
        assert _fast_calls(cf, *args, **kwargs) == (fn(*args, **kwargs), True)
    assert _fast_calls(cf, 1) == (fn(1), True)  # armed still


@pytest.mark.parametrize("args, kwargs", [((), {}), ((1,), {"z": 2}), ((1, 2), {}), ((1,), {"k": 1, "a": 2})])
def test_a_call_that_does_not_bind_raises_pythons_error(args, kwargs):
    cf = bcfront.capture(kwonly)
    cf(1)
    assert _error(cf, *args, **kwargs) == _error(kwonly, *args, **kwargs)


def test_a_bound_method_with_a_keyword_only_default():
    class Box:
        def m(self, x, *, scale=2):
            return x * scale

    box = Box()
    cf = bcfront.capture(box.m)
    cf(1)
    assert _c_armed(cf)
    assert [_fast_calls(cf, 3), _fast_calls(cf, 3, scale=5)] == [(6, True), (15, True)]


def _fresh():
    def f(a, *, k=10, **kw):
        return [a * k, sorted(kw)]

    return f


def test_kwdefaults_rebound_after_capture_are_used():
    f, g = _fresh(), _fresh()
    cf = bcfront.capture(f)
    assert [cf(2), cf(2)] == [g(2), g(2)]
    f.__kwdefaults__ = {"k": 100}
    g.__kwdefaults__ = {"k": 100}
    result, fast = _fast_calls(cf, 2)
    assert (result, fast) == (g(2), False)  # the C call sees the new dict: the plain way
    assert [cf(2), cf(2, k=3)] == [g(2), g(2, k=3)]


def test_kwdefaults_rebound_to_an_equal_dict_take_the_new_one():
    def f(x, *, acc=[]):  # noqa: B006 - the shared default is the point
        acc.append(x)
        return len(acc)

    def g(x, *, acc=[]):  # noqa: B006
        acc.append(x)
        return len(acc)

    cf = bcfront.capture(f)
    assert [cf(1), cf(1), cf(1)] == [g(1), g(1), g(1)] == [1, 2, 3]
    f.__kwdefaults__ = {"acc": []}
    g.__kwdefaults__ = {"acc": []}
    assert [cf(1), cf(1)] == [g(1), g(1)] == [1, 2]
    assert f.__kwdefaults__["acc"] == [1, 1]


def test_kwdefaults_changed_in_place_are_used():
    f, g = _fresh(), _fresh()
    cf = bcfront.capture(f)
    assert [cf(2), cf(2)] == [g(2), g(2)] == [[20, []], [20, []]]
    f.__kwdefaults__["k"] = 5  # the same dict: the C call's identity check passes
    g.__kwdefaults__["k"] = 5
    assert [cf(2), cf(2), cf(2, k=3)] == [g(2), g(2), g(2, k=3)] == [[10, []], [10, []], [6, []]]
    assert _c_armed(cf) and _fast_calls(cf, 2) == ([10, []], True)
    f.__kwdefaults__["k"] = 10
    g.__kwdefaults__["k"] = 10
    assert _fast_calls(cf, 2) == (g(2), True)  # the first entry again


def test_a_kwdefault_removed_in_place_makes_the_call_fail_as_pythons():
    f, g = _fresh(), _fresh()
    cf = bcfront.capture(f)
    cf(2)
    del f.__kwdefaults__["k"]
    del g.__kwdefaults__["k"]
    assert _error(cf, 2) == _error(g, 2)
    assert cf(2, k=3) == g(2, k=3)


def test_kwdefaults_given_to_the_root_after_capture_are_used():
    def f(a, *, k=None):
        return a if k is None else (a, k)

    cf = bcfront.capture(f)
    assert cf(1) == 1
    f.__kwdefaults__ = None  # the links were made with a default: now k must be passed
    assert _error(cf, 1) == _error(f, 1)
    f.__kwdefaults__ = {"k": 3}
    assert cf(1) == f(1) == (1, 3)


def required_kwonly(a, *, k):
    return a + k


def test_a_keyword_only_parameter_without_a_default_gets_no_c_call():
    cf = bcfront.capture(required_kwonly)
    assert cf(1, k=2) == required_kwonly(1, k=2) == 3
    assert not cf.entries[0].link_names.exact
    assert cf._dispatch_pick(1) is None  # the C call is not armed: it goes the slow way
    assert [cf(1, k=2), cf(2, k=5)] == [3, 7]
    assert _error(cf, 1) == _error(required_kwonly, 1)


# -- the C call on its own ---------------------------------------------------------------------


class Host(fast_call.DispatchBase):
    """A subclass whose ``__call__`` is the C call, as `fast_call._arm` makes one."""

    __call__ = fast_call.DispatchBase.__call__


def first(*args):
    return ("fast", *args)


def slow(self, *args, **kwargs):
    return ("slow", args, kwargs)


def test_a_root_whose_kwdefaults_changed_goes_the_slow_way():
    def f(a, *, k=1):
        return a

    h = Host()
    h._dispatch_set(first, f, f.__code__, None, slow, [0], (), 1, 1, f.__kwdefaults__)
    assert h(1)[0] == "fast"
    f.__kwdefaults__["k"] = 2  # in place: the same dict, which the links share
    assert h(1)[0] == "fast"
    f.__kwdefaults__ = dict(f.__kwdefaults__)  # equal, but another dict
    assert h(1)[0] == "slow"
    f.__kwdefaults__ = None
    assert h(1)[0] == "slow"


def test_armed_without_kwdefaults_a_root_given_some_goes_the_slow_way():
    def f(a, *, k):
        return a

    h = Host()
    h._dispatch_set(first, f, f.__code__, None, slow, [0], (), 1)
    assert h(1)[0] == "fast"
    f.__kwdefaults__ = {"k": 1}
    assert h(1)[0] == "slow"


def test_kwdefaults_not_a_dict_are_refused():
    def f(a, *, k=1):
        return a

    h = Host()
    with pytest.raises(TypeError, match="kwdefaults"):
        h._dispatch_set(first, f, f.__code__, None, slow, [0], (), 1, 1, [1])
    with pytest.raises(TypeError, match="not set up"):  # refused: nothing was set
        h(1)
