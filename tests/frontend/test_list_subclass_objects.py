"""Instances of Python list subclasses made in the trace (transformers' ``LogitsProcessorList``,
``StoppingCriteriaList``): captured without a break, rebuilt as real instances where they
leave, and a subclass that redefines list's own reads still breaks (never a wrong result)."""

from __future__ import annotations

import copy

import pytest

import bcfront
from bcfront.errors import GraphBreakError


class Procs(list):
    """Like LogitsProcessorList: list storage, a Python ``__call__`` over the items."""

    def __call__(self, x):
        for p in self:
            x = p(x)
        return x

    @property
    def first(self):
        return self[0] if self else None


class Slotted(list):
    __slots__ = ()


class OwnIter(list):
    def __iter__(self):
        return list.__reversed__(self)


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


def build_and_call(x):
    procs = Procs()
    procs.append(Scale(2))
    procs.extend([Scale(3)])
    procs.insert(0, Scale(1))
    procs.tag = "t"
    return procs(x) + len(procs), procs.first.k, isinstance(procs, list), type(procs).__name__


def made_from_iterable(x):
    procs = Procs(Scale(k) for k in (x, x + 1))
    more = procs + [Scale(5)]  # list's + gives a plain list
    return [p.k for p in procs], type(more).__name__, procs[1:][0].k, Scale(0) in procs, bool(procs)


def returned(x):
    procs = Procs([Scale(x)])
    procs.note = x * 2
    return procs


def slotted(x):
    s = Slotted([x, x + 1])
    s.append(x + 2)
    return s, sum(s), s == [x, x + 1, x + 2]


def across_a_break(x):
    procs = Procs([Scale(x)])
    procs.where = "before"
    print("a break")
    procs.append(Scale(2))
    return procs(1), procs.where


def own_iter(x):
    return [v for v in OwnIter([x, x + 1])]


@pytest.mark.parametrize("fn", [build_and_call, made_from_iterable, slotted])
@pytest.mark.parametrize("fullgraph", [False, True])
def test_list_subclass_made_in_the_trace_matches_python(fn, fullgraph):
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    for x in (3, 4, 7):
        assert cf(x) == fn(x)


@pytest.mark.parametrize("fullgraph", [False, True])
def test_a_returned_instance_is_a_real_one_with_its_attributes(fullgraph):
    cf = bcfront.capture(returned, fullgraph=fullgraph)
    for x in (3, 4):
        got, want = cf(x), returned(x)
        assert type(got) is Procs and got.note == want.note == 2 * x
        assert [p.k for p in got] == [p.k for p in want]
        assert got(1) == want(1)
        assert copy.deepcopy(got)(2) == want(2)


def test_an_instance_crossing_a_break_keeps_items_and_attributes(capsys):
    cf = bcfront.capture(across_a_break)
    for x in (3, 4):
        assert cf(x) == across_a_break(x)


def test_a_subclass_redefining_iteration_breaks_and_stays_right():
    assert bcfront.capture(own_iter)(3) == own_iter(3) == [4, 3]
    with pytest.raises(GraphBreakError, match="OwnIter.__iter__"):
        bcfront.capture(own_iter, fullgraph=True)(3)


def test_patching_the_class_later_recaptures():
    class Patched(list):
        pass

    def fn(x):
        return [v for v in Patched([x, x + 1])]

    cf = bcfront.capture(fn, fullgraph=True)
    assert cf(1) == [1, 2]
    Patched.__iter__ = lambda self: iter([0])  # a later patch: Python now yields [0]
    try:
        assert fn(1) == [0]
        with pytest.raises(GraphBreakError, match="Patched.__iter__"):
            cf(1)
        assert bcfront.capture(fn)(1) == [0]
    finally:
        del Patched.__iter__


def extend_passed_in(procs, x):
    procs.append(Scale(x))  # transformers' _get_logits_processor on a list from its caller
    procs.seen = len(procs)
    return procs(1), procs.first.k, [p.k for p in procs[:2]], procs == [], procs.seen


@pytest.mark.parametrize("fullgraph", [False, True])
def test_a_passed_in_instance_is_read_and_written_as_a_list(fullgraph):
    cf = bcfront.capture(extend_passed_in, fullgraph=fullgraph)
    for x in (3, 4, 4):
        got_list, want_list = Procs([Scale(2)]), Procs([Scale(2)])
        assert cf(got_list, x) == extend_passed_in(want_list, x)
        assert type(got_list) is Procs and [p.k for p in got_list] == [p.k for p in want_list]
        assert got_list.seen == want_list.seen == 2


def test_a_passed_in_instance_of_a_patched_class_recaptures():
    class Later(list):
        pass

    def total(xs):
        return sum(v for v in xs)

    cf = bcfront.capture(total, fullgraph=True)
    assert cf(Later([1, 2])) == 3
    Later.__iter__ = lambda self: iter([10])
    try:
        assert total(Later([1, 2])) == 10
        assert cf(Later([1, 2])) == 10  # the class guard failed: captured again, right
        assert len(cf.entries) == 2
    finally:
        del Later.__iter__


def test_a_passed_in_instance_redefining_iteration_stays_right():
    assert bcfront.capture(own_iter_sum)(OwnIter([1, 2, 5])) == own_iter_sum(OwnIter([1, 2, 5]))


def own_iter_sum(xs):
    return [v * 2 for v in xs]


def operators_and_copies(x):
    p = Procs([Scale(x)])
    p += [Scale(2)]  # in place: still the Procs
    q = p * 2  # list's *: a plain list
    c, d = copy.copy(p), copy.deepcopy(p)
    return (
        type(p).__name__, len(p), type(q).__name__, len(q), type(p[:]).__name__,
        type(c).__name__, len(c), type(d).__name__, d(1), type(sorted([3, 1])).__name__,
    )  # fmt: skip


def test_operators_and_copies_keep_pythons_types():
    cf = bcfront.capture(operators_and_copies)
    for x in (3, 4):
        assert cf(x) == operators_and_copies(x)
