"""``callable(v)`` in a capture answers from v's class's MRO (`semantics.builtins._callable`);
a Python class of it can gain or lose ``__call__`` after the capture (CPython updates the
call slot), so the lookup is guarded -- a builtin or C class cannot, and is not.  Oracle:
the plain call, after each change of the class."""

from __future__ import annotations

import bcfront


def is_callable(o):
    return callable(o)


class Plain:
    pass


class DictSub(dict):
    pass


class Base:
    pass


class Derived(Base):
    pass


def _call(self):
    return 1


def test_a_class_gaining_and_losing_call_after_capture_is_seen():
    for cls, obj in ((Plain, Plain()), (DictSub, DictSub(a=1)), (Derived, Derived())):
        cf = bcfront.capture(is_callable)
        assert cf(obj) is cf(obj) is is_callable(obj) is False
        owner = Base if cls is Derived else cls  # a base's patch counts too
        owner.__call__ = _call
        try:
            assert cf(obj) is is_callable(obj) is True, cls
            assert cf(obj) is True
        finally:
            del owner.__call__
        assert cf(obj) is is_callable(obj) is False, cls


def made_in_the_trace():
    return callable(WithBuiltinCall()), callable(Plain())


class WithBuiltinCall:
    __call__ = staticmethod(len)  # a call slot that is no Python function


def test_an_object_made_in_the_trace_asks_its_class_and_follows_its_patches():
    cf = bcfront.capture(made_in_the_trace)
    assert cf() == cf() == made_in_the_trace() == (True, False)
    Plain.__call__ = _call
    try:
        assert cf() == made_in_the_trace() == (True, True)
    finally:
        del Plain.__call__
    assert cf() == made_in_the_trace() == (True, False)


def test_a_builtin_class_lookup_is_not_guarded():
    cf = bcfront.capture(is_callable)
    assert cf([1]) is cf([1]) is False and cf(len) is True
    for entry in cf._entries:
        assert "__call__" not in entry.guard_source  # list's and a builtin function's type: fixed
