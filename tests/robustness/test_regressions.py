"""Every mismatch the differential fuzzer found, shrunk to a minimal program.

Each `Regression` is module source defining ``f``, the calls to make, where
it came from, and what went wrong.  The test runs it with
`bcfront.testing.differential.run` (eager is the oracle: results, inputs
after the call, globals, printed output, exceptions, gradients).  A
regression that still fails carries `open_bug`: it is a strict xfail, so the
suite stays green, the bug stays visible, and the day it is fixed the xfail
turns into a failure that asks for the mark to go.  docs/known-bugs.md lists
the open ones.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from dataclasses import dataclass

import pytest

from bcfront.testing import differential
from bcfront.testing.program import CallSpec, from_source

from .helpers import HAS_TORCH


@dataclass(frozen=True)
class Regression:
    source: str
    calls: tuple
    found: str  # campaign / program, and the symptom
    open_bug: str | None = None  # set while the bug is not fixed (strict xfail)
    open_from: tuple = (3, 0)  # the Python versions the bug shows on (this one and later)
    isolate: bool = False  # run in a child process (the bug crashes the interpreter)


PY = {
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
    "len-of-opaque-builtin-container-raises": Regression(
        """
import collections

def f(v):
    return len(v)
""",
        (("collections.deque([1, 2])",), ("{'a': 1}.keys()",), ("collections.Counter('aab')",)),
        "hand probes of argument kinds the fuzzer does not pass (session 3): len() of a deque, "
        'a dict view, a Counter, a defaultdict or an array raises TypeError "object of type '
        "'deque' has no len()\"",
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
    "dict-mutated-during-iteration-does-not-raise": Regression(
        """
def f(d):
    for k in d:
        d[k + 'x'] = 1
    return d
""",
        (("{'a': 1}",), ("{}",)),
        "hand probe (session 3): eager raises RuntimeError "
        "'dictionary changed size during iteration'; captured iterates a "
        "snapshot of the keys and returns {'a': 1, 'ax': 1}",
    ),
    "class-attribute-written-in-f-is-stale-through-an-instance": Regression(
        """
class K:
    n = 0

def f(k):
    K.n = 5
    return k.n
""",
        (("K()",),),
        "hand probe (session 3): a class attribute written inside f and read "
        "through an instance gives the old value (0, eager 5); no graph break needed",
    ),
    "exception-slot-attributes-are-member-descriptors": Regression(
        """
def f(a):
    return StopIteration(a).value, OSError(2, 'nf').errno
""",
        (("7",),),
        "hand probe (session 3): C-level attributes of exceptions created in f "
        "(StopIteration.value, OSError.errno, UnicodeError.start, SystemExit.code) "
        "read as the class's member descriptor",
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
    "tuple-argument-is-copied-when-an-item-is-mutated": Regression(
        """
def f(v):
    v[0].append(1)
    return v
""",
        (("([],)",),),
        "hand probe (session 3): a tuple argument returned after one of its lists "
        "was mutated comes back as a new tuple (f(t) is t is False)",
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
    "list-index-ignores-start": Regression(
        """
def f(xs, a):
    return xs.index(a, 1)
""",
        (("[1, 2, 1]", "1"), ("[1, 2]", "1")),
        "hand probe of builtin edge cases (session 3): "
        "list.index(x, start) ignores start (0, eager 2) and "
        "its error says 'x not in sequence' ('1 is not in list')",
    ),
    "set-display-keeps-the-last-of-equal-keys": Regression(
        """
def f(a):
    return {a, 1}, {True: 'x', 1: 'y'}, dict.fromkeys([a, 1])
""",
        (("True",),),
        "hand probe of builtin edge cases (session 3): of equal keys (True, 1) CPython "
        "keeps the first; captured set displays, constant-key dict displays and "
        "dict.fromkeys keep the last ({1}, eager {True})",
    ),
    "dict-of-a-non-dict-mapping-raises": Regression(
        """
import collections

def f(m):
    return dict(m)
