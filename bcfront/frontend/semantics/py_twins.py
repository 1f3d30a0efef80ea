"""C accelerators traced through their Python twins.

Some standard-library modules are written in Python and then replace their
functions by a C module's (`heapq` by `_heapq`, `bisect` by `_bisect`): the C
function mutates its arguments, so it is not pure (`pure_c`), but the Python
version it replaced does the very same thing and can be inlined.  `twin(obj)`
is that Python version: the module's source loaded once more, privately, with
its accelerator blocked.  The twin runs only inside traces; real code never
sees it.  When the twin raises, its message may be worded otherwise ("pop from
empty list"): on known plain arguments the C function itself runs on copies and
its own exception is the trace's (`twin_model`); else the call runs natively.
Below them: Python generators standing for C iterator classes (`CLASS_TWINS`).
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import operator
import sys

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.tracer import SymbolicRaise
from ..model.values import ObjectV
from . import dispatch, own_code
from .folding import NotConst, as_python, as_symbolic

# module -> its C accelerator, whose functions the module's own Python ones stand for
_ACCELERATED = {
    "heapq": "_heapq",
    "bisect": "_bisect",
    "collections": "_collections",  # _count_elements (Counter)
    "functools": "_functools",  # reduce, cmp_to_key
}
_TWINS: dict = {}
_index = operator.index  # a global of our own: read unguarded (`own_code`)
_LOADED: set = set()


def _load(name: str, accel: str) -> None:
    _LOADED.add(name)
    c_mod = sys.modules.get(accel) or importlib.import_module(accel)
    mod = private_copy(name, accel)
    if mod is None:  # no twin: the C call stays a graph break
        return
    for attr, fn in vars(c_mod).items():
        py = getattr(mod, attr, None)
        if callable(fn) and py is not None and getattr(py, "__code__", None) is not None:
            _TWINS[fn] = py


def private_copy(name: str, accel: str):
    """Module `name` loaded once more, privately, with its C accelerator module `accel`
    blocked (so its own Python functions stay), registered as bcfront's own code; None
    when it cannot be loaded so."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return None
    saved = sys.modules.get(accel)
    sys.modules[accel] = None  # type: ignore[assignment]  # `from _heapq import *` fails: Python ones stay
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        own_code.register(vars(mod))  # a private copy: bcfront's own from now on
    except Exception:  # noqa: BLE001 - no copy: the caller's C calls stay graph breaks
        return None
    finally:
        if saved is None:
            del sys.modules[accel]
        else:
            sys.modules[accel] = saved
    return mod


def twin(obj):
    """The Python function a C accelerator function stands for, or None."""
    mod = getattr(obj, "__module__", None)
    for name, accel in _ACCELERATED.items():
        if mod == accel and name not in _LOADED:
            _load(name, accel)
    try:
        return _TWINS.get(obj)
    except TypeError:
        return None


def twin_model(c_fn, py):
    """The model of C accelerator `c_fn`: its Python twin `py`, inlined."""

    def model(tx, args, kwargs):
        before = _known(args, kwargs)
        try:
            return dispatch.inline_call(tx, ObjectV(py), args, kwargs)
        except SymbolicRaise:
            # the twin raised, leaving its known arguments as they were: the C function
            # raises on copies of them too, leaving them alike? then its exception it is
            if before is not None and _known(args, kwargs) == before:
                exc = _c_raises(c_fn, before)
                if exc is not None:
                    raise as_symbolic(exc) from None
            name = f"{getattr(c_fn, '__module__', None)}.{getattr(c_fn, '__qualname__', c_fn)}"
            why = f"{name} raises: it runs natively"
            raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, why) from None

    return model


def _known(args, kwargs):
    """The plain values of the call's arguments (constants, containers of them), or None."""
    try:
        return [as_python(a) for a in args], {k: as_python(v) for k, v in kwargs.items()}
    except NotConst:
        return None


def _c_raises(c_fn, known):
    """The exception `c_fn` raises on copies of `known` when it leaves them unchanged."""
    args, kwargs = copy.deepcopy(known)
    try:
        c_fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the C function's own exception, for the trace
        return e if (args, kwargs) == known else None
    return None


