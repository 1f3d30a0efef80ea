"""An AttributeError raised by the generic lookup goes to ``__getattr__``, as in CPython.

A property whose getter raises AttributeError, a descriptor's ``__get__`` or a
``__getattribute__`` raising it: CPython's ``slot_tp_getattr_hook`` then calls the
class's ``__getattr__`` (once).  The trace let the AttributeError propagate.  Other
exceptions propagate in both.  Oracle: CPython on the same function, for objects made in
the trace and passed in, with ``fullgraph=True``.
"""

from __future__ import annotations

import pytest

import bcfront


class Fallback:
    def __get__(self, obj, owner=None):
        raise AttributeError("from __get__")

    def __set__(self, obj, value):
        pass


CALLS: list = []  # the names __getattr__ was called with


class Lazy:
    desc = Fallback()

    @property
    def missing(self):
        raise AttributeError("from the getter")

    @property
    def broken(self):
        raise KeyError("not an AttributeError")

    def __getattr__(self, name):
        CALLS.append(name)
        if name == "refused":
            raise AttributeError("refused by __getattr__")
        return ("__getattr__", name)


def lookups(obj):
    out = [obj.missing, obj.desc, obj.plain]
    for name in ("refused", "broken"):
        try:
            out.append(getattr(obj, name))
        except (AttributeError, KeyError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def made_in_the_trace(x):
    return lookups(Lazy()), x


@pytest.mark.parametrize(
    "fn, make", [(lookups, Lazy), (made_in_the_trace, lambda: 0)], ids=["passed", "made"]
)
def test_attribute_error_goes_to_getattr(fn, make):
    cf = bcfront.capture(fn, fullgraph=True)
    CALLS.clear()
    want = fn(make())
    native_calls = list(CALLS)
    CALLS.clear()
    assert cf(make()) == want
    assert CALLS == native_calls  # __getattr__ ran once per failed lookup, as natively
    assert cf(make()) == want
