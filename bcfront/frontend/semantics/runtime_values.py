"""Texts and numbers known only at run time, and the pure builtin calls made on them.

An int argument that changes between calls becomes a symbol once torch is imported
(`model.tensor_inputs`); a str, bytes or float argument (an int one without torch) used
to be a constant guarded by value, one entry per value until the recompile limit.  Now
one that has taken a third value (`ShapePolicy.value_dynamic`: the first two keep
constant entries) is a `RuntimeV`: its type is guarded, its value is not -- until the
trace reads it (`RuntimeV.value`: a dict key, a loop bound, any model that needs the
value), which guards it equal there: a lazy guard, and only then.

Pure builtins called on runtime values do not read them.  `call` records the call as
a `PureCallSource`, which the region computes again from the inputs, and its result is
a runtime value in turn: ``s.upper()``, ``a + "/" + b``, ``len(s)``, ``s == "x"``,
``s.split("/")`` (a list of runtime items, its length guarded).  The guard function
computes each such call once more to check its result's type: an input the call
raises on (``int(s)``, ``s.index(t)``) fails the check, and the next capture meets the
raise with the value at hand.  Where the trace branches on a result (``if
s.startswith("/"):``), the guard is on that result (``s.startswith('/') is True``),
not on the text: every text that answers alike shares the entry.

Only calls that run nobody's Python code qualify, on arguments of builtin scalar
types: methods of str and bytes, a few builtins and `math` functions (`_FUNCTIONS`),
operators (`_OPERATORS`) and the declared pure C table (`pure_c`).  Calls that raise on
no arguments of their types (`_total`: ``a + b`` of ints, ``s.upper()``) need no check
in the guard.  Anything else reads the value and proceeds as on a constant.

A list or tuple whose items are runtime values (and literal constants of `SCALARS`) is
passed the same way, item by item (`_items_call`, the tables and callers of
`runtime_items`): ``max(xs)``, ``sorted(xs)``, ``x in xs``, ``xs.count(x)``,
``bisect.bisect(xs, x)`` are a `PureCallSource` of `runtime_items.on_items(fn, layout)`;
the list's length is guarded already, so a list of any values the items' types allow
shares the entry instead of one per order of its items.  A ``key=`` or ``default=``, or an
item of any other type (its ``<`` may be Python code), and the call is traced as before.
The C calls that change a list in place (``heapq.heappush``, ``bisect.insort``,
``xs.sort()``) are computed the same way on a copy of its items, giving back the call's
result and the items after it, which the list holds from then on (runtime values; the
region writes them back as any change of an outside list) -- on items of one type only,
where they raise on none (`_mutated`).
"""

from __future__ import annotations

import math
import operator
import os
import types
from typing import TypeGuard

from ...ir.graph import is_literal
from ..model.guard_kinds import GuardKind
from ..model.sources import ItemSource, PureCallSource, Ref, Source
from ..model.values import (
    Const,
    ListV,
    MethodV,
    ObjectV,
    RuntimeV,
    SetV,
    SliceV,
    TupleV,
    Value,
    is_unread,
)
from . import pure_c, runtime_items


def joined(sep, *items):
    """``sep.join(items)`` with the items as arguments: a join of a list the trace built
    (``"/".join(parts)``) as a call on the runtime values in it."""
    return sep.join(items)


def is_join(fn) -> bool:
    """``str.join`` or ``bytes.join``: on a list of runtime values, a call of `joined`."""
    return fn is str.join or fn is bytes.join