# -- iterator classes of C modules, as Python generators ----------------------------------
# Each checks its arguments when called, as the C constructor does (same exceptions), then
# returns a generator doing the same steps.  An object that leaves the trace is that
# generator (iterates the same; its type is `generator`, as torch.compile's polyfills).


def _pos_int(r, what="r"):
    r = _index(r)
    if r < 0:
        raise ValueError(f"{what} must be non-negative")
    return r


def _combinations(iterable, r):
    pool = tuple(iterable)
    r = _pos_int(r)

    def gen():
        n = len(pool)
        if r > n:
            return
        idx = list(range(r))
        yield tuple(pool[i] for i in idx)
        while True:
            for i in reversed(range(r)):
                if idx[i] != i + n - r:
                    break
            else:
                return
            idx[i] += 1
            for j in range(i + 1, r):
                idx[j] = idx[j - 1] + 1
            yield tuple(pool[i] for i in idx)

    return gen()


def _permutations(iterable, r=None):
    pool = tuple(iterable)
    n = len(pool)
    r = n if r is None else _pos_int(r)

    def gen():
        if r > n:
            return
        idx = list(range(n))
        cycles = list(range(n, n - r, -1))
        yield tuple(pool[i] for i in idx[:r])
        while n:
            for i in reversed(range(r)):
                cycles[i] -= 1
                if cycles[i] == 0:
                    idx[i:] = idx[i + 1 :] + idx[i : i + 1]
                    cycles[i] = n - i
                else:
                    j = cycles[i]
                    idx[i], idx[-j] = idx[-j], idx[i]
                    yield tuple(pool[i] for i in idx[:r])
                    break
            else:
                return

    return gen()


def _pairwise(iterable):
    it = iter(iterable)

    def gen():
        for a in it:
            for b in it:
                yield a, b
                a = b
            return

    return gen()


def _accumulate(iterable, func=None, *, initial=None):
    it = iter(iterable)

    def gen():
        total = initial
        if initial is None:
            for total in it:  # noqa: B007 - the first item, if any
                break
            else:
                return
        yield total
        for x in it:
            total = total + x if func is None else func(total, x)
            yield total

    return gen()


def _repeat(obj, times=None):
    if times is not None:
        times = _index(times)

    def gen():
        if times is None:
            while True:
                yield obj
        for _ in range(times):
            yield obj

    return gen()


def _zip_longest(*iterables, fillvalue=None):
    its = [iter(x) for x in iterables]

    def gen():
        if not its:
            return
        left = len(its)
        while True:
            row = []
            for i, it in enumerate(its):
                for v in it:
                    row.append(v)
                    break
                else:
                    left -= 1
                    if not left:
                        return
                    its[i] = _repeat(fillvalue)
                    row.append(fillvalue)
            yield tuple(row)

    return gen()


def _groupby(iterable, key=None):
    it = iter(iterable)
    state = {"done": False, "cur": None, "key": None, "have": False, "gen": 0}
    keyf = (lambda x: x) if key is None else key

    def advance():
        for v in it:
            state["cur"], state["key"], state["have"] = v, keyf(v), True
            return
        state["done"] = True

    def group(k, gen_id):
        while state["gen"] == gen_id:
            yield state["cur"]
            advance()
            if state["done"] or not (k == state["key"]):  # noqa: SIM201 - __eq__, as C
                return

    def gen():
        k = None
        while True:
            state["gen"] += 1  # the group handed out before is over (as CPython's)
            if not state["have"]:
                advance()
            elif state["gen"] > 1:
                while not state["done"] and k == state["key"]:
                    advance()
            if state["done"]:
                return
            k = state["key"]
            yield k, group(k, state["gen"])

    return gen()


CLASS_TWINS = {
    itertools.combinations: _combinations,
    itertools.permutations: _permutations,
    itertools.pairwise: _pairwise,
    itertools.accumulate: _accumulate,
    itertools.repeat: _repeat,
    itertools.zip_longest: _zip_longest,
    itertools.groupby: _groupby,
}

own_code.register(globals())