""",
        (("collections.ChainMap({'a': 1}, {'b': 2})",),),
        "hand probe of builtin edge cases (session 3): dict(m), {**m} and d.update(m) of a "
        "mapping that is not a dict iterate it as (key, value) pairs: ValueError: not enough "
        "values to unpack",
    ),
    "sum-with-a-string-start-does-not-raise": Regression(
        """
def f(xs):
    return sum(xs, '')
""",
        (("['a']",), ("[]",)),
        "hand probe of builtin edge cases (session 3): eager TypeError "
        "\"sum() can't sum strings\"; captured returns 'a'",
    ),
    "set-subset-comparison-raises": Regression(
        """
def f(xs, ys):
    return set(xs) <= set(ys), {1} < set(ys), frozenset(xs) >= set(ys)
""",
        (("[1, 2]", "[1, 2, 3]"), ("[]", "[4]")),
        "tools/fuzz.py --seed 41 --mode py --extra all (sets): 6 of the first 100 programs, "
        "e.g. pyx-41000135; captured TypeError: '<=' not supported between instances of 'set' "
        "and 'set'",
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
    "tuple-compared-with-a-constant-tuple": Regression(
        """
def f(a, xs):
    return (a, 2) == (1, 2), tuple(xs) != (1, 2), (a, 2) in [(1, 2)], (a, 2) < (1, 3)
""",
        (("1", "[1, 2]"), ("2", "[1]")),
        "hand probe of tensor idioms (`t.shape == (2, 2)`), generalized (session 3): a tuple "
        "built in the function compared with a constant tuple is never equal (False, eager "
        "True) and ordering raises TypeError; lists are right",
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
    "int-subclass-equals-int-is-false": Regression(
        """
class MyInt(int):
    pass

def f(m, a):
    return m == a, MyInt(a) == a
""",
        (("MyInt(1)", "1"),),
        "hand probe of class kinds (session 3): an instance of a user "
        "subclass of int compared with an equal int is False (eager True)",
    ),
    "printf-formatting-with-a-list-or-dict-raises": Regression(
        """
def f(a, d):
    return '%s' % [a], '%(k)s' % d
""",
        (("1", "{'k': 2}"),),
        "hand probe of string formatting (session 3): `'%s' % [a]` and "
        "`'%(k)s' % d` raise TypeError: unsupported operand type(s) for mod",
    ),
    "builtin-patched-in-the-builtins-module-is-stale": Regression(
        """
import builtins

def f(a):
    return abs(-a)
""",
        (CallSpec(("1",)), CallSpec(("1",), before="builtins.abs = lambda x: 99")),
        "hand probe of guards (session 3): after `builtins.abs = ...` between calls the cached "
        "entry still calls the old abs (1, eager 99); shadowing abs with a module global is right",
        isolate=True,
    ),  # the patch is process-wide: keep it out of the test process
    "function-code-replaced-is-stale": Regression(
        """
def h(x):
    return x + 1

def h2(x):
    return x - 1

def f(a):
    return h(a)
""",
        (CallSpec(("1",)), CallSpec(("1",), before="h.__code__ = h2.__code__")),
        "hand probe of guards (session 3): replacing a callee's __code__ (what IPython's "
        "autoreload does) between calls is not seen (2, eager 0)",
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
    "sequence-repeated-by-a-bool-raises": Regression(
        """
def f(a, xs):
    return xs * a, [0] * a, a * (1, 2)
""",
        (("True", "[1, 2]"), ("False", "[3]"), ("2", "[]")),
        "hand probe of builtin edge cases with a bool for an int (session 3): `[0] * True` is [0] "
        "eagerly; captured TypeError: unsupported operand type(s) for mul: 'list' and 'bool'",
    ),
    "equal-tuples-built-at-run-time-are-one-object": Regression(
        """
def f(a, d):
    x = (a, 2)
    y = (a, 2)
    e = dict(d)
    items = list(e.items())
    return x, y, items, e.popitem()
""",
        (("1", "{'k': 3}"), ("'s'", "{'k': 3, 'j': 4}")),
        "hand probe of dict methods (session 4): two equal tuples built at run time come back as one "
        "object (`r[0] is r[1]`, also `id(x) == id(y)`); the popitem() tuple is the same object as "
        "the equal tuple in the items list (fixed: codegen builds each at run time)",
    ),
    "getattr-with-default-runs-the-getter-twice": Regression(
        """