SCALARS = frozenset({str, bytes, int, float, bool, type(None)})
_RESULTS = SCALARS | {slice}  # a slice of runtime bounds: ``s[i:]``
_FUNCTIONS = frozenset(
    {
        len, ord, chr, str, repr, ascii, int, float, bool, format, slice, abs, round, min, max,
        math.floor, math.ceil, math.trunc, math.sqrt, math.exp, math.log, math.log2, math.log10,
        math.sin, math.cos, math.tan, math.atan2, math.hypot, math.fabs, math.isnan,
        math.isinf, math.isfinite, math.copysign, math.gcd, joined,
    }
)  # fmt: skip
_OPERATORS = frozenset(
    {
        operator.add, operator.iadd, operator.mul, operator.imul, operator.mod, operator.imod,
        operator.sub, operator.isub, operator.truediv, operator.itruediv, operator.floordiv,
        operator.ifloordiv, operator.pow, operator.ipow, operator.neg, operator.pos,
        operator.invert, operator.and_, operator.iand, operator.or_, operator.ior,
        operator.xor, operator.ixor, operator.lshift, operator.ilshift, operator.rshift,
        operator.irshift, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
        operator.ge, operator.contains, operator.getitem, operator.not_,
    }
)  # fmt: skip
_DESCRIPTORS = (types.MethodDescriptorType, types.WrapperDescriptorType)
# methods whose result is a list or tuple of texts of the receiver's type: its items are
# runtime values in turn, the sequence's length guarded
_SPLITTERS = frozenset(
    getattr(t, n) for t in (str, bytes) for n in ("split", "rsplit", "splitlines", "partition", "rpartition")
)
_COMPARE = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)
# calls that raise on no int arguments, whose result's type is fixed (int arithmetic that
# cannot divide by zero, shift by a negative count or overflow a float)
_TOTAL_ON_INT = frozenset(
    {
        operator.add, operator.iadd, operator.sub, operator.isub, operator.mul, operator.imul,
        operator.neg, operator.pos, operator.invert, operator.and_, operator.iand, operator.or_,
        operator.ior, operator.xor, operator.ixor, operator.not_, abs, bool, *_COMPARE,
    }
)  # fmt: skip
# the same on floats alone: IEEE arithmetic gives inf or nan, never raises (an int mixed in
# may be too large for a float: OverflowError, which the guard must see)
_TOTAL_ON_FLOAT = frozenset(
    {
        operator.add, operator.iadd, operator.sub, operator.isub, operator.mul, operator.imul,
        operator.neg, operator.pos, operator.not_, abs, bool, math.fabs, math.isnan, math.isinf,
        math.isfinite, *_COMPARE,
    }
)  # fmt: skip
# calls that raise on no str arguments (nor None, nor a tuple of strs), whose result's type
# is fixed: the guard need not compute them to check it
_TOTAL_ON_STR = frozenset(
    {
        operator.add, operator.iadd, operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
        operator.ge, operator.contains, operator.not_, len, bool, joined,
        *(getattr(str, n) for n in (
            "upper", "lower", "casefold", "swapcase", "title", "capitalize", "strip", "lstrip",
            "rstrip", "startswith", "endswith", "find", "rfind", "count", "replace", "isdigit",
            "isalpha", "isalnum", "isspace", "isupper", "islower", "isidentifier", "isascii",
            "isdecimal", "isnumeric", "istitle", "isprintable", "removeprefix", "removesuffix",
        )),
    }
)  # fmt: skip
# calls that give back their argument itself when it is a text of these types
_IDENTITY = {os.fspath: (str, bytes), str: (str,)}
_SEQUENCE_LIMIT = 64  # longer results are read as constants (one guard beats many)
_NOT_PART = object()


def is_runtime(v: Value) -> TypeGuard[RuntimeV]:
    """Whether `v` is a runtime value the trace has not read (its value unguarded)."""
    return is_unread(v)


def _qualifies(fn) -> bool:
    if type(fn) in _DESCRIPTORS:
        return getattr(fn, "__objclass__", None) in (str, bytes)
    try:
        return fn in _FUNCTIONS or fn in _OPERATORS or pure_c.lookup(fn) is not None
    except TypeError:  # an unhashable callable
        return False


def _part(v: Value):
    """`v` as an argument of a `PureCallSource`: a runtime value's source, a literal, or
    an immutable constant held by identity; `_NOT_PART` for anything else."""
    if is_runtime(v):
        return v.source
    if isinstance(v, SliceV):
        bounds = [_part(b) for b in (v.start, v.stop, v.step)]
        if all(type(b) in (int, type(None)) for b in bounds):
            return Ref(slice(*bounds), repr(slice(*bounds)))
        return _NOT_PART
    if isinstance(v, (TupleV, SetV)):  # of plain constants: ``c in ("a", "b")``, a keyword set
        items = v.items if isinstance(v, TupleV) else list(v.entries.values())
        if (type(v) is TupleV and v.cls is tuple) or (type(v) is SetV and v.frozen):
            if all(isinstance(x, Const) and not is_runtime(x) and type(x.value) in SCALARS for x in items):
                made = (tuple if isinstance(v, TupleV) else frozenset)(x.value for x in items)
                return Ref(made, repr(made))
        return _NOT_PART
    if not isinstance(v, Const):
        return _NOT_PART
    x = v.value
    if type(x) in SCALARS and is_literal(x):
        return x
    if type(x) in (tuple, frozenset) and all(type(i) in SCALARS for i in x):
        return Ref(x, repr(x))
    if type(x) is slice and all(type(b) in (int, type(None)) for b in (x.start, x.stop, x.step)):
        return Ref(x, repr(x))
    return _NOT_PART


def _example(part):
    if isinstance(part, Source):
        return None  # replaced by the runtime value's example by the caller
    return part.obj if isinstance(part, Ref) else part


