"""bcfront's own Python models of C code (`semantics.own_code`) are traced without guards on
their globals, defaults or code, and behave as the C code they stand for."""

from __future__ import annotations

import builtins
import heapq

import pytest

import bcfront
from bcfront.frontend.model.sources import AttrSource, BuiltinSource, ConstSource, GlobalSource
from bcfront.frontend.semantics import own_code, py_twins, re_twins
from tests.stdlib.corpus import _combinations
from tests.stdlib.corpus import _heappush as _push


def _sources(src):
    while src is not None:
        yield src
        src = getattr(src, "base", None)


def _own_reads(guards):
    """The guards reading a registered module's globals or an own function's attributes."""
    bad = []
    for g in guards:
        for s in _sources(g.source):
            if type(s) in (GlobalSource, BuiltinSource):
                d = s.globals.obj if type(s) is GlobalSource else None
                if d is not None and own_code.owns_globals(d):
                    bad.append(g)
            if type(s) is ConstSource and own_code.owns_function(s.value.obj):  # its __code__, ...
                bad.append(g)
    return bad


@pytest.mark.parametrize(
    "fn, args",
    [(_combinations, ([1, 2, 3], 2)), (_push, ([1, 5, 3], 2))],
    ids=["itertools.combinations", "heapq.heappush"],
)
def test_a_twin_adds_no_guard_on_its_own_globals_or_code(fn, args):
    cf = bcfront.capture(fn, fullgraph=True)
    assert cf(*[list(a) if isinstance(a, list) else a for a in args]) == fn(*args)
    (entry,) = cf._entries
    assert _own_reads(entry.guards) == []
    # what the user's code reads is still guarded: the module attribute it calls
    called = ("combinations", "heappush")
    assert any(type(g.source) is AttrSource and g.source.attr in called for g in entry.guards)


def test_the_twin_modules_are_registered_as_own_code():
    assert own_code.owns_globals(vars(py_twins)) and own_code.owns_globals(vars(re_twins))
    assert own_code.owns_function(py_twins._combinations)
    twin = py_twins.twin(heapq.heappush)  # the private copy of heapq's Python function
    assert twin is not heapq.heappush and own_code.owns_function(twin)
    assert not own_code.owns_function(heapq.nlargest)  # the real module's: the user's


def test_a_patched_builtin_changes_neither_the_c_function_nor_its_twin():
    # itertools.combinations reads no global: a patched builtins.reversed (which the twin
    # calls) changes nothing natively, nor in the cached entry (the old guard on it sent the
    # call to a new trace, whose twin called the patched one)
    def broken(*args):
        raise AssertionError("the patched builtin ran")

    cf = bcfront.capture(_combinations, fullgraph=True)
    assert cf([1, 2, 3], 2) == [(1, 2), (1, 3), (2, 3)]
    saved = builtins.reversed
    builtins.reversed = broken  # (restored before pytest's own code runs again)
    try:
        got = [_combinations([1, 2, 3], 2), cf([1, 2, 3], 2)]
    finally:
        builtins.reversed = saved
    assert got == [[(1, 2), (1, 3), (2, 3)]] * 2
