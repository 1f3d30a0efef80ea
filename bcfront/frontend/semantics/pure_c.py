"""The declared table of pure C callables, run at capture time on known values.

A C function or method whose result depends only on its arguments and which
changes nothing (no argument, no global state anyone can observe) can run while
tracing when its arguments are known: its result, or the exception it raises,
is what the call would give at run time.  `TABLE` names each such callable with
the argument types on which it is pure (`Pure.accepts`: every argument and
keyword value, containers item by item, must be an instance of one of them)
and an example call (`Pure.example`), with which `tests/frontend/test_pure_c_table.py`
checks that every entry really is pure: the same result twice, arguments unchanged.

Only the table decides: `builtins.model_for` / `builtins.constructor_for` ask
`lookup(obj)` and fold the call (`fold_pure`).  Arguments of plain builtin scalar
types (str, bytes, int, float, complex, bool, None) are accepted by every entry:
they run no code of anyone's, so the C function raises its own TypeError on the
ones it does not take.  An entry that iterates an argument (`Pure.consumes`)
gets it as a list of its items, iterated in the trace first (``int.from_bytes(map(..))``).
When the arguments are not all known, an entry's Python twin (`Pure.twin`, the
same steps in Python: ``Pattern.sub`` with a function, `re_twins`) is inlined;
without one the call stays a graph break.  An entry whose result holds a C iterator over
known values (`Pure.lazy`: ``_string.formatter_parser``) has it drained at capture and
replayed in the trace (`ReplayIterV`), with the exception it raised at its place; leaving
the trace it is the real iterator again, made by the same call and advanced as far.
Immutable objects of C types that are not plain constants (a compiled pattern, a match, a
date) are known values too when held as objects (`IMMUTABLE_OBJECTS`).

An entry declared pure on lists or tuples also takes them holding values known only at
run time (`runtime_values`: the region makes the call); `Pure.items` says what it does to
their items (``"eq"``, ``"order"``, ``"pick"``, ``"sum"``: `total_on_items` decides from
it whether the call can raise on items of the types at hand).  `IN_PLACE` declares, in the
same way, the C calls that change their first argument, a list, and nothing else
(``heapq.heappush``, ``list.sort``): not pure, but run in the region on the list's items
(`tests/frontend/test_pure_c_table.py` checks both tables).
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]  # CPython's, no stub
import binascii
import bisect
import datetime
import decimal
import heapq
import keyword
import operator
import os
import re
import struct
import sys
import unicodedata
import zlib
from dataclasses import dataclass

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.tracer import SymbolicRaise
from ..model.values import Const, IterV, ListV, ObjectV, TensorV, TupleV, Value, specialized_deep
from . import dispatch, re_twins
from .folding import NotConst, as_python, as_symbolic, from_python

try:
    import _statistics  # type: ignore[import-not-found]  # CPython's, no stub
except ImportError:  # no accelerator: statistics' Python code is traced as it is
    _statistics = None

try:
    import _json
except ImportError:  # no accelerator: json's pure-Python code is traced as it is
    _json = None  # type: ignore[assignment]

_Pattern = type(re.compile(""))
_Match = type(re.match("", ""))

# operator's callable objects: made from constants, called through `builtins.model_for`
GETTERS = (operator.itemgetter, operator.attrgetter, operator.methodcaller)
# objects of these C types never change once made: calls may read them at capture time
IMMUTABLE_OBJECTS: tuple = (_Pattern, _Match, datetime.date, datetime.time, datetime.timedelta)
IMMUTABLE_OBJECTS += (decimal.Decimal, *GETTERS)

SCALAR = (str, bytes, int, float, complex, bool, type(None))
TEXT = (str, bytes, type(None))  # None: the optional argument (`s.split(None)`, `flags=None`)
NUMBER = (int, float, bool, type(None))
SEQ = (tuple, list, frozenset)
DATES = (datetime.date, datetime.time, datetime.timedelta, datetime.timezone)


@dataclass(frozen=True)
class Pure:
    fn: object
    accepts: tuple  # the types every argument and keyword value must have
    example: tuple = ()  # (args, kwargs) for the purity test
    kwargs: tuple = ()  # example keyword arguments, as pairs
    consumes: tuple = ()  # positions of arguments the C function iterates
    twin: object = None  # Python code doing the same, inlined when arguments are not known
    lazy: bool = False  # its result holds C iterators over known values (`replayed`)
    # on lists and tuples of run-time items (`runtime_values`): what it does to them ("eq":
    # ``==`` and truth, "order": ``<`` with an int result, "pick": ``<`` and returns one of
    # them, "sum"), or "" where it may raise on some values of any types (``list.index``)
    items: str = ""
    any_sequence: bool = False  # takes any sequence alike: given the items as a tuple
    spread: bool = False  # takes the items as arguments of its own too (``max(a, b, c)``)
    item_keywords: tuple = ()  # keywords it may take as literal constants there (not ``key=``)


@dataclass(frozen=True)
class InPlace:
    """A C call that changes its first argument, a list, and nothing else, running nobody's
    Python code on items of one of `ORDERED_KINDS` (and raising on none, but on an empty
    list where `empty_raises`): `runtime_values` computes it on a copy of the items, which
    the list then holds; `whole_lists` makes it on an unread list itself, its length after
    known from `length`."""

    fn: object
    example: tuple  # (args) for the test: the same change twice, the other arguments unchanged
    item_keywords: tuple = ()
    length: int = 0  # what it does to the list's length (checked by the test on `example`)
    # raises IndexError on a list of fewer items than `fewest_items` (an empty one, or one
    # shorter than an index reaches), and on no other
    empty_raises: bool = False
    indices: tuple = ()  # positions of arguments that are int indices, not items (``insert``)
    optional: int = 0  # how many of `example`'s last arguments a call may leave out
    # moves items without comparing or reading them (``pop``, ``insert``): on a list whose
    # items are known the trace does that itself; only an unread list is called so
    moves_only: bool = False


ORDERED_KINDS = frozenset({int, float, str, bytes})


def _entries():
    pat = re.compile(r"(\w)(\d)?")
    m = pat.match("a1b")
    d = datetime.date(2020, 1, 31)
    yield from (
        Pure(os.fspath, SCALAR, ("a/b",)),  # other types: its TypeError
        Pure(int.from_bytes, (bytes, str, bool, int, list, tuple), (b"\x01\x02", "big"), consumes=(0,)),
        Pure(bytes.fromhex, (str,), ("0a0b",)),
        Pure(bytes, (int, str, bytes, list, tuple), ([97, 98, 255],), consumes=(0,)),  # not __bytes__
        Pure(bytes.maketrans, (bytes,), (b"ab", b"cd")),
        Pure(str.maketrans, (str, dict, int, type(None)), ("ab", "cd")),
        Pure(dict.fromkeys, (*SCALAR, *SEQ), (("a", "b"), 0)),
        Pure(sys.intern, (str,), ("abc",)),
        Pure(keyword.iskeyword, SCALAR, ("for",)),
        Pure(binascii.hexlify, (bytes,), (b"ab",)),
        Pure(binascii.b2a_base64, (bytes, bool), (b"ab",), (("newline", False),)),
        Pure(binascii.a2b_base64, (bytes, str, bool), (b"YWI=",)),
        Pure(binascii.unhexlify, (bytes, str), ("6162",)),
        Pure(binascii.crc32, (bytes, int), (b"abc",)),
        Pure(zlib.crc32, (bytes, int), (b"abc",)),
        Pure(zlib.adler32, (bytes, int), (b"abc",)),
        Pure(bisect.bisect_left, (*SCALAR, *SEQ), ([1, 3, 5], 3), items="order", any_sequence=True),
        Pure(bisect.bisect_right, (*SCALAR, *SEQ), ([1, 3, 5], 3), items="order", any_sequence=True),
        # on scalars they compare, add or test the items, running nobody's Python code
        Pure(max, (*SCALAR, *SEQ), ([1, 3, 2],), items="pick", any_sequence=True, spread=True),
        Pure(min, (*SCALAR, *SEQ), ([1, 3, 2],), items="pick", any_sequence=True, spread=True),
        Pure(sum, (*SCALAR, *SEQ), ([1, 3, 2],), items="sum", any_sequence=True),
        Pure(sorted, (*SCALAR, *SEQ), ([3, 1],), items="pick", any_sequence=True, item_keywords=("reverse",)),
        Pure(any, (*SCALAR, *SEQ), ([0, 2],), items="eq", any_sequence=True),
        Pure(all, (*SCALAR, *SEQ), ([0, 2],), items="eq", any_sequence=True),
        Pure(operator.contains, (*SCALAR, *SEQ), ([1, 2], 2), items="eq", any_sequence=True),
        Pure(operator.countOf, (*SCALAR, *SEQ), ([1, 2, 2], 2), items="eq", any_sequence=True),
        Pure(operator.indexOf, (*SCALAR, *SEQ), ([1, 2], 2)),
        Pure(list.index, (*SCALAR, *SEQ), ([1, 2], 2)),
        Pure(list.count, (*SCALAR, *SEQ), ([1, 2, 2], 2), items="eq"),
        Pure(tuple.index, (*SCALAR, *SEQ), ((1, 2), 2)),
        Pure(tuple.count, (*SCALAR, *SEQ), ((1, 2, 2), 2), items="eq"),
        Pure(unicodedata.category, (str,), ("a",)),
        Pure(unicodedata.normalize, (str,), ("NFC", "e\u0301")),
        Pure(unicodedata.east_asian_width, (str,), ("a",)),
        Pure(unicodedata.combining, (str,), ("a",)),
        Pure(re.escape, TEXT, ("a.b",)),
        # re's module functions: a pattern compiled from the same source is the same; the
        # module's compile cache is not observable
        Pure(re.compile, (*TEXT, int, _Pattern, re.RegexFlag), (r"a+",)),
        *(
            Pure(getattr(re, n), (*TEXT, int, _Pattern, re.RegexFlag), (r"a(b)?", "xaab"))
            for n in ("match", "fullmatch", "search", "split", "findall")
        ),
        Pure(re.sub, (*TEXT, int, _Pattern, re.RegexFlag), ("a", "b", "xaa"), twin=re_twins.RE_SUB),
        Pure(re.subn, (*TEXT, int, _Pattern, re.RegexFlag), ("a", "b", "xaa"), twin=re_twins.RE_SUBN),
        Pure(re_twins.matches, (_Pattern, *TEXT), (pat, "a1b2")),
        *(
            Pure(getattr(_Pattern, n), (_Pattern, *TEXT, int), (pat, "a1b2"))
            for n in ("match", "fullmatch", "search", "split", "findall")
        ),
        # an iterator of matches over known text: drained at capture (`replayed`)
        Pure(_Pattern.finditer, (_Pattern, *TEXT, int), (pat, "a1b2"), lazy=True),
        Pure(re.finditer, (*TEXT, int, _Pattern, re.RegexFlag), (r"\d", "a1b2"), lazy=True),
        Pure(_Pattern.sub, (_Pattern, *TEXT, int), (pat, "-", "a1b2"), twin=re_twins.pattern_sub),
        Pure(_Pattern.subn, (_Pattern, *TEXT, int), (pat, "-", "a1b2"), twin=re_twins.pattern_subn),
        *(Pure(getattr(_Match, n), (_Match, str, int), (m, 1)) for n in ("group", "start", "end", "span")),
        Pure(_Match.groups, (_Match, *SCALAR), (m,)),
        Pure(_Match.groupdict, (_Match, *SCALAR), (m,)),
        Pure(_Match.expand, (_Match, str), (m, r"\1")),
        Pure(datetime.date, (int,), (2020, 1, 2)),
        Pure(datetime.time, (int, datetime.timezone, type(None)), (1, 2, 3)),
        Pure(datetime.datetime, (int, datetime.timezone, type(None)), (2020, 1, 2, 3)),
        Pure(datetime.timedelta, NUMBER, (1, 2)),
        Pure(datetime.date.fromisoformat, (str,), ("2020-01-02",)),
        Pure(datetime.date.fromordinal, (int,), (737000,)),
        Pure(datetime.date.isoformat, DATES, (d,)),
        Pure(datetime.date.weekday, DATES, (d,)),
        Pure(datetime.date.isoweekday, DATES, (d,)),
        Pure(datetime.date.toordinal, DATES, (d,)),
        Pure(datetime.date.replace, (*DATES, int), (d,), (("day", 3),)),
        Pure(datetime.date.strftime, (*DATES, str), (d, "%Y/%m/%d")),
        Pure(decimal.Decimal, (str, int, tuple), ("1.25",)),
        # struct's functions: the module's cache of compiled formats is not observable
        Pure(struct.pack, (*TEXT, int, float, bool), ("<hI", 1, 2)),
        Pure(struct.unpack, (*TEXT,), ("<hI", b"\1\0\2\0\0\0")),
        Pure(struct.calcsize, TEXT, ("<hI",)),
        Pure(operator.itemgetter, (*SCALAR, tuple), (1, "a")),
        Pure(operator.attrgetter, (str,), ("real", "imag.real")),
        Pure(operator.methodcaller, SCALAR, ("split", ","), (("maxsplit", 1),)),
        # string.Formatter's parsers: iterators over the pieces of a known str
        Pure(_string.formatter_parser, (str,), ("a{0!r:>3}b",), lazy=True),
        Pure(_string.formatter_field_name_split, (str,), ("a.b[0]",), lazy=True),
    )
    # the operators of immutable C value types, reached through their special methods
    td, dt, dec = datetime.timedelta(days=2), datetime.datetime(2020, 1, 2, 3), decimal.Decimal("1.5")
    for cls, other in ((datetime.date, td), (datetime.datetime, td), (datetime.timedelta, td)):
        sample = {datetime.date: d, datetime.datetime: dt, datetime.timedelta: td}[cls]
        for name in (*_ARITH, *_COMPARE):
            if name in cls.__dict__:
                example = (sample,) if name in _UNARY else (sample, sample if name in _COMPARE else other)
                yield Pure(cls.__dict__[name], (*DATES, *NUMBER), example)
    for name in (*_ARITH, *_COMPARE):
        if name in decimal.Decimal.__dict__:
            example = (dec,) if name in _UNARY else (dec, dec)
            yield Pure(decimal.Decimal.__dict__[name], (decimal.Decimal, *NUMBER), example)
    yield Pure(_Match.__dict__["__getitem__"], (_Match, str, int), (m, 0))
    if _json is not None:  # json's C string codecs (the scanner's and encoder's own)
        yield Pure(_json.scanstring, (str, int, bool), ('"a\\tb" x', 1))
        yield Pure(_json.encode_basestring_ascii, (str,), ("a\u00e9\n",))
        yield Pure(_json.encode_basestring, (str,), ("a\u00e9\n",))
    if _statistics is not None:  # NormalDist.inv_cdf's C core
        yield Pure(_statistics._normal_dist_inv_cdf, NUMBER, (0.25, 0.0, 1.0))
    normpath = getattr(sys.modules.get("posix"), "_path_normpath", None)  # normpath's C core
    if normpath is not None:
        yield Pure(normpath, (str, bytes), ("a//b/../c",))


_UNARY = ("__neg__", "__pos__", "__abs__")
_ARITH: tuple = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__")
_ARITH += ("__floordiv__", "__mod__", *_UNARY)
_COMPARE = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")


TABLE: dict = {}
for _e in _entries():
    TABLE[_e.fn] = _e

IN_PLACE = {
    e.fn: e
    for e in (
        InPlace(heapq.heappush, ([1, 5, 3], 2), length=1),
        InPlace(heapq.heappop, ([1, 5, 3],), length=-1, empty_raises=True),
        InPlace(heapq.heapify, ([5, 1, 3],)),
        InPlace(heapq.heapreplace, ([1, 5, 3], 4), empty_raises=True),
        InPlace(heapq.heappushpop, ([1, 5, 3], 4)),
        InPlace(bisect.insort_left, ([1, 3, 5], 4), length=1),
        InPlace(bisect.insort_right, ([1, 3, 5], 4), length=1),
        InPlace(list.sort, ([3, 1, 2],), item_keywords=("reverse",)),
        # ``xs.insert(i, x)`` (never raises on an int index: it clamps), ``xs.pop([i])``
        InPlace(list.insert, ([1, 5, 3], 1, 4), length=1, indices=(1,), moves_only=True),
        InPlace(
            list.pop, ([1, 5, 3], 0), length=-1, empty_raises=True, indices=(1,), optional=1, moves_only=True
        ),
    )
}


def fewest_items(entry: InPlace, rest: list) -> int | None:
    """How many items the list must hold for `entry`'s call with the other arguments `rest`
    not to raise: none where it raises on no list (`InPlace.empty_raises`), one, or as many
    as an index reaches (``xs.pop(i)``: ``i + 1``, or ``-i`` of a negative one); None where
    an index is no int known at capture."""
    if not entry.empty_raises:
        return 0
    need = 1
    for pos in entry.indices:
        if pos <= len(rest):
            i = rest[pos - 1]
            if type(i) is not int:
                return None
            need = max(need, i + 1 if i >= 0 else -i)
    return need


def total_on_items(fn, examples: list) -> bool:
    """Whether ``fn(*examples)``, a call on lists or tuples of the same lengths, raises on
    no items of the same types (its result's type fixed too): from `Pure.items`."""
    entry = lookup(fn)
    if entry is None or not entry.items or len(examples) != len(entry.example):
        return False
    kinds: set = set()
    for x in examples:
        kinds.update(map(type, x) if type(x) in (list, tuple) else (type(x),))
    if {str, bytes} <= kinds:  # ``==`` of the two may raise (python -bb)
        return False
    if entry.items == "eq":
        return True
    if entry.items == "sum":
        return kinds <= {int, bool} or kinds <= {float}
    if entry.items == "pick":  # ``max([1, 2.5])`` is a float, ``max([3, 2.5])`` an int
        return len(kinds) == 1 and kinds <= ORDERED_KINDS
    return kinds <= {int, bool, float} or kinds <= {str} or kinds <= {bytes}


# The operator slots of int, float, complex and str (not str's %: it formats its argument,
# running its __str__/__format__), as a Python subclass inherits them (an IntEnum member's
# ``%``, a str subclass's ``+``): they read the instance's builtin value only, fixed once made.
_SCALAR_SLOT_NAMES: tuple = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__")
_SCALAR_SLOT_NAMES += ("__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__")
_SCALAR_SLOT_NAMES += ("__rmod__", "__divmod__", "__rdivmod__", "__pow__", "__rpow__", "__and__")
_SCALAR_SLOT_NAMES += ("__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__")
_SCALAR_SLOT_NAMES += ("__rlshift__", "__rshift__", "__rrshift__", *_UNARY, "__invert__", *_COMPARE)
SCALAR_SLOTS = frozenset(
    base.__dict__[name]
    for base in (int, float, complex, str)
    for name in _SCALAR_SLOT_NAMES
    if name in base.__dict__ and not (base is str and name in ("__mod__", "__rmod__"))
)


_SCALARS = (int, float, complex, str)
_NOT_A_SCALAR = object()


def scalar_value(tx, v: ObjectV):
    """The value of `v`, an object of a subclass of a builtin scalar type (an IntEnum member,
    a str subclass's instance), for a builtin operator to run on: guarded to be of its type
    and equal to it (a later call may pass another instance of the same class)."""
    if v.source is not None:
        tx.guard(GuardKind.CONSTANT_MATCH, v.source, v.obj)
    return v.obj


def scalar_slot_model(slot):
    """The model of one of `SCALAR_SLOTS`: run on the real values when every argument is a
    constant or a (guarded) object that is an instance of a builtin scalar type; an operand
    of no scalar type at all gets the slot's NotImplemented (a stand-in of no such type),
    so that the binary operator goes on to its reflected method, as in CPython."""

    def model(tx, args, kwargs):
        values = []
        for i, a in enumerate(args):
            if isinstance(a, ObjectV) and isinstance(a.obj, _SCALARS):
                values.append(scalar_value(tx, a))
            elif i and not isinstance(a, (ObjectV, Const)) and not issubclass(a.python_type(), _SCALARS):
                values.append(_NOT_A_SCALAR)
            else:
                try:
                    values.append(as_python(specialized_deep(a)))  # a symbolic int: its value
                except NotConst:
                    raise UnsupportedError(
                        BreakReason.CALL_TO_C_FUNCTION, f"{slot.__qualname__} on {a.describe()}"
                    ) from None
        if kwargs:
            raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{slot.__qualname__} with keywords")
        try:
            return from_python(slot(*values))
        except Exception as e:  # noqa: BLE001 - what CPython raises, symbolically
            raise as_symbolic(e) from None

    return model


def lookup(obj) -> Pure | None:
    try:
        return TABLE.get(obj)
    except TypeError:  # an unhashable callable
        return None


def bound_model(obj):
    """The model of a C method bound to an immutable object (``PATTERN.search`` kept in a
    global) whose unbound method is declared pure, or None."""
    owner = getattr(obj, "__self__", None)
    if type(owner) not in IMMUTABLE_OBJECTS:
        return None
    entry = lookup(getattr(type(owner), getattr(obj, "__name__", ""), None))
    return None if entry is None else fold_pure(entry, (owner,))


def _plain(v: Value):
    if isinstance(v, ObjectV) and type(v.obj) in IMMUTABLE_OBJECTS:
        return v.obj
    return as_python(v)


_PLAIN = frozenset(SCALAR)


def accepted(x, accepts: tuple) -> bool:
    if type(x) in _PLAIN:  # runs no code of anyone's: the C function takes it or raises
        return True
    if not isinstance(x, accepts) or (isinstance(x, bool) and bool not in accepts and int not in accepts):
        return False
    if isinstance(x, (tuple, list, frozenset)):
        return all(accepted(i, accepts) for i in x)
    if isinstance(x, dict):
        return all(accepted(k, accepts) and accepted(i, accepts) for k, i in x.items())
    return True


def fold_pure(entry: Pure, bound: tuple = ()):
    """The model of a pure C callable: run on the known argument values (its exception
    becomes the trace's), else a graph break.  `bound`: values bound before the call's
    own arguments (a constructor's class is not one of them)."""
    fn = entry.fn
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))

    def model(tx, args, kwargs):
        args = [specialized_deep(a) for a in args]  # a symbolic number: its value, guarded
        kwargs = {k: specialized_deep(v) for k, v in kwargs.items()}
        if any(isinstance(a, TensorV) for a in args):
            raise UnsupportedError(BreakReason.DATA_DEPENDENT, f"{name} reads a tensor's value")
        args = _consumed(tx, entry, len(bound), args)
        try:
            pa = [*bound, *(_plain(a) for a in args)]
            pk = {k: _plain(a) for k, a in kwargs.items()}
        except NotConst:
            if entry.twin is not None:  # the same steps in Python, inlined
                own = [from_python(b) for b in bound]
                return dispatch.inline_call(tx, ObjectV(entry.twin), [*own, *args], kwargs)
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION, f"{name} on arguments not known at capture time"
            ) from None
        if not all(accepted(x, entry.accepts) for x in (*pa, *pk.values())):
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION, f"{name} on arguments of types it is not declared pure on"
            )
        try:
            if entry.lazy:
                out = fn(*pa, **pk)
            else:
                return from_python(fn(*pa, **pk))
        except Exception as e:  # noqa: BLE001 - the fold raises what Python would, symbolically
            raise as_symbolic(e) from None
        return replayed(fn, tuple(pa), pk, out)

    return model


