"""Graph-break corpus (pure Python): each function breaks at `print` inside some block.

`print` is I/O, so the trace must break there; everything around it is
captured.  `CASES` maps a name to (function, argument tuples, expected
number of breaks on the first call or None when it depends on the path).
Shared by the break tests on 3.11, 3.12 and 3.13.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BreakCase:
    fn: object
    calls: list
    breaks: int | None = 1  # breaks recorded by the root entry for the first call
    continued: bool = True  # the break must be compiled with a continuation


CASES: dict[str, BreakCase] = {}


def case(*calls, breaks=1, continued=True):
    def register(fn):
        CASES[fn.__name__] = BreakCase(fn, list(calls), breaks, continued)
        return fn

    return register


@case((1,), (2,), (5,))
def straight_line(x):
    """A break between two computations; locals cross it."""
    y = x * 2
    print("y is", y)
    z = y + x
    return z, y


@case((1,), (3,))
def value_on_stack(x):
    """A break in the middle of an expression: list items built before it stay on the stack."""
    items = [x, x + 1, print("mid", x), x + 2]
    return items, (x * 3, print("again"), x - 1)


@case((3,), (0,), (4,))
def in_for_loop(n):
    """A break inside a for loop: the iterator crosses the break."""
    total = 0
    for i in range(n):
        total += i
        print("i =", i)
        total *= 2
    return total


@case((3,), (1,))
def in_while_loop(n):
    """A break inside a while loop."""
    k, acc = 0, []
    while k < n:
        acc.append(k)
        print("k", k)
        k += 1
    return acc


@case((0,), (1,), (2,))
def in_try_except(x):
    """A break inside try; the exception raised after it is caught by the original handler."""
    log = []
    try:
        log.append("start")
        print("in try", x)
        if x == 1:
            raise ValueError("one")
        log.append("end")
    except ValueError as e:
        log.append(f"caught {e}")
    return log


@case((0,), (1,))
def in_try_finally(x):
    """A break inside try/finally: the finally block runs exactly once."""
    log = []
    try:
        log.append("body")
        print("body", x)
        log.append("after")
    finally:
        log.append("finally")
    return log


@case((0,), (3,))
def native_call_raises(x):
    """The natively run call itself raises inside try: the handler continuation catches it."""
    log = []
    try:
        print("x", x, sep=x if x else " ")  # sep must be a str: raises TypeError for x != 0
        log.append("printed")
    except TypeError:
        log.append("type error")
    finally:
        log.append("done")
    return log


class Tracker:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


@case((1,), (2,))
def in_with_block(x):
    """A break inside a with block: entered once, exited once, after the break."""
    log = []
    with Tracker(log) as t:
        t.log.append(x)
        print("inside", x)
        t.log.append(x + 1)
    return log


@case((3,), (2,), breaks=None)
def in_comprehension(n):
    """A break inside a comprehension (3.11: a nested function; 3.12+: inlined)."""
    return [print("c", i) or i * 2 for i in range(n)]


def _helper(v):
    w = v + 1
    print("helper", w)
    return w * 2


@case((1,), (4,))
def in_inlined_callee(x):
    """A break inside an inlined callee: the callee is captured on its own at the call site."""
    a = x * 10
    b = _helper(x)
    return a + b


def _gen(n):
    for i in range(n):
        yield i * i


@case((3,), (2,), breaks=None)
def consuming_generator(n):
    """A break while a generator is suspended: its steps are pure, so it is made afresh and
    advanced by as many steps as the trace ran."""
    out = []
    for v in _gen(n):
        print("v", v)
        out.append(v)
    return out


@case((2,), (3,))
def nested_blocks(n):
    """A break inside a loop inside try/finally inside a with block."""
    log = []
    with Tracker(log):
        try:
            for i in range(n):
                log.append(i)
                if i == 1:
                    print("one")
        finally:
            log.append("fin")
    return log


COUNT = [0]


@case((1,), (2,))
def side_effects_order(x):
    """Writes before and after a break keep their order relative to the printed output."""
    COUNT[0] += x
    print("count", COUNT[0])
    COUNT[0] *= 10
    return COUNT[0]


@case((2,), (3,), breaks=None)
def cell_parameter(k):
    """A parameter captured by a generator expression (a cell in 3.11) crosses a break."""
    total = 0
    for i in range(2):
        print("i", i)
        total += sum(k * j for j in range(i + 1))
    return total, k


class Suppress(Tracker):
    def __exit__(self, *exc):
        self.log.append(f"exit {exc[0].__name__ if exc[0] else None}")
        return True


@case((3,), (1,), breaks=None)
def raise_after_break_in_with_loop(n):
    """A break in a loop inside a with block, then an exception the manager suppresses:
    the continuation's exception table must keep the original stack depths."""
    log = []
    with Suppress(log):
        for i in range(n):
            print("i", i)
            if i == 1:
                raise KeyError(i)
            log.append(i)
    log.append("after")
    return log


