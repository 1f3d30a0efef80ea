"""A runtime value's pure call in a checked link (`check_program.compile_checks`'s `pure`
and `result`, `CheckedLink`'s ``kept``): the guard computes such a call to check its
result's type, and the region computes it again to return it.  Made once: the program
keeps the call's value (`check_shortcuts.read_key`) and, where the region only returns it,
the C call returns the kept value without the region's frame.  Oracles: plain Python (the
captured function's results and exceptions), the Python link, and a counting stand-in for
the pure function (how often the program calls it)."""

from __future__ import annotations

import posixpath

import pytest

import bcfront
from bcfront.cfast import C
from bcfront.frontend.regions.check_program import OP, LinkParameters, compile_checks
from bcfront.frontend.regions.result_recipes import returned_expression

from .check_programs import MISS, frames_run, needs_c_call

needs_c_call(globals())

X = LinkParameters(("x",), None, (), None)
CHECKS = [
    "    try:",
    "        if not (___type(x) is ___str",
    "        and ___type(___f(x)) is ___int",
    "        and ___bool(___f(x)) is True):",
    "            return ___miss",
    "    except Exception:",
    "        return ___miss",
]


class Counted:
    """A stand-in for a pure C function: `int` of its argument, a new object each call
    (`made`), counted."""

    def __init__(self):
        self.made: list[int] = []

    @property
    def calls(self) -> int:
        return len(self.made)

    def __call__(self, s):
        self.made.append(int(s) * 1000 + 1000)  # a new int object (not a small cached one)
        return self.made[-1]


def _link(pure, returns="___f(x)"):
    f = Counted()
    scope = {"___type": type, "___str": str, "___int": int, "___bool": bool, "___f": f, "___miss": MISS}
    src = "def ref(x):\n" + "\n".join(CHECKS) + f"\n    return {returns}\n"
    exec(compile(src, "<checks>", "exec"), scope)  # the test's own source: the Python link
    ref = scope["ref"]
    p = compile_checks(
        CHECKS,
        "___miss",
        scope,
        X,
        ref.__code__.co_varnames,
        pure,
        returned_expression([f"    return {returns}"]),
    )
    body = scope["body"] = eval(f"lambda x: {returns}", scope)  # the region's code
    link = C.CheckedLink(
        p.code, p.consts, p.nlocals, p.depth, 1, False, p.guarded, body, ref, (), p.kept_result
    )
    link.next = lambda x: MISS
    return link, p, f, ref


def _calls_of(p, const) -> int:
    pairs = list(zip(p.code[::2], p.code[1::2]))
    return sum(1 for i, (op, a) in enumerate(pairs) if op == OP["CONST"] and p.consts[a] is const)


def test_a_pure_call_spelled_twice_is_made_once_and_returned_kept():
    link, p, f, ref = _link(frozenset({"___f"}))
    assert _calls_of(p, f) == 1 and p.kept_result >= 0
    for s in ["1", "41", "-7"]:
        f.made.clear()
        got, frames = frames_run(link, s)
        assert f.calls == 1  # the Python link makes three
        assert got == ref(s) == int(s) * 1000 + 1000 and f.calls == 4
        assert "<checks>" not in frames and not any("lambda" in x for x in frames)  # no body


def test_the_kept_value_is_the_object_the_checks_made():
    link, p, f, ref = _link(frozenset({"___f"}))
    r = link("12")
    assert f.calls == 1 and r is f.made[0]


def test_where_the_checks_fail_or_raise_the_call_misses():
    link, p, f, ref = _link(frozenset({"___f"}))
    assert link("x") is MISS and ref("x") is MISS  # int("x") raises: a miss, as the Python link's
    assert link("-1") is MISS and ref("-1") is MISS  # f("-1") == 0: its truth check fails
    assert link(3) is MISS and ref(3) is MISS  # not a str


def test_without_pure_names_the_call_is_made_as_often_as_spelled():
    link, p, f, ref = _link(frozenset())
    assert _calls_of(p, f) == 2 and p.kept_result == -1
    f.made.clear()
    assert link("5") == 6000 and f.calls == 3  # two in the checks, one in the region's body


def test_a_region_returning_something_else_runs_its_body():
    link, p, f, ref = _link(frozenset({"___f"}), returns="___f(x) + 1")
    assert p.kept_result == -1
    f.made.clear()
    assert link("5") == 6001 and f.calls == 2  # the checks' one, then the body's


@pytest.mark.parametrize("kept", [-2, 99])
def test_bad_kept_locals_are_refused(kept):
    link, p, f, ref = _link(frozenset({"___f"}))
    with pytest.raises(ValueError, match="kept"):
        C.CheckedLink(p.code, p.consts, p.nlocals, p.depth, 1, False, p.guarded, ref, ref, (), kept)


def test_returned_expression_reads_only_a_bare_return():
    assert returned_expression(["    r = f(x)", "    return r"]) is not None
    assert returned_expression(["    return f(x)"]) is not None
    assert returned_expression(["    g(x)", "    return f(x)"]) is None
    assert returned_expression(["    r = f(x)", "    return s"]) is None


def parse(s):
    return int(s)


def normalized(p):
    return posixpath.normpath(p)


@pytest.mark.parametrize("fn,inputs", [
    (parse, ["1", "2", "3", "42", " -7 ", "x", "", "99", "1_0"]),
    (normalized, ["a//b", "", "/..", "x/./y", "//q/../r", "a/b/../../..", "/"]),
])  # fmt: skip
def test_captured_functions_of_runtime_strings_match_plain_python(fn, inputs):
    cf = bcfront.capture(fn)
    for _ in range(2):
        for s in inputs:
            want, _ = frames_run(fn, s)
            got, frames = frames_run(cf, s)
            assert type(got) is type(want) and (got == want or str(got) == str(want)), s
    assert len(cf.entries) <= 6  # two values, the dynamic entry, the raising ones
    dynamic = cf.entries[-1].link_names.checked
    assert dynamic is not None and dynamic.hits > 0
    _, frames = frames_run(cf, "77")
    assert not any(f.startswith("bcfront:") for f in frames)  # kept: no link or body frame
