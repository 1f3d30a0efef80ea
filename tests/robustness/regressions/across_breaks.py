"""Regressions of code that runs across a graph break or an exception: cells and loops
in continuations, displays and comprehensions after a break, exceptions whose context,
traceback or handler crosses a break, finally blocks."""

from __future__ import annotations

from . import Regression

ACROSS_BREAKS = {
    "cell-param-and-local-cell-after-breaks": Regression(
        """
def f(o):
    v = -2
    print(1)
    print(v)
    def g():
        return o + v
""",
        (("0",),),
        "tools/fuzz.py py seed 34 (session 1): after a print break, reading the local cell "
        "`v` gave the parameter cell `o` (printed 0 instead of -2)",
    ),
    "cell-swap-in-loop-with-unrun-closure-and-finally": Regression(
        """
def f(t):
    ts2 = [t]
    for i in []:
        def fn6(z):
            return (ts2, t)
    print()
    try:
        x16 = t
    finally:
        print(ts2)
""",
        (("3",),),
        "tools/fuzz.py tensor seed 10, shrunk and made pure Python: after a break, the cell "
        "`ts2` read as the parameter cell `t` (printed 3 instead of [3])",
    ),
    "while-loop-counter-cell-reruns-iterations": Regression(
        """
def f(b):
    w = 0
    while w < 3:
        w += 1
        print(w)
    def g():
        return w, b
""",
        (("1",), ("True",)),
        "tools/fuzz.py py program 1000004: a loop counter that is also a cell, with "
        "a parameter cell, printed 1 2 2 3 (an iteration re-run after a break)",
    ),
    "else-clause-reads-wrong-cell": Regression(
        """
def f(d, k=2):
    v = k
    try:
        print()
    except RuntimeError:
        pass
    else:
        raise ValueError(f'bad {v}')
    def g():
        return v, d
""",
        (("{1: 2}",), ("{}", "5")),
        "tools/fuzz.py py program 1000060: after a break in a try, the "
        "else-clause read the parameter cell `d` for the local cell `v`",
    ),
    "closure-in-a-cell-keeps-a-stale-cell-after-break": Regression(
        """
def f(k):
    fn1 = lambda: k
    print()
    k = 5
    return fn1()
    def g():
        return fn1
""",
        (("4",), ("7",)),
        "tools/fuzz.py --seed 4, program py-4000132 (102 statements, shrunk to 9, "
        "then by hand): a closure that is itself a cell variable still sees the "
        "old value of the cell `k` written after a graph break (4, eager 5)",
    ),
    "dict-display-with-unpacking-loses-keys-after-break": Regression(
        """
def f(xs):
    return {**xs, 'k': print(), 'j': 2}
""",
        (("{1: 2}",), ("{}",)),
        "test_fuzz.py py program 20240030 (101 statements, shrunk to 3, then by "
        "hand): `{**{...}, 'k': copy.deepcopy(...)}` lost 'k' when the value's call "
        "graph-broke",
    ),
    "loop-over-appended-list-repeats-an-iteration-after-break": Regression(
        """
def f(xs):
    xs.append(0)
    for c in xs:
        print(end='|')
    return xs
""",
        (("[]",), ("[1]",)),
        "test_fuzz.py py program 20240090 on 3.12/3.13, shrunk by hand: after "
        "xs.append, a loop over xs whose body breaks the graph runs its first "
        "iteration twice (prints '||' for one element); 3.11 too",
    ),
    "comprehension-over-global-after-slice-assignment-crashes": Regression(
        """
import collections
STATE = []


def f(a, b, xs, d, s, o, k=2, *rest, **kw):
    STATE[1:2] = [b]
    print([c_9 for c_9, _ in collections.Counter([print(end='|') or c_10 for c_10 in STATE]).most_common()], sep=',')
    v8 = s
    if min(o, k):
        if b + a:
            v13 = {c_16: c2_17 for c2_17 in d}
            xs(rest)
        k = kw
""",  # noqa: E501 - the fuzzer's program, kept as found
        (("3", "0", "[0]", "{'q': 3}", "'s'", "object()"),),
        "test_fuzz.py py program 20240090 (shrunk from 80 to 8 statements, crash as the predicate): "
        "3.13 dies with a segmentation fault in the continuation after the break in the inner "
        "comprehension; 3.12 prints the inner comprehension's output twice",
        isolate=True,
    ),
    "del-of-loop-target-after-break-unbound-on-313": Regression(
        """
import functools
STATE = []


class Box:
    def __init__(self, v, items=()):
        self.v = v
        self.items = list(items)


def f(a, b, xs, d, s, o, k=2, *rest, **kw):
    v2 = len
    for (i4, i5) in zip([6], sorted([a, print(end='') or o.v])):
        if v2:
            v6 = a - b
            v7 = s
        match functools.reduce(lambda p, q: p + q, STATE, 0) % 3:
            case 0:
                d['p'] = sum
                if rest:
                    pass
                v8 = kw
            case 1 | 2 if any((c_11 > 4 for c_11 in xs + [len(o.items)])):
                xs[k] = 7
        del i4
""",
        (("1", "8", "[8, -2, 8, 1]", "{}", "''", "Box(3, [6])"),),
        "/work/v313/bin/python tools/fuzz.py --seed 9 --mode py --isolate, program py-9000036 (37 "
        "statements, shrunk to 13; every remaining line is needed): on 3.13 only, `del i4` of the "
        "loop target in the continuation raises UnboundLocalError",
    ),
    "nested-comprehension-in-loop-over-growing-list-313": Regression(
        """
class Box:
    def __init__(self, v, items=()):
        self.v = v
        self.items = list(items)


def f(a, b, xs, d, s, o, k=2, *rest, **kw):
    for i1, i2 in enumerate(list(xs)):
        xs += [len([c_2 for c_2 in [print(end='|') or c_3 for c_3 in xs] if c_2 > 6])]
        if k or o:
            pass
    else:
        b = b + a
        v3 = s
    v4 = kw
    v5 = {c_5: c2_6 for c_5, c2_6 in d.items()}
""",
        (("True", "8", "[3, 6, 6, 8]", "{'p': -3, \"it's\": 2}", "'a'", "Box(-2, [2])", "2", "z=-2"),),
        "test_fuzz.py py program 20240020 on 3.13 (shrunk with --isolate: some shrinking candidates "
        "segfault 3.13): the inner comprehension's variable receives the enumerate object "
        "(TypeError: '>' not supported between instances of 'enumerate' and 'int')",
        isolate=True,
    ),
    "augmented-assignment-in-try-after-break-313": Regression(
        """
import copy
STATE = []


class Box:
    def __init__(self, v, items=()):
        self.v = v
        self.items = list(items)


def f(a, b, xs, d, s, o, k=2, *rest, **kw):
    v1 = dict(zip('k', [c_1 for c_1, c2_2 in enumerate(copy.deepcopy(xs))]))
    try:
        v2, *v3 = [3]
        a += xs if v3 else 8
        if o:
            xs = rest
            if k < sum((c_3 for c_3 in STATE)):
                raise b
    except ArithmeticError:
        v6 = d
    kw
    return a
""",
        (("-2", "-3", "[]", "{'k': -2, 'q': 8, \"it's\": 0}", "'q\"x'", "Box(0, [3, 5])", "z=2"),),
        "test_fuzz.py py program 20240146 on 3.13 (29 statements, shrunk to 12; simpler variants "
        "are right): `a += xs if v3 else 8` in a try after a break returns 5 instead of 6",
    ),
    "set-display-with-unpacking-loses-items-after-break": Regression(
        """
def f(xs):
    return {*xs, print()}
""",
        (("[1]",), ("[]",)),
        "variant of the dict-display case: `{*xs, print()}`",
    ),
    "dict-view-len-after-break-raises": Regression(
        """
def f(d):
    v = d.items()
    print()
    return len(v)
""",
        (("{'a': 1}",),),
        "hand probe (session 3): a dict view that crosses a graph break is an "
        "opaque object in the continuation, where len() raises TypeError",
    ),
    "caught-exception-has-no-traceback": Regression(
        """
def f(a):
    try:
        raise ValueError(a)
    except ValueError as e:
        return e.__traceback__ is None
""",
        (("1",),),
        "hand probe (session 3): an exception raised and caught inside the "
        "captured function has __traceback__ None (eager: a traceback)",
    ),
    "bare-raise-in-handler-after-break-has-no-active-exception": Regression(
        """
def f(a):
    try:
        raise KeyError(a)
    except KeyError:
        print()
        raise
""",
        (("1",),),
        "hand probe (session 3): after a graph break inside an except block, `raise` "
        "gives RuntimeError 'No active exception to reraise' (and sys.exc_info() is "
        "empty) in the continuation",
    ),
    "exception-raised-in-handler-after-break-loses-its-context": Regression(
        """
def f(a):
    try:
        raise KeyError(a)
    except KeyError:
        print()
        raise ValueError(a)
""",
        (("1",),),
        "hand probe (session 3), seen once differential.py compared exception chains: "
        "eager ValueError carries __context__ KeyError; captured has none (also for a "
        "raise in a finally block after a break)",
    ),
    "builtin-error-in-finally-has-no-context": Regression(
        """
def f(d):
    try:
        raise ValueError
    finally:
        d['p']
""",
        (("{}",),),
        "tools/fuzz.py --seed 41 --mode py --extra all, program pyx-41000312 (136 "
        "statements, shrunk to 4: `del STATE` of an unbound local in a try, `del d['p']` "
        "in the finally), then by hand: eager KeyError carries __context__ ValueError; "
        "captured has none (no graph break)",
    ),
    "store-to-a-missing-slot-escapes-the-users-try": Regression(
        """
class S:
    __slots__ = ('a',)

def f(s):
    try:
        s.c = 1
    except AttributeError:
        return 'caught'
    return 'stored'
""",
        (("S()",),),
        "hand probe of class kinds (session 3): a store to a __slots__ object "
        "without that slot is replayed after the region, so its AttributeError "
        "escapes the user's try (and for an object made in f it is never raised)",
    ),
    "exception-crossing-a-break-loses-traceback-and-value": Regression(
        """
def f(a):
    try:
        raise StopIteration(a)
    except StopIteration as e:
        print()
        return e.value, e.__traceback__ is None
""",
        (("7",),),
        "hand probe (session 3), variants of the fixed O10/O11 that cross a graph break: "
        "the caught exception rebuilt for the continuation has value None (eager 7) and "
        "no __traceback__ (fixed: tracebacks.py)",
    ),
    "function-attributes-written-are-stale-after-the-break": Regression(
        """
def f(a):
    def w(x):
        return x
    w.__name__ = 'g'
    w.__module__ = 'm'
    return w.__name__, w.__module__, w(a)
""",
        (("1",), ("2",)),
        "hand probe of functools.wraps (session 4): after `w.__name__ = 'g'` (a graph break) the "
        "continuation reads w.__name__ as 'w' and w.__module__ as the module's name; "
        "functools.wraps(fn) wrappers report the wrapper's name",
    ),
    "dropped-generator-never-runs-its-finally": Regression(
        """
def gen(n):
    try:
        for i in range(n):
            yield i
    finally:
        print('gen closed')

def helper(n):
    g = gen(n)
    return next(g, -1)

def f(n):
    out = [helper(n)]
    for x in gen(n):
        if x == 1:
            break
        out.append(x)
    print('after loop')
    g = gen(n)
    out.append(next(g, None))
    del g
    print('after del')
    g = gen(n)
    out.append(next(g, None))
    return out
""",
        (("3",), ("0",), ("3",)),
        "hand probe of generators (session 4): a generator suspended inside try/finally (or a "
        "with block) and then dropped -- by `del`, rebinding, `break` out of a for loop, a callee "
        "returning, the function returning -- is closed at once natively (its finally prints); "
        "under capture the symbolic generator just vanished and the finally never ran",
    ),
    "dict-loop-with-break-then-dict-grows": Regression(
        """
def f(d, **kw):
    for k in kw:
        print(k)
    kw['k'] = 1
    it = iter(d)
    for k in it:
        print(k)
    del d['q']
    return list(it), kw, d
""",
        (("{'p': 1, 'q': 2}", "z=-1"), ("{'q': 0}",)),
        "tools/fuzz.py --mode py --extra all, seed 95 (session 25): pyx-95000316 (shrunk 100 -> "
        "4) and pyx-95000338: a loop over a dict with a break inside, then the dict written "
        "after the loop; the region's replay ran the finished iterator out after the write, so "
        "it raised 'dictionary changed size during iteration'",
    ),
    "set-loop-with-break-then-set-grows": Regression(
        """
def f(xs):
    st = set(xs)
    for x in st:
        print(x)
    st.add(5)
    xs.append(len(st))
    return st
""",
        (("[1, 2]",), ("[]",)),
        "hand probe after seed 95 (session 25): the set form of dict-loop-with-break-then-dict-grows "
        "('Set changed size during iteration')",
    ),
}
