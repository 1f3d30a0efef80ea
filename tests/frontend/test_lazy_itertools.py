"""``itertools.islice`` and ``itertools.chain`` advance their arguments lazily, as CPython's.

Both used to be modelled by draining their arguments at construction: ``tuple(islice(it,
n))`` called twice on one iterator gave ``()`` the second time (the first had drained it;
the ``iter(lambda: tuple(islice(it, n)), ())`` chunking recipe returned one chunk), and
``chain(it, ...)`` left ``it`` empty for a later ``list(it)``, and returned a
tuple_iterator where CPython returns a chain; ``chain.from_iterable``, ``starmap``,
``compress``, ``filterfalse``, ``takewhile`` and ``dropwhile`` were not modelled (a
break).  Oracle: CPython on the same function (result, its type and repr, exceptions),
with and without ``fullgraph``, and across a graph break (``print``) while the iterator
is live.
"""

from __future__ import annotations

import contextlib
import io
import itertools

import pytest

import bcfront


def chunks_by_callable_iterator(xs, n):
    it = iter(xs)
    return list(iter(lambda: tuple(itertools.islice(it, n)), ()))


def islice_twice_on_one_iterator(xs):
    it = iter(xs)
    return tuple(itertools.islice(it, 2)), tuple(itertools.islice(it, 1, 3)), list(it)


def islice_bounds(xs):
    out = []
    for bounds in [(2,), (1, None), (None, 3), (1, 6, 2), (5, 2), (0, None, 3), (True, 4)]:
        it = iter(xs)
        out.append((list(itertools.islice(it, *bounds)), list(it)))
    return out


def islice_bad_bounds(xs):
    out = []
    for bounds in [(-1,), (1, -2), (0, 3, 0), ("a",), (1.5, 2), (None, None, -1)]:
        try:
            itertools.islice(xs, *bounds)
        except ValueError as e:
            out.append(str(e))
    try:
        itertools.islice(5, 2)  # not iterable: checked after the bounds
    except TypeError as e:
        out.append(str(e))
    return out


def _naturals(x):
    while True:
        yield x
        x += 1


def islice_of_infinite(x):
    return list(itertools.islice(_naturals(x), 3)), list(itertools.islice(_naturals(x), 1, 6, 2))


def _failing(n):
    yield from range(n)
    raise KeyError("boom")


def islice_over_raising_generator(n):
    s = itertools.islice(_failing(n), 5)
    got = []
    try:
        for v in s:
            got.append(v)
    except KeyError as e:
        got.append(repr(e))
    return got, list(s)  # after its iterator's error the islice has let go of it


def chain_advances_lazily(xs):
    it = iter(xs)
    c = itertools.chain(it, [9])
    first = next(c)
    return first, list(it), list(c)


def chain_reaches_arguments_late(xs):
    c = itertools.chain(xs, 5, [1])  # 5 is not iterable: only when the chain gets there
    got = [next(c) for _ in xs]
    try:
        next(c)
    except TypeError as e:
        got.append(str(e))
    return got, list(c)  # after that error the chain has ended


def from_iterable_lazily(xs):
    log = []

    def rows():
        for x in xs:
            log.append(x)
            yield [x, -x]

    c = itertools.chain.from_iterable(rows())
    first = [next(c), next(c), next(c)]  # the second row only just reached
    try:
        itertools.chain.from_iterable(5)
    except TypeError as e:
        err = str(e)
    return first, list(log), list(c), log, err


def adapters(xs):
    it = iter(xs)
    first = next(itertools.takewhile(lambda v: v < 3, it))  # takes one, the iterator moves one
    return (
        first,
        list(itertools.starmap(pow, [(2, 3), [3, 2]])),
        list(itertools.compress(xs, [1, 0, 1])),
        list(itertools.compress(data=xs, selectors=iter([0, 1]))),
        list(itertools.filterfalse(None, [0, 1, "", "a"])),
        list(itertools.filterfalse(lambda v: v % 2, xs)),
        list(itertools.takewhile(lambda v: v < 3, xs)),
        list(itertools.dropwhile(lambda v: v < 3, xs)),
        list(it),
    )


