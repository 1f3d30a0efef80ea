"""A native fallback is never silent: in explain's report, with one warning per function and why.

Every way a captured function (or one of its continuations) runs natively
instead of captured -- a C function or class, an internal error, a fresh entry
failing its own guards, the recompile limit, no continuation after a break, a
loop that keeps recapturing -- goes through `CapturedFunction.fall_back`: it
shows in `bcfront.explain(...)` (`FunctionReport.native_fallbacks`, the JSON
report, the CLI text) and warns once (`NativeFallbackWarning`), however many
calls follow.  Oracle for results: the plain function on the same inputs.
"""

from __future__ import annotations

import json
import math
import re
import sys
import warnings
from pathlib import Path

import pytest

import bcfront
from bcfront.capture import StrictFallbackError
from bcfront.report import FallbackKind, NativeFallbackWarning

torch = pytest.importorskip("torch")

DOC = Path(__file__).resolve().parent.parent / "docs" / "explain-schema.md"


def _calls(cf, *argss):
    """Call `cf` on each argument tuple; (results, messages of the fallback warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [cf(*args) for args in argss]
    return results, [w for w in caught if issubclass(w.category, NativeFallbackWarning)]


def _kinds(report):
    return [f.kind for f in report.native_fallbacks]


# -- the kinds -----------------------------------------------------------------------------------


def test_recompile_limit_warns_once_and_is_in_the_report():
    def bump(n):
        return n + 1

    cf = bcfront.capture(bump, recompile_limit=2)
    results, caught = _calls(cf, *[(i,) for i in range(6)])
    assert results == [bump(i) for i in range(6)]
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert "bump" in str(caught[0].message) and "recompile limit" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the user's call, not at bcfront
    [fb] = cf.report().native_fallbacks
    assert fb.kind == FallbackKind.RECOMPILE_LIMIT and fb.function.endswith("bump")
    assert fb.message in cf.warnings  # older readers of `warnings` still see it


def test_past_the_recompile_limit_a_new_input_goes_straight_to_the_function(monkeypatch):
    """Past the limit, a call no entry takes is the function's own call, made by the C
    call from the caller's frame -- not a capture attempt, then a stand-in of that frame
    (`caller_frames.from_user_frame`, ~10 us a call); the entries made before still take
    their inputs."""
    from bcfront.frontend.regions import caller_frames

    def bump(n, k=1):
        return n + k

    cf = bcfront.capture(bump, recompile_limit=2)
    _calls(cf, (0,), (1,), (2,))  # the third misses both entries: the limit
    assert cf.native_reason is not None
    if cf._entries[0].link_names is None or not cf._entries[0].link_names.exact:
        pytest.skip("no exact links here (the C extension is not built)")
    stand_ins = []
    real = caller_frames.from_user_frame
    monkeypatch.setattr(caller_frames, "from_user_frame", lambda fn: stand_ins.append(fn) or real(fn))
    assert (cf(7), cf(8), cf(0), cf(1), cf(5, k=2)) == (8, 9, 1, 2, 7)
    assert stand_ins == []


def test_a_c_function_warns_once_and_explain_says_why():
    cf = bcfront.capture(math.sqrt)
    results, caught = _calls(cf, (4.0,), (9.0,), (16.0,))
    assert results == [2.0, 3.0, 4.0]
    assert len(caught) == 1 and "sqrt" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NativeFallbackWarning)
        report = bcfront.explain(math.sqrt, 4.0)
    assert _kinds(report) == [FallbackKind.NO_BYTECODE]


def test_an_internal_error_warns_once_and_is_in_the_report(lenient, monkeypatch):
    from bcfront.frontend.regions import driver

    def broken(*args, **kwargs):
        raise KeyError("simulated bcfront bug")

    monkeypatch.setattr(driver, "trace_entry", broken)

    def double(x):
        return x * 2

    cf = bcfront.capture(double)
    results, caught = _calls(cf, (1,), (2,), (3,))
    assert results == [2, 4, 6]
    assert len(caught) == 1 and "internal error" in str(caught[0].message)
    assert _kinds(cf.report()) == [FallbackKind.INTERNAL_ERROR]


def test_strict_mode_raises_on_an_internal_error(monkeypatch):
    from bcfront.frontend.regions import driver

    def broken(*args, **kwargs):
        raise KeyError("simulated bcfront bug")

    monkeypatch.setenv("BCFRONT_STRICT", "1")
    monkeypatch.setattr(driver, "trace_entry", broken)
    cf = bcfront.capture(lambda x: x * 2)
    with pytest.raises(StrictFallbackError, match="internal error") as info:
        cf(1)
    assert isinstance(info.value.__cause__, KeyError)


def _entries_failing_own_guards(monkeypatch):
    """Every fresh entry's guard says no: what a wrong guard looks like from capture."""
    from bcfront.frontend.regions import driver

    real = driver.trace_entry

    def wrong_guards(*args, **kwargs):
        entry = real(*args, **kwargs)
        entry.guard = lambda *a, **k: False
        return entry

    monkeypatch.setattr(driver, "trace_entry", wrong_guards)


