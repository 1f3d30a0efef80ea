"""Pure-Python corpus: small functions exercising every opcode family (no torch).

`CASES` maps a name to a `Case`: the function, a list of argument tuples
(called in order, so later calls exercise guards and recompiles) and whether
capture must produce a compiled (non-native) entry without graph breaks.
Each function's docstring says what it exercises.  Shared by the semantics,
recompile and continuation tests.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import operator
from dataclasses import dataclass, field
from typing import NamedTuple


@dataclass
class Case:
    fn: object
    calls: list
    compiled: bool = True  # capture must compile it with no graph break


CASES: dict[str, Case] = {}


def case(*calls, compiled=True):
    def register(fn):
        CASES[fn.__name__] = Case(fn, list(calls), compiled)
        return fn

    return register


# -- arithmetic, comparisons, containers -------------------------------------------------------


@case((1, 2), (3, 4), (1, 2), (2.5, 1), (-7, 3))
def arithmetic(a, b):
    """BINARY_OP (all operators), UNARY_*, COMPARE_OP, chained comparisons."""
    out = [a + b, a - b, a * b, a / b, a // b, a % b, a**2, -a, +b, abs(a)]
    if isinstance(a, int) and isinstance(b, int):
        out += [a & b, a | b, a ^ b, a << 2, a >> 1, ~a]
    out.append(a < b <= 10)
    out.append(not (a == b) and a != b)
    x = a
    x += b
    x *= 2
    x -= 1
    return out, x


@case(([1, 2, 3],), ([4, 5],), ([],), ([9, 9, 9, 9],))
def list_ops(xs):
    """BUILD_LIST, LIST_APPEND, slicing, unpacking, list methods, mutation of the input."""
    ys = list(xs)
    ys.append(10)
    ys.extend([20, 30])
    ys.insert(0, -1)
    last = ys.pop()
    ys.remove(10)
    ys.reverse()
    zs = ys[1:3] + ys[::2]
    xs.append(len(zs))
    first, *rest = ys
    return ys, zs, last, first, rest, ys.index(20) if 20 in ys else None, ys.count(-1)


@case(({"a": 1, "b": 2},), ({"a": 5},), ({},))
def dict_ops(d):
    """BUILD_MAP, MAP_ADD, dict methods, iteration over items, mutation of the input."""
    e = dict(d)
    e["z"] = 26
    e.update({"y": 25}, w=23)
    keys = sorted(e)
    total = sum(v for k, v in e.items() if k != "z")
    e.pop("y")
    d["seen"] = True
    inv = {v: k for k, v in e.items()}
    return keys, total, e.get("a", 0), e.setdefault("q", 7), inv, len(d), {**d, "x": 1}


@case((3,), (0,), (5,))
def set_and_tuple_ops(n):
    """BUILD_SET, SET_ADD, set algebra, tuple concatenation, membership."""
    s = {i % 3 for i in range(n)}
    s.add(10)
    t = (1, 2) + tuple(range(n))
    u = s | {42}
    return sorted(s), t, 2 in t, n in s, sorted(u - {10}), len(t * 2), frozenset(s) == frozenset(s)


@case(("abc", 3), ("hello", 1), ("", 0))
def strings_and_fstrings(s, n):
    """FORMAT_VALUE / FORMAT_SIMPLE / FORMAT_WITH_SPEC / CONVERT_VALUE, BUILD_STRING, str methods."""
    a = f"{s!r}-{n:>4}-{n * 2.5:.2f}-{s.upper()}"
    b = "-".join([s] * n)
    c = "%s=%d" % (s, n)
    return a, b, c, s.startswith("h"), s.split("l"), str(n) + s, repr(s), f"{s}{n}"


@case((4,), (1,), (6,))
def loops(n):
    """FOR_ITER/END_FOR, while, break/continue, else clauses, nested loops."""
    total = 0
    for i in range(n):
        if i == 3:
            continue
        for j in range(i):
            if j > 2:
                break
            total += i * j
        else:
            total += 100
    k = 0
    while k < n:
        k += 2
    else:
        total -= 1
    return total, k


@case((5,), (2,), (7,))
def builtins_zoo(n):
    """enumerate, zip, map, filter, reversed, sorted, min, max, sum, any, all, divmod, round."""
    xs = list(range(n))
    pairs = list(zip(xs, reversed(xs)))
    squares = list(map(lambda v: v * v, xs))
    odd = list(filter(lambda v: v % 2, xs))
    en = [(i, v) for i, v in enumerate("abc", start=1)]
    return (
        pairs,
        squares,
        odd,
        en,
        sorted(xs, key=lambda v: -v),
        min(xs),
        max(xs, key=lambda v: v % 3),
        sum(xs),
        any(v > 3 for v in xs),
        all(v >= 0 for v in xs),
        divmod(n, 3),
        round(n / 3, 2),
        int("12") + int(2.7),
        float(n),
        bool(n),
        str(n),
        tuple(xs),
        math.sqrt(n),
        operator.mul(n, 2),
    )


# -- functions, closures, globals -----------------------------------------------------------------

COUNTER = 0
SCALE = 3


@case((1,), (2,), (3,))
def globals_read_write(x):
    """LOAD_GLOBAL/STORE_GLOBAL: a write replayed after the region, then read back."""
    global COUNTER
    COUNTER += x
    return COUNTER * SCALE


def make_counter():
    count = 0

    def bump(by):
        nonlocal count
        count += by
        return count

    return bump


BUMP = make_counter()


@case((1,), (5,), (2,))
def nonlocal_outside_closure(x):
    """STORE_DEREF on an outside closure cell (replayed), LOAD_DEREF of it."""
    return BUMP(x) + BUMP(1)


@case((2,), (3,), (4,))
def closures_made_inside(k):
    """MAKE_CELL, LOAD_CLOSURE, MAKE_FUNCTION with closure, defaults and kw-defaults, lambdas."""
    base = k * 10

    def add(v, extra=1, *, scale=2):
        return (v + base + extra) * scale

    def outer():
        nonlocal base
        base += 1
        return add(1)

    fns = [lambda v, i=i: v * i for i in range(3)]
    return add(k), add(k, 2, scale=3), outer(), base, [f(k) for f in fns]


def _star(*args, **kwargs):
    return args, sorted(kwargs.items())


@case((1, 2), (3, 4))
def star_args(a, b):
    """CALL_FUNCTION_EX, DICT_MERGE, LIST_EXTEND, keyword-only and **kwargs binding."""
    args = (a, b)
    kw = {"x": a}
    return _star(*args, 5, *[b], **kw, y=b), _star(), _star(**{"z": 1})


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


@case((5,), (8,), (1,))
def recursion(n):
    """A recursive global function, inlined to the depth it needs."""
    return _fib(n)


@case((2,), (3,))
def partials_and_reduce(n):
    """functools.partial (positional and keyword), functools.reduce."""
    p = functools.partial(_star, n, k=n)
    add3 = functools.partial(operator.add, 3)
    return p(1), add3(n), functools.reduce(operator.mul, range(1, n + 2)), functools.reduce(max, [n, 1], 0)


# -- exceptions and with ---------------------------------------------------------------------------


class Boom(Exception):
    def __init__(self, code):
        super().__init__(f"boom {code}")
        self.code = code


def _risky(x):
    if x > 2:
        raise Boom(x)
    if x < 0:
        raise ValueError("negative")
    return x


@case((1,), (3,), (-1,), (0,))
def exceptions(x):
    """RAISE_VARARGS, PUSH_EXC_INFO, CHECK_EXC_MATCH, POP_EXCEPT, finally, raise from, RERAISE."""
    log = []
    try:
        v = _risky(x)
        log.append("ok")
    except Boom as e:
        v = e.code * 10
        log.append(str(e.args[0]))
    except (ValueError, KeyError):
        v = -1
        log.append("value")
    else:
        log.append("else")
    finally:
        log.append("finally")
    try:
        try:
            {}["missing"]
        except KeyError as e:
            raise RuntimeError("wrapped") from e
    except RuntimeError as e:
        log.append(type(e.__cause__).__name__)
    try:
        assert x < 100, "too big"
    except AssertionError:
        log.append("assert")
    return v, log


@case((1,), (2,))
def exception_escapes(x):
    """An exception that leaves the captured function: the region raises the same error."""
    if x == 2:
        raise KeyError(x)
    return x


class Recorder:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, typ, val, tb):
        self.log.append(f"exit {typ.__name__ if typ else None}")
        return typ is ZeroDivisionError


@case((1,), (0,), (2,))
def with_blocks(d):
    """BEFORE_WITH, the normal __exit__ call, WITH_EXCEPT_START (suppressing and not)."""
    log = []
    with Recorder(log) as r:
        r.log.append("body")
    q = None
    with Recorder(log):
        q = 10 // d
    try:
        with Recorder(log):
            raise KeyError("k")
    except KeyError:
        log.append("caught")
    return log, q


def _gen(n):
    for i in range(n):
        got = yield i * 2
        if got:
            yield got
    return "done"


def _delegate(n):
    result = yield from _gen(n)
    yield result


@case((3,), (0,), (2,))
def generators(n):
    """RETURN_GENERATOR, YIELD_VALUE, SEND (yield from), generator expressions, next()."""
    a = list(_gen(n))
    b = list(_delegate(n))
    g = _gen(n)
    first = next(g, None)
    c = sum(x for x in range(n) if x % 2 == 0)
    return a, b, first, c, [*(_gen(2))]


@case((3,), (5,))
def comprehensions(n):
    """List/set/dict comprehensions (3.11 nested code, 3.12+ inlined), nested and with conditions."""
    a = [i * j for i in range(n) for j in range(i) if j % 2 == 0]
    b = {i % 3 for i in range(n)}
    c = {str(i): [j for j in range(i)] for i in range(n)}
    i = "kept"
    d = [[k for k in range(m)] for m in range(3)]
    return a, sorted(b), c, i, d


# -- classes ------------------------------------------------------------------------------------------


class Base:
    kind = "base"

    def __init__(self, v):
        self.v = v

    def describe(self):
        return f"{self.kind}:{self.v}"

    @property
    def double(self):
        return self.v * 2

    @staticmethod
    def helper(x):
        return x + 1

    @classmethod
    def make(cls, v):
        return cls(v)


class Child(Base):
    kind = "child"

    def __init__(self, v, w):
        super().__init__(v)
        self.w = w

    def describe(self):
        return super().describe() + f"/{self.w}"

    def __add__(self, other):
        return Child(self.v + other.v, self.w)

    def __eq__(self, other):
        return isinstance(other, Child) and self.v == other.v

    __hash__ = None

    def __len__(self):
        return self.v


@case((1, 2), (3, 4))
def classes(a, b):
    """Instances created inside, methods, properties, super(), staticmethod, classmethod, dunders."""
    c = Child(a, b)
    d = Child.make(b, a) if False else Child(b, a)
    s = c + d
    return (
        c.describe(),
        c.double,
        Base.helper(a),
        Base.make(a).describe(),
        s.v,
        c == d,
        len(s),
        isinstance(c, Base),
        issubclass(Child, Base),
        type(c).__name__,
        bool(c),
    )


@dataclass
class Point:
    x: int
    y: int = 0
    tags: list = field(default_factory=list)

    def norm1(self):
        return abs(self.x) + abs(self.y)


@dataclass(frozen=True)
class Frozen:
    a: int
    b: str = "b"


class Pair(NamedTuple):
    left: int
    right: int

    def total(self):
        return self.left + self.right


Coord = collections.namedtuple("Coord", "x y")


@case((1, 2), (-3, 4))
def dataclasses_and_namedtuples(a, b):
    """dataclass __init__ (generated code), frozen dataclass, NamedTuple, namedtuple."""
    p = Point(a, b)
    p.tags.append("t")
    f = Frozen(a)
    q = Pair(a, b)
    c = Coord(b, a)
    x, y = c
    return (
        p.norm1(),
        p.tags,
        f.a,
        f.b,
        q.total(),
        q.left,
        q[1],
        c.x + c.y,
        x,
        y,
        dataclasses.astuple(Point(1)) if False else (p.x, p.y),
        q._replace(left=9),
    )


class Config:
    def __init__(self):
        self.depth = 2
        self.name = "cfg"


CFG = Config()


@case((1,), (2,))
def outside_object_attrs(x):
    """Attribute reads of an outside object (guarded) and writes (replayed)."""
    CFG.depth = CFG.depth + x
    return CFG.name * x, CFG.depth


@case((3,), ("str",), ([1, 2],), ((1, "a"),), ({"k": 1},), (None,))
def match_statement(v):
    """MATCH_CLASS, MATCH_SEQUENCE, MATCH_MAPPING, MATCH_KEYS, GET_LEN, guards in cases."""
    match v:
        case int(n) if n > 2:
            return "big int", n
        case str() as s:
            return "str", s
        case [a, b]:
            return "pair", a + b
        case (a, str(b)):
            return "tuple", a, b
        case {"k": k}:
            return "map", k
        case None:
            return "none"
    return "other"


@case((2,), (0,))
def boolean_shortcuts(n):
    """JUMP_IF_*_OR_POP (3.11), COPY+POP_JUMP (3.12+), conditional expressions, `is`, `in`."""
    a = n and "yes"
    b = n or "default"
    c = "pos" if n > 0 else "zero"
    d = n is None or n is not None
    return a, b, c, d, n in (1, 2), n not in [0]


@case((1,), (2,))
def imports_inside(x):
    """IMPORT_NAME / IMPORT_FROM of modules already imported."""
    import math as m
    from operator import add

    return m.floor(x / 2), add(x, 1)


@case((0,), (1,))
def delete_and_unbound(x):
    """DELETE_FAST, DELETE_SUBSCR, UnboundLocalError caught."""
    y = [1, 2, 3]
    del y[0]
    z = 5
    del z
    try:
        return z  # noqa: F821
    except UnboundLocalError:
        return y, x
