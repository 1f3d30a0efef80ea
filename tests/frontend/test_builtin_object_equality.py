"""``==``/``!=``/``<`` of outside objects of builtin types with their own C comparison (#30).

``bytearray``, ``slice``, ``memoryview``, a mappingproxy and the dict views compare by
value in C; an outside object of such a type that no model reads must not fall back to
``object``'s identity comparison (that gave ``bytearray(b"a") == bytearray(b"a")`` False).
The oracle is the plain function, over calls that change the answer.
"""

from __future__ import annotations

import collections
import types

import pytest

import bcfront


def compare(x, y):
    return x == y, x != y


def order(x, y):
    return x < y, x <= y


D = {"a": 1}
OD = collections.OrderedDict(a=1)

PAIRS = [
    (bytearray(b"a"), bytearray(b"a")),
    (bytearray(b"a"), bytearray(b"b")),
    (slice(1, 2), slice(1, 2)),
    (memoryview(b"ab"), memoryview(b"ab")),
    (D.keys(), {"a"}),
    (D.keys(), D.keys()),
    (D.items(), {("a", 1)}),
    (OD.keys(), {"a"}),
    (OD.items(), {("a", 1)}),
    (types.MappingProxyType(D), {"a": 1}),
    ({"a": 1}, types.MappingProxyType(D)),
    (types.MappingProxyType(D), types.MappingProxyType(dict(D))),
    (len, len),
    (len, abs),
]


@pytest.mark.parametrize(("x", "y"), PAIRS, ids=lambda v: type(v).__name__)
def test_equality_is_python_s(x, y):
    cf = bcfront.capture(compare)
    assert cf(x, y) == compare(x, y)
    assert cf(y, x) == compare(y, x)


@pytest.mark.parametrize(("x", "y"), [(bytearray(b"a"), bytearray(b"b")), (D.keys(), {"a", "b"})])
def test_order_is_python_s(x, y):
    cf = bcfront.capture(order)
    assert cf(x, y) == order(x, y)
