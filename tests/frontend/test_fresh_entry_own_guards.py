"""A fresh entry passes its own guards: every guard states a fact about the state the call
started from, true on the call that was traced.  Three classes that broke it (the suite's
strict mode raises `StrictFallbackError` on such an entry instead of running natively):

* one outside tuple reached by two paths (passed twice, or through what it holds) is one
  value, so `is` between them is true in the trace as it is natively;
* a captured function called inside captured code runs its original code, inlined: the
  trace never enters bcfront's own wrapper (whose cache is no fact about the call) and
  the inner function's cache is left alone;
* what the trace itself did to an attribute (``del o.x``, ``o.x = ...``) is not guarded as
  if it had been so when the call started.

Oracle: the plain functions on the same inputs.
"""

from __future__ import annotations

import sys
import types

import pytest

import bcfront

torch = pytest.importorskip("torch")


# -- one outside tuple, one value ---------------------------------------------------------------


def tuple_identities(a, b, c):
    return a is b, b is c, a[1] is b[1], (a,) is (b,), a in [b], [a, c].index(b)


def test_a_tuple_reached_twice_is_the_same_object_in_the_trace():
    cf = bcfront.capture(tuple_identities)
    t, u = (1, [2]), (1, [2])
    for a, b, c in ((t, t, u), (t, u, u), (u, u, u), (t, t, t), (t, u, t)):
        assert cf(a, b, c) == tuple_identities(a, b, c), (a is b, b is c)


def through_a_namedtuple_and_a_dict(d):
    return d["p"] is d["q"], d["p"].x is d["q"].x, d["p"] == d["q"]


def test_named_tuples_reached_through_a_dict():
    import collections

    P = collections.namedtuple("P", "x y")
    cf = bcfront.capture(through_a_namedtuple_and_a_dict)
    p, q = P([1], 2), P([1], 2)
    for d in ({"p": p, "q": p}, {"p": p, "q": q}, {"p": q, "q": q}):
        assert cf(d) == through_a_namedtuple_and_a_dict(d)


def cycle_after_break(a):
    t = ({"k": a},)
    t[0]["self"] = t  # a tuple reached again through a dict it holds
    print(end="")  # the continuation gets the cycle as an input
    return t[0]["self"] is t, t[0]["self"][0]["k"] + 1


def test_a_tuple_in_a_cycle_crossing_a_break():
    cf = bcfront.capture(cycle_after_break)
    for a in (1, 2, 1):
        assert cf(a) == cycle_after_break(a)
    conts = [c for per in cf.continuations.values() for c, _ in per.values()]
    assert conts and all(c._entries for c in conts)  # captured, not run natively


# -- a captured function inside captured code ---------------------------------------------------


def scale(x, k):
    return x * k


def test_a_captured_function_called_inside_captured_code_is_inlined_as_its_own_code(monkeypatch):
    inner = bcfront.capture(scale)
    monkeypatch.setitem(globals(), "scale", inner)

    def outer(x):
        return scale(x + 1, 2) - 1

    cf = bcfront.capture(outer)
    x = torch.arange(3.0)
    for _ in range(2):
        assert torch.equal(cf(x), (x + 1) * 2 - 1)
    report = cf.report()
    assert not report.graph_breaks, report.graph_breaks
    assert inner.calls == 0 and not inner._entries  # its wrapper and cache were not traced
    assert not any("__call__" in g.expr or "_entries" in g.expr for g in report.guards)
    assert torch.equal(inner(x, 3), x * 3) and inner.calls == 1  # still works on its own


class Doubler(torch.nn.Module):
    def forward(self, x):
        return x * 2


def test_a_captured_module_and_bound_method_inside_captured_code():
    m = Doubler()
    cm = bcfront.capture(m)
    cb = bcfront.capture(m.forward)

    def outer(x):
        return cm(x) + cb(x)

    cf = bcfront.capture(outer)
    x = torch.ones(2)
    assert torch.equal(cf(x), x * 4)
    assert not cf.report().graph_breaks
    assert not cm._entries and not cb._entries


def countdown(x, n):
    if n == 0:
        return x
    print("", end="")  # a break: the continuation calls the captured function again
    return countdown(x + 1, n - 1)


def test_captured_recursion_through_a_break(monkeypatch):
    cf = bcfront.capture(countdown)
    monkeypatch.setitem(globals(), "countdown", cf)
    for n in (3, 3, 1, 0):
        assert torch.equal(cf(torch.zeros(2), n), torch.full((2,), float(n)))
    assert not cf.native_fallbacks
    conts = [c for per in cf.continuations.values() for c, _ in per.values()]
    guards = [g.expr for c in conts for g in c.report().guards]
    assert guards and not any("_entries" in e or "__call__" in e for e in guards), guards


# -- what the trace did itself is no guard ---------------------------------------------------


class Box:
    pass


def del_then_has(o):
    del o.x
    return hasattr(o, "x"), getattr(o, "x", "gone")


@pytest.mark.parametrize("make", ["object", "module"])
def test_an_attribute_deleted_by_the_trace_is_not_guarded_as_absent(make):
    cf = bcfront.capture(del_then_has)
    for i in range(3):
        if make == "module":
            o = types.ModuleType(f"bcfront_test_own_guards_{i}")
            sys.modules[o.__name__] = o
        else:
            o = Box()
        o.x = i
        try:
            assert cf(o) == (False, "gone") and not hasattr(o, "x")
        finally:
            sys.modules.pop(f"bcfront_test_own_guards_{i}", None)
