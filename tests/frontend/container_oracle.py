"""The oracle of the container tests (#28): a captured call against the plain one.

`check(fn, make_args)` runs `fn` natively on fresh arguments from `make_args()` and
captured (``fullgraph`` False and True, the capturing call and the cached one), and
compares what each returned or raised and the arguments' state after the call, through
`shape`: the exact type and contents of every container (a defaultdict's factory, a
deque's maxlen, a StringIO's text and position, an OrderedDict's order), so an object
that leaves a capture as a plain dict or list, or in another order, is told apart.
"""

from __future__ import annotations

import collections
import dataclasses
import io

import bcfront


def shape(x, _seen=()):
    """`x` as plain data that keeps its exact types, order and C state."""
    if id(x) in _seen:
        return "<cycle>"
    seen = (*_seen, id(x))
    t = type(x)
    if isinstance(x, collections.defaultdict):
        f = x.default_factory
        return (t, getattr(f, "__name__", f), [(shape(k), shape(v, seen)) for k, v in x.items()])
    if isinstance(x, dict):  # dict, OrderedDict, Counter: the order they hold
        return (t, [(shape(k), shape(v, seen)) for k, v in x.items()])
    if isinstance(x, collections.deque):
        return (t, x.maxlen, [shape(v, seen) for v in x])
    if isinstance(x, io.StringIO):
        return (t, x.closed) if x.closed else (t, x.getvalue(), x.tell())
    if isinstance(x, (list, tuple, set, frozenset)):
        items = sorted(x, key=repr) if isinstance(x, (set, frozenset)) else x
        return (t, [shape(v, seen) for v in items])
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (t, [(f.name, shape(getattr(x, f.name), seen)) for f in dataclasses.fields(x)])
    return (t, repr(x))


def outcome(fn, args):
    try:
        result = ("ok", shape(fn(*args)))
    except Exception as e:  # noqa: BLE001 - compared with the plain call's exception
        result = ("raise", type(e), str(e))
    return result, shape(args)


def check(fn, make_args=lambda: (), calls: int = 2) -> None:
    """`fn` captured (fullgraph False and True) behaves as `fn`, call after call."""
    for fullgraph in (False, True):
        cf = bcfront.capture(fn, fullgraph=fullgraph)
        for _ in range(calls):
            want = outcome(fn, make_args())
            got = outcome(cf, make_args())
            assert got == want, (fullgraph, got, want)


def check_sequence(fn, makers) -> None:
    """One capture of `fn` called on each argument tuple `makers` make in turn (other
    lengths, keys, factories, maxlens): each call behaves as `fn` (no stale entry)."""
    for fullgraph in (False, True):
        cf = bcfront.capture(fn, fullgraph=fullgraph)
        for make in makers:
            assert outcome(cf, make()) == outcome(fn, make()), (fullgraph, make())