@case((1,), (2,))
def break_while_building_a_dict(x):
    """A break in the middle of a dict display: the half-built dict crosses the break and the
    rest of the display updates it in the continuation (its writes must be replayed)."""
    return {**{i: i for i in range(x)}, "k": print("k") or x, **{"z": [x]}}


# -- closures sharing the function's cells across a break (each must stay compiled) ----------


@case((1,), (2,), (2,))
def closure_made_before_break(x):
    """A closure made before the break reads a cell the continuation then writes."""
    y = x + 1
    g = lambda: y * 10  # noqa: E731 - the subject's closure is a lambda
    print("y", y)
    y += 1
    return g() + y


@case((1,), (3,), (3,))
def nonlocal_writes_both_sides(x):
    """`nonlocal` writes in the closure and plain writes in the continuation see each other."""
    n = x

    def bump(k):
        nonlocal n
        n += k
        return n

    bump(1)
    print("n", n)
    bump(2)
    n *= 3
    r = bump(0)
    return n, r


@case((1,), (4,), (4,))
def recursive_closure(n):
    """A closure whose own cell holds it (self-recursion): the cell is rebuilt empty, then filled."""

    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)

    print("n", n)
    return fact(n)


@case((1,), (2,), (2,))
def cell_bound_after_break(x):
    """The shared cell is still empty at the break; the continuation fills it."""

    def get():
        return v

    print("x", x)
    v = x * 2
    return get()


@case((1,), (5,), (5,))
def closure_made_after_break(x):
    """Closures made before and after the break share one cell."""
    n = x
    g = lambda: n  # noqa: E731 - the subject's closure is a lambda
    print("n", n)
    h = lambda: n + 1  # noqa: E731 - the subject's closure is a lambda
    n = 7
    return g(), h(), n


@case((1,), (2,), (2,))
def closure_escapes(x):
    """A closure made before the break is returned and keeps working on the same cell."""
    total = x
    log = []

    def add(v):
        nonlocal total
        total += v
        log.append(total)
        return total

    print("t", total)
    add(2)
    f = add
    return f(5), log, total


@case((1,), (2,), (2,), breaks=None)
def two_breaks_shared_cell(x):
    """Two breaks in a row: the second continuation gets the cells the first one was given."""
    k = x
    inc = lambda: k + 100  # noqa: E731 - the subject's closure is a lambda
    print("a", k)
    k = k * 2
    print("b", inc())
    k = k + 1
    return inc(), k


@case((1,), (3,), (3,))
def parameter_cell_shared(k):
    """A parameter that is also a cell, shared with a closure made before the break."""
    f = lambda: k * 2  # noqa: E731 - the subject's closure is a lambda
    print("k", k)
    k = 10
    return f(), k


@case((2,), (4,), (4,))
def closure_in_default(x):
    """A closure held by another function's default is rebuilt with the same cell."""
    c = x

    def outer(get=lambda: c):
        return get()

    print("c", c)
    c = c + 5
    return outer()


# -- started generators at a break ---------------------------------------------------------


def _running_sum(scale, n):
    acc = 0
    for i in range(n):
        acc = acc + i
        yield scale * acc


@case((5,), (2,), (5,))
def generator_with_state_at_break(n):
    """Two steps taken before the break; the generator's own state (acc) must be restored."""
    g = _running_sum(3, n)
    a = next(g)
    b = next(g, None)
    print("ab", a, b)
    return a, b, list(g)


@case(([1, 2, 3],), ([],), breaks=None)
def genexpr_partly_consumed(xs):
    """A generator expression over a list, advanced before the break; the list grows after it."""
    g = (x * 10 for x in xs)
    first = next(g, None)
    print("first", first)
    xs.append(7)
    return first, list(g), xs


def _appending(xs):
    for x in xs:
        if len(xs) < 4:
            xs.append(x + 1)
        yield x


@case(([1],), ([5, 6],), breaks=None, continued=False)
def impure_generator_at_break(xs):
    """A generator whose steps write outside its frame cannot be replayed: runs natively."""
    out = []
    for v in _appending(xs):
        print("v", v)
        out.append(v)
    return out, xs
