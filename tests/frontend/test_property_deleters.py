"""``del o.name`` of a property runs its deleter, as CPython's generic ``__delattr__``.

The class's data descriptor comes before the instance's dict: ``del p.v`` of a property
with a deleter runs the deleter; without one it raises "property 'v' of 'P' object has
no deleter".  The trace used to delete an instance attribute ``v`` instead (none there:
"'P' object has no attribute 'v'"), for objects made in the trace and passed in alike.
Oracle: CPython on the same function and fresh objects, on the first and the cached call.
"""

from __future__ import annotations

import pytest

import bcfront


class WithDeleter:
    def __init__(self, x):
        self._v = x
        self.log = []

    @property
    def v(self):
        return self._v

    @v.deleter
    def v(self):
        self.log.append("deleted")
        del self._v


class ReadOnly:
    @property
    def v(self):
        return 1


def delete_on_made(x):
    p = WithDeleter(x)
    del p.v
    try:
        p.v
    except AttributeError as e:
        return str(e), p.log
    return None


def delete_on_passed(p):
    del p.v
    return hasattr(p, "_v"), p.log


def delete_without_deleter(q):
    try:
        del q.v
    except AttributeError as e:
        return str(e)
    return None


@pytest.mark.parametrize(
    "fn, make",
    [
        (delete_on_made, lambda: 1),
        (delete_on_passed, lambda: WithDeleter(1)),
        (delete_without_deleter, ReadOnly),
    ],
    ids=["made", "passed", "no-deleter"],
)
def test_del_of_a_property_same_as_plain_python(fn, make):
    cf = bcfront.capture(fn)
    want = fn(make())
    assert cf(make()) == want
    assert cf(make()) == want


def test_passed_object_state_after_the_deleter():
    p, q = WithDeleter(2), WithDeleter(2)
    bcfront.capture(delete_on_passed)(p)
    delete_on_passed(q)
    assert vars(p) == vars(q)