def adapters_raising(xs):
    out = []
    for make in (
        lambda: list(itertools.starmap(pow, [(1, 2), 5])),
        lambda: list(itertools.takewhile(lambda v: 1 / v, xs)),
        lambda: itertools.dropwhile(len, 5),
    ):
        try:
            out.append(make())
        except (TypeError, ZeroDivisionError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def chain_returned_live(xs):
    c = itertools.chain(xs, "ab")
    next(c)
    return c


def from_iterable_returned_live(xs):
    c = itertools.chain.from_iterable([xs, "ab"])
    next(c)
    return c


def dropwhile_returned_live(xs):
    d = itertools.dropwhile(lambda v: v < 3, xs)
    next(d)
    return d


def takewhile_returned_live(xs):
    t = itertools.takewhile(lambda v: v < 6, xs)
    next(t)
    return t


def islice_returned_live(xs):
    s = itertools.islice(iter(xs), 1, 7, 2)
    next(s)
    return s


CASES = [
    (chunks_by_callable_iterator, (range(7), 3)),
    (chunks_by_callable_iterator, ("abcd", 2)),
    (islice_twice_on_one_iterator, ([1, 2, 3, 4, 5, 6],)),
    (islice_bounds, (list(range(8)),)),
    (islice_bad_bounds, ([1, 2],)),
    (islice_of_infinite, (4,)),
    (islice_over_raising_generator, (2,)),
    (chain_advances_lazily, ([1, 2, 3],)),
    (chain_reaches_arguments_late, ([1, 2],)),
    (from_iterable_lazily, ([1, 2, 3],)),
    (adapters, ([1, 2, 5, 0, 4],)),
    (adapters_raising, ([2, 0, 1],)),
]


def _native_and_captured(fn, args, fullgraph):
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    return fn(*args), cf(*args), cf(*args)


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("fn, args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_same_as_plain_python(fn, args, fullgraph):
    want, *got = _native_and_captured(fn, args, fullgraph)
    for g in got:
        assert type(g) is type(want)
        assert g == want


LIVE = [chain_returned_live, from_iterable_returned_live, islice_returned_live]
LIVE += [dropwhile_returned_live, takewhile_returned_live]


@pytest.mark.parametrize("fn", LIVE)
def test_a_live_iterator_leaves_the_capture_as_the_real_one(fn):
    """Returned half-consumed: the same type, and it goes on from the same position."""
    want, *got = _native_and_captured(fn, ([1, 2, 3, 4, 5, 6, 7, 8],), True)
    rest = list(want)
    for g in got:
        assert type(g) is type(want)
        assert list(g) == rest


def islice_across_a_break(xs):
    it = iter(xs)
    s = itertools.islice(it, 1, None, 2)
    c = itertools.chain(s, "z")
    a = next(c)
    print("break", a)  # I/O: the trace breaks here, both iterators live
    return a, next(c), list(it), list(c)


def test_iterators_carried_across_a_graph_break():
    args = (list(range(9)),)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        want = islice_across_a_break(*args)
        cf = bcfront.capture(islice_across_a_break)
        got = [cf(*args), cf(*args)]
    assert got == [want, want]
    assert out.getvalue() == "break 1\n" * 3


def batches(xs, n):
    it = iter(xs)
    first = next(itertools.batched(it, n))  # one batch taken: the iterator moves n
    out = [first, list(itertools.batched(xs, n)), list(it)]
    try:
        itertools.batched(xs, 0)
    except ValueError as e:
        out.append(str(e))
    live = itertools.batched(xs, n)
    next(live)
    return out, live


@pytest.mark.skipif(not hasattr(itertools, "batched"), reason="itertools.batched is new in Python 3.12")
@pytest.mark.parametrize("args", [(range(7), 3), ("abcd", 2), ([5], 4)])
def test_batched_same_as_plain_python(args):
    cf = bcfront.capture(batches, fullgraph=True)
    for got in (cf(*args), cf(*args)):
        want = batches(*args)
        assert got[0] == want[0]
        assert type(got[1]) is type(want[1])
        assert list(got[1]) == list(want[1])
