"""Class statements inside the captured function (#28), compared with plain Python.

The body is traced, a private template class made at capture time, and the class made
again at run time only where it (or an instance, or a method) leaves the call: each
call makes a new class, as in Python.  Torch-free: runs on 3.11-3.13.
"""

from __future__ import annotations

import dataclasses

import pytest

import bcfront


class _Base:
    def __init__(self, a):
        self.a = a

    def m(self):
        return self.a * 10


def attributes_and_methods(x):
    class P:
        k = 1

        def __init__(self, a):
            self.a = a

        def m(self):
            return self.a + self.k + x

    p = P(3)
    return p.m(), P.k, P(x).m(), P.__name__, P.__qualname__, isinstance(p, P), type(p) is P


def wrappers(x):
    class P:
        k = 2

        def __init__(self, a):
            self._a = a

        @property
        def a(self):
            return self._a * 2

        @a.setter
        def a(self, v):
            self._a = v + x

        @staticmethod
        def s(y):
            return y + 100

        @classmethod
        def c(cls):
            return cls.k + x

    p = P(3)
    first = p.a
    p.a = 5
    return first, p.a, P.s(1), p.s(x), P.c(), p.c()


def zero_arg_super(x):
    class Q(_Base):
        def __init__(self, a):
            super().__init__(a + x)

        def m(self):
            return super().m() + x

    return Q(2).m(), Q.__mro__[1] is _Base, issubclass(Q, _Base)


def slots_and_dunders(x):
    class S:
        __slots__ = ("a", "b")

        def __init__(self, a):
            self.a = a
            self.b = x

        def __repr__(self):
            return f"S({self.a}, {self.b})"

        def __eq__(self, o):
            return isinstance(o, S) and (self.a, self.b) == (o.a, o.b)

    s = S(1)
    try:
        s.c = 3
    except AttributeError as e:
        err = str(e)
    return repr(s), s == S(1), s == S(2), s != S(1), err


def local_dataclass(x):
    @dataclasses.dataclass
    class D:
        a: int
        b: int = 2

        def total(self):
            return self.a + self.b + x

    @dataclasses.dataclass(frozen=True)
    class F:
        n: int

    d = D(1)
    return d.total(), d == D(1), d == D(1, 3), d.b, F(x).n, [f.name for f in dataclasses.fields(D)]


def dataclass_errors(x):
    try:

        @dataclasses.dataclass
        class Bad:
            items: list = []  # the mutable default dataclass refuses

    except ValueError as e:
        return str(e), x
    return Bad


def class_body_reads_outside(x):
    y = x * 2

    class B:
        k = y + 1  # the enclosing function's variable, read in the body
        x = 5  # a class attribute named like the cell the method closes over

        def m(self):
            return x + self.x

    items = []

    class C:
        log = items
        names = ["a"]

        def add(self, v):
            self.log.append(v)
            C.names.append(v)

    C().add(x)
    return B.k, B().m(), items, C.names


def class_in_a_loop(x):
    out = []
    for i in range(3):

        class C:
            v = i

            def get(self):
                return self.v + x

        out.append(C)
    return [c().get() for c in out], out[0] is out[1], [c.v for c in out]


def class_factory(x):
    def make(n):
        class K:
            def get(self):
                return n * x

        return K

    return make(2)().get(), make(3)().get(), make(2) is make(2)


def writes_its_class(x):
    class P:
        count = 0
        seen = []

        def inc(self):
            P.count += 1
            P.last = self

    p = P()
    p.inc()
    p.inc()
    P.seen = P.seen + [x]
    return P.count + x, P.last is p, P.seen, p.count, P().count


def escapes(x):
    class E:
        def __init__(self):
            self.v = x

        def get(self):
            return self.v + x

    e = E()
    return E, e, e.get


def _plain(r):
    """`escapes`'s result without the class objects' reprs (addresses differ)."""
    cls, obj, meth = r
    return cls.__qualname__, type(obj) is cls, obj.v, meth(), cls().get()


CASES = [
    attributes_and_methods,
    wrappers,
    zero_arg_super,
    slots_and_dunders,
    local_dataclass,
    dataclass_errors,
    class_body_reads_outside,
    class_in_a_loop,
    class_factory,
    writes_its_class,
]


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_same_as_plain_python(fn, fullgraph):
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    assert repr(cf(1)) == repr(fn(1))
    assert repr(cf(2)) == repr(fn(2))
    assert [b for e in cf.entries for b in e.breaks] == []


