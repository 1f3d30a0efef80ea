"""Runnable functions for the dynamic oracles of the dataflow tests.

`RUNNABLE` maps a name to ``(function, run)``: `run()` calls the function on
fresh, independent arguments (never two arguments reachable from each other or
from a global: the aliasing analysis assumes that) and is safe to call twice.
Each function's docstring says what it exercises.
"""

from __future__ import annotations

import contextlib

RUNNABLE: dict[str, tuple] = {}


def runnable(run):
    """Register the decorated function with `run(fn)`, which calls it."""

    def deco(fn):
        assert fn.__doc__, fn.__name__
        RUNNABLE[fn.__name__] = (fn, lambda: run(fn))
        return fn

    return deco


@runnable(lambda f: f(9))
def loops(n):
    """while with continue around a for with break: back edges and early exits."""
    total, i = 0, 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        for j in range(i):
            if j > 4:
                break
            total += j
    return total


@runnable(lambda f: f([1, 0, 2, 0]))
def raises(xs):
    """try/except/finally in a loop, taken on some iterations: exception edges run."""
    out = []
    last = None
    for x in xs:
        try:
            last = 10 // x
            out.append(last)
        except ZeroDivisionError as e:
            out.append(repr(e) + str(last))
        finally:
            out.append(len(out))
    return out


@runnable(lambda f: list(f(4)))
def gen(n):
    """A generator: the frame is suspended and resumed at each yield."""
    acc = 0
    for i in range(n):
        acc += i
        yield acc
    yield -acc


@runnable(lambda f: [f([1, 2]), f({"k": 3}), f(5)])
def matcher(cmd):
    """match with sequence, mapping and wildcard patterns."""
    match cmd:
        case [x, *rest] if rest:
            return x, rest
        case {"k": v}:
            return v
        case _:
            return None


@runnable(lambda f: f([1, 2, 3]))
def nested_with(items):
    """Nested with blocks, one suppressing the exception raised inside it."""
    out = []
    with contextlib.nullcontext(items) as it:
        for k, v in enumerate(it):
            with contextlib.suppress(KeyError):
                out.append({}[v] if k % 2 else v)
    return out


@runnable(lambda f: f([0, 1, 2]))
def comprehension_heavy(xs):
    """Nested comprehensions whose variables shadow a local (inlined on 3.12+)."""
    y = 3
    a = [x * y for x in xs if x]
    b = {x: [y for y in a] for x in xs}
    return y, a, b


@runnable(lambda f: f(3))
def cells_and_del(a):
    """A closure over a parameter and a local, then del of the parameter's cell."""
    b = a * 2

    def f():
        return b + a  # noqa: F821 - a cell the subject deletes later

    r = f()
    del a
    return r


@runnable(lambda f: [f(lambda *a: 1 // 0 if a else 1, 1), f(lambda *a: int("x"), 2)])
def handler_reads(g, y):
    """A handler that reads a local redefined inside the protected block."""
    x = 0
    try:
        x = g()
        x = g(x)
    except ValueError:
        return y + x
    return x


@runnable(lambda f: f([1, 2]))
def shadowing(xs):
    """A comprehension variable that shadows a live local."""
    y = 10
    z = [y for y in xs]
    return y, z


@runnable(lambda f: f(1, 2))
def swap(a, b):
    """Tuple-swap assignment (SWAP, or 3.13's STORE_FAST_STORE_FAST)."""
    a, b = b, a
    return a - b


@runnable(lambda f: f([1, 2], {"k": [3]}))
def containers(xs, d):
    """Values flowing through lists, dicts, attributes and unpacking."""
    holder = [xs]
    alias = holder[0]
    inner = d["k"]
    box = type("Box", (), {})()
    box.item = inner
    again = box.item
    first, *rest = [alias, again, holder]
    pair = (first, rest)
    other = [0]
    return alias, inner, again, pair, other


@runnable(lambda f: [f(True, [1], [2]), f(False, [3], [4])])
def conditional_alias(c, a, b):
    """A variable that is one of two lists depending on a branch."""
    x = a if c else b
    if c:
        y = x
    else:
        y = [x]
    z = list(y)
    return x, y, z


@runnable(lambda f: f([[1], [2], [3]]))
def iterate_alias(rows):
    """Loop variables alias the items of the iterated list."""
    last = None
    seen = []
    for row in rows:
        last = row
        seen.append(row)
    grid = [r for r in rows]
    return last, seen, grid


@runnable(lambda f: f([5]))
def through_calls(a):
    """Objects passed to and returned by calls (identity, methods, globals)."""
    same = _identity(a)
    copy = list(a)
    got = _STORE.setdefault("k", a)
    meth = a.copy()
    return same, copy, got, meth


_STORE: dict = {}


def _identity(x):
    return x


@runnable(lambda f: f(2))
def closure_alias(n):
    """A list shared with a closure through a cell."""
    acc = []

    def push(v):
        acc.append(v)
        return acc

    got = push(n)
    return got, acc


@runnable(lambda f: f(1, 2))
def deletes(a, b):
    """del of locals, one of them bound again afterwards."""
    c = a
    del a
    a = c + b
    del c
    return a


@runnable(lambda f: f([1, 2, 3]))
def inplace(xs):
    """+= on a list returns the same list; + builds a new one."""
    ys = xs
    ys += [4]
    zs = xs + [5]
    return ys, zs
