"""Models of ``collections.deque``: its constructor, methods and special methods.

A deque is a `c_instances.DequeV`; each model is registered under the deque method
it stands for (`registry.MODELS`), so ``q.append``, ``len(q)``, ``q[i]``, ``x in q``,
``for x in q`` and ``q == r`` all find it through the class, as CPython would.  A
change replaces the value's items tuple through the journal (`_store`), which marks an
outside deque written (replayed after the region) and lets a live iterator see it
(``RuntimeError: deque mutated during iteration``, as CPython's).  ``maxlen`` drops
items from the other end as CPython does.
"""

from __future__ import annotations

import collections

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import DEQUE_ITER, DEQUE_REV_ITER, DequeIterV, DequeV
from ..model.values import Const, TupleV, Value
from . import ops
from .classes import index_of
from .compare import compare, equal
from .folding import NotConst, as_python, raise_
from .iteration import to_list
from .registry import MODELS, ctor, model

deque = collections.deque


def _deque(v) -> DequeV:
    if not isinstance(v, DequeV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"deque method on {v.describe()}")
    return v


def _bounded(items: tuple, maxlen, left: bool) -> tuple:
    """`items` cut to `maxlen`, dropping from the left (appends) or the right (appendleft)."""
    if maxlen is None or len(items) <= maxlen:
        return items
    return items[len(items) - maxlen :] if left else items[:maxlen]


def _store(tx, q: DequeV, items: tuple, left: bool = True) -> None:
    tx.set(q, "items", _bounded(tuple(items), q.maxlen, left))
    ops.touch(tx, q)


def _int(v: Value, what: str, tx=None) -> int:
    idx = index_of(tx, v)
    if idx is None:
        if isinstance(v, Const):
            raise_(TypeError, f"'{type(v.value).__name__}' object cannot be interpreted as an integer")
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"deque {what} with {v.describe()}")
    return idx


@ctor(deque)
def _new(tx, clsv, args, kwargs):
    if len(args) > 2 or set(kwargs) - {"iterable", "maxlen"}:
        raise_(TypeError, "deque() takes at most 2 arguments")
    iterable = args[0] if args else kwargs.get("iterable")
    m = args[1] if len(args) > 1 else kwargs.get("maxlen", Const(None))
    maxlen = None if isinstance(m, Const) and m.value is None else _int(m, "maxlen")
    if maxlen is not None and maxlen < 0:
        raise_(ValueError, "maxlen must be non-negative")
    items = to_list(tx, iterable) if iterable is not None else []
    return DequeV(_bounded(tuple(items), maxlen, True), maxlen)


@model(deque.append)
def _append(tx, args, kwargs):
    q = _deque(args[0])
    _store(tx, q, (*q.items, args[1]))
    return Const(None)


@model(deque.appendleft)
def _appendleft(tx, args, kwargs):
    q = _deque(args[0])
    _store(tx, q, (args[1], *q.items), left=False)
    return Const(None)


def _extend_end(left: bool):
    def m(tx, args, kwargs):
        q = _deque(args[0])
        items = q.items if args[1] is q else tuple(to_list(tx, args[1]))
        if items:
            _store(tx, q, (*items[::-1], *q.items) if left else (*q.items, *items), left=not left)
        return Const(None)

    return m


_extend = MODELS[deque.extend] = _extend_end(False)
MODELS[deque.extendleft] = _extend_end(True)


def _pop_end(left: bool):
    def m(tx, args, kwargs):
        q = _deque(args[0])
        if not q.items:
            raise_(IndexError, "pop from an empty deque")
        item = q.items[0] if left else q.items[-1]
        _store(tx, q, q.items[1:] if left else q.items[:-1])
        return item

    return m


MODELS[deque.pop] = _pop_end(False)
MODELS[deque.popleft] = _pop_end(True)


@model(deque.rotate)
def _rotate(tx, args, kwargs):
    q = _deque(args[0])
    n = _int(args[1], "rotate") if len(args) > 1 else 1
    if len(q.items) > 1 and n % len(q.items):
        k = n % len(q.items)
        _store(tx, q, q.items[-k:] + q.items[:-k])
    return Const(None)


@model(deque.clear)
def _clear(tx, args, kwargs):
    q = _deque(args[0])
    if q.items:
        _store(tx, q, ())
    return Const(None)


@model(deque.reverse)
def _reverse(tx, args, kwargs):
    q = _deque(args[0])
    _store(tx, q, q.items[::-1])
    return Const(None)


@model(deque.count)
def _count(tx, args, kwargs):
    q = _deque(args[0])
    return Const(sum(1 for x in q.items if equal(tx, x, args[1])))


@model(deque.index)
def _index(tx, args, kwargs):
    q = _deque(args[0])
    bounds = [_int(a, "index") for a in args[2:4]]
    start, stop, _ = slice(*(bounds + [None, None])[:2]).indices(len(q.items))
    for i in range(start, stop):
        if equal(tx, q.items[i], args[1]):
            return Const(i)
    text = MODELS[repr](tx, [args[1]], {})
    raise_(ValueError, f"{text.value} is not in deque" if isinstance(text, Const) else "not in deque")