@pytest.mark.parametrize("fullgraph", [False, True])
def test_an_escaping_class_is_new_on_every_call(fullgraph):
    cf = bcfront.capture(escapes, fullgraph=fullgraph)
    a, b = cf(1), cf(2)
    assert _plain(a) == _plain(escapes(1))
    assert _plain(b) == _plain(escapes(2))
    plain_a, plain_b = escapes(1), escapes(2)
    assert (a[0] is b[0]) == (plain_a[0] is plain_b[0]) is False
    assert type(a[1]) is a[0] and type(b[1]) is b[0]
    assert len(cf.entries) == 1 or all(not e.breaks for e in cf.entries)


def test_no_guard_on_the_template():
    """The template class is private to the trace: nothing about it is guarded."""
    report = bcfront.explain(attributes_and_methods, 1)
    assert report.graph_breaks == []
    assert not [g for g in report.guards if "P" in g.source and "attributes_and_methods" not in g.source]


class _Meta(type):
    pass


class _Registering:
    seen: list = []

    def __init_subclass__(cls, **kw):
        _Registering.seen.append(cls.__name__)


def with_metaclass(x):
    class M(metaclass=_Meta):
        k = x

    return M.k


def init_subclass_hook(x):
    class R(_Registering):
        k = x

    return R.k, len(_Registering.seen)


@pytest.mark.parametrize("fn", [with_metaclass, init_subclass_hook], ids=lambda f: f.__name__)
def test_what_the_model_refuses_runs_natively(fn):
    """A metaclass, or a base's own __init_subclass__ (user code at class creation): the
    statement runs natively as one call, and the result is Python's."""
    cf = bcfront.capture(fn)
    _Registering.seen.clear()
    got = cf(1)
    _Registering.seen.clear()
    assert got == fn(1)
    breaks = [b for e in cf.entries for b in e.breaks]
    assert [b.reason for b in breaks] == ["call-to-c-function"]
    assert "__build_class__" in breaks[0].message
    with pytest.raises(bcfront.GraphBreakError):
        bcfront.capture(fn, fullgraph=True)(1)


STORED = []


def stores_globally(x):
    global STORED

    class P:
        k = x

    STORED = [P]
    return P.k


@pytest.mark.parametrize("fullgraph", [False, True])
def test_a_class_stored_globally_is_new_on_every_call(fullgraph):
    cf = bcfront.capture(stores_globally, fullgraph=fullgraph)
    assert cf(1) == 1
    first = STORED[0]
    assert cf(2) == 2
    assert STORED[0] is not first and (first.k, STORED[0].k) == (1, 2)
    assert STORED[0].__qualname__ == "stores_globally.<locals>.P"


def body_prints(x):
    class B:
        print("body", x)
        k = x

    return B.k


def test_a_body_that_breaks_runs_the_statement_natively_once(capsys):
    cf = bcfront.capture(body_prints)
    assert (cf(1), cf(2)) == (body_prints(1), body_prints(2))
    assert capsys.readouterr().out == "body 1\nbody 2\nbody 1\nbody 2\n"
    assert "io" in [b.reason for e in cf.entries for b in e.breaks]


def writes_then_escapes(x):
    class P:
        k = 0

    P.k = x
    P.t = (x, x)
    return P


def writes_then_breaks(x):
    class P:
        k = 0

    P.k = x
    print("k", P.k)  # the class is made again for the native code: with the write
    P.k += 1
    return P.k


@pytest.mark.parametrize("fullgraph", [False, True])
def test_a_written_class_leaves_with_its_writes(fullgraph):
    cf = bcfront.capture(writes_then_escapes, fullgraph=fullgraph)
    a, b = cf(1), cf(2)
    assert (a.k, a.t, b.k, b.t) == (1, (1, 1), 2, (2, 2)) and a is not b


def test_a_written_class_crosses_a_break(capsys):
    cf = bcfront.capture(writes_then_breaks)
    assert (cf(1), cf(2)) == (2, 3)
    assert capsys.readouterr().out == "k 1\nk 2\n"


def local_module(x):
    import torch

    class Scale(torch.nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k

        def forward(self, t):
            return t * self.k

    class Acc:
        def __init__(self):
            self.total = x.new_zeros(())

        def add(self, t):
            self.total = self.total + t.sum()
            return self

    return Scale(3)(x), Acc().add(x).add(x * 2).total


@pytest.mark.parametrize("fullgraph", [False, True])
def test_tensors_through_local_classes(fullgraph):
    """A local nn.Module subclass and a plain class holding tensors: one graph, the values
    eager PyTorch gives."""
    torch = pytest.importorskip("torch")
    x = torch.randn(4)
    cf = bcfront.capture(local_module, fullgraph=fullgraph)
    for got, want in zip(cf(x), local_module(x)):
        torch.testing.assert_close(got, want)
    assert [b for e in cf.entries for b in e.breaks] == []