class P:
    def __init__(self):
        self.log = []

    @property
    def p(self):
        self.log.append('p')
        return len(self.log)

    def __getattr__(self, name):
        self.log.append(name)
        if name == 'missing':
            raise AttributeError(name)
        return len(name)

def f(a):
    o = P()
    return getattr(o, 'p', a), getattr(o, 'abc', a), getattr(o, 'missing', a), o.log
""",
        (("1",), ("'d'",)),
        "hand probe of classes with __getattr__/__setattr__ (session 4): `getattr(o, name, default)` "
        "ran a property getter or __getattr__ twice (log ['p', 'p', ...], result 2 instead of 1)",
    ),
    "zip-strict-does-not-raise": Regression(
        """
def f(xs, ys, zs):
    out = []
    for args in ((xs, ys), (xs, ys, zs), (zs, xs, ys)):
        try:
            out.append(list(zip(*args, strict=True)))
        except ValueError as e:
            out.append(str(e))
    it = iter(ys)
    try:
        for a, b in zip(xs, it, strict=True):
            out.append(a + b)
    except ValueError as e:
        out.append(str(e))
    out.append(list(it))
    return out
""",
        (("[1, 2]", "[3, 4]", "[5]"), ("[1, 2]", "[3, 4, 6]", "[5, 1]"), ("[]", "[3]", "[]")),
        "hand probe of builtins with optional arguments (session 4): zip(..., strict=True) over "
        "arguments of different lengths returned the shortest zip instead of raising ValueError",
    ),
    "zip-strict-from-outside-does-not-raise": Regression(
        """
def f(z):
    try:
        return list(z)
    except ValueError as e:
        return str(e)
""",
        (("zip([1, 2], [3], strict=True)",), ("zip([1], [3, 4], strict=True)",)),
        "hand probe of builtins with optional arguments (session 4): a zip(strict=True) passed in "
        "is read as a plain zip: list(z) is [(1, 3)] instead of ValueError (fixed)",
    ),
    "module-getattr-hook-is-ignored": Regression(
        """
import types

M = types.ModuleType('mymod')
M.x = 1
M.__getattr__ = lambda name: 'dyn-' + name

def f(a):
    return M.x + a, M.qq, getattr(M, 'rr', None), hasattr(M, 'ss')
""",
        (("1",), ("2",)),
        "hand probe of module attributes (session 4): a module-level __getattr__ (PEP 562: lazy "
        "imports, deprecation shims) was ignored: M.qq raised AttributeError under capture",
    ),
    "missing-module-attribute-is-not-guarded": Regression(
        """
import types

M = types.ModuleType('mymod')

def f(a):
    try:
        return M.qq + a
    except AttributeError as e:
        return str(e)
""",
        (
            CallSpec(("1",)),
            CallSpec(("1",), before="M.qq = 5"),
            CallSpec(("1",), before="del M.qq; M.__getattr__ = lambda n: 7"),
            CallSpec(("1",), before="del M.__getattr__"),
            CallSpec(("2",)),
        ),
        "hand probe of module attributes (session 4): after a call that found M.qq missing, the "
        "cached entry kept raising AttributeError once M.qq existed (no guard on the absence)",
    ),
    "attribute-error-messages-of-deleted-attributes": Regression(
        """
import types

M = types.ModuleType('mymod')
M.x = 1

class P:
    __slots__ = ('x', '_y')

    def __init__(self, x):
        self.x = x
        self._y = 0

def f(a):
    out = []
    p = P(a)
    try:
        p.z = 1
    except AttributeError as e:
        out.append(str(e))
    del p.x
    try:
        out.append(p.x)
    except AttributeError as e:
        out.append(str(e))
    del M.x
    try:
        out.append(M.x)
    except AttributeError as e:
        out.append(str(e))
    M.x = a
    return out
