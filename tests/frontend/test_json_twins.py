"""``json.loads`` captures whole (#30): the C ``_json`` Scanner the decoder calls is traced
through the Python parser it replaced (`semantics/json_twins.py`), with the C string
parser (``_json.scanstring``, folded) and the real ``JSONDecodeError``.  Compared with
plain Python under ``fullgraph=True``: documents that parse, ones that raise (the same
message, position, line and column, read from the caught exception), the decoder's hooks
(a decoder made outside the function, or in it: its Scanner, made in the trace, reads its
context as C does and leaves the function as a real Scanner), and the Scanner's own
argument checks (a break: the C call runs natively, compared under ``fullgraph=False``).
"""

from __future__ import annotations

import _json
import collections
import decimal
import json

import pytest

import bcfront

DOCS = [
    '{"a": [1, 2.5, null]}',
    '{"a": {"b": [true, false, "\\u00e9\\ud83d\\ude00"]}, "c": -0}',
    "[NaN, -Infinity, Infinity, 1e5, -12.5E-2, 12345678901234567890]",
    " [ ] ",
    '"tab\\tnewline\\n"',
    "{",
    '{"a" 1}',
    "[1 2]",
    '{"a":1,}',
    "[1,]",
    '"a\x01"',  # the C scanstring's message: "Invalid control character at"
    '"\\x"',
    '"\\u12"',
    "",
    "1 2",
    "nul",
]


def loads(s):
    return json.loads(s)


def loads_caught(s):
    try:
        return json.loads(s)
    except json.JSONDecodeError as e:
        return type(e).__name__, str(e), e.msg, e.doc, e.pos, e.lineno, e.colno, e.args


def decode_with(decoder, s):
    return decoder.decode(s)


def _outcome(fn, *args):
    try:
        return "ok", repr(fn(*args))  # repr: nan == nan
    except Exception as e:  # noqa: BLE001 - compared with the native exception
        return "raise", type(e), str(e)


@pytest.mark.parametrize("fn", [loads, loads_caught])
@pytest.mark.parametrize("doc", DOCS)
def test_json_loads_captures_whole(fn, doc):
    want = _outcome(fn, doc)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):  # the trace, then the cached entry
        assert _outcome(cf, doc) == want


def _hooked():
    return json.JSONDecoder(
        object_pairs_hook=collections.OrderedDict,
        parse_float=decimal.Decimal,
        parse_int=lambda x: int(x) + 1,
        parse_constant=lambda c: f"<{c}>",
        strict=False,
    )


@pytest.mark.parametrize("doc", ['{"a": [1, 2.5, NaN], "b": {"c": -Infinity}}', '"a\tb"', "[1, 2"])
def test_a_decoders_hooks_are_called_as_its_scanner_calls_them(doc):
    want = _outcome(decode_with, _hooked(), doc)
    cf = bcfront.capture(decode_with, fullgraph=True)
    for _ in range(2):
        assert _outcome(cf, _hooked(), doc) == want


def scan(scanner, *args):
    return scanner(*args)


@pytest.mark.parametrize("args", [("[1]", -1), (1, 0), ("x",), ("x", "a"), ("1", 0, 1), ("[1]", 5)])
def test_the_scanners_own_argument_checks_run_natively(args):
    scanner = json.JSONDecoder().scan_once
    want = _outcome(scan, scanner, *args)
    cf = bcfront.capture(scan)
    for _ in range(2):
        assert _outcome(cf, scanner, *args) == want


def loads_hooked(s):
    return json.loads(s, object_pairs_hook=collections.OrderedDict, parse_float=decimal.Decimal, strict=False)


def decoder_made_inside(s):
    d = json.JSONDecoder(parse_int=lambda x: int(x) * 10)
    return d.decode(s), d


class _LoggingContext:
    """A Scanner's context recording which attributes C reads, in which order."""

    def __init__(self, log):
        self.log = log

    def __getattr__(self, name):
        self.log.append(name)
        if name == "strict":
            return []  # read by its truth: False
        if name in ("object_hook", "object_pairs_hook", "parse_constant"):
            return None if name != "parse_constant" else str
        return {"parse_float": float, "parse_int": int}[name]


def scanner_from_context(s):
    log: list = []
    scan = _json.make_scanner(_LoggingContext(log))
    try:
        return scan(s, 0), log
    except json.JSONDecodeError as e:
        return str(e), log


@pytest.mark.parametrize(
    "fn, doc",
    [
        (loads_hooked, '{"a": [1.5, {"b": "x\ty"}]}'),
        (loads_hooked, '{"a": [1.5,'),
        (scanner_from_context, '[1, 2.5, "a\tb"]'),
        (scanner_from_context, "[1,"),
    ],
    ids=["loads-hooks", "loads-hooks-raises", "context-read", "context-read-raises"],
)
def test_a_scanner_made_in_the_function_reads_its_context_as_c_does(fn, doc):
    want = _outcome(fn, doc)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):
        assert _outcome(cf, doc) == want


def test_a_decoder_made_in_the_function_leaves_it_with_a_real_scanner():
    want, _ = decoder_made_inside("[1, 2]")
    cf = bcfront.capture(decoder_made_inside, fullgraph=True)
    for _ in range(2):
        got, d = cf("[1, 2]")
        assert got == want == [10, 20]
        assert type(d.scan_once) is _json.make_scanner
        assert d.decode("[3]") == [30]  # the rebuilt Scanner has the decoder's hooks


@pytest.mark.parametrize("doc", ["[1,", '{"a": ', '{"a": [1, {"b": ]}', "[1, 2]", "[1, 2] x"])
def test_a_direct_scan_lets_an_inner_values_stop_iteration_out_as_c_does(doc):
    scanner = json.JSONDecoder().scan_once
    want = _outcome(scan, scanner, doc, 0)
    cf = bcfront.capture(scan, fullgraph=True)
    for _ in range(2):
        assert _outcome(cf, scanner, doc, 0) == want


def _frames(fn, *args):
    """The (function, file) of each traceback entry below the caller's frame."""
    import traceback

    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception is the point
        return [(f.name, f.filename) for f in traceback.extract_tb(e.__traceback__)[1:]]
    raise AssertionError("no exception")


def _loads_with_raising_hook(s):
    def hook(d):
        if "bad" in d:
            raise KeyError("bad")
        return d

    return json.loads(s, object_hook=hook)


@pytest.mark.parametrize(
    "fn, doc", [(json.loads, "[1 2]"), (json.loads, "{"), (_loads_with_raising_hook, '{"bad": 1}')]
)
def test_traceback_has_no_frame_of_the_python_scanner(fn, doc):
    """C's scanner adds no frame to a traceback; a hook it calls adds its own."""

    def call(s):
        return fn(s)

    cf = bcfront.capture(call, fullgraph=True)
    want = _frames(call, doc)
    _frames(cf, doc)  # the capture
    assert _frames(cf, doc) == want
