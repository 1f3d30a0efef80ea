"""The standard-library differential corpus, captured, against native (#30).

For each function of `corpus.CORPUS` and each of its inputs: the captured call
(twice: the trace, then the cached entry) gives what the native call gives on
deep copies of the same arguments -- the result and its type, or the exception's
type and message -- and leaves its arguments in the same state.  Breaks are
allowed here (`tools/stdlib_coverage.py` measures them); wrong answers are not.
"""

from __future__ import annotations

import copy
import re

import pytest

import bcfront

from .corpus import CORPUS, rooted
from .corpus_wider import MISSING


def outcome(fn, args):
    args = copy.deepcopy(args)
    try:
        r = fn(*args)
        result = ("ok", type(r), r if _comparable(r) else without_addresses(repr(r)))
    except Exception as e:  # noqa: BLE001 - compared with the native exception
        result = ("raise", type(e), without_addresses(str(e)))
    return result, args


def without_addresses(text: str) -> str:
    """`text` with object addresses (``<ast.Call object at 0x7f...>``) blanked: two runs
    make their objects at different addresses, which is no difference of behaviour."""
    return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", text)


def _comparable(r) -> bool:
    try:
        return r == copy.deepcopy(r)
    except Exception:  # noqa: BLE001 - an object without value equality: compare its repr
        return False


CASES = [(name, i) for name, (_, inputs) in sorted(CORPUS.items()) for i in range(len(inputs))]
CASES += [(name, -1) for name in sorted(MISSING)]


@pytest.mark.parametrize("name, i", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_same_as_native(name, i):
    if name in MISSING:
        pytest.skip(MISSING[name])
    fn, inputs = CORPUS[name]
    want = outcome(fn, inputs[i])
    cf = bcfront.capture(rooted(fn))
    for _ in range(2):
        assert outcome(cf, inputs[i]) == want