""",
        (("1",), ("2",)),
        "hand probe of __slots__ classes (session 4): reading a deleted module attribute said "
        "\"'module' object has no attribute 'x'\" (CPython: \"module 'mymod' has no attribute 'x'\"); "
        "on 3.13 a deleted slot said \"'P' object ...\" where CPython says \"'fuzz.P' object ...\"",
    ),
    "sum-of-floats-is-not-compensated": Regression(
        """
def f(xs, a):
    return sum([0.1] * 10), sum(xs), sum(xs, 0.5), sum([a, 0.1, 0.2, 0.3]), sum([1e100, 1.0, -1e100])
""",
        (("[0.1, 0.2, 0.3]", "1"), ("[0.1] * 7", "2.5")),
        "hand probe of builtins (session 4), 3.12+: sum([0.1] * 10) is 1.0 (CPython 3.12 adds "
        "floats with compensated summation); captured 0.9999999999999999 (plain left-to-right +)",
    ),
    "writes-through-an-objects-dict-are-lost": Regression(
        """
import copy

class O:
    def __init__(self, v):
        self.v = v
        self.inner = [v]

def f(o):
    c = copy.copy(o)
    c.inner.append(2)
    d = vars(o)
    d['v'] = 7
    return c.v, c.inner, o.v
""",
        (("O(1)",), ("O(-2)",)),
        "hand probe of functools/copy helpers (session 4): copy.copy(o) came back without "
        "attributes (AttributeError: 'O' object has no attribute 'inner': the object made by "
        "__reduce_ex__ had its __dict__ read as a detached dict, so state.update() was lost), and "
        "`vars(o)['v'] = 7` was not seen by `o.v`",
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
    "len-of-a-negative-or-non-int-dunder-len": Regression(
        """
class L:
    def __init__(self, r):
        self.r = r

    def __len__(self):
        return self.r

def f(n):
    out = [n]
    for r in (-1, True, 1.5, 'x', None, 2 ** 70, n):
        try:
            out.append(len(L(r)))
        except (ValueError, TypeError, OverflowError) as e:
            out.append(type(e).__name__ + ': ' + str(e))
    return out
""",
        (("3",), ("-2",)),
        "hand probe of user dunders (session 4): len() of an object whose __len__ returns -1 "
        "returned -1 (eager ValueError: __len__() should return >= 0); a float/str/None result "
        "was a graph break, a huge int was not an OverflowError",
    ),
    "star-and-double-star-argument-errors-differ": Regression(
        """
def kwf(a, b=1, *more, c=2, **named):
    return a

class Obj:
    def m(self, **k):
        return k

def f(a):
    out = []
    try:
        kwf(a, c=a, **{'c': 1})
    except TypeError as e:
        out.append(str(e))
    try:
        kwf(c=a, **'c')
    except TypeError as e:
        out.append(str(e))
    try:
        Obj().m(**{'x': 1}, **{'x': 2})
    except TypeError as e:
        out.append(str(e))
    try:
        kwf(*a)
    except TypeError as e:
        out.append(str(e))
    try:
        kwf(1, *a)
    except TypeError as e:
        out.append(str(e))
    try:
        out.append({**a})
    except TypeError as e:
        out.append(str(e))
    return out
""",
        (("1",), ("2",)),
        "tools/fuzz.py --seed 74 --mode py --extra breaks,objects,calls,guards,exc,loops, programs "
        "pyx-74000308 and pyx-74000311 (shrunk 53 -> 2 statements): `kwf(c=a, **'c')` said "
        '"\'str\' object is not a mapping" (CPython: "fuzz.kwf() argument after ** must be a mapping, '
        "not str\"); duplicate ** keys lacked the callee's name; `*` of a non-iterable had the "
        "generic 'not iterable' message",
    ),
    "missing-attribute-is-not-guarded": Regression(
        """
class K:
    pass

class S:
    __slots__ = ('x',)

OBJ = K()
SL = S()

def f(a):
    out = []
    try:
        out.append(OBJ.zz + a)
    except AttributeError as e:
        out.append(str(e))
    try:
        out.append(K.yy)
    except AttributeError as e:
        out.append(str(e))
    try:
        out.append(SL.x)
    except AttributeError as e:
        out.append(str(e))
    return out
