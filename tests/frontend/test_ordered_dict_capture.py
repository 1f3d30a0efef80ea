"""``collections.OrderedDict`` captured whole (#28): ``move_to_end``, ``popitem`` from
either end, order-sensitive equality, made in the function or passed in, against plain
Python (`container_oracle` compares the order too)."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from .container_oracle import check


def reorder(keys):
    o = OrderedDict()
    for k in keys:
        o[k] = k * 2
    o.move_to_end(keys[0])
    o.move_to_end(keys[-1], last=False)
    first = o.popitem(last=False)
    last = o.popitem()
    return o, first, last, list(o), o == OrderedDict(reversed(list(o.items()))), o == dict(o)


def lru(keys):
    """A tiny LRU cache of size 2, the idiom OrderedDict is for."""
    cache, evicted = OrderedDict(), []
    for k in keys:
        if k in cache:
            cache.move_to_end(k)
            continue
        cache[k] = str(k)
        if len(cache) > 2:
            evicted.append(cache.popitem(last=False))
    return cache, evicted


def errors(k):
    o = OrderedDict(a=1)
    out = []
    for op in (lambda: o.move_to_end(k), lambda: (o.popitem(), o.popitem())):
        try:
            op()
        except KeyError as e:
            out.append(("KeyError", e.args))
    return out


@pytest.mark.parametrize(
    "fn, args",
    [
        (reorder, ([1, 2, 3, 4],)),
        (reorder, (["x", "y", "z"],)),
        (lru, ([1, 2, 1, 3, 4, 3],)),
        (errors, ("zz",)),
    ],
    ids=lambda a: getattr(a, "__name__", repr(a)),
)
def test_made_in_the_function(fn, args):
    check(fn, lambda: args)


def touch_outside(o):
    o.move_to_end("a")
    o["n"] = len(o)
    return o.popitem(last=False), list(o)


def test_passed_in():
    check(touch_outside, lambda: (OrderedDict(a=1, b=2, c=3),), calls=3)
