"""``json``'s C encoder traced through its steps in Python.

``json.dumps`` makes a ``_json.Encoder`` (``c_make_encoder(...)``) and calls it once.  One
made in the trace is an `EncoderV` holding its arguments (leaving the trace, it is made
again from them: a real Encoder); calling it inlines `encode`, the C encoder's steps in
Python -- not ``json.encoder._make_iterencode``, which differs from C on container
subclasses (C takes a list's or tuple's items by iterating a subclass into a list, a
dict's size from its storage, ``items()`` of a subclass only), on floats (C reads the
double: no ``__eq__`` of a float subclass) and, on 3.11, in the out-of-range float message
(`_FLOAT_REPR_IN_MESSAGE`, probed); checked against the C encoder on 60000 random values a
version (subclasses, circular references, every option).  Its result is what C returns: a list of one string
(3.11, below 100000 accumulated pieces) or a 1-tuple (3.12+).  Arguments the C
constructor would refuse or treat otherwise (``indent``, which 3.13's C encoder
implements; markers that are no plain dict) stay a graph break.
"""

from __future__ import annotations

import math

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import CInstanceV
from ..model.values import Const, DictV, ListV, ObjectV, TupleV
from . import dispatch, number_values, own_code
from .identity import IdV, identity_of
from .registry import CONSTRUCTORS, MODELS

try:
    import _json
except ImportError:  # a Python without the accelerator: json is pure Python already
    _json = None  # type: ignore[assignment]

_ENCODER = getattr(_json, "make_encoder", None)  # the C Encoder class
# globals of our own, read unguarded: what the C encoder calls directly
_isfinite, _isnan, _copysign = math.isfinite, math.isnan, math.copysign
_int_repr, _float_repr, _float_value = int.__repr__, float.__repr__, float.__float__


def _probe():
    """How this Python's C encoder words an out-of-range float (3.11: without its repr),
    what its call returns (3.11: a list of pieces; later: a 1-tuple) and whether it
    indents (3.13+; before, it keeps its `indent` argument unused)."""
    if _ENCODER is None:
        return False, tuple, False
    enc = _ENCODER(None, None, _json.encode_basestring_ascii, None, ":", ",", False, False, False)
    made = type(enc(0, 0))
    indents = "\n" in "".join(_ENCODER(None, None, repr, " ", ":", ",", False, False, False)([0], 0))
    try:
        enc(float("inf"), 0)
    except ValueError as e:
        return str(e).endswith(": inf"), made, indents
    return False, made, indents


_FLOAT_REPR_IN_MESSAGE, _RESULT_TYPE, _C_INDENTS = _probe()
_MAX_PIECES = 100_000  # 3.11's accumulator joins its small pieces at this many


class EncoderV(CInstanceV):
    """A ``_json.Encoder`` made in the trace: the arguments it was made from (values), its
    flags as plain bools."""

    __slots__ = ("args", "indent", "sort_keys", "skipkeys", "allow_nan")

    def __init__(self, args, indent, sort_keys, skipkeys, allow_nan):
        super().__init__(_ENCODER)
        self.args = args
        self.indent = indent  # the str it indents by (3.13+), or None
        self.sort_keys, self.skipkeys, self.allow_nan = sort_keys, skipkeys, allow_nan

    def rebuild(self, rb) -> str:
        made = ", ".join(rb.expr(a) for a in self.args)
        return rb.temp(f"{rb.ns.const(_ENCODER, 'make_encoder')}({made})", self, "encoder")


def _make_encoder(tx, clsv, args, kwargs):
    """``c_make_encoder(markers, default, encoder, indent, key_separator, item_separator,
    sort_keys, skipkeys, allow_nan)``, on the arguments JSONEncoder.iterencode passes."""
    if kwargs or len(args) != 9:
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, "make_encoder() with other arguments")
    markers, _, _, indent, key_sep, item_sep, *flags = args
    plain_str = all(isinstance(v, Const) and type(v.value) is str for v in (key_sep, item_sep))
    # 3.13's C encoder indents by a str (another indent fails when it is used); an earlier
    # one keeps the argument unused
    indent_known = not _C_INDENTS or (isinstance(indent, Const) and type(indent.value) in (str, type(None)))
    if not (
        (isinstance(markers, DictV) and markers.cls is dict)
        or (isinstance(markers, Const) and markers.value is None)
    ) or not (plain_str and indent_known):
        raise UnsupportedError(
            BreakReason.CALL_TO_C_FUNCTION, "make_encoder() on arguments it is not traced on"
        )
    if not all(isinstance(f, Const) and type(f.value) in (bool, int) for f in flags):
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, "make_encoder() with flags not known now")
    sort_keys, skipkeys, allow_nan = (bool(f.value) for f in flags)
    return EncoderV(list(args), indent.value if _C_INDENTS else None, sort_keys, skipkeys, allow_nan)


