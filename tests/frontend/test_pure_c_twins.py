"""Pure C calls the trace takes whole beyond folding on known values (#30).

``Pattern.sub``/``re.sub`` with a function as replacement (their Python twins,
`re_twins`), a pure C function iterating a map or generator (``int.from_bytes``),
a pure C function given plain scalars of a type it refuses (its own TypeError),
and a C accelerator that raises (``heappop([])``: the C message, not its Python
twin's).  Each is compared with plain Python under ``fullgraph=False`` and
``fullgraph=True``, on inputs that return and inputs that raise.
"""

from __future__ import annotations

import binascii
import bisect
import heapq
import re
import sys
import traceback

import pytest

import bcfront

from .outcomes import assert_same_outcome, quiet_outcome

DIGITS = re.compile(r"(\d+)")
BYTES = re.compile(rb"(\d)")


def sub_function(s):
    doubled = DIGITS.sub(lambda m: str(int(m.group(1)) * 2), s)
    first, n = DIGITS.subn(lambda m: "<" + m.group(0) + ">", s, 1)
    dropped = re.sub(r"[aeiou]", lambda m: None, s)
    empty = re.subn(r"x*", lambda m: "-", s)  # empty matches, as C iterates them
    return doubled, first, n, dropped, empty


def sub_function_raises(s):
    return DIGITS.sub(lambda m: len(m.group(0)), s)  # a non-str replacement: join's TypeError


def sub_wrong_string(s):
    return BYTES.sub(lambda m: b"", s)  # a str for a bytes pattern: C's TypeError


def sub_count_not_int(s):
    return DIGITS.sub(lambda m: "", s, "1")


def sub_bytes(s):
    return BYTES.sub(lambda m: m.group(1) * 2, s.encode())


def from_bytes_iterated(s):
    octets = s.split(".")
    return int.from_bytes(map(int, octets), "big"), int.from_bytes((int(o) + 1 for o in octets), "little")


def from_bytes_bad_item(s):
    return int.from_bytes(map(int, s.split(".")), "big")  # 300: C's ValueError


def scalar_of_refused_type(s):
    return binascii.b2a_base64(s)  # a str: the C function's own TypeError


def heappop_empty(s):
    xs = list(s)
    heapq.heapify(xs)
    return heapq.heappop(xs), xs


def insort_uncomparable(s):
    xs = [1, 2]
    bisect.insort(xs, s)
    return xs


CASES = [
    (sub_function, ["a12b3", "", "xx9"]),
    (sub_function_raises, ["a12", "none"]),
    (sub_wrong_string, ["a1"]),
    (sub_count_not_int, ["a1"]),
    (sub_bytes, ["a12"]),
    (from_bytes_iterated, ["10.0.0.1", "1.2"]),
    (from_bytes_bad_item, ["1.300", "x"]),
    (scalar_of_refused_type, ["abc"]),
    (heappop_empty, ["", "ba"]),
    (insort_uncomparable, ["x"]),
]


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("fn, inputs", CASES, ids=[f.__name__ for f, _ in CASES])
def test_same_as_plain_python(fn, inputs, fullgraph):
    if sys.version_info >= (3, 13) and fn is sub_function and fullgraph:
        pytest.skip("module-level re.sub/subn have no Python form on 3.13: a graph break")
    cf = bcfront.capture(fn, fullgraph=fullgraph)
    for s in inputs:
        for _ in range(2):  # the trace, then the cached entry
            assert_same_outcome(quiet_outcome(cf, s), quiet_outcome(fn, s))
    if sys.version_info >= (3, 13) and fn is sub_function:
        return  # module-level re.sub/subn have no Python form on 3.13 (semantics/re_twins.py)
    assert not [b for e in cf.entries for b in e.breaks]


# -- tracebacks: the Python standing in for C code shows no frame (`own_code`, frameless) --


def replacement_raises(m):
    if "7" in m.group(0):
        raise KeyError(m.group(0))
    return "-"


def pattern_sub_raises(s):
    return DIGITS.sub(replacement_raises, s)


def pattern_subn_raises(s):
    return DIGITS.subn(replacement_raises, s)


def module_sub_raises(s):
    return re.sub(r"\d+", replacement_raises, s)  # re's own `sub` frame, then the function's


def module_subn_raises(s):
    return re.subn(r"\d+", replacement_raises, s, count=2)


def traceback_entries(fn, s):
    """Each traceback entry below the caller's frame: function, file, line and columns."""
    try:
        fn(s)
    except Exception as e:  # noqa: BLE001 - the exception's traceback is the point
        return [
            (f.name, f.filename, f.lineno, f.end_lineno, f.colno, f.end_colno)
            for f in traceback.extract_tb(e.__traceback__)[1:]
        ]
    raise AssertionError("no exception")


RAISING_IN_RE = [
    pattern_sub_raises,
    pattern_subn_raises,
    module_sub_raises,
    module_subn_raises,
    sub_function_raises,  # C's TypeError joining the pieces
    sub_wrong_string,  # C's TypeError on the string
    sub_count_not_int,  # C's TypeError on the count
]


# (3.13: module-level re.sub/subn have no twin, a graph break; the break region's frames are
# hidden all the same, `regions/hidden_frames.py`)
_RAISING_PARAMS = [pytest.param(f, id=f.__name__) for f in RAISING_IN_RE]


@pytest.mark.parametrize("fn", _RAISING_PARAMS)
def test_a_traceback_through_an_re_stand_in_is_the_native_one(fn):
    def call(s):
        return fn(s)

    cf = bcfront.capture(call)
    want = traceback_entries(call, "a17b")
    traceback_entries(cf, "a17b")  # the capture
    for _ in range(2):  # the cached entry
        assert traceback_entries(cf, "a17b") == want
    if sys.version_info < (3, 13) or fn not in (module_sub_raises, module_subn_raises):
        assert not [b for e in cf.entries for b in e.breaks]  # the stand-in ran in the trace
