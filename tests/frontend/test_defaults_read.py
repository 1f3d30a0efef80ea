"""A call guards a function's ``__defaults__`` / ``__kwdefaults__`` only when it reads them
(a parameter left out), so a call passing every parameter costs no checks on them, and a
change of them is still seen wherever a call depends on them.  Oracle: the plain Python
function after the same change.  Pure Python."""

from __future__ import annotations

import bcfront


def _callee():
    def g(a, b=1, *, k=2):
        return a * 100 + b * 10 + k

    return g


def test_a_call_passing_every_parameter_guards_no_defaults():
    g = _callee()

    def f(x):
        return g(x, 5, k=6)

    cf = bcfront.capture(f, fullgraph=True)
    assert cf(1) == f(1)
    source = cf.entries[-1].guard_source
    assert "__code__" in source or "codes_are(" in source  # the callee is checked
    assert "__defaults__" not in source and "__kwdefaults__" not in source, source
    g.__defaults__, g.__kwdefaults__ = (9,), {"k": 8}  # read by no call here
    assert cf(1) == f(1) == 156
    assert len(cf.entries) == 1


def test_defaults_read_by_the_call_are_guarded_and_changes_seen():
    g = _callee()

    def f(x):
        return g(x)

    cf = bcfront.capture(f, fullgraph=True)
    assert cf(1) == f(1) == 112
    g.__defaults__ = (3,)
    assert cf(1) == f(1) == 132
    g.__kwdefaults__ = {"k": 7}
    assert cf(1) == f(1) == 137


def test_only_the_kind_of_default_read_is_guarded():
    g = _callee()

    def f(x):
        return g(x, 4)  # b passed, k left out

    cf = bcfront.capture(f, fullgraph=True)
    assert cf(1) == f(1)
    source = cf.entries[-1].guard_source
    assert "__kwdefaults__" in source and "__defaults__" not in source.replace("__kwdefaults__", "")
    g.__kwdefaults__ = {"k": 0}
    assert cf(1) == f(1) == 140


def test_a_failed_binding_reports_pythons_message_with_the_defaults():
    g = _callee()

    def f(x):
        try:
            return g(x, 1, 2)
        except TypeError as e:
            return str(e)

    cf = bcfront.capture(f, fullgraph=True)
    assert cf(1) == f(1)
    assert "from 1 to 2 positional arguments" in f(1)
    g.__defaults__ = None
    assert cf(1) == f(1)


def test_a_root_without_defaults_sees_defaults_added_later():
    def root(a, b):
        return a - b

    cf = bcfront.capture(root)
    assert cf(5, 1) == root(5, 1) == 4
    assert "__defaults__" not in cf.entries[-1].guard_source
    root.__defaults__ = (2,)
    assert cf(5) == root(5) == 3
    assert cf(5, 1) == 4