def replayed(fn, args, kwargs, out, where=None) -> Value:
    """The result of a `Pure.lazy` call ``fn(*args, **kwargs)``: a tuple item by item (`where`:
    the item's index in it), and each iterator in it drained now -- what it yields depends on
    the call's known arguments alone -- as a `ReplayIterV` yielding the same items, then
    raising what the C iterator raised after them, at the same step (``"a{"``'s ValueError
    after the items before it)."""
    if type(out) is tuple and where is None:
        return TupleV([replayed(fn, args, kwargs, x, i) for i, x in enumerate(out)])
    if not hasattr(type(out), "__next__"):
        return from_python(out)
    items, error = [], None
    try:
        for x in out:
            items.append(from_python(x))
            if len(items) > _MAX_DRAINED:
                raise UnsupportedError(BreakReason.UNBOUNDED_ITERATION, "a C iterator of over 100000 items")
    except UnsupportedError:
        raise
    except Exception as e:  # noqa: BLE001 - raised by the iterator: the replay raises it there
        error = as_symbolic(e).exc
    return ReplayIterV(type(out), (fn, args, kwargs, where), tuple(items), error)


class ReplayIterV(IterV):
    """A C iterator over known values (`Pure.lazy`), drained at capture: its `items`, then
    its `error` (None: it just ends), the next `index`.  It is the real iterator's type;
    leaving the trace it is made again -- the same call, advanced as far -- unless it has
    raised already (a break)."""

    __slots__ = ("cls", "call", "items", "error", "index")

    def __init__(self, cls, call, items, error):
        super().__init__(None)
        self.cls, self.call, self.items, self.error, self.index = cls, call, items, error, 0

    def python_type(self):
        return self.cls

    def describe(self):
        return f"{self.cls.__name__} (drained at capture)"

    def step(self, tx):
        """The next item, None when it ends; its error when it raises (once: after that, what
        C does is not modelled)."""
        i = self.index
        if i < len(self.items):
            tx.set(self, "index", i + 1)
            return self.items[i]
        if self.error is None:
            return None
        if i > len(self.items):
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_ITERATOR, f"next() of {self.describe()} after its error"
            )
        tx.set(self, "index", i + 1)
        raise SymbolicRaise(self.error)

    def rebuild(self, rb) -> str:
        if self.index > len(self.items):
            raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, f"{self.describe()} after its error")
        fn, args, kwargs, where = self.call
        made = f"{rb.ns.const(fn)}(*{rb.ns.const(args)}, **{rb.ns.const(kwargs)})"
        if where is not None:
            made = f"{made}[{where}]"
        name = rb.temp(made, self, "it")
        if self.index:
            rb.emit(f"for _ in {rb.ns.helper('range')}({self.index}): {rb.ns.helper('next')}({name})")
        return name


_MAX_DRAINED = 100_000


def _consumed(tx, entry: Pure, nbound: int, args: list) -> list:
    """`args` with each argument the C function iterates (`Pure.consumes`) replaced by the
    list of its items, iterated in the trace (a map or generator over Python code)."""
    if not entry.consumes:
        return args
    out = list(args)
    for i in entry.consumes:
        j = i - nbound
        if 0 <= j < len(out) and isinstance(out[j], IterV):
            out[j] = ListV(dispatch.to_list(tx, out[j]))
    return out
