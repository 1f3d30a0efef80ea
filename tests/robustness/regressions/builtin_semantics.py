"""Regressions of Python semantics modelled in the trace: builtins, operators and
container methods (their results and their exact errors), calls and their binding errors."""

from __future__ import annotations

from . import Regression

BUILTINS = {
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
    "sequence-repeated-by-a-bool-raises": Regression(
        """
def f(a, xs):
    return xs * a, [0] * a, a * (1, 2)
""",
        (("True", "[1, 2]"), ("False", "[3]"), ("2", "[]")),
        "hand probe of builtin edge cases with a bool for an int (session 3): `[0] * True` is [0] "
        "eagerly; captured TypeError: unsupported operand type(s) for mul: 'list' and 'bool'",
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