def call(tx, fn, args: list, kwargs: dict | None = None) -> Value | None:
    """``fn(*args)`` recorded for the region to compute, when some argument is a runtime
    value and the call qualifies; None otherwise (the caller proceeds as on constants)."""
    if is_join(fn) and not kwargs and len(args) == 2:
        items = args[1]
        if isinstance(items, (ListV, TupleV)) and len(items.items) <= _SEQUENCE_LIMIT:
            if any(is_runtime(x) for x in items.items):
                return call(tx, joined, [args[0], *items.items])
    if runtime_items.may_take_items(fn) and _on_sequence(args):
        keywords = runtime_items.literal_keywords(fn, kwargs)
        return None if keywords is None else _items_call(tx, fn, args, keywords)
    if kwargs or not any(is_runtime(a) for a in args) or not _qualifies(fn):
        return None
    parts = [_part(a) for a in args]
    if any(p is _NOT_PART for p in parts):
        return None
    examples = [a.example if is_runtime(a) else _example(p) for a, p in zip(args, parts)]
    if len(args) == 1 and type(examples[0]) in _IDENTITY.get(fn, ()):
        return args[0]  # ``os.fspath(s)`` of a str is that str
    try:
        example = fn(*examples)
    except Exception:  # noqa: BLE001 - raises on these values: read them, raise as natively
        return None
    label = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    src = PureCallSource(Ref(fn, label), tuple(parts), tuple(type(p) for p in parts))
    t = type(example)
    if t in _RESULTS:
        if not _total(fn, examples):
            tx.guard(GuardKind.TYPE_MATCH, src, t)  # computed by the guard: a raise misses
        return Const(None) if example is None else RuntimeV(example, src, tx)
    if fn in _SPLITTERS and t in (list, tuple) and len(example) <= _SEQUENCE_LIMIT:
        tx.guard(GuardKind.TYPE_MATCH, src, t)
        tx.guard(GuardKind.LENGTH, src, len(example))
        items = [RuntimeV(x, ItemSource(src, i), tx) for i, x in enumerate(example)]
        return ListV(items) if t is list else TupleV(items)
    return None


def holds_runtime(args, fn) -> bool:
    """Whether `fn` is declared to take runtime items (`runtime_items.may_take_items`) and
    some argument is a list or tuple holding a runtime value (`_items_call`).  Only then are
    the items read here: an outside list the trace has not read stays unread
    (`ListV.unread`: ``history.append(loss)``)."""
    return runtime_items.may_take_items(fn) and any(
        isinstance(a, (ListV, TupleV)) and any(runtime_items.unread_item(x) for x in a.items) for a in args
    )


def _on_sequence(args) -> bool:
    """Whether a call on `args` passes runtime values in a list or tuple, or passes a
    runtime value beside a list of constants (``bisect(xs, x)``): a `_items_call`."""
    if any(_sequence_parts(a) is not None for a in args):
        return True
    return any(runtime_items.unread_item(a) for a in args) and any(
        type(a) is ListV and _constant_parts(a) is not None for a in args
    )


def _sequence_parts(v: Value) -> list | None:
    """The parts of the items of `v`, a list or tuple whose items are runtime values and
    literal constants of `SCALARS` with some runtime value among them; None otherwise."""
    if not isinstance(v, (ListV, TupleV)) or not any(runtime_items.unread_item(x) for x in v.items):
        return None
    return _constant_parts(v)