""",
        (
            CallSpec(("1",)),
            CallSpec(("1",), before="OBJ.zz = 5; SL.x = 3"),
            CallSpec(("1",), before="del OBJ.zz; K.yy = 2"),
            CallSpec(("1",), before="del SL.x; K.zz = 7"),
            CallSpec(("2",), before="K.__getattr__ = lambda self, n: n * 2"),
            CallSpec(("1",), before="del K.__getattr__"),
        ),
        "hand probe of guards (session 4): after a call that found OBJ.zz (or an unset slot, or "
        "a class attribute) missing, the cached entry kept raising AttributeError once the "
        "attribute existed (no guard on the absence); `type object 'K' has no attribute 'yy'` "
        "read \"'type object 'K'' object has no attribute 'yy'\"",
    ),
    "global-set-mutated-in-place-is-stale": Regression(
        """
GS = {1, 2}

def f(x):
    return x in GS, len(GS), sorted(GS)
""",
        (
            CallSpec(("3",)),
            CallSpec(("3",), before="GS.add(3)"),
            CallSpec(("3",), before="GS.discard(3)"),
            CallSpec(("1",), before="GS.clear()"),
        ),
        "hand probe of guards (session 4): a global set changed in place between calls kept its "
        "first contents under capture (`3 in GS` False after GS.add(3)): the guard compared the "
        "set with itself",
    ),
    "undefined-name-defined-as-builtin-later-is-stale": Regression(
        """
def f(a):
    try:
        return UNDEF + a
    except NameError as e:
        return str(e)
""",
        (
            CallSpec(("1",)),
            CallSpec(("1",), before="UNDEF = 5"),
            CallSpec(("1",), before="del UNDEF"),
            CallSpec(("1",), before="import builtins; builtins.UNDEF = 3"),
            CallSpec(("1",), before="import builtins; builtins.__dict__.pop('UNDEF', None)"),
        ),
        "hand probe of guards (session 4): after a NameError, defining the name in the builtins "
        "module was not seen (only the module globals were guarded)",
    ),
    "negative-zero-global-passes-the-guard-of-zero": Regression(
        """
import math

X = 0.0

def f(a):
    return str(X), math.copysign(1.0, X) * a, f'{X}'
""",
        (CallSpec(("1",)), CallSpec(("1",), before="X = -0.0"), CallSpec(("2",))),
        "hand probe of guards (session 4): after a capture with X == 0.0, X = -0.0 passes the "
        "guard `X == 0.0` and the cached entry prints '0.0' (eager '-0.0') and copysign is +1",
    ),
    "set-remove-of-a-missing-item-does-not-raise": Regression(
        """
def f(s, a):
    x = set(s)
    try:
        x.remove(a)
        r = 'removed'
    except KeyError as e:
        r = repr(e)
    return r, sorted(x)
""",
        (("{1, 2, 3}", "99"), ("{1, 2, 3}", "2"), ("set()", "0")),
        "hand probe of set methods (session 4): set.remove of a missing item raised nothing "
        "(it was modelled as discard); eager KeyError(99)",
    ),
    "container-operator-and-dict-update-errors-differ": Regression(
        """
class A:
    pass

def f(xs, d):
    out = []
    for p, q in ((xs, (1,)), ('s', 1), (1, 's'), (xs, A()), ({1}, xs)):
        try:
            out.append(p + q)
        except TypeError as e:
            out.append(str(e))
    x = 1
    try:
        x += 's'
    except TypeError as e:
        out.append(str(e))
    try:
        dict(d).update([(1, 2, 3)])
    except ValueError as e:
        out.append(str(e))
    e = dict(d)
    e |= [('b', 2)]
    out.append(e)
    return out
""",
        (("[1]", "{'a': 1}"), ("[]", "{}")),
        'hand probe of list/dict methods (session 4): `[1] + (1,)` said "unsupported operand '
        "type(s) for add: 'list' and 'tuple'\" (CPython: 'can only concatenate list (not \"tuple\") "
        "to list'; operator names instead of symbols everywhere); a 3-item dict update element "
        "said 'too many values to unpack'; `d |= [pairs]` raised TypeError",
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
    "list-seen-or-changed-by-its-sort-key": Regression(
        """
