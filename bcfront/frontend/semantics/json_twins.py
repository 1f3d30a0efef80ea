"""``json``'s C scanner traced through the Python code it replaced.

``json.loads`` calls ``_default_decoder.scan_once``, a ``_json.Scanner`` object: C code
that parses the text, calling back only the decoder's hooks (``object_hook``,
``parse_float``...).  ``json.scanner.py_make_scanner`` and ``json.decoder``'s
``JSONObject``/``JSONArray`` are the same parser in Python (CPython's json tests run both
on the same cases); a private copy of them (`py_twins.private_copy`, ``_json`` blocked)
stands in for a Scanner when the trace calls one (`scanner_twin`), reading the hooks
from the Scanner object itself.  Two pieces of the private copy are the C ones again, as
the C scanner has them: ``scanstring`` (``_json.scanstring``, pure: its messages differ
from ``py_scanstring``'s, ``"Invalid control character at"``) and ``JSONDecodeError``
(the real class, which user code catches).  The Scanner's own argument checks are made
before (`_scanner_model`): a call they would refuse, or on text not known at capture,
stays a graph break and runs natively.
"""

from __future__ import annotations

import json.decoder

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import Const, ObjectV
from . import dispatch, own_code, py_twins

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
        decoder.scanstring = _json.scanstring  # the C scanner's own string parser
        decoder.JSONDecodeError = json.decoder.JSONDecodeError  # the class user code catches
        _make_scanner, _parse_object = scanner.py_make_scanner, decoder.JSONObject
        _parse_array, _parse_string = decoder.JSONArray, _json.scanstring
    return _make_scanner is not None


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


def scanner_twin(obj):
    """The model of calling `obj` when it is a C ``json`` Scanner, else None."""
    if _SCANNER is None or type(obj) is not _SCANNER or not _load():
        return None
    return _scanner_model


def _scanner_model(tx, fv, args, kwargs):
    # "On:scan_once": the text and a non-negative index; the C checks' own errors are left
    # to the C call itself (a break runs it natively)
    text, idx = (args + [None, None])[:2]
    if (
        kwargs
        or len(args) != 2
        or not (isinstance(text, Const) and type(text.value) is str)
        or not (isinstance(idx, Const) and type(idx.value) is int and idx.value >= 0)
    ):
        why = "a json Scanner called on values not known now"
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, why)
    return dispatch.inline_call(tx, ObjectV(scan_once), [fv, text, idx], {})


own_code.register(globals())
