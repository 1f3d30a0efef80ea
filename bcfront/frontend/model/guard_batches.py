"""Guard checks batched into one C call (`bcfront.cfast`) where the guard function would
otherwise run several small Python checks of the same shape.

Two shapes are batched: the ``__code__`` identity checks of inlined functions
(``codes_are(functions, codes)``: a ``f.__code__`` read is a getset call with an audit
event each) and the scalar item checks of a guarded list or tuple (``items_are(seq,
indices, types, values)``: ~200 instructions per item in Python, a few dozen in the
batch).  Each batch replaces its checks with one call at the first one's place
(`_replace`); memoized checks are never batched (the memo skips them already).  The plain
checks are the reference: `tests/frontend/test_cfast_guards.py` compares them.
"""

from __future__ import annotations

import math
import types

from ...cfast import C
from ...ir.graph import is_literal
from .guard_kinds import GuardKind
from .namespace import Namespace
from .sources import AttrSource, ItemSource


def code_identity(g) -> tuple | None:
    """(source of the function, expected code) where `g` checks that a function's
    ``__code__`` is the traced one, else None: the one test of that guard shape, for the
    inlined functions here and for a root's own code (`regions.entry.root_code_keys`)."""
    src = g.source
    if g.kind != GuardKind.ID_MATCH or type(src) is not AttrSource or src.attr != "__code__":
        return None
    return src.base, g.expected


def inlined_function_code(g, ns: Namespace) -> tuple | None:
    """(function, code) where `g` checks that a function the guard function holds as a
    constant (not weakly: spelled as a name, maybe rebased to it by an identity check) has
    the ``__code__`` the trace inlined, else None."""
    found = code_identity(g)
    if found is None:
        return None
    name = ns.spell(found[0])
    fn = ns.globals.get(name) if name.isidentifier() else None
    return (fn, found[1]) if type(fn) is types.FunctionType else None


def _replace(head: list, calls: dict[int, str], drop: set[int]) -> list:
    """`head` with the check at each index of `calls` replaced by its call (keeping its
    guard, for the argument-first order) and the checks at `drop` removed."""
    return [(calls[i], False, h[2]) if i in calls else h for i, h in enumerate(head) if i not in drop]


def batch_code_checks(head: list, ns: Namespace) -> list:
    """`head`'s (expression, memoized, guard) checks with those of inlined functions'
    ``__code__`` that are not memoized made one ``codes_are`` call where the first was."""
    batch = [(i, fc) for i, (_, m, g) in enumerate(head) if not m and (fc := inlined_function_code(g, ns))]
    if len(batch) < 2 or C is None:
        return head
    fns = ns.const(tuple(fc[0] for _, fc in batch), "functions")
    codes = ns.const(tuple(fc[1] for _, fc in batch), "codes")
    call = f"{ns.const(C.codes_are, 'codes_are')}({fns}, {codes})"
    return _replace(head, {batch[0][0]: call}, {i for i, _ in batch[1:]})


_BATCHED_ITEM_TYPES = (int, str, bytes, float)


def batched_item(g, guards) -> bool:
    """`g` checks a scalar item of an exact list or tuple at a constant index the way
    ``items_are`` does: ``type(s[i]) is T and s[i] == v`` with nothing else (not a bool, a
    NaN or a zero, whose checks say more), and the sequence's type is guarded."""
    src, v = g.source, g.expected
    if g.kind != GuardKind.CONSTANT_MATCH or type(src) is not ItemSource or type(src.key) is not int:
        return False
    if type(v) not in _BATCHED_ITEM_TYPES or (type(v) is float and (math.isnan(v) or v == 0)):
        return False
    base = guards.get((GuardKind.TYPE_MATCH, src.base, None))
    return base is not None and base.expected in (list, tuple)


def batch_item_checks(head: list, ns: Namespace, guards) -> list:
    """`head`'s checks with the scalar item checks of each guarded list or tuple (two or
    more, not memoized) made one ``items_are`` call where its first was."""
    groups: dict = {}
    for i, (_, m, g) in enumerate(head):
        if not m and batched_item(g, guards):
            groups.setdefault(g.source.base, []).append(i)
    groups = {b: idx for b, idx in groups.items() if len(idx) > 1}
    if not groups or C is None:
        return head
    fn = ns.const(C.items_are, "items_are")
    calls, drop = {}, set()
    for base, idx in groups.items():
        gs = [head[i][2] for i in idx]
        spelled = [repr(g.expected) if is_literal(g.expected) else ns.const(g.expected) for g in gs]
        indices = "(" + "".join(f"{g.source.key!r}, " for g in gs) + ")"
        types_ = ns.const(tuple(type(g.expected) for g in gs), "item_types")
        calls[idx[0]] = f"{fn}({ns.spell(base)}, {indices}, {types_}, ({''.join(s + ', ' for s in spelled)}))"
        drop.update(idx[1:])
    return _replace(head, calls, drop)
