"""Lists and tuples of runtime values, passed item by item to the C calls that read them.

`runtime_values` records a pure builtin call on runtime values as a `PureCallSource` the
region computes.  A list or tuple argument whose items are runtime values (or literal
constants of builtin scalar types) is passed the same way, flattened: the source's
function is `on_items(fn, layout)`, which rebuilds the sequences from the items and calls
``fn``.  This module holds what decides which calls may be made so and how: the declared
tables (`ON_ITEMS`: ``max``, ``sorted``, ``x in xs``, ``xs.count``...; `MUTATORS`: the C
calls that change a list in place, ``heapq.heappush``, ``bisect.insort``, ``list.sort``),
which calls raise on no items of the types at hand (`total_on_items`: nothing for the guard
to check), the callers themselves, and `computed_once`: a result the region would spell
item by item (a sorted list, a list after a change) or one on the source of a list item
that a later write may replace is computed once, first.

An int input that is a ShapeEnv symbol (torch imported: an int that changed,
`tensor_inputs.wrap_sym_int`) is such an item too (`input_symbol`): fetched from its source,
its hint the example.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import operator

from ..model.builder import EARLY_RUNTIME
from ..model.sources import PureCallSource
from ..model.values import RuntimeV, SymIntV, Value, is_unread

# calls that may take lists and tuples of runtime items (`runtime_values.call`), besides
# the pure C table's entries declared pure on lists or tuples (``bisect.bisect_right``): on
# items of builtin scalar types they compare, add or test them, running nobody's Python code
ON_ITEMS = frozenset(
    {
        max, min, sum, sorted, any, all, operator.contains, operator.countOf, operator.indexOf,
        list.index, list.count, tuple.index, tuple.count,
    }
)  # fmt: skip
# of those, calls that take any sequence alike: given the items as a tuple
_ANY_SEQUENCE = frozenset({max, min, sum, sorted, any, all, operator.contains, operator.countOf})
_ANY_SEQUENCE |= {bisect.bisect_left, bisect.bisect_right}
# calls that raise on no items of the same types (`total_on_items`), with their number
# of arguments and what they do to the items: "eq" (``==`` and truth: never raise on
# scalars), "order" (``<``: numbers among numbers, texts among texts; the result an int),
# "pick" (``<``, the result one of the items: of their type when they have one), "sum"
_TOTAL_ITEMS = {
    operator.contains: (2, "eq"), operator.countOf: (2, "eq"), list.count: (2, "eq"),
    tuple.count: (2, "eq"), any: (1, "eq"), all: (1, "eq"), max: (1, "pick"), min: (1, "pick"),
    sorted: (1, "pick"), bisect.bisect_left: (2, "order"), bisect.bisect_right: (2, "order"),
    sum: (1, "sum"),
}  # fmt: skip
# C calls that change a list in place, run nobody's Python code on items of one of
# `ORDERED_KINDS` and raise on none (the list's length fixed): computed on a copy of
# the list's items, which the list holds afterwards
MUTATORS = frozenset(
    {
        heapq.heappush, heapq.heappop, heapq.heapify, heapq.heapreplace, heapq.heappushpop,
        bisect.insort_left, bisect.insort_right, list.sort,
    }
)  # fmt: skip
ORDERED_KINDS = frozenset({int, float, str, bytes})
# calls that take the items as arguments of their own as well, two or more of them
_VARARGS = frozenset({max, min})
# keyword arguments those calls may take, as literal constants (not ``key=``: Python code)
ITEM_KEYWORDS = {sorted: ("reverse",), list.sort: ("reverse",)}


def input_symbol(v: Value) -> bool:
    """Whether `v` is an int input that is a ShapeEnv symbol (torch imported: an int that
    changed, `tensor_inputs.wrap_sym_int`): as an item or argument of a call on items, a
    runtime value fetched from its source, its hint the example."""
    return type(v) is SymIntV and v.source is not None


def unread_item(v: Value) -> bool:
    """Whether item `v` is known only at run time (a runtime value unread, a symbol)."""
    return is_unread(v) or input_symbol(v)


def item_example(v: Value):
    """The value item `v` has in this capture (without reading it: no guard)."""
    if isinstance(v, SymIntV):  # an input's (`input_symbol`): torch is imported
        from ...ir.fake import int_hint

        return int_hint(v.example)
    return v.example if isinstance(v, RuntimeV) and is_unread(v) else v.value  # type: ignore[attr-defined]


def computed_once(tx, example, src: PureCallSource) -> None:
    """Has the region compute `src` once, before anything else it does (after reading the
    runtime values it is computed from), instead of where each of its items is used."""
    tx.__dict__.setdefault(EARLY_RUNTIME, []).append(RuntimeV(example, src, tx))


def kinds_of(examples: list) -> set:
    """The types of `examples` and of the items of those that are lists or tuples."""
    kinds: set = set()
    for x in examples:
        kinds.update(map(type, x) if type(x) in (list, tuple) else (type(x),))
    return kinds


_CALLERS: dict = {}


def on_items(fn, layout: tuple, mutates: bool = False, keywords: tuple = ()):
    """The function calling ``fn`` on its arguments rebuilt from flat items: `layout` has
    None for an argument passed as it is, ``(list, n)`` or ``(tuple, n)`` for one made of
    the next n (one function per (fn, layout), so that equal calls are equal sources).
    `mutates`: ``fn`` changes its first argument, a list: the function gives back the
    call's result and that list after it.  `keywords`: constant keyword arguments."""
    if fn in _VARARGS and not keywords and len(layout) == 1 and layout[0] is not None and layout[0][1] >= 2:
        return fn  # ``max(a, b, c)``: what ``max([a, b, c])`` is, no Python frame between
    key = (fn, layout, mutates, keywords)
    made = _CALLERS.get(key)
    if made is None:
        if keywords:
            made = _make_caller(functools.partial(fn, **dict(keywords)), layout, mutates)
            made.__qualname__ = made.__qualname__.replace("<", f"<{_shown(keywords)}; ", 1)
        else:
            made = _make_caller(fn, layout, mutates)
        _CALLERS[key] = made
    return made


