"""``json.dumps`` captures whole (#30): the ``_json.Encoder`` that ``JSONEncoder.iterencode``
makes is an `EncoderV` in the trace and its call runs `json_encoding.encode`, the C encoder's
steps in Python.  Compared with plain Python under ``fullgraph=True`` on values that
encode and ones that raise (the same message: an unserializable object, a bad key, an
out-of-range float with ``allow_nan=False``, a circular reference), with the options
``json.dumps`` passes to the C encoder, and on container subclasses, where C differs from
``json.encoder``'s Python encoder, on dicts with tuple keys, on number subclasses (their
stored number: `number_values`) and with ``indent`` (3.13's C encoder indents).  A text
of 100000 pieces on 3.11 (a break) is compared under ``fullgraph=False``.
"""

from __future__ import annotations

import _json
import enum
import json

import pytest

import bcfront


class HidingList(list):  # C iterates a subclass into a list: its __iter__ counts
    def __iter__(self):
        return iter(["hidden"])

    def __len__(self):
        return 0


class SizedDict(dict):  # C reads the storage's size and calls items() of a subclass
    def __len__(self):
        return 0

    def items(self):
        return [("x", 1), ("y", [2])]


class BadItems(dict):
    def items(self):
        return [("x", 1, 2)]


class Flt(float):  # C reads the double: neither __eq__ nor __repr__ of the subclass
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__

    def __repr__(self):
        return "Flt!"


class Num(int):
    def __repr__(self):
        return "Num!"


class Level(enum.IntEnum):  # C encodes a member by int.__repr__: its number
    LOW = 1
    HIGH = 2


def _circular():
    x: list = [1]
    x.append(x)
    return x


def dumps(o, **kw):
    return json.dumps(o, **kw)


def dumps_caught(o, **kw):
    try:
        return json.dumps(o, **kw)
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


def _default(o):
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"no default for {type(o).__name__}")


CALLS = [
    ({"a": [1, 2.5, None]}, {}),
    ({"é": 'ü\n"', 1: True, 2.5: False, None: -0.0, False: 10**30}, {}),
    ({"é": "ü"}, {"ensure_ascii": False}),
    ({"b": 1, "a": [1, (2, 3)]}, {"sort_keys": True, "separators": (",", ":")}),
    ({"k": {1: 2, "b": 2}}, {"skipkeys": True}),
    ({1, 2}, {}),
    ({"s": {3, 1}}, {"default": _default}),
    ({"o": object()}, {"default": _default}),
    ([float("inf"), float("nan"), float("-inf")], {}),
    ([float("inf")], {"allow_nan": False}),
    ({float("nan"): 1}, {"allow_nan": False}),
    (_circular(), {}),
    ({"l": HidingList([1, 2]), "d": SizedDict(a=1)}, {}),
    ({"bad": BadItems(a=1)}, {}),
    ({"b": 1, "a": 2, 3: 4}, {"sort_keys": True}),
    ([], {}),
    ("plain", {}),
    # what broke the graph before (#30): tuple keys, number subclasses, indent
    ({(1, 2): 1, "b": 2}, {"skipkeys": True}),
    ({(1, 2): 1}, {}),
    ({"k": {("a", (1.5, None)): 1}}, {"skipkeys": True, "sort_keys": True}),
    ([Flt(2.5), Flt("inf"), Num(7), Level.HIGH, Flt(-0.0)], {}),
    ([Flt("nan")], {"allow_nan": False}),
    ({"a": [1, {"b": 2}], "c": [], "d": {}}, {"indent": 2}),
    ({"a": [1, {"b": (2, 3)}]}, {"indent": "\t", "sort_keys": True, "separators": (",", ": ")}),
    ({"a": 1, (1, 2): 3}, {"indent": 1, "skipkeys": True}),
    ({(1, 2): 3}, {"indent": 1, "skipkeys": True}),
    ([Level.LOW, [1.0, Num(3)]], {"indent": ""}),  # (a Flt before 3.13: `o != o`, a break)
]


def _outcome(fn, *args, **kw):
    try:
        return "ok", fn(*args, **kw)
    except Exception as e:  # noqa: BLE001 - compared with the native exception
        return "raise", type(e), str(e)


@pytest.mark.parametrize("fn", [dumps, dumps_caught])
@pytest.mark.parametrize("o, kw", CALLS, ids=[f"{i}" for i in range(len(CALLS))])
def test_json_dumps_captures_whole(fn, o, kw):
    want = _outcome(fn, o, **kw)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):  # the trace, then the cached entry
        assert _outcome(cf, o, **kw) == want


def encoder_escapes(sep):
    return _json.make_encoder(None, None, _json.encode_basestring_ascii, None, sep, ",", False, False, True)


def encoder_called(o):
    enc = _json.make_encoder({}, None, _json.encode_basestring_ascii, None, ":", ",", False, False, True)
    return enc(o, 0)


def test_an_encoder_leaving_the_function_is_a_real_one():
    cf = bcfront.capture(encoder_escapes, fullgraph=True)
    for _ in range(2):
        enc = cf(": ")
        assert type(enc) is type(encoder_escapes(": "))
        assert enc({"a": [1]}, 0) == encoder_escapes(": ")({"a": [1]}, 0)


def test_an_encoders_call_returns_what_c_returns():
    want = encoder_called({"a": [1, "x"]})
    cf = bcfront.capture(encoder_called, fullgraph=True)
    for _ in range(2):
        got = cf({"a": [1, "x"]})
        assert type(got) is type(want) and got == want


def tuple_ids(t):
    return id(t), id(t) == id(t[0]), id(t) == id(t)


def test_the_id_of_a_tuple_from_outside_is_its_own():  # json's markers (3.11's indent path)
    t = ((1,), 2)
    cf = bcfront.capture(tuple_ids, fullgraph=True)
    for _ in range(2):
        assert cf(t) == tuple_ids(t)
    other = ((1,), 2)
    assert cf(other) == tuple_ids(other)


def test_a_text_of_many_pieces_runs_natively():  # 3.11's C joins its pieces at 100000
    o = list(range(60000))
    want = _outcome(dumps, o)
    cf = bcfront.capture(dumps)
    for _ in range(2):
        assert _outcome(cf, o) == want
