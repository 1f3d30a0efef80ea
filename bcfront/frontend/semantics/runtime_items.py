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

import functools

from ...ir.graph import is_literal
from ..model.builder import EARLY_RUNTIME
from ..model.sources import PureCallSource
from ..model.values import Const, RuntimeV, SymIntV, Value, is_unread
from . import pure_c

# The calls that may take lists and tuples of runtime items are declared in `pure_c`: its
# `TABLE`'s entries pure on lists or tuples (``max``, ``sorted``, ``x in xs``, ``xs.count``,
# ``bisect``: `Pure.items`, `Pure.any_sequence`...) and its `IN_PLACE` calls.


def may_take_items(fn) -> bool:
    """Whether `fn` is declared to take lists or tuples of runtime items (`pure_c`)."""
    try:
        in_place = pure_c.IN_PLACE.get(fn)
    except TypeError:  # an unhashable callable
        return False
    if in_place is not None:
        return not in_place.moves_only  # (``xs.pop()`` of known items: the trace's own)
    entry = pure_c.lookup(fn)
    return entry is not None and (list in entry.accepts or tuple in entry.accepts)


def item_keywords(fn) -> tuple:
    """The keywords `fn` may take on runtime items, as literal constants (``reverse=``)."""
    entry = pure_c.IN_PLACE.get(fn) or pure_c.lookup(fn)
    return () if entry is None else entry.item_keywords


def literal_keywords(fn, kwargs: dict | None) -> tuple | None:
    """`kwargs` as ``(name, value)`` pairs of literal constants known at capture that a
    call on runtime items or an unread list may take (`item_keywords`: ``reverse=True``);
    None where some keyword is not declared or its value is not such a constant."""
    if not kwargs:
        return ()
    allowed = item_keywords(fn)
    out = []
    for name, v in kwargs.items():
        if name not in allowed or not isinstance(v, Const) or is_unread(v) or not is_literal(v.value):
            return None
        out.append((name, v.value))
    return tuple(out)


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
    entry = pure_c.lookup(fn)
    spread = entry is not None and entry.spread
    if spread and not keywords and len(layout) == 1 and layout[0] is not None and layout[0][1] >= 2:
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
        if first[0] is tuple or _any_sequence(fn):

            def caller(*flat):
                return fn(flat)

        else:

            def caller(*flat):
                return fn(list(flat))

    elif first is not None and all(k is None for k in layout[1:]):  # ``bisect(xs, x)``
        cls, n = first
        if cls is tuple or _any_sequence(fn):

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


def _any_sequence(fn) -> bool:
    entry = pure_c.lookup(fn)
    return entry is not None and entry.any_sequence
