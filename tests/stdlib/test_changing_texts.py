"""The corpus again, one capture serving texts that change from call to call.

`test_corpus` captures each input afresh.  Here every corpus function that takes a str or
bytes argument is captured once and called, twice over, with its inputs and variants of
each text (longer, reversed, shortened, empty, random characters): a text that changed is
known only at run time from its second capture on (`semantics/runtime_values.py`), so the
entries made for earlier texts must answer later ones right or miss.  Each call is compared
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

_ALPHABET = "ab/.,: -_%=&?#@1209XYZ\u00e9\n\t"


def _variants(text, rng: random.Random) -> list:
    kind = type(text)
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
            if type(x) in (str, bytes):
                for v in _variants(x, rng):
                    calls.append((*args[:j], v, *args[j + 1 :]))
    return calls


NAMES = sorted(
    name
    for name, (_, inputs) in CORPUS.items()
    if name not in MISSING and any(type(x) in (str, bytes) for args in inputs for x in args)
)


@pytest.mark.parametrize("name", NAMES)
def test_one_capture_serves_changing_texts_as_natively(name, monkeypatch):
    monkeypatch.setenv("BCFRONT_STRICT", "1")
    fn, inputs = CORPUS[name]
    calls = _calls(inputs, random.Random(name))
    cf = bcfront.capture(rooted(fn))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # breaks and recompile limits are allowed here
        for _ in range(2):
            for args in calls:
                assert outcome(cf, args) == outcome(fn, args), args
