"""A call made natively at a graph break with ``**m`` whose keys are not all str (#30).

Natively CPython decides per callee whether such keys are allowed: ``OrderedDict(**{1: 2})``,
``functools.partial(f, **{1: 2})`` and ``SimpleNamespace`` take them, a Python function
or ``dict`` refuse them ("keywords must be strings").  At a break the region makes the call
through stand-ins of the user's frames; none of them may refuse the keys first or name
itself in the message.  The oracle is the plain function: results, exception type and
message, over repeated calls (the second and third run the cached entry), with the call
as the breaking instruction itself and after an earlier break (in the continuation).
"""

from __future__ import annotations

import collections
import functools
import types

import pytest

import bcfront

from .outcomes import quiet_outcome


def take_any(*args, **kwargs):
    return args, kwargs


def plain(x):
    return x


def at_the_break(m):
    return collections.OrderedDict(**m), len(m)


def after_a_break(m):
    print("before")  # a break; the rest is its continuation
    r = collections.OrderedDict(**m)
    return r, len(m)


def mixed_keys(m):
    print("before")
    return collections.OrderedDict(a=1, **m)


def positional_and_keywords(m, pairs):
    print("before")
    return collections.OrderedDict(*pairs, **m)


def partial_of(m):
    print("before")
    return functools.partial(take_any, 1, **m)().__repr__()


def namespace(m):
    print("before")
    return repr(types.SimpleNamespace(**m))


def dict_refuses(m):
    print("before")
    return dict(**m)


def python_function_refuses(m):
    print("before")
    return plain(**m)


def star_args_not_iterable(n):
    print("before")
    return plain(*n)


def star_kwargs_not_mapping(n):
    print("before")
    return plain(**n)


def captured_callee(m):  # a Python callee that breaks, captured on its own
    print("before")
    return inner_breaks(**m)


def inner_breaks(**kw):
    print("inner")
    return kw


def call_partial(p):  # a partial from outside holding keywords that are not str
    return p(), 1


def loop_of_calls(ms):
    out = []
    for m in ms:
        print("each")
        out.append(collections.OrderedDict(**m))
    return out


CASES = [
    (at_the_break, ({1: 2},)),
    (at_the_break, ({1: 2, "a": 3, (4, 5): None},)),
    (at_the_break, ({"a": 1},)),
    (after_a_break, ({1: 2},)),
    (after_a_break, ({None: 0, 2.5: 1},)),
    (mixed_keys, ({1: 2},)),
    (mixed_keys, ({"a": 2},)),  # duplicate keyword: CPython's message
    (positional_and_keywords, ({1: 2}, ([(3, 4)],))),
    (partial_of, ({1: 2},)),
    (namespace, ({1: 2},)),
    (dict_refuses, ({1: 2},)),
    (python_function_refuses, ({1: 2},)),
    (python_function_refuses, ({"x": 2},)),
    (star_args_not_iterable, (3,)),
    (star_kwargs_not_mapping, (3,)),
    (captured_callee, ({1: 2},)),
    (captured_callee, ({"a": 2},)),
    (call_partial, (functools.partial(take_any, **{1: 2}),)),
    (call_partial, (functools.partial(take_any, 0, **{"a": 1, 2: 3}),)),
    (call_partial, (functools.partial(collections.OrderedDict, **{1: 2}),)),
    (loop_of_calls, ([{1: 2}, {"b": 3}, {(1,): 4}],)),
]


@pytest.mark.parametrize(("fn", "args"), CASES, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_native_call_takes_what_python_takes(fn, args):
    cf = bcfront.capture(fn)
    expected = quiet_outcome(fn, *args)
    for _ in range(3):  # the first call captures, the next ones run the cached entry
        assert quiet_outcome(cf, *args) == expected
    assert cf.entries and not cf.entries[0].native, cf.entries[0].notes