def f(xs):
    ys = list(xs)
    seen = []

    def key(v):
        seen.append(len(ys))
        return -v
    ys.sort(key=key)
    zs = list(xs)

    def grow(v):
        zs.append(v)
        return v
    try:
        zs.sort(key=grow)
        r = 'sorted'
    except ValueError as e:
        r = str(e)
    return ys, seen, zs, r
""",
        (("[3, 1, 2]",), ("[]",)),
        "hand probe of list.sort (session 4): a key function saw the list unchanged (CPython "
        "empties it while sorting: len 0) and one that appended to it raised nothing (CPython: "
        "ValueError: list modified during sort, the appended items dropped)",
    ),
    "call-binding-error-message-differs": Regression(
        """
def g(a, b=2, *args, c, **kw):
    return a

def h(p, /, q=1, *, r):
    return p

def f(n, d):
    out = []
    try:
        out.append(g(c=1))
    except TypeError as e:
        out.append(str(e))
    try:
        out.append(g(*range(n)))
    except TypeError as e:
        out.append(str(e))
    try:
        out.append(g(1, a=2, c=3))
    except TypeError as e:
        out.append(str(e))
    try:
        out.append(h(1, 2, 3, r=0))
    except TypeError as e:
        out.append(str(e))
    try:
        out.append(h(p=1, **d))
    except TypeError as e:
        out.append(str(e))
    return out
""",
        (("3", "{'r': 1}"), ("0", "{'z': 1}"), ("1", "{'q': 1, 'w': 2}")),
        "hand probe of call binding (session 4): an inlined call that fails to bind raised "
        'TypeError("g() missing required keyword-only argument: \'c\'"); CPython says "g() missing 1 '
        "required keyword-only argument: 'c'\" (counts, plurals, qualnames, order of checks)",
    ),
}

TENSOR = {
    "runtime-op-error-skips-finally": Regression(
        """
import torch

def f(t, u):
    try:
        t @ u
    finally:
        print('finally')
""",
        (
            ("torch.ones(2, 2, dtype=torch.float64)", "torch.ones(2, 2)"),
            ("torch.ones(2, 2)", "torch.ones(2, 2)"),
        ),
        "test_fuzz tensor program 20250063: matmul of float64 by float32 passes the meta kernel "
        "but raises in the real one; the error escaped the compiled region without running `finally`",
    ),
    "runtime-op-error-not-caught-by-except": Regression(
        """
import torch

def f(t, u):
    try:
        t @ u
    except RuntimeError as e:
        print('caught', e)
    return 1
""",
        (
            ("torch.ones(2, 2, dtype=torch.float64)", "torch.ones(2, 2)"),
            ("torch.ones(2, 2)", "torch.ones(2, 2)"),
        ),
        "shrunk by hand from test_fuzz tensor program 20250063: the same error is not caught by the "
        "user's `except RuntimeError`",
    ),
    "raise-in-loop-in-with-after-tensor-branch": Regression(
        """
import torch

def f(t):
    with torch.no_grad():
        for i in range(2):
            if t.sum() > 0:
                raise ValueError('a')
    return t
""",
        (("torch.ones(2)",), ("-torch.ones(2)",), ("torch.ones(3)",)),
        "tools/fuzz.py --seed 2 --mode tensor, program 2000132: after a data-dependent branch, an "
        "exception raised in a for loop inside a with block unwound a wrong stack: "
        "TypeError: 'range_iterator' object is not callable (the iterator taken for __exit__)",
    ),
    "torch-size-equals-tuple-is-false": Regression(
        """
import torch

def f(t):
    return t.shape == (2, 2), t.size() != (2, 2), (2, 2) == t.shape, t.shape in [(2, 2)]
""",
        (("torch.ones(2, 2)",), ("torch.ones(3, 2)",)),
        "hand probe of tensor idioms (session 3): `t.shape == (2, 2)` is False under capture "
        "(eager True); comparing with torch.Size or a list is right; no graph break",
    ),
    "tensor-setitem-called-as-a-method-is-lost": Regression(
        """
