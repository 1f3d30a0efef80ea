"""`json_encoding.encode`, the C Encoder's steps in Python, against the C Encoder itself
on random values (#30): container subclasses, tuple keys, number subclasses (an
``IntEnum``, int and float subclasses with their own methods), non-finite floats,
circular references, and every option the constructor takes -- ``indent`` (which 3.13's
C encoder implements, and earlier ones keep unused), separators, ``sort_keys`` (mixed
keys fail to sort), ``skipkeys``, ``allow_nan``, ``default``, markers or none -- at a
random starting indent level.  Outcomes (the text, or the exception's type and message)
must be equal.  A sample also goes through ``bcfront.capture`` (``json.dumps``).
"""

from __future__ import annotations

import enum
import json
import random

import pytest

import bcfront
from bcfront.frontend.semantics import json_encoding

_json = pytest.importorskip("_json")


class Level(enum.IntEnum):
    LOW = 1
    HIGH = -20


class Num(int):
    def __repr__(self):
        return "Num!"

    def __str__(self):
        return "Num?"


class Flt(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__

    def __repr__(self):
        return "Flt!"


class HidingList(list):
    def __iter__(self):
        return iter(["hidden", 1])


class Tup(tuple):
    pass


class SizedDict(dict):
    def __len__(self):
        return 0

    def items(self):
        return [("x", 1), ("y", [2])]


class PlainDict(dict):
    pass


_FLOATS = [0.0, -0.0, 1.5, -2.25e300, 1e-310, float("inf"), float("-inf"), float("nan")]
_STRINGS = ["", "a", 'q"uo\\te', "é\n\t\x00", "\u2028😀", "key"]


def _key(rng):
    kind = rng.randrange(9)
    if kind == 0:
        return rng.choice(_STRINGS)
    if kind == 1:
        return rng.randrange(-5, 5)
    if kind == 2:
        return rng.choice(_FLOATS)
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return (rng.randrange(3), rng.choice(_STRINGS))  # a tuple key: an error, or skipped
    if kind == 5:
        return rng.choice(list(Level))
    if kind == 6:
        return Num(rng.randrange(100))
    if kind == 7:
        return Flt(rng.choice(_FLOATS))
    return rng.choice(_STRINGS) + str(rng.randrange(50))


def _value(rng, depth):
    kind = rng.randrange(16 if depth < 4 else 9)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 7, 10**30, -(2**70)])
    if kind == 2:
        return rng.choice(_FLOATS)
    if kind == 3:
        return rng.choice(_STRINGS)
    if kind == 4:
        return rng.choice(list(Level))
    if kind == 5:
        return Num(rng.randrange(-50, 50))
    if kind == 6:
        return Flt(rng.choice(_FLOATS))
    if kind == 7:
        return rng.choice([object(), {1, 2}, b"x"])  # for `default`
    if kind == 8:
        return []
    items = [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 9:
        return items
    if kind == 10:
        return tuple(items)
    if kind == 11:
        return rng.choice([HidingList, Tup])(items)
    d = {_key(rng): _value(rng, depth + 1) for _ in range(rng.randrange(4))}
    if kind == 15:
        return rng.choice([SizedDict, PlainDict])(d)
    return d


def _default(o):
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"no default for {type(o).__name__}")


def _arguments(rng):
    """The arguments of ``c_make_encoder`` and the starting indent level."""
    markers = {} if rng.random() < 0.8 else None
    default = _default if rng.random() < 0.7 else repr
    encoder = rng.choice([_json.encode_basestring_ascii, _json.encode_basestring])
    indent = rng.choice([None, None, "", "  ", "\t", "ab"])
    key_sep = rng.choice([":", ": ", " = "])
    item_sep = rng.choice([",", ", ", ";"])
    flags = [rng.random() < 0.3, rng.random() < 0.3, rng.random() < 0.8]
    return [markers, default, encoder, indent, key_sep, item_sep, *flags], rng.randrange(3)


def _circular(rng, o):
    """`o` inside a container holding itself (with markers: "Circular reference")."""
    outer: list = [o]
    outer.append(rng.choice([outer, {"self": outer}]))
    return outer


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with the C encoder's exception
        return "raise", type(e), str(e)


def _c_text(args, o, level):
    return "".join(_json.make_encoder(*args)(o, level))


def _twin_text(args, o, level):
    markers, default, encoder, indent, key_sep, item_sep, *flags = args
    used_indent = indent if json_encoding._C_INDENTS else None  # kept unused before 3.13
    return json_encoding.encode(markers, default, encoder, used_indent, key_sep, item_sep, *flags, o, level)


@pytest.mark.parametrize("seed", range(4))
def test_the_twin_encodes_as_the_c_encoder_on_random_values(seed):
    rng = random.Random(seed)
    for _ in range(1500):
        o = _value(rng, 0)
        args, level = _arguments(rng)
        if args[0] is not None and rng.random() < 0.05:
            o = _circular(rng, o)
        want = _outcome(_c_text, list(args), o, level)
        args[0] = None if args[0] is None else {}
        got = _outcome(_twin_text, args, o, level)
        assert got == want, (o, args, level)


def dumps_caught(o, kw):
    try:
        return json.dumps(o, **kw)
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


def test_json_dumps_captured_on_random_values_gives_the_native_text():
    rng = random.Random(7)
    cf = bcfront.capture(dumps_caught)
    for _ in range(40):
        o = _value(rng, 1)
        kw = {
            "sort_keys": rng.random() < 0.3,
            "skipkeys": rng.random() < 0.5,
            "allow_nan": rng.random() < 0.8,
            "indent": rng.choice([None, 2, "\t"]),
            "default": _default,
        }
        assert cf(o, kw) == dumps_caught(o, kw), (o, kw)
