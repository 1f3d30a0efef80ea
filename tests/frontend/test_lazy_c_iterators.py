"""A pure C function whose result is an iterator over known values (``string.Formatter``'s
``_string.formatter_parser`` and ``formatter_field_name_split``) captures whole (#30): the
C iterator is drained at capture and replayed in the trace (`pure_c.ReplayIterV`), with
the exception it raises after its first items raised at the same step, after the code that
ran on those items; one leaving the function is the real iterator, made by the same call
and advanced as far (one that has raised already is not rebuilt: the function runs
natively).  Each case is compared with plain Python under ``fullgraph=True``, on
format strings that parse and ones that raise.
"""

from __future__ import annotations

import _string
import string

import pytest

import bcfront


def formatted(s, *args, **kwargs):
    return string.Formatter().format(s, *args, **kwargs)


def vformat_logged(s, *args):
    log = []

    class Logging(string.Formatter):
        def format_field(self, value, spec):
            log.append((value, spec))  # runs on the fields before a parse error
            return super().format_field(value, spec)

    try:
        return Logging().vformat(s, args, {}), log
    except ValueError as e:
        return str(e), log


def pieces(s):
    out = []
    try:
        for lit, field, spec, conv in _string.formatter_parser(s):
            out.append((lit, field, spec, conv))
            if field:
                first, rest = _string.formatter_field_name_split(field)
                out.append((first, [x for x in rest]))
    except ValueError as e:
        out.append(str(e))
    return out


def parser_of_int(n):
    return _string.formatter_parser(n)  # the C function's TypeError, at the call


def parse_partly(s):
    it = string.Formatter().parse(s)
    return next(it), next(it, "done")


CASES = [
    (formatted, [("{0}-{1:>3}", 1, 2), ("{a.real}{b[1]}",), ("{0!r:^7}|{0!s}", "x"), ("{0:{1}}", 5, ">4")]),
    (formatted, [("a}b",), ("{0.}", 1), ("{0[}", [1]), ("{0[0]x}", [1]), ("{0!z}", 1), ("{}{1}", 1, 2)]),
    (vformat_logged, [("{0}{1}}", 1, 2), ("{0}{1}{", 1, 2), ("{0}-{1}", 1, 2)]),
    (pieces, [("a{0.x[1]}b{{}}",), ("x{a[b]c}",), ("{0.}",), ("}",), ("",)]),
    (parser_of_int, [(3,)]),
    (parse_partly, [("a{0}b{1}",), ("z",)]),
]
CALLS = [(fn, args) for fn, calls in CASES for args in calls]


def _outcome(fn, args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with the native exception
        return "raise", type(e), str(e)


def _kwargs_for(args):
    return {"a": 3 + 4j, "b": "xyz"} if args and "{a" in str(args[0]) else {}


@pytest.mark.parametrize("fn, args", CALLS, ids=[f"{fn.__name__}-{a[0]!r}" for fn, a in CALLS])
def test_a_c_iterator_over_known_text_is_replayed(fn, args):
    kw = _kwargs_for(args)
    want = _outcome(lambda *a: fn(*a, **kw), args)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):  # the trace, then the cached entry
        assert _outcome(lambda *a: cf(*a, **kw), args) == want


def parse_leaves(s):
    it = string.Formatter().parse(s)
    first = next(it, None)
    return first, it


def field_rest_leaves(field):
    first, rest = _string.formatter_field_name_split(field)
    return first, rest


def _drained(it):
    out = []
    try:
        out.extend(it)
    except ValueError as e:
        out.append(str(e))
    return out


@pytest.mark.parametrize(
    "fn, arg",
    [
        (parse_leaves, "a{0}b{1:>3}c"),
        (parse_leaves, "a{0}b}"),  # raises after the items it has left
        (parse_leaves, ""),
        (field_rest_leaves, "a.b[0].c"),
        (field_rest_leaves, "a.b["),
    ],
    ids=["parse", "parse-then-raise", "parse-empty", "field-rest", "field-rest-raises"],
)
def test_an_iterator_leaving_the_function_is_the_real_one_advanced_as_far(fn, arg):
    first, want = fn(arg)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):
        got_first, got = cf(arg)
        assert got_first == first
        assert type(got) is type(want)
        assert _drained(got) == _drained(fn(arg)[1])


def parse_past_error(s):
    it = _string.formatter_parser(s)
    try:
        next(it)
    except ValueError:
        pass
    return it


def test_an_iterator_that_has_raised_is_not_rebuilt():
    cf = bcfront.capture(parse_past_error)
    for _ in range(2):
        got = cf("}")
        assert type(got) is type(parse_past_error("}"))


# -- Pattern.finditer / re.finditer over known text --------------------------------------------

import re  # noqa: E402

TOKEN = re.compile(r"(?P<num>\d+)|(?P<word>[a-z]+)")


def tokens(text):
    return [(m.lastgroup, m.group(m.lastgroup), m.span()) for m in TOKEN.finditer(text)]


def words_from(text, start):
    return [m.group(0) for m in re.finditer(r"\w+", text[start:])]


def first_match_then_rest(text):
    it = re.finditer(r"\w", text)
    return next(it).group(), it  # the rest leaves the function: the real iterator, advanced


@pytest.mark.parametrize("text", ["ab 12 cd", "", "...", "x9"])
def test_finditer_over_known_text_captures_whole(text):
    for fn, args in ((tokens, (text,)), (words_from, (text, 1))):
        cf = bcfront.capture(fn, fullgraph=True)
        assert cf(*args) == fn(*args)


def test_a_finditer_iterator_leaving_the_function_is_advanced_as_far():
    cf = bcfront.capture(first_match_then_rest, fullgraph=True)
    got, rest = cf("abc")
    want, want_rest = first_match_then_rest("abc")
    assert got == want and type(rest) is type(want_rest)
    assert [m.group() for m in rest] == [m.group() for m in want_rest] == ["b", "c"]