def _shown(keywords: tuple) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in keywords)


def _make_caller(fn, layout: tuple, mutates: bool):
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None and isinstance(fn, functools.partial):
        name = getattr(fn.func, "__qualname__", None)
    name = name or repr(fn)
    shape = ", ".join("_" if k is None else f"{k[0].__name__}[{k[1]}]" for k in layout)
    first = layout[0]
    if mutates:  # ``heappush(xs, x)``: on a new list of the items, left as the call leaves it
        n = first[1]

        def caller(*flat):
            lst = list(flat[:n])
            return fn(lst, *flat[n:]), lst

    elif len(layout) == 1 and first is not None:  # ``sorted(xs)``: the items, in one tuple
        if first[0] is tuple or fn in _ANY_SEQUENCE:

            def caller(*flat):
                return fn(flat)

        else:

            def caller(*flat):
                return fn(list(flat))

    elif first is not None and all(k is None for k in layout[1:]):  # ``bisect(xs, x)``
        cls, n = first
        if cls is tuple or fn in _ANY_SEQUENCE:

            def caller(*flat):
                return fn(flat[:n], *flat[n:])

        else:

            def caller(*flat):
                return fn(list(flat[:n]), *flat[n:])

    else:

        def caller(*flat):
            args, i = [], 0
            for kind in layout:
                if kind is None:
                    args.append(flat[i])
                    i += 1
                else:
                    args.append(kind[0](flat[i : i + kind[1]]))
                    i += kind[1]
            return fn(*args)

    caller.__qualname__ = f"{name}<{shape}>"
    return caller


def total_on_items(fn, examples: list) -> bool:
    """Whether ``fn(*examples)``, a call on lists or tuples of the same lengths, raises on
    no items of the same types (its result's type fixed too)."""
    arity = _TOTAL_ITEMS.get(fn)
    if arity is None or len(examples) != arity[0]:
        return False
    kinds = kinds_of(examples)
    if {str, bytes} <= kinds:  # ``==`` of the two may raise (python -bb)
        return False
    if arity[1] == "eq":
        return True
    if arity[1] == "sum":
        return kinds <= {int, bool} or kinds <= {float}
    if arity[1] == "pick":  # ``max([1, 2.5])`` is a float, ``max([3, 2.5])`` an int
        return len(kinds) == 1 and kinds <= ORDERED_KINDS
    return kinds <= {int, bool, float} or kinds <= {str} or kinds <= {bytes}
