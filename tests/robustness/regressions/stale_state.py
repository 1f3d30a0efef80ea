"""Regressions of state read at capture that changed before a later call (a missing
guard): class, module, builtin and global state, function code, attributes read once."""

from __future__ import annotations

from bcfront.testing.program import CallSpec

from . import Regression

STALE_STATE = {
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
}
