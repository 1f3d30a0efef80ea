"""``json``'s C scanner traced through the Python parser it replaced.

``json.loads`` calls ``_default_decoder.scan_once``, a ``_json.Scanner`` object: C code
that parses the text, calling back only the decoder's hooks (``object_hook``,
``parse_float``...).  ``json.scanner.py_make_scanner`` and ``json.decoder``'s
``JSONObject``/``JSONArray`` are the same parser in Python (CPython's json tests run both
on the same cases); a private copy of them (`py_twins.private_copy`, ``_json`` blocked)
stands in for a Scanner when the trace calls one (`scanner_twin`), reading the hooks
from the Scanner object itself.  Two pieces of the private copy are the C ones again, as
the C scanner has them: ``scanstring`` (``_json.scanstring``, pure: its messages differ
from ``py_scanstring``'s, ``"Invalid control character at"``) and ``JSONDecodeError`` (the
real class, which user code catches; where C lets an inner value's ``StopIteration`` out,
that, `_decode_error`).  Checked against the C scanner on 200000 random texts a version,
through ``decode`` and ``scan_once``.  A Scanner made in the trace (``JSONDecoder(...)``,
``json.loads(s, object_hook=...)``) is a `ScannerV` holding what it read from its context,
in C's order; leaving the trace it is made again, a real Scanner.  The Scanner's own
argument checks are made before (`_scanner_model`): a call they would refuse, or on text not known at capture,
stays a graph break and runs natively.
"""

from __future__ import annotations

import json.decoder
import json.scanner

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import CInstanceV
from ..model.values import Const, ObjectV
from . import dispatch, ops, own_code, py_twins
from .registry import CONSTRUCTORS, MODELS

try:
    import _json
except ImportError:  # a Python without the accelerator: json is pure Python already
    _json = None  # type: ignore[assignment]

_SCANNER = getattr(_json, "make_scanner", None)  # the C Scanner class
# the private copies' pieces, set by `_load` (globals of our own: read unguarded)
_make_scanner = _parse_object = _parse_array = _parse_string = None
_LOADED: list = []


def _load() -> bool:
    """Load the private copies once; whether they are there."""
    global _make_scanner, _parse_object, _parse_array, _parse_string
    if not _LOADED:
        _LOADED.append(True)
        scanner = py_twins.private_copy("json.scanner", "_json")
        decoder = py_twins.private_copy("json.decoder", "_json")
        if scanner is None or decoder is None or _json is None:
            return False
        for copy in (scanner, decoder):  # standing in for the C scanner: adds no frame
            own_code.register(vars(copy), frameless=True)
        decoder.scanstring = _json.scanstring  # the C scanner's own string parser
        decoder.JSONDecodeError = _decode_error  # the class user code catches, mostly
        _make_scanner, _parse_object = scanner.py_make_scanner, decoder.JSONObject
        _parse_array, _parse_string = decoder.JSONArray, _json.scanstring
    return _make_scanner is not None


def _decode_error(msg, doc, pos):
    """The error the private ``JSONObject``/``JSONArray`` raise: a ``JSONDecodeError`` --
    but for "Expecting value", which they make of an inner value's ``StopIteration``: C lets
    that ``StopIteration`` out (``raw_decode`` makes the same error of it; a direct
    ``scan_once`` call raises it)."""
    if msg == "Expecting value":
        return StopIteration(pos)
    return json.decoder.JSONDecodeError(msg, doc, pos)


class _Context:
    """What ``py_make_scanner`` reads from its decoder: the Scanner's hooks, the parsers."""

    def __init__(self, scanner):
        self.strict = scanner.strict
        self.object_hook = scanner.object_hook
        self.object_pairs_hook = scanner.object_pairs_hook
        self.parse_float = scanner.parse_float
        self.parse_int = scanner.parse_int
        self.parse_constant = scanner.parse_constant
        self.parse_object = _parse_object
        self.parse_array = _parse_array
        self.parse_string = _parse_string
        self.memo = {}  # the C scanner's memo is its own, cleared after each call


def scan_once(scanner, string, idx):
    """``scanner(string, idx)``: the same parse in Python."""
    return _make_scanner(_Context(scanner))(string, idx)


class _Hooks:
    """What a Scanner made in the trace read from its context when made (C reads it then)."""

    def __init__(self, strict, object_hook, object_pairs_hook, parse_float, parse_int, parse_constant):
        self.strict = strict
        self.object_hook = object_hook
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = parse_float
        self.parse_int = parse_int
        self.parse_constant = parse_constant


_HOOK_NAMES = ("strict", "object_hook", "object_pairs_hook", "parse_float", "parse_int", "parse_constant")


class ScannerV(CInstanceV):
    """A ``_json.Scanner`` made in the trace (``JSONDecoder(...)``): a `_Hooks` object
    made in the trace holds what it read from its context.  Leaving the trace it is made
    again from that object: a real Scanner with the same hooks."""

    __slots__ = ("hooks",)

    def __init__(self, hooks):
        super().__init__(_SCANNER)
        self.hooks = hooks

    def rebuild(self, rb) -> str:
        return rb.temp(f"{rb.ns.const(_SCANNER, 'make_scanner')}({rb.expr(self.hooks)})", self, "scanner")


def _make_scanner_model(tx, clsv, args, kwargs):
    """``make_scanner(context)``: the context's attributes read in C's order, ``strict`` by
    its truth."""
    if kwargs or len(args) != 1 or not _load():
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, "make_scanner() with other arguments")
    look_up = ObjectV(getattr)
    got = [dispatch.call(tx, look_up, [args[0], Const(name)], {}) for name in _HOOK_NAMES[:1]]
    got[0] = Const(ops.truth(tx, got[0]))  # PyObject_IsTrue, before the other reads
    got += [dispatch.call(tx, look_up, [args[0], Const(name)], {}) for name in _HOOK_NAMES[1:]]
    return ScannerV(dispatch.call(tx, ObjectV(_Hooks), got, {}))


def _scanner_call(tx, args, kwargs):
    """Calling a Scanner made in the trace: as one from outside (`_scanner_model`)."""
    return _scanner_model(tx, args[0].hooks, args[1:], kwargs)


def scanner_twin(obj):
    """The model of calling `obj` when it is a C ``json`` Scanner, else None."""
    if _SCANNER is None or type(obj) is not _SCANNER or not _load():
        return None
    return _scanner_model


def _scanner_model(tx, fv, args, kwargs):
    """Calling the Scanner whose hooks `fv` holds (the Scanner itself, from outside, or the
    `_Hooks` of one made in the trace).  "On:scan_once": the text and a non-negative index;
    the C checks' own errors are left to the C call itself (a break runs it natively)."""
    text, idx = (args + [None, None])[:2]
    if (
        kwargs
        or len(args) != 2
        or not (isinstance(text, Const) and type(text.value) is str)
        or not (isinstance(idx, Const) and type(idx.value) is int and idx.value >= 0)
    ):
        why = "a json Scanner called on values not known now"
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, why)
    # C's scanner adds no frame: neither do this module's nor the copies' (frameless), a
    # hook's own stay
    return dispatch.inline_call(tx, ObjectV(scan_once), [fv, text, idx], {})


if _SCANNER is not None:
    CONSTRUCTORS[_SCANNER] = _make_scanner_model
    MODELS[_SCANNER.__dict__["__call__"]] = _scanner_call

own_code.register(globals(), frameless=True)
