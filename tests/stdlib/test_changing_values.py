"""The corpus again, one capture serving texts and numbers that change from call to call.

`test_corpus` captures each input afresh.  Here every corpus function that takes a str,
bytes, int or float argument is captured once and called, twice over, with its inputs and
variants of each (a text longer, reversed, shortened, empty, random characters; a number
moved, negated, zero, one, huge): such an argument that changed is known only at run time
from its second capture on (`semantics/runtime_values.py`; an int a ShapeEnv symbol once
torch is imported), so the entries made for earlier values must answer later ones right
or miss.  Each call is compared
with the native call on the same arguments (`test_corpus.outcome`); the strict mode makes an
internal error a failure rather than a native fallback.
"""

from __future__ import annotations

import random
import warnings

import pytest

import bcfront

from .corpus import CORPUS, rooted
from .corpus_wider import MISSING
from .test_corpus import outcome

_VARIED = (str, bytes, int, float)
_ALPHABET = "ab/.,: -_%=&?#@1209XYZ\u00e9\n\t"


def _variants(text, rng: random.Random) -> list:
    kind = type(text)
    if kind is int:
        return [text + 1, text - 1, 0, -text, text * 7 + 3, 1]
    if kind is float:
        return [text + 0.5, -text, 0.0, text * 3, 1e300, 2.0]
    out = [text + text[:1], text[::-1], text[1:], kind()]
    for _ in range(3):
        r = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(0, 12)))
        out.append(r if kind is str else r.encode())
    return out


def _calls(inputs, rng) -> list:
    calls = []
    for args in inputs:
        calls.append(args)
        for j, x in enumerate(args):
            if type(x) in _VARIED:
                for v in _variants(x, rng):
                    calls.append((*args[:j], v, *args[j + 1 :]))
    return calls


NAMES = sorted(
    name
    for name, (_, inputs) in CORPUS.items()
    if name not in MISSING and any(type(x) in _VARIED for args in inputs for x in args)
)


@pytest.mark.parametrize("name", NAMES)
def test_one_capture_serves_changing_values_as_natively(name, monkeypatch):
    monkeypatch.setenv("BCFRONT_STRICT", "1")
    fn, inputs = CORPUS[name]
    calls = _calls(inputs, random.Random(name))
    cf = bcfront.capture(rooted(fn))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # breaks and recompile limits are allowed here
        for _ in range(2):
            for args in calls:
                # by repr: a nan in a result is equal to no other (1 and 1.0, -0.0 and
                # 0.0 still differ)
                assert repr(outcome(cf, args)) == repr(outcome(fn, args)), args