def _items_call(tx, fn, args: list, keywords: tuple = ()) -> Value | None:
    """``fn(*args, **dict(keywords))`` where some argument is a list or tuple of runtime
    items: a `PureCallSource` of the caller `on_items(fn, layout, ...)` on the items' parts,
    flattened."""
    mutates = fn in pure_c.IN_PLACE
    if mutates and not (args and type(args[0]) is ListV and args[0].cls is list):
        return None
    layout: list = []
    parts: list = []
    examples: list = []
    for a in args:
        seq = _sequence_parts(a)
        if seq is None and isinstance(a, (ListV, TupleV)):  # constants only: passed item by item too
            seq = _constant_parts(a)
        if seq is not None:
            layout.append((a.cls, len(seq)))
            parts += seq
            examples.append(a.cls(runtime_items.item_example(x) for x in a.items))
            continue
        p = a.source if runtime_items.input_symbol(a) else _part(a)
        if p is _NOT_PART:
            return None
        layout.append(None)
        parts.append(p)
        examples.append(runtime_items.item_example(a) if runtime_items.unread_item(a) else _example(p))
    kinds = runtime_items.kinds_of(examples)
    try:
        example = fn(*examples, **dict(keywords))
    except Exception:  # noqa: BLE001 - raises on these values: read them, raise as natively
        return None
    caller = runtime_items.on_items(fn, tuple(layout), mutates, keywords)
    src = PureCallSource(Ref(caller, caller.__qualname__), tuple(parts), tuple(type(p) for p in parts))
    if mutates:
        return _mutated(tx, args[0], src, example, examples[0], kinds)
    total = pure_c.total_on_items(fn, examples)
    t = type(example)
    if t in SCALARS:
        if not total:
            tx.guard(GuardKind.TYPE_MATCH, src, t)  # computed by the guard: a raise misses
        if any(
            runtime_items.input_symbol(x)
            for a in args
            for x in (a.items if isinstance(a, (ListV, TupleV)) else (a,))
        ):
            runtime_items.computed_once(tx, example, src)  # a symbol's source, spelled before any write
        return Const(None) if example is None else RuntimeV(example, src, tx)
    if t is list and fn is sorted and total:  # items of one type: its items' types are theirs
        runtime_items.computed_once(tx, example, src)
        return ListV([RuntimeV(x, ItemSource(src, i), tx) for i, x in enumerate(example)])
    return None


def _mutated(tx, lst: ListV, src: PureCallSource, result, after: list, kinds: set) -> Value | None:
    """The result of a `pure_c.IN_PLACE` call on `lst`, whose items are now the ones after the
    call (``caller(...)[1]``) -- of the one type they all have, or the call is traced as
    before (an int and a float: which goes where depends on their values) -- and `lst`
    changed (the region writes its items back, as any change of a list from outside)."""
    if len(kinds) != 1 or not kinds <= pure_c.ORDERED_KINDS:
        return None
    runtime_items.computed_once(tx, (result, after), src)
    items = ItemSource(src, 1)
    tx.set(lst, "items", [RuntimeV(x, ItemSource(items, i), tx) for i, x in enumerate(after)])
    if not lst.mutated:
        tx.set(lst, "mutated", True)
    if lst.source is not None:
        tx.mark_mutated(lst)
    return Const(None) if result is None else RuntimeV(result, ItemSource(src, 0), tx)


def _constant_parts(v: ListV | TupleV) -> list | None:
    """The parts of the items of list or tuple `v` (runtime values, literal constants of
    `SCALARS`), to pass item by item; None when some item is anything else."""
    if v.cls not in (list, tuple) or len(v.items) > _SEQUENCE_LIMIT:
        return None
    parts = [_item_part(x) for x in v.items]
    return None if any(p is _NOT_PART for p in parts) else parts


def _item_part(x: Value):
    if runtime_items.input_symbol(x):
        return x.source
    if not isinstance(x, Const) or type(x.example if is_runtime(x) else x.value) not in SCALARS:
        return _NOT_PART  # (an item whose comparisons may run Python code)
    return _part(x)


def _str_like(x) -> bool:
    return type(x) is str or x is None or (type(x) is tuple and all(type(i) is str for i in x))


def _total(fn, examples: list) -> bool:
    """Whether ``fn(*examples)`` raises on no arguments of the same types (its result's
    type fixed too): nothing to check in the guard."""
    kinds = {type(x) for x in examples}
    if fn is operator.getitem and kinds in ({str, slice}, {bytes, slice}):
        return type(examples[0]) is not slice  # a slice of a text: ``s[1:]`` never raises
    if kinds <= {int}:
        return fn in _TOTAL_ON_INT
    if kinds <= {float}:
        return fn in _TOTAL_ON_FLOAT
    return fn in _TOTAL_ON_STR and all(_str_like(x) for x in examples)


def method(v: RuntimeV, name: str) -> Value | None:
    """``v.name`` of a runtime value, for a method of its type: bound to it, unread."""
    attr = getattr(type(v.example), name, None)
    if type(attr) in _DESCRIPTORS and _qualifies(attr):
        return MethodV(ObjectV(attr), v)
    return None


def truth(tx, v: RuntimeV) -> bool:
    """``bool(v)``: the answer guarded, not the text (``if s:``)."""
    r = call(tx, bool, [v]) if type(v.example) is not bool else None
    answer = r if isinstance(r, Const) else v  # (a bool, computed: a runtime value too)
    return bool(answer.value)


def is_other_type(a: Value, b: Value) -> bool:
    """Whether `a` and `b` are a runtime value and a constant of another type: never the
    same object, whatever the text (``s is None``)."""
    if is_runtime(a):
        a, b = b, a
    if not is_runtime(b) or not isinstance(a, Const) or is_runtime(a):
        return False
    return type(a.value) is not type(b.example)