import torch

def f(t):
    t.__setitem__(0, 5.0)
    return t
""",
        (("torch.ones(2, 2)",),),
        "hand probe of tensor idioms (session 3): an explicit `t.__setitem__(0, 5.0)` call does "
        "not change the tensor (`t[0] = 5.0` does)",
    ),
    "native-rerun-after-a-failing-graph-chains-the-graph-error": Regression(
        """
import torch

def f(t):
    return t.long() // 0
""",
        (("torch.ones(2)",),),
        "hand probe of tensor errors (session 3), seen once differential.py compared exception "
        "chains: the error raised by the native rerun of a graph that failed carries the graph's "
        "own error as __context__ (traceback: 'During handling of the above exception, another "
        "exception occurred'); also `torch.tensor([[1, 2]]).pow(-1)`",
    ),
    "requires-grad-assignment-is-not-seen": Regression(
        """
import torch

def f(t):
    t.requires_grad = True
    return t.requires_grad, (t * 2).requires_grad
""",
        (("torch.ones(2)",),),
        "hand probe of tensor attributes (session 3): after `t.requires_grad = True` (or "
        "setattr) the function still sees requires_grad False, and ops on t record no autograd "
        "history; `t.requires_grad_()` is right",
    ),
    "python-attribute-stored-on-a-tensor-is-missing-after-break": Regression(
        """
import torch

def f(t):
    t.tag = 5
    return t.tag
""",
        (("torch.ones(2)",),),
        "hand probe of tensor attributes (session 3): reading back a Python attribute stored on a "
        "tensor breaks the graph, and the continuation raises AttributeError: 'Tensor' object has "
        "no attribute 'tag' (the store is replayed only afterwards)",
    ),
    "runtime-op-error-in-try-with-breaking-finally-is-swallowed": Regression(
        """
import torch

def f(t, u):
    x = u.long()
    try:
        x.mul_(1.5)
        u.sub_(u)
    finally:
        if t.sum() > -2:
            print('x')
    return u
""",
        (("torch.tensor([[0.0, 3.0]])", "torch.tensor([[-2.0, 0.0]])"),),
        "tools/fuzz.py --seed 44 --mode tensor --extra sets,opaque,dictiter,classattr,exc,loops, "
        "program tensorx-44000262 (107 statements, shrunk to 16, then by hand to 8): eager raises "
        "RuntimeError at x.mul_ (Float can't be cast to Long) and leaves u alone; captured raises "
        "nothing, prints 'x' and zeroes u (the write after the failing op happened)",
    ),
}


def _params(table):
    out = []
    for name, reg in sorted(table.items()):
        is_open = reg.open_bug and sys.version_info[:2] >= reg.open_from
        marks = (pytest.mark.xfail(strict=True, reason=reg.open_bug),) if is_open else ()
        out.append(pytest.param(name, marks=marks, id=name))
    return out


CHILD = """
import sys
from bcfront.testing.differential import run
from bcfront.testing.program import CallSpec, from_source  # noqa: F401 - CallSpec: for eval of the calls
verdict = run(from_source(sys.argv[1], eval(sys.argv[2]), name=sys.argv[3]))
print("ok" if verdict.ok else verdict.mismatch.describe())
"""


def _run(name: str, reg: Regression) -> None:
    if reg.isolate:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, reg.source, repr(reg.calls), name],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (
            f"{name} ({reg.found}): the interpreter died "
            f"(exit status {done.returncode}); output {done.stdout[-300:]!r}"
        )
        assert done.stdout.strip() == "ok", f"{name} ({reg.found}):\n{done.stdout}"
        return
    verdict = differential.run(from_source(reg.source, reg.calls, name=name))
    assert verdict.ok, f"{name} ({reg.found}):\n{verdict.mismatch.describe()}"


@pytest.mark.parametrize("name", _params(PY))
def test_python_regression(name):
    _run(name, PY[name])


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize("name", _params(TENSOR))
def test_tensor_regression(name):
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    _run(name, TENSOR[name])
