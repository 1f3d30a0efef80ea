"""A cached call with keyword arguments takes the C call (`bcfront/_cfast.c`'s
`DispatchBase`, armed by `bcfront.fast_call._arm`): the first exact link gets the keywords
and binds them as the root does (`links.keywords_bind`), errors included; a call whose
admission fails -- the root's ``__defaults__``, ``__kwdefaults__``, ``__code__`` or
``__qualname__`` changed, a measured call, links whose parameters are not the root's own
-- goes the plain way.  Oracle: the plain Python function (same arguments, same change:
result, or the TypeError's message), and whether the C call took it
(``_dispatch_calls``).  Pure Python."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest
from frontend.check_programs import needs_c_call

import bcfront
from bcfront import fast_call
from bcfront.frontend.regions import links

needs_c_call(globals())


def _fresh():
    """A new `f(x, k=1)` each time: a test may change its attributes."""

    def f(x, k=1):
        return [x, k]

    return f


def kwonly(a, *, k=10):
    return a * k


def star_kw(a, **kw):
    return [a, sorted(kw.items())]


def mixed(a, b=2, *rest, k=10, **kw):
    return [a, b, rest, k, sorted(kw.items())]


def posonly(x, /, k=1):
    return [x, k]


def posonly_kw(x, /, **kw):
    return [x, sorted(kw.items())]


def _taken(cf, *args, **kwargs):
    """``cf(*args, **kwargs)``'s result, or its TypeError's message, and whether the C call
    took the fast way."""
    before = cf._dispatch_calls
    try:
        result = cf(*args, **kwargs)
    except TypeError as e:
        result = f"TypeError: {e}"
    return result, cf._dispatch_calls == before + 1


def _native(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except TypeError as e:
        return f"TypeError: {e}"


def _armed(fn, *first_args, **first_kwargs):
    """`fn` captured, called once, its call the C one taking keywords."""
    cf = bcfront.capture(fn)
    cf(*first_args, **first_kwargs)
    assert type(cf).__dict__["__call__"] is fast_call.DispatchBase.__call__
    assert all(e.link_names.keywords_bind for e in cf.entries)
    return cf


CALLS = [
    # a keyword for a positional parameter
    (_fresh(), (1,), [((1,), {"k": 3}), ((), {"x": 2}), ((), {"k": 5, "x": 2}), ((2,), {"k": 1})]),
    # for a keyword-only one
    (kwonly, (2,), [((2,), {"k": 3}), ((), {"a": 4, "k": 2}), ((), {"a": 5})]),
    # into **kwargs
    (star_kw, (1,), [((1,), {"z": 2}), ((), {"a": 1, "b": 2}), ((3,), {"k": 1, "j": 0})]),
    # a mix: positional, *rest, keyword-only and **kwargs
    (mixed, (1,), [((1, 2, 3), {"k": 4, "z": 5}), ((1,), {"b": 7}), ((), {"a": 0, "k": 1, "q": 2})]),
    # positional-only, with **kwargs taking its name
    (posonly_kw, (1,), [((1,), {"x": 2}), ((3,), {"y": 4})]),
    (posonly, (1,), [((1,), {"k": 2}), ((4,), {"k": 4})]),
]


@pytest.mark.parametrize("fn, first, calls", CALLS)
def test_a_keyword_call_takes_the_c_call(fn, first, calls):
    cf = _armed(fn, *first)
    for args, kwargs in calls * 2:  # the second time, hits
        assert _taken(cf, *args, **kwargs) == (_native(fn, *args, **kwargs), True)


ERRORS = [
    (_fresh(), (), {"k": 1}),  # a missing required argument
    (_fresh(), (1,), {"z": 2}),  # an unexpected keyword
    (_fresh(), (1,), {"x": 2}),  # a duplicate: positional and keyword
    (_fresh(), (1, 2, 3), {"k": 4}),  # too many positional arguments, and a keyword
    (_fresh(), (1, 2), {"k": 4}),
    (kwonly, (1, 2), {"k": 3}),
    (kwonly, (), {"k": 3}),
    (posonly, (), {"x": 1}),  # positional-only, passed by keyword
    (posonly, (), {"x": 1, "k": 2}),
    (mixed, (1,), {"a": 1}),
]


@pytest.mark.parametrize("fn, args, kwargs", ERRORS)
def test_a_keyword_call_that_does_not_bind_raises_pythons_error(fn, args, kwargs):
    cf = _armed(fn, 1)
    expected = _native(fn, *args, **kwargs)
    assert expected.startswith("TypeError: ")
    assert _taken(cf, *args, **kwargs) == (expected, True)  # the link's binding raised it
    assert len(cf.entries) == 1


def test_defaults_rebound_send_a_keyword_call_the_plain_way():
    f, g = _fresh(), _fresh()
    cf = _armed(f, 1)
    assert _taken(cf, x=1) == (g(x=1), True)
    f.__defaults__ = g.__defaults__ = (7,)
    assert _taken(cf, x=1) == (g(x=1), False)  # the C call sees another tuple
    assert [cf(x=1), cf(1, k=2)] == [g(x=1), g(1, k=2)]


def test_kwdefaults_rebound_send_a_keyword_call_the_plain_way():
    def make():
        def f(a, *, k=10, **kw):
            return [a * k, sorted(kw)]

        return f

    f, g = make(), make()
    cf = _armed(f, 2)
    assert _taken(cf, 2, z=1) == (g(2, z=1), True)
    f.__kwdefaults__ = {"k": 100}
    g.__kwdefaults__ = {"k": 100}
    assert _taken(cf, 2, z=1) == (g(2, z=1), False)
    assert [cf(2, z=1), cf(a=2), cf(2, k=3)] == [g(2, z=1), g(a=2), g(2, k=3)]


def test_a_new_code_sends_a_keyword_call_the_plain_way():
    def f(x, k=1):
        return [x, k]

    def g(x, k=1):
        return [k, x]

    cf = _armed(f, 1)
    f.__code__ = g.__code__
    assert _taken(cf, 1, k=2) == (g(1, k=2), False)
    assert _error_of(cf, z=1) == _error_of(f, z=1)  # f as it is now: named f, with g's code


def _error_of(fn, *args, **kwargs) -> str:
    with pytest.raises(TypeError) as raised:
        fn(*args, **kwargs)
    return str(raised.value)


class Box:
    def __init__(self, scale):
        self.scale = scale

    def m(self, x, *, shift=0, **kw):
        return [self.scale * x + shift, sorted(kw)]


def test_a_bound_method_passes_its_self_and_the_keywords():
    box = Box(3)
    cf = _armed(box.m, 1)
    calls = [((2,), {"shift": 1}), ((), {"x": 4}), ((1,), {"z": 0}), ((), {"x": 1, "shift": 2})]
    for args, kwargs in calls * 2:
        assert _taken(cf, *args, **kwargs) == (_native(box.m, *args, **kwargs), True)
    for args, kwargs in [((), {"shift": 1}), ((1,), {"self": 2}), ((1, 2), {"shift": 1})]:
        expected = _native(box.m, *args, **kwargs)
        assert expected.startswith("TypeError: ")
        assert _taken(cf, *args, **kwargs) == (expected, True)


def test_a_renamed_function_sends_a_keyword_call_the_plain_way():
    f, g = _fresh(), _fresh()
    cf = _armed(f, 1)
    f.__qualname__ = g.__qualname__ = "Other"
    f.__name__ = g.__name__ = "other"
    assert _native(g, k=1) == "TypeError: Other() missing 1 required positional argument: 'x'"
    for args, kwargs in [((), {"k": 1}), ((1,), {"z": 2}), ((1,), {"x": 1})]:
        assert _taken(cf, *args, **kwargs) == (_native(g, *args, **kwargs), False)
    assert _taken(cf, 1, k=2) == (g(1, k=2), False)
    assert _taken(cf, 1) == (g(1), True)  # a positional call binds: no name in it


def test_a_measured_keyword_call_goes_the_plain_way_and_is_timed():
    f = _fresh()
    cf = _armed(f, 1)
    with bcfront.explain.collect(count_ops=False):
        assert _taken(cf, 1, k=1) == (f(1, k=1), False)
    assert _taken(cf, 1, k=1) == (f(1, k=1), True)
    assert cf.timed_calls == 1


def by_value(n, k=1):
    return n * 10 + k


def test_a_keyword_call_with_the_keyed_table_armed_starts_at_the_first_link():
    cf = bcfront.capture(by_value, dynamic=False)  # one entry per int: keyed
    for n in (1, 2, 3):
        cf(n)
    assert len(cf.entries) == 3 and cf._dispatch_pick(3) is not cf.entries[0].link  # keyed
    for args, kwargs in [((3,), {"k": 5}), ((), {"n": 2}), ((), {"n": 3, "k": 0}), ((1,), {"k": 2})] * 2:
        assert _taken(cf, *args, **kwargs) == (by_value(*args, **kwargs), True)
    assert _taken(cf, 1, k=1, z=0) == (_native(by_value, 1, k=1, z=0), True)
    assert _taken(cf, 4, k=1) == (by_value(4, k=1), True)  # a miss, from the last link
    assert cf(4) == by_value(4) and len(cf.entries) >= 4


def test_a_miss_from_a_keyword_call_passes_the_keywords_on():
    cf = _armed(mixed, 1)
    seen = []
    miss = cf._miss

    def spy(args, kwargs):
        seen.append((args, kwargs))
        return miss(args, kwargs)

    cf._miss = spy
    assert _taken(cf, "s", "t", 3, k=4, z=5) == (mixed("s", "t", 3, k=4, z=5), True)
    assert seen == [(("s", "t", 3), {"k": 4, "z": 5})]


def _inner_codes(fn) -> list[types.CodeType]:
    return [c for c in fn.__code__.co_consts if isinstance(c, types.CodeType)]


def test_compiler_made_parameters_do_not_bind_keywords():
    def outer():
        return [y for y in range(3)], (y for y in range(3))

    codes = _inner_codes(outer)  # 3.12+: the list comprehension is inlined, the generator not
    assert all(c.co_varnames[0] == ".0" for c in codes)  # the iterator: positional or keyword

    def stand_in(*___args):  # what a link takes for it
        return ___args

    assert not any(links.keywords_bind(stand_in.__code__, c) for c in codes)
    for code in codes:
        if code.co_flags & links.GENERATOR_FLAGS:
            continue  # no link
        cf = bcfront.capture(types.FunctionType(code, {}))
        assert cf(iter([1, 2])) == [1, 2]
        assert cf.entries[0].link_names.exact and not cf.entries[0].link_names.keywords_bind


@pytest.mark.parametrize(
    "root, link, same",
    [
        ("def f(x, k=1): pass", "def f(x, k=1): pass", True),
        ("def f(x, k=1): pass", "def f(y, k=1): pass", False),  # another name
        ("def f(x, /, k=1): pass", "def f(x, k=1): pass", False),  # positional-only
        ("def f(x, *, k=1): pass", "def f(x, k=1): pass", False),  # keyword-only
        ("def f(x, **kw): pass", "def f(x, **other): pass", True),  # never named by a call
        ("def f(x, *a): pass", "def f(x, **a): pass", False),
        ("def f(x): pass", "def f(*___args): pass", False),
    ],
)
def test_keywords_bind_where_the_parameters_are_the_roots_own(root, link, same):
    def code(src):
        ns: dict = {}
        exec(src, ns)
        return ns["f"].__code__

    assert links.keywords_bind(code(link), code(root)) is same


def test_pure_python_keyword_calls_agree_with_python():
    script = (
        "import bcfront\n"
        "from bcfront import fast_call\n"
        "def f(x, *, k=1, **kw): return [x, k, sorted(kw)]\n"
        "cf = bcfront.capture(f)\n"
        "calls = [((1,), {}), ((1,), {'k': 2}), ((), {'x': 3, 'z': 4}), ((1,), {'k': 2})]\n"
        "def run(fn, a, k):\n"
        "    try: return fn(*a, **k)\n"
        "    except TypeError as e: return str(e)\n"
        "calls += [((), {'k': 1}), ((1,), {'x': 2}), ((1, 2), {})]\n"
        "assert [run(cf, a, k) for a, k in calls] == [run(f, a, k) for a, k in calls]\n"
        "assert not fast_call.HAVE_C and cf._dispatch_calls == 0\n"
        "print('ok')\n"
    )
    env = {**os.environ, "BCFRONT_PURE_PYTHON": "1"}
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# -- the C call on its own ---------------------------------------------------------------------


class Host(fast_call.DispatchBase):
    """A subclass whose ``__call__`` is the C call, as `fast_call._arm` makes one."""

    __call__ = fast_call.DispatchBase.__call__


def slow(self, *args, **kwargs):
    return ("slow", args, kwargs)


def _root_and_first():
    def root(a, b, k=1):
        return a

    def first(*args, **kwargs):
        return ("fast", args, kwargs)

    first.__qualname__ = root.__qualname__
    return root, first


@pytest.mark.parametrize("keywords", [True, False])
def test_the_c_call_passes_keywords_where_armed_so(keywords):
    root, first = _root_and_first()
    h = Host()
    h._dispatch_set(first, root, root.__code__, root.__defaults__, slow, [0], (), 2, 3, None, keywords)
    way = "fast" if keywords else "slow"
    assert h(1, k=2) == (way, (1,), {"k": 2})  # too few positional arguments: the link binds
    assert h(1, 2, 3, 4, k=2) == (way, (1, 2, 3, 4), {"k": 2})  # too many: so it does
    assert h(1) == ("slow", (1,), {})  # no keywords: the count checks still apply
    assert h(1, 2) == ("fast", (1, 2), {})


def test_the_c_call_passes_keywords_after_its_self_arg():
    root, first = _root_and_first()
    h = Host()
    h._dispatch_set(first, root, root.__code__, root.__defaults__, slow, [0], ("me",), 1, 2, None, True)
    assert h(k=2) == ("fast", ("me",), {"k": 2})
    assert h(1, 2, 3, b=4) == ("fast", ("me", 1, 2, 3), {"b": 4})


def test_the_c_call_sends_keywords_the_slow_way_once_the_root_is_renamed():
    root, first = _root_and_first()
    h = Host()
    h._dispatch_set(first, root, root.__code__, root.__defaults__, slow, [0], (), 2, 3, None, True)
    root.__qualname__ = "Other"
    assert h(1, k=2) == ("slow", (1,), {"k": 2})
    assert h(1, 2) == ("fast", (1, 2), {})
    on = [1]
    h._dispatch_set(first, root, root.__code__, root.__defaults__, slow, on, (), 2, 3, None, True)
    root.__qualname__ = first.__qualname__
    assert h(1, k=2) == ("slow", (1,), {"k": 2})  # measuring
    on[0] = 0
    assert h(1, k=2) == ("fast", (1,), {"k": 2})
