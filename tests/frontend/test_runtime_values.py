"""Arguments that change between calls are known only at run time (lazy value guards).

A function used to be specialized on every str or float argument's value (an int one too,
without torch): called with a new value each time, it captured again until the recompile
limit, then ran natively.  Such an argument that changed between captures is now a runtime
value: its type is guarded, its value only where the trace reads it, and pure builtins on
it (methods, operators, ``len``, f-strings, ``math``) are computed by the region, with the
guard checking what the trace branched on.  Each result is
compared with the plain Python call on the same values (result, its type, or the exception
and its message).
"""

from __future__ import annotations

import contextlib
import io
import keyword
import math
import posixpath
import subprocess
import sys
import warnings

import pytest

import bcfront
from bcfront.frontend.model.guard_kinds import GuardKind
from bcfront.frontend.model.sources import LocalSource, PureCallSource


def _outcome(fn, args):
    try:
        r = fn(*args)
        return ("ok", r, type(r))
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return ("raise", type(e), str(e))


def _calls(cf, fn, values):
    """Calls `cf` and `fn` on each argument tuple: the same outcome, no recompile-limit
    warning (no native fallback)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in values:
            assert _outcome(cf, args) == _outcome(fn, args), args
    assert cf.report().native_fallbacks == ()


def _value_guarded(cf, name, entry=-1) -> bool:
    return any(
        g.kind == GuardKind.CONSTANT_MATCH and g.source == LocalSource(name) for g in cf.entries[entry].guards
    )


def joined(a, b):
    return a + "/" + b.upper()


def test_a_changing_str_argument_does_not_capture_once_per_text():
    cf = bcfront.capture(joined)
    _calls(cf, joined, [(f"dir{i}", f"name{i}") for i in range(30)])
    assert len(cf.entries) == 3  # the first two texts' entries, then one for every text
    assert not _value_guarded(cf, "a") and not _value_guarded(cf, "b")


def relative(s):
    if s.startswith("/"):
        return s[1:]
    return "rel:" + s


def test_a_branch_guards_the_answer_not_the_text():
    cf = bcfront.capture(relative)
    _calls(cf, relative, [(f"/a{i}",) for i in range(8)] + [(f"b{i}",) for i in range(8)])
    assert len(cf.entries) == 4  # the first two texts', then one per answer of startswith
    checked = {g.source for e in cf.entries[2:] for g in e.guards if isinstance(g.source, PureCallSource)}
    assert checked, "the answer of s.startswith('/') is what the guards check"


def passed_through(s, n):
    return (s, n + 1), [s]


def test_a_text_the_trace_never_reads_has_no_value_guard():
    cf = bcfront.capture(passed_through)
    _calls(cf, passed_through, [("x", 1), ("y", 1), ("z" * 50, 1)])
    assert len(cf.entries) == 3
    assert not _value_guarded(cf, "s")
    got = cf("a long text", 1)
    assert got == passed_through("a long text", 1)


def parsed(s):
    return int(s) * 2, s.index("1")


def test_a_call_that_raises_on_a_new_text_raises_as_natively():
    cf = bcfront.capture(parsed)
    _calls(cf, parsed, [("12",), ("13",), ("21",), ("x",), ("31",), ("4",), ("1" * 5,)])


def shouted_parts(s):
    return [p.strip().upper() for p in s.split(",")], len(s)


def test_the_items_of_a_split_are_runtime_values_its_length_guarded():
    cf = bcfront.capture(shouted_parts)
    values = [("a, b",), ("c ,d",), ("e,f, g",), ("h,i",), ("jj,kk,ll",), ("",)]
    _calls(cf, shouted_parts, values)
    assert len(cf.entries) <= 5  # the first two texts', then one per number of parts


TABLE = {"add": 1, "sub": 2}


def looked_up(op):
    return TABLE[op] * 10


def test_a_text_read_as_a_key_is_guarded_where_it_is_read():
    cf = bcfront.capture(looked_up)
    _calls(cf, looked_up, [("add",), ("sub",), ("add",), ("mul",), ("sub",)])
    assert _value_guarded(cf, "op")  # the dict needs its value: guarded equal there


def optional(s, default):
    if s is None:
        s = default
    return s * 2


def test_is_none_of_a_runtime_text_reads_no_text():
    cf = bcfront.capture(optional)
    _calls(cf, optional, [("a", "d"), ("b", "d"), ("c", "d"), (None, "d"), ("e", "d")])
    assert len(cf.entries) == 4  # "a"'s, "b"'s, every other text's, None's
    assert not _value_guarded(cf, "s", entry=2)


def first_item(xs):
    a = xs[0]
    xs[0] = "q"
    return a.upper(), xs


def test_an_item_of_a_list_argument_stays_a_constant():
    # the region writes the list after fetching; a runtime item fetched where it is used
    # would see the write: list and dict items keep their value guards
    cf = bcfront.capture(first_item)
    for i in range(5):
        xs, ys = [f"t{i}", "u"], [f"t{i}", "u"]
        assert _outcome(cf, (xs,)) == _outcome(first_item, (ys,))
        assert xs == ys


def formatted(s, n):
    return f"<{s}:{n}|{s!r}|{s:>6}>"


def test_f_strings_of_runtime_texts():
    cf = bcfront.capture(formatted)
    _calls(cf, formatted, [(f"v{i}", 3) for i in range(10)])
    assert len(cf.entries) == 3


def is_keyword_upper(s):
    return keyword.iskeyword(s), s in ("for", "while"), s.upper()


def test_pure_c_calls_and_constant_tuples_on_runtime_texts():
    cf = bcfront.capture(is_keyword_upper)
    _calls(cf, is_keyword_upper, [("for",), ("x",), ("y",), ("while",), ("zz",), ("if",)])


def printed(s):
    t = s.upper()
    print("break", t)  # I/O: the trace breaks here, t live across it
    return t + s


def test_runtime_texts_across_a_graph_break():
    values = [(f"w{i}",) for i in range(6)]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        want = [printed(*a) for a in values]
        cf = bcfront.capture(printed)
        got = [cf(*a) for a in values]
    assert got == want
    assert out.getvalue().count("break W3") == 2


@pytest.mark.parametrize(
    "fn, values",
    [
        (posixpath.join, [(f"a{i}", f"b{i}") for i in range(10)] + [("/r", "x"), ("a/", "b"), ("", "c")]),
        (posixpath.basename, [(f"/x/a{i}",) for i in range(10)] + [("noslash",), ("/",)]),
        (posixpath.splitext, [(f"f{i}.txt",) for i in range(10)] + [("a.b.c",), (".rc",), ("x",)]),
        (posixpath.normcase, [(f"A{i}",) for i in range(10)]),
    ],
    ids=["join", "basename", "splitext", "normcase"],
)
def test_library_functions_of_changing_texts(fn, values):
    cf = bcfront.capture(fn)
    _calls(cf, fn, values)
    assert len(cf.entries) < len(values)


def distance(x, y):
    if x > y:
        return math.sqrt(x - y)
    return -(y - x) / 2.0


def test_a_changing_float_argument_is_known_at_run_time():
    cf = bcfront.capture(distance)
    _calls(cf, distance, [(float(i), 3.5) for i in range(20)] + [(3.5, 3.5), (-1e300, 3.5)])
    assert len(cf.entries) == 4  # the first two values', then one per answer of x > y
    assert not _value_guarded(cf, "x")


_INTS_WITHOUT_TORCH = """
import sys, warnings
import bcfront
def g(n, m):
    k = n * m + 1
    return [k, n - m, n // m if m else None]
cf = bcfront.capture(g)
with warnings.catch_warnings():
    warnings.simplefilter("error")
    for n in range(2, 40):
        assert cf(n, 3) == g(n, 3), n
    assert cf(5, 0) == g(5, 0)
assert "torch" not in sys.modules
print(len(cf.entries))
"""


def test_a_changing_int_argument_is_known_at_run_time_without_torch():
    # with torch imported an int that changes is a ShapeEnv symbol
    # (test_dynamic_python_ints); without it, a runtime value: a fresh interpreter
    out = subprocess.run(
        [sys.executable, "-c", _INTS_WITHOUT_TORCH], capture_output=True, text=True, check=True
    )
    assert int(out.stdout.split()[-1]) <= 4  # the first two values', then the rest (m == 0 its own)


class _Marks:
    pass


_MARKS = _Marks()


def marked_sum(x, big):
    _MARKS.seen = True  # a write before the raise: natively it happens
    return x + big  # a float plus an int too large for a float: OverflowError


def test_a_mixed_int_float_sum_is_checked_by_the_guard():
    # float + int can raise (the int too large): the guard must compute it, so that the
    # region never raises it while computing its result, before the write made first natively
    cf = bcfront.capture(marked_sum)
    for args in [(0.5, 1), (1.5, 2), (2.5, 3), (3.5, 10**400), (4.5, 10**401)]:
        _MARKS.seen = False
        got = _outcome(cf, args)
        assert _MARKS.seen, args
        assert got == _outcome(marked_sum, args), args


def dashed(s):
    parts = [p.upper() for p in s.split("/")]
    return "-".join(parts)


def test_a_join_of_runtime_items_is_computed_not_read():
    cf = bcfront.capture(dashed)
    _calls(cf, dashed, [("a/b",), ("c/d",), ("e/f",), ("g/h",), ("ij/kl",), ("a/b/c",), ("",)])
    assert len(cf.entries) == 5  # "a/b"'s, "c/d"'s, then one per number of parts (2, 3, 1)
    assert not _value_guarded(cf, "s", entry=2)
