"""The C call of a captured function (`bcfront/_cfast.c`'s `DispatchBase`), on its own:
which calls take the fast way (the armed first link) and which the slow way (the plain
call), the count, and that re-arming during a call or a cycle through its fields is safe.
Oracle: the calling convention its docstring states, spelled out per case in Python.
`tests/test_fast_call.py` runs the captured-function tests through it."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest
from frontend.check_programs import needs_c_call

from bcfront import fast_call

needs_c_call(globals())


class Host(fast_call.DispatchBase):
    """A subclass whose ``__call__`` is the C call, as `fast_call._arm` makes one."""

    __call__ = fast_call.DispatchBase.__call__


def root(a, b):
    return ("root", a, b)


def first(*args):
    return ("fast", *args)


def slow(self, *args, **kwargs):
    return ("slow", type(self).__name__, args, kwargs)


def armed(nargs=2, self_args=(), on=None, most=None):
    h = Host()
    on = on if on is not None else [0]
    h._dispatch_set(first, root, root.__code__, None, slow, on, self_args, nargs, most or nargs)
    return h


def test_a_call_of_the_armed_shape_takes_the_first_link_and_counts():
    h = armed()
    assert h(1, 2) == ("fast", 1, 2)
    assert h(3, 4) == ("fast", 3, 4)
    assert h._dispatch_calls == 2


def test_a_bound_self_goes_first():
    h = armed(nargs=1, self_args=("me",))
    assert h(7) == ("fast", "me", 7)


def test_many_arguments_with_a_bound_self():
    args = tuple(range(12))  # more than the C stack's small buffer
    h = armed(nargs=12, self_args=("me",))
    assert h(*args) == ("fast", "me", *args)


def test_a_root_taking_star_args_takes_any_count_from_the_least():
    h = armed(nargs=1, most=sys.maxsize)
    assert [h(1), h(1, 2, 3)] == [("fast", 1), ("fast", 1, 2, 3)]
    assert h() == ("slow", "Host", (), {})
    assert h._dispatch_calls == 2


@pytest.mark.parametrize(
    "args, kwargs", [((1,), {}), ((1, 2, 3), {}), ((1, 2), {"k": 3}), ((), {"a": 1, "b": 2})]
)
def test_other_shapes_go_the_slow_way_uncounted(args, kwargs):
    h = armed()
    assert h(*args, **kwargs) == ("slow", "Host", args, kwargs)
    assert h._dispatch_calls == 0


def test_while_measuring_calls_go_the_slow_way():
    on = [0]
    h = armed(on=on)
    on[0] = 1
    assert h(1, 2)[0] == "slow"
    on[0] = 0
    assert h(1, 2)[0] == "fast"


def test_a_root_whose_code_changed_goes_the_slow_way():
    def f(a, b):
        return a

    def g(a, b):
        return b

    h = Host()
    h._dispatch_set(first, f, f.__code__, None, slow, [0], (), 2)
    assert h(1, 2)[0] == "fast"
    f.__code__ = g.__code__
    assert h(1, 2)[0] == "slow"


def test_a_root_whose_defaults_changed_goes_the_slow_way():
    def f(a, b=1):
        return a

    h = Host()
    h._dispatch_set(first, f, f.__code__, f.__defaults__, slow, [0], (), 1, 2)
    assert [h(1)[0], h(1, 2)[0]] == ["fast", "fast"]
    f.__defaults__ = (int("1"),)  # equal, but another tuple: the links hold the old one
    assert [h(1)[0], h(1, 2)[0]] == ["slow", "slow"]


def test_disarmed_it_goes_the_slow_way_and_never_set_it_fails():
    h = armed()
    h._dispatch_set(None)
    assert h(1, 2)[0] == "slow"
    with pytest.raises(TypeError, match="not set up"):
        Host()(1, 2)


def test_rearming_during_a_call_keeps_the_running_link_alive():
    h = Host()

    def second(*args):
        return ("second", *args)

    def rearm(*args):  # the only reference to this function is h's, until it re-arms
        h._dispatch_set(second, root, root.__code__, None, slow, [0], (), 2)
        gc.collect()
        return ("rearmed", *args)

    h._dispatch_set(rearm, root, root.__code__, None, slow, [0], (), 2)
    del rearm
    assert h(1, 2) == ("rearmed", 1, 2)
    assert h(1, 2) == ("second", 1, 2)


@pytest.mark.parametrize(
    "args, error",
    [
        ((first, len, None, None, slow, [0], (), 1), TypeError),  # root not a Python function
        ((first, root, root.__code__, None, slow, [], (), 1), TypeError),  # no flag in `on`
        ((first, root, root.__code__, None, slow, [0], ("a", "b"), 1), ValueError),  # two selves
        ((first, root, root.__code__, None, slow, [0], (), -1), ValueError),
        ((first, root, root.__code__, None, slow, [0], (), 2, 1), ValueError),  # most < least
        ((first, root, root.__code__, None, 3, [0], (), 1), TypeError),  # slow not callable
        ((first,), TypeError),
        ((first, root, root.__code__, [1], slow, [0], (), 1), TypeError),  # defaults not a tuple
    ],
)
def test_bad_arming_arguments_are_refused(args, error):
    with pytest.raises(error, match="_dispatch_set"):
        Host()._dispatch_set(*args)


def test_a_cycle_through_its_fields_is_collected():
    h = Host()
    h._dispatch_set(first, root, root.__code__, None, slow, [0], (h,), 1)  # h holds itself as its bound self
    ref = weakref.ref(h)
    del h
    gc.collect()
    assert ref() is None


def test_a_link_returning_raised_makes_the_call_raise_with_implicit_chaining():
    """``raised(exc)`` returned by the link: the call raises `exc` with its traceback, and
    chains it to the exception the caller is handling, as a ``raise`` in the link would."""
    from bcfront.cfast import C

    made = KeyError("k")

    def raising_link(*args):
        return C.raised(made, True)

    h = Host()
    h._dispatch_set(raising_link, root, root.__code__, None, slow, [0], (), 2, 2)
    with pytest.raises(KeyError) as info:
        h(1, 2)
    assert info.value is made and made.__context__ is None
    try:
        raise ZeroDivisionError
    except ZeroDivisionError as outer:
        with pytest.raises(KeyError):
            h(1, 2)
        assert made.__context__ is outer
    assert h._dispatch_calls == 2


def test_raised_takes_only_an_exception():
    from bcfront.cfast import C

    with pytest.raises(TypeError, match="raised: expected an exception, got int"):
        C.raised(1, True)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        C.raised(KeyError())


def test_a_link_returning_raised_without_chain_keeps_the_context_it_has():
    from bcfront.cfast import C

    inner = ValueError("inner")
    made = KeyError("k")
    made.__context__ = inner

    def raising_link(*args):
        return C.raised(made, False)

    h = Host()
    h._dispatch_set(raising_link, root, root.__code__, None, slow, [0], (), 2, 2)
    try:
        raise ZeroDivisionError
    except ZeroDivisionError:
        with pytest.raises(KeyError) as info:
            h(1, 2)
    assert info.value is made and made.__context__ is inner


def test_the_vectorcall_takes_the_fast_way_and_follows_a_new_call_method():
    class Own(Host):
        __call__ = fast_call.DispatchBase.__call__

    assert fast_call.C._vectorcall_class(Own) is True
    h = Own()
    h._dispatch_set(first, root, root.__code__, None, slow, [0], (), 2, 2)
    assert h(1, 2) == ("fast", 1, 2) and h._dispatch_calls == 1  # a vectorcall: no tuple
    assert h(1, b=2) == ("slow", "Own", (1,), {"b": 2})  # keywords: as tp_call takes them
    assert h(*(1, 2)) == ("fast", 1, 2)
    Own.__call__ = lambda self, *a, **k: ("replaced", a, k)  # the flag stays set in 3.11
    assert h(1, 2) == ("replaced", (1, 2), {})
    assert h(1, b=2) == ("replaced", (1,), {"b": 2})
    assert h._dispatch_calls == 2


def test_only_a_class_calling_the_c_call_gets_the_vectorcall():
    class Plain(fast_call.DispatchBase):
        def __call__(self, *args):
            return args

    assert fast_call.C._vectorcall_class(Plain) is False
    with pytest.raises(TypeError, match="DispatchBase"):
        fast_call.C._vectorcall_class(int)


def test_set_to_its_slow_way_alone_every_call_goes_there():
    """``_dispatch_set(None, slow)``: not armed, the slow way set (a captured function's
    first call, before any entry, goes so through the C call)."""
    h = Host()
    h._dispatch_set(None, slow)
    assert h(1, 2) == h(1, 2) == ("slow", "Host", (1, 2), {})
    assert h(1, k=3) == ("slow", "Host", (1,), {"k": 3})
    assert h._dispatch_calls == 0 and h._dispatch_pick(1, 2) is None
    with pytest.raises(TypeError, match="slow must be callable"):
        h._dispatch_set(None, 5)
    armed_host = armed()
    armed_host._dispatch_set(None, slow)  # disarms it
    assert armed_host(1, 2) == ("slow", "Host", (1, 2), {})