def _encoder_call(tx, args, kwargs):
    """``encoder(obj, current_indent_level)``: `encode` inlined, its string as C returns it."""
    enc, rest = args[0], args[1:]
    if (
        not isinstance(enc, EncoderV)
        or kwargs
        or len(rest) != 2
        or not (isinstance(rest[1], Const) and type(rest[1].value) is int)
    ):
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, "a json Encoder called otherwise")
    markers, default, encoder, _, key_sep, item_sep = enc.args[:6]
    flags = [Const(enc.sort_keys), Const(enc.skipkeys), Const(enc.allow_nan)]
    text = dispatch.inline_call(
        tx,
        ObjectV(encode),
        [markers, default, encoder, Const(enc.indent), key_sep, item_sep, *flags, rest[0], rest[1]],
        {},
    )
    if not (isinstance(text, Const) and type(text.value) is str):
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, "a json Encoder's text not known now")
    if _RESULT_TYPE is list:
        # one accumulated piece per token, a separator at most before each other: below the
        # accumulator's limit (one string) when twice the text's length is
        if 2 * len(text.value) >= _MAX_PIECES:
            raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, "a json Encoder's text in several pieces")
        return ListV([text])
    return TupleV([text])


def _ident(obj):
    """``PyLong_FromVoidPtr(obj)``: the id C keys its markers by (`_ident_model`)."""
    return id(obj)


class _ConstIdV(IdV):
    """The id of a value known by its value only (a constant, a tuple from outside): a
    markers key, never rebuilt (which object it was is not known)."""

    __slots__ = ()

    def rebuild(self, rb) -> str:
        raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, f"{self.describe()} leaving the trace")


def _ident_model(tx, args, kwargs):
    """``id(obj)`` as a markers key: that of an object made in the trace (`IdV`), else one
    equal exactly for the same value (a tuple from outside, a constant), which may not
    leave the trace."""
    v = args[0]
    try:
        return identity_of(v)
    except UnsupportedError:
        return _ConstIdV(v)


def encode(markers, default, encoder, indent, key_sep, item_sep, sort_keys, skipkeys, allow_nan, o, level):
    """What a C ``_json.Encoder`` made from these arguments accumulates for `o` at indent
    `level` (3.13's ``_current_indent_level``), joined: the steps of
    ``encoder_listencode_obj`` and its helpers."""
    chunks: list = []
    put = chunks.append
    depth = [level]  # the indent level of the container being written

    def open_(bracket):
        """The opening bracket, and the separator between its items."""
        put(bracket)
        if indent is None:
            return item_sep
        depth[0] += 1
        newline_indent = "\n" + indent * depth[0]
        put(newline_indent)
        return item_sep + newline_indent

    def close(bracket):
        if indent is not None:
            depth[0] -= 1
            put("\n" + indent * depth[0])
        put(bracket)

    def floatstr(f):
        x = _float_value(f)  # the double C reads (of a subclass too: no method of its runs)
        if _isfinite(x):
            return _float_repr(x)
        if not allow_nan:
            msg = "Out of range float values are not JSON compliant"
            raise ValueError(msg + ": " + repr(f) if _FLOAT_REPR_IN_MESSAGE else msg)
        if _isnan(x):
            return "NaN"
        return "Infinity" if _copysign(1.0, x) > 0 else "-Infinity"

    def string(s):
        r = encoder(s)
        if not isinstance(r, str):
            raise TypeError(f"encoder() must return a string, not {type(r).__name__}")
        return r

    def mark(obj):
        if markers is None:
            return None
        ident = _ident(obj)
        if ident in markers:
            raise ValueError("Circular reference detected")
        markers[ident] = obj
        return ident

    def unmark(ident):
        if ident is not None:
            del markers[ident]

    def value(o):
        if o is None:
            put("null")
        elif o is True:
            put("true")
        elif o is False:
            put("false")
        elif isinstance(o, str):
            put(string(o))
        elif isinstance(o, int):
            put(_int_repr(o))
        elif isinstance(o, float):
            put(floatstr(o))
        elif isinstance(o, (list, tuple)):
            sequence(o)
        elif isinstance(o, dict):
            mapping(o)
        else:
            ident = mark(o)
            value(default(o))
            unmark(ident)

    def sequence(orig):
        s = orig
        if type(s) is not list and type(s) is not tuple:
            s = list(s)  # PySequence_Fast: a subclass's items, as its iteration gives them
        if len(s) == 0:
            put("[]")
            return
        ident = mark(orig)
        sep = open_("[")
        i = 0
        while i < len(s):
            if i:
                put(sep)
            value(s[i])
            i += 1
        unmark(ident)
        close("]")

    def mapping(d):
        if dict.__len__(d) == 0:  # the storage's size, as C reads it
            put("{}")
            return
        ident = mark(d)
        sep = open_("{")
        items = list(dict.items(d)) if type(d) is dict else list(d.items())  # PyMapping_Items
        if sort_keys:
            items.sort()
        first = True
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise ValueError("items must return 2-tuples")
            key, v = item
            if isinstance(key, str):
                pass
            elif isinstance(key, float):
                key = floatstr(key)
            elif key is True:
                key = "true"
            elif key is False:
                key = "false"
            elif key is None:
                key = "null"
            elif isinstance(key, int):
                key = _int_repr(key)
            elif skipkeys:
                continue
            else:
                raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
            if first:
                first = False
            else:
                put(sep)
            put(string(key))
            put(key_sep)
            value(v)
        unmark(ident)
        close("}")

    value(o)
    return "".join(chunks)


if _ENCODER is not None:
    CONSTRUCTORS[_ENCODER] = _make_encoder
    MODELS[_ENCODER.__dict__["__call__"]] = _encoder_call
MODELS[_ident] = _ident_model
assert number_values  # its models of int.__repr__, float.__repr__... read a subclass's number

own_code.register(globals())
