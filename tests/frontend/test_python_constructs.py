"""Python constructs captured whole (#28, #30), each compared with plain Python.

User iterator objects returned by ``__iter__``, ``iter(callable, sentinel)``,
``str()``/``repr()`` of exceptions made or caught in the function, ``raise ...
from``, ``except ... as`` inside ``with``, ``operator.itemgetter``/``attrgetter``/
``methodcaller``, the itertools iterators (traced through Python twins) and
``Counter`` (its C accelerator's Python twin): under
``fullgraph=False`` and ``fullgraph=True``.  A class statement the model refuses
(a metaclass) breaks at its ``__build_class__`` call, and the rest stays captured.
"""

from __future__ import annotations

import collections
import itertools
import operator

import pytest

import bcfront


class _Count:
    def __init__(self, n):
        self.i, self.n = 0, n

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i


class _Box:
    def __init__(self, xs):
        self.xs = xs

    def __iter__(self):
        return _Count(len(self.xs))

    def __contains__(self, v):
        return v in self.xs


def user_iterator(x):
    b = _Box([1, 2, 3])
    out = [v for v in b]
    return sum(b) + x, out, list(b), 2 in b, 5 in b, any(v > 2 for v in b), sorted(b, reverse=True)


def user_iterator_next(x):
    it = iter(_Count(2))
    return next(it), next(it), next(it, "end"), list(enumerate(_Count(x)))


class _NotIter:
    def __iter__(self):
        return 3


def iter_returns_non_iterator(x):
    try:
        iter(_NotIter())
    except TypeError as e:
        return str(e), x


def iter_sentinel(x):
    c = [0]

    def f():
        c[0] += 1
        return c[0]

    return list(iter(f, 4)), c, x


def exception_text(x):
    try:
        raise ValueError("bad", x)
    except ValueError as e:
        caught = (str(e), repr(e), e.args)
    made = KeyError("k")
    return (
        caught,
        str(made),
        repr(made),
        str(ValueError("m")),
        repr(OSError(2, "gone")),
        str(OSError(2, "gone")),
    )


class _MyErr(ValueError):
    pass


class _Worded(Exception):
    def __str__(self):
        return "worded:" + str(self.args[0])


def exception_user_classes(x):
    return str(_MyErr("a")), repr(_MyErr("a", 1)), str(_Worded(x)), repr(_Worded(x)), f"{_MyErr(x)}"


def raise_from(x):
    try:
        try:
            raise KeyError("a")
        except KeyError as e:
            raise ValueError("b") from e
    except ValueError as e2:
        return type(e2.__cause__).__name__, str(e2), str(e2.__cause__), x


class _CM:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def except_as_in_with(x):
    with _CM():
        try:
            raise ValueError("z")
        except ValueError as e:
            r = repr(e)
    return r, x


def getters(x):
    pairs = [(3, "c"), (1, "a"), (2, "b")]
    return (
        sorted(pairs, key=operator.itemgetter(1)),
        operator.itemgetter(0, 1)(pairs),
        operator.attrgetter("real", "imag")(x),
        operator.methodcaller("split", ",", maxsplit=1)("a,b,c"),
        operator.methodcaller("upper")("a"),
    )


def itertools_iterators(x):
    xs = [1, 2, 3, x]
    return (
        [(k, list(g)) for k, g in itertools.groupby("aabccc")],
        list(itertools.combinations(xs, 2)),
        list(itertools.permutations(xs[:3])),
        list(itertools.pairwise(xs)),
        list(itertools.accumulate(xs, initial=10)),
        list(itertools.zip_longest(xs, "ab", fillvalue=0)),
        list(itertools.repeat(x, 3)),
    )


def itertools_errors(x):
    out = []
    for make in (lambda: itertools.combinations([1], -x), lambda: itertools.pairwise(x)):
        try:
            make()
        except (ValueError, TypeError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def counter(x):
    c = collections.Counter("abracadabra" * x)
    return sorted(c.items()), c.most_common(2)


CASES = [
    user_iterator,
    user_iterator_next,
    iter_returns_non_iterator,
    iter_sentinel,
    exception_text,
    exception_user_classes,
    raise_from,
    except_as_in_with,
    getters,
    itertools_iterators,
    itertools_errors,
    counter,
]


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_same_as_plain_python(fn, fullgraph):
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    assert repr(cf(1)) == repr(fn(1))
    assert repr(cf(2)) == repr(fn(2))


class _Meta(type):
    pass


def defines_class(x):
    class Local(metaclass=_Meta):
        a = 1

        def get(self):
            return self.a + x

    return Local().get() * 2, Local.__name__


def test_class_statement_it_cannot_model_breaks_at_its_call_only():
    """A metaclass (a class keyword) is refused: the statement runs natively, as one call
    (the class statements captured whole are in test_class_statements.py)."""
    cf = bcfront.capture(defines_class)
    assert cf(3) == defines_class(3)
    breaks = [b for e in cf.entries for b in e.breaks]
    assert [b.reason for b in breaks] == ["call-to-c-function"]
    assert "__build_class__" in breaks[0].message


class _Node:
    def __init__(self, kids=()):
        self.kids = list(kids)


def ids_of_made_objects(x):
    """``id()`` of objects made in the call: a memo keyed by id (a graph walk), equality."""
    leaf = _Node()
    root = _Node([leaf, _Node([leaf]), leaf])
    seen, order = {}, []
    stack = [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = len(order)
        order.append(len(n.kids))
        stack.extend(n.kids)
    a, b = [x], {}
    return order, len(seen), id(a) == id(a), id(a) != id(b), id(a) == "a", seen[id(leaf)]


def ids_leave_the_call(x):
    a = [x]
    return a, id(a), {id(a): a}


def test_ids_of_made_objects_leave_as_real_ids():
    for fullgraph in (False, True):
        cf = bcfront.capture(ids_leave_the_call, fullgraph=fullgraph)
        for x in (1, 2):
            a, i, d = cf(x)
            assert a == [x] and i == id(a) and d[id(a)] is a


def test_id_arithmetic_breaks(lenient):
    def add(x):
        a = [x]
        return id(a) - id(a) + x

    cf = bcfront.capture(add)
    assert cf(3) == add(3)
    with pytest.raises(bcfront.errors.GraphBreakError, match="unsupported-operator"):
        bcfront.capture(add, fullgraph=True)(3)


CASES.append(ids_of_made_objects)