def test_a_fresh_entry_failing_its_guards_warns_once_per_function(lenient, monkeypatch):
    _entries_failing_own_guards(monkeypatch)

    def add_one(x):
        return x + 1

    cf = bcfront.capture(add_one)
    x = torch.ones(3)
    results, caught = _calls(cf, (x,), (x,), (x,))
    for r in results:
        assert torch.equal(r, x + 1)
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert "add_one" in str(caught[0].message) and "failed its own guards" in str(caught[0].message)
    [fb] = cf.report().native_fallbacks
    assert fb.kind == FallbackKind.SELF_CHECK and fb.count == 3  # every call, one warning
    assert any("failed its own guards" in w for w in cf.warnings)


def test_strict_mode_raises_on_a_fresh_entry_failing_its_guards(monkeypatch):
    monkeypatch.setenv("BCFRONT_STRICT", "1")
    _entries_failing_own_guards(monkeypatch)
    cf = bcfront.capture(lambda x: x + 1)
    with pytest.raises(StrictFallbackError, match="failed its own guards"):
        cf(torch.ones(3))


def test_the_suite_runs_in_strict_mode():
    from bcfront.capture import strict

    assert strict()  # tests/conftest.py


def frame_after_break(x):
    y = x + 1
    print(end="")  # a break: the rest is a continuation
    sys._getframe()  # in the continuation: only the real frame will do, so it runs natively
    return y * 2


def test_a_continuation_that_gives_up_shows_on_its_function():
    x = torch.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = bcfront.explain(frame_after_break, x)
    ours = [w for w in caught if issubclass(w.category, NativeFallbackWarning)]
    assert len(ours) == 1 and "frame_after_break" in str(ours[0].message)
    top = report.functions[0]
    assert top.function == "frame_after_break"
    [fb] = top.native_fallbacks  # the continuation's, shown on the function it continues
    assert fb.kind == FallbackKind.NO_CONTINUATION and fb.function != top.function
    assert fb.filename == __file__ and fb.lineno == frame_after_break.__code__.co_firstlineno + 3
    cont = [f for f in report.functions if f.function == fb.function]
    assert cont and cont[0].native_fallbacks == (fb,)
    assert len(report.native_fallbacks) == 1  # once in the whole report
    assert "ran natively [no-continuation]" in str(report)


def loops_with_a_break(x, n):
    for i in range(n):
        print(end="")
        x = x + i
    return x


def test_fall_back_from_a_continuation_counts_and_warns_once():
    """The API the regions layer calls (e.g. a loop past its recaptures)."""
    cf = bcfront.capture(loops_with_a_break)
    cf(torch.zeros(2), 2)
    conts = [c for per in cf.continuations.values() for c, _ in per.values()]
    assert conts
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            conts[0].fall_back("loop-limit", "the loop kept recapturing; the rest ran natively")
    assert len([w for w in caught if issubclass(w.category, NativeFallbackWarning)]) == 1
    [fb] = cf.report().native_fallbacks
    assert fb.kind == FallbackKind.LOOP_LIMIT and fb.count == 3
    assert fb.function == conts[0].__qualname__


# -- the JSON report and its documentation ----------------------------------------------------


def test_fallbacks_are_in_the_json_report_and_valid():
    from bcfront.cli.schema import validate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NativeFallbackWarning)
        report = bcfront.explain(frame_after_break, torch.ones(2))
    data = json.loads(report.to_json())
    assert validate(data) == []
    [fb] = data["functions"][0]["native_fallbacks"]
    assert fb["kind"] == "no-continuation" and fb["lineno"] and fb["count"] == 1


def test_doc_lists_every_fallback_kind():
    text = DOC.read_text().split("### fallback kinds", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([a-z-]+)` \| (.+) \|$", text, re.M))
    assert rows == {k.value: k.meaning for k in FallbackKind}


# -- a bug strict mode found ----------------------------------------------------------------------


def builds_a_tuple_cycle(a):
    t = ([a],)
    t[0].append(t)  # a tuple reached again through a list it holds
    print(end="")
    return t[0][1] is t


def test_self_containing_tuple_passes_its_own_guards():
    """The continuation guards ``L['t'] is not L['t'][0][1]``, which the fresh entry fails."""
    cf = bcfront.capture(builds_a_tuple_cycle)
    assert cf(1) is True


def countdown(x, n):
    if n == 0:
        return x
    print("", end="")  # a break: the continuation calls the captured function again
    return countdown(x + 1, n - 1)


def test_captured_recursion_passes_its_own_guards(monkeypatch):
    """The continuation inlines the captured `countdown` itself (bcfront's __call__) and
    guards ``countdown._entries[0].guard is ...``, which its fresh entry fails."""
    monkeypatch.setitem(globals(), "countdown", bcfront.capture(countdown))
    assert torch.equal(countdown(torch.zeros(2), 3), torch.full((2,), 3.0))


def tuples_again(a, b):
    return a is b, (a, 1) is (b, 1)


def test_a_tuple_passed_twice_passes_its_own_guards():
    cf = bcfront.capture(tuples_again)
    t, u = (1, [2]), (1, [2])
    for a, b in ((t, t), (t, u), (t, t), (u, u)):
        assert cf(a, b) == tuples_again(a, b)


def test_deleting_a_module_attribute_passes_its_own_guards(monkeypatch):
    import types

    mod = types.ModuleType("bcfront_test_fallback_mod")
    mod.x = 1
    monkeypatch.setitem(sys.modules, mod.__name__, mod)

    def g():
        del mod.x
        return hasattr(mod, "x")

    assert bcfront.capture(g)() is False and not hasattr(mod, "x")