@model(deque.remove)
def _remove(tx, args, kwargs):
    q = _deque(args[0])
    for i, x in enumerate(q.items):
        if equal(tx, x, args[1]):
            _store(tx, q, q.items[:i] + q.items[i + 1 :])
            return Const(None)
    raise_(ValueError, "deque.remove(x): x not in deque")


@model(deque.insert)
def _insert(tx, args, kwargs):
    q = _deque(args[0])
    if q.maxlen is not None and len(q.items) >= q.maxlen:
        raise_(IndexError, "deque already at its maximum size")
    items = list(q.items)
    items.insert(_int(args[1], "insert"), args[2])
    _store(tx, q, items)
    return Const(None)


@model(deque.copy, deque.__copy__)
def _copy(tx, args, kwargs):
    q = _deque(args[0])
    return DequeV(q.items, q.maxlen)


@model(deque.maxlen)
def _maxlen(tx, args, kwargs):
    return Const(_deque(args[0]).maxlen)


# -- special methods ------------------------------------------------------------------------------


@model(deque.__len__)
def _len(tx, args, kwargs):
    return Const(len(_deque(args[0]).items))


def _position(q: DequeV, key: Value) -> int:
    i = _int(key, "index")
    n = len(q.items)
    if not -n <= i < n:
        raise_(IndexError, "deque index out of range")
    return i % n


@model(deque.__getitem__)
def _getitem(tx, args, kwargs):
    q = _deque(args[0])
    if isinstance(args[1], Const) and type(args[1].value) is slice:
        raise_(TypeError, "sequence index must be integer, not 'slice'")
    return q.items[_position(q, args[1])]


@model(deque.__setitem__)
def _setitem(tx, args, kwargs):
    q = _deque(args[0])
    items = list(q.items)
    items[_position(q, args[1])] = args[2]
    _store(tx, q, items)
    return Const(None)


@model(deque.__delitem__)
def _delitem(tx, args, kwargs):
    q = _deque(args[0])
    i = _position(q, args[1])
    _store(tx, q, q.items[:i] + q.items[i + 1 :])
    return Const(None)


@model(deque.__contains__)
def _contains(tx, args, kwargs):
    q = _deque(args[0])
    return Const(any(equal(tx, x, args[1]) for x in q.items))


@model(deque.__iter__)
def _iter(tx, args, kwargs):
    return DequeIterV(_deque(args[0]))


@model(deque.__reversed__)
def _reversed(tx, args, kwargs):
    return DequeIterV(_deque(args[0]), backwards=True)


def _next(tx, args, kwargs):
    it = args[0]
    if not isinstance(it, DequeIterV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ITERATOR, f"next() of {it.describe()}")
    if it.deque.items is not it.items:
        raise_(RuntimeError, "deque mutated during iteration")
    if it.index >= len(it.items):
        raise_(StopIteration)
    tx.set(it, "index", it.index + 1)
    return it.items[-it.index if it.backwards else it.index - 1]


for _it in (DEQUE_ITER, DEQUE_REV_ITER):
    MODELS[_it.__dict__["__next__"]] = _next
    MODELS[_it.__dict__["__iter__"]] = lambda tx, args, kwargs: args[0]


def _compare(opname: str):
    """Rich comparison: another deque item by item (as lists), anything else NotImplemented."""

    def m(tx, args, kwargs):
        a, b = args[0], args[1]
        if not isinstance(b, DequeV):
            return Const(NotImplemented)
        return compare(tx, opname, TupleV(_deque(a).items), TupleV(b.items))

    return m


for _op, _name in (("==", "__eq__"), ("!=", "__ne__"), ("<", "__lt__"), ("<=", "__le__")):
    MODELS[getattr(deque, _name)] = _compare(_op)
MODELS[deque.__gt__] = _compare(">")
MODELS[deque.__ge__] = _compare(">=")


@model(deque.__add__)
def _add(tx, args, kwargs):
    q, other = _deque(args[0]), args[1]
    if not isinstance(other, DequeV):
        raise_(TypeError, f'can only concatenate deque (not "{other.python_type().__name__}") to deque')
    return DequeV(_bounded(q.items + other.items, q.maxlen, True), q.maxlen)


@model(deque.__iadd__)
def _iadd(tx, args, kwargs):
    _extend(tx, args, kwargs)
    return args[0]


@model(deque.__mul__, deque.__rmul__)
def _mul(tx, args, kwargs):
    q = _deque(args[0])
    n = _int(args[1], "*")
    return DequeV(_bounded(q.items * max(n, 0), q.maxlen, True), q.maxlen)


@model(deque.__imul__)
def _imul(tx, args, kwargs):
    q = _deque(args[0])
    _store(tx, q, q.items * max(_int(args[1], "*="), 0))
    return q


@model(deque.__repr__)
def _repr(tx, args, kwargs):
    q = _deque(args[0])
    try:
        return Const(repr(deque([as_python(x) for x in q.items], q.maxlen)))
    except NotConst:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "repr() of a deque of unknown values") from None
