"""`bcfront.explain.collect()`: what ran, every call counted, and where the run time went.

Run-time figures are wall-clock times, so these tests assert structure (present,
non-negative, parts within the whole, nesting) and only orderings that hold by
orders of magnitude (thousands of native Python iterations against one small
graph; one 192x192 matmul pair against a guard check), never thresholds.
"""

from __future__ import annotations

import io
import json
import time

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.cli.advice import enrich  # noqa: E402
from bcfront.cli.schema import validate  # noqa: E402
from bcfront.report import Report  # noqa: E402

EPS = 1e-9  # float sums of perf_counter differences


def graph_only(x, w):
    return (x @ w).relu() @ w


def native_loop(x):
    y = x + 1
    buf = io.StringIO()
    for i in range(3000):  # the sleep (a C call with effects) breaks; the rest of the loop runs natively
        print(i, file=buf)
        time.sleep(0)
    return y * 2


def by_name(report: Report) -> dict:
    return {f.function: f for f in report.functions}


def python_share(fr) -> float:
    return fr.python_seconds / (fr.python_seconds + fr.compiled_seconds)


def check_split(fr) -> None:
    parts = (fr.compiled_seconds, fr.python_seconds, fr.capture_seconds)
    assert all(p >= 0 for p in parts) and fr.total_seconds >= 0, fr
    assert fr.compiled_seconds + fr.python_seconds <= fr.total_seconds + EPS, fr
    assert sum(parts) == pytest.approx(fr.total_seconds, rel=1e-6, abs=EPS), fr


def test_explain_times_the_call_it_makes():
    x, w = torch.randn(64, 64), torch.randn(64, 64)
    (fr,) = bcfront.explain(graph_only, x, w).functions
    assert fr.calls == fr.timed_calls == 1
    check_split(fr)
    assert fr.compiled_seconds > 0  # the graph ran, and was timed
    assert fr.capture_seconds > 0  # the first call captured: not counted as run time
    assert validate(json.loads(Report((fr,)).to_json())) == []


def test_calls_outside_a_collection_are_counted_but_not_timed():
    cf = bcfront.capture(graph_only)
    x, w = torch.randn(8, 8), torch.randn(8, 8)
    for _ in range(4):
        cf(x, w)
    fr = cf.report()
    assert (fr.calls, fr.timed_calls) == (4, 0)
    assert fr.total_seconds == fr.compiled_seconds == fr.python_seconds == fr.capture_seconds == 0


def test_collect_counts_cache_hits_and_times_only_what_ran_inside():
    cf = bcfront.capture(graph_only)
    x, w = torch.randn(8, 8), torch.randn(8, 8)
    cf(x, w)  # captured outside: not in the collection
    with bcfront.explain.collect() as run:
        for _ in range(5):
            cf(x, w)  # cache hits only
    cf(x, w)
    (fr,) = run.report().functions
    assert len(cf.entries) == 1
    assert (fr.calls, fr.timed_calls) == (7, 5)  # calls: every call; timed: the 5 inside
    check_split(fr)
    assert fr.capture_seconds == 0  # no capture happened while timed
    assert fr.compiled_seconds > 0


def test_collect_lists_functions_in_order_of_first_call_with_continuations_after():
    a, b = bcfront.capture(native_loop), bcfront.capture(graph_only)
    x = torch.randn(4, 4)
    with bcfront.explain.collect() as run:
        b(x, x)
        a(x)
        b(x, x)
    funcs = run.functions
    assert funcs[0] is b and funcs[1] is a
    assert len(funcs) > 2  # a's continuations, right after it
    conts = funcs[2:]
    assert all(c.__qualname__.startswith("native_loop") for c in conts)
    names = [f.function for f in run.report().functions]
    assert names[:2] == ["graph_only", "native_loop"]


def test_collections_nest_and_keep_what_ran_alive():
    with bcfront.explain.collect() as outer:
        with bcfront.explain.collect() as inner:
            bcfront.capture(graph_only)(torch.ones(2, 2), torch.ones(2, 2))  # no other reference
        bcfront.capture(native_loop)(torch.ones(2))
    assert [f.__qualname__ for f in inner.functions] == ["graph_only"]
    outer_names = [f.__qualname__ for f in outer.functions]
    assert outer_names[0] == "graph_only" and outer_names[1] == "native_loop"
    # outside every collection nothing is timed or collected any more
    cf = bcfront.capture(graph_only)
    cf(torch.ones(2, 2), torch.ones(2, 2))
    assert cf.timed_calls == 0 and cf not in outer.functions


def test_continuations_time_is_inside_the_callers():
    x = torch.randn(16)
    cf = bcfront.capture(native_loop)
    with bcfront.explain.collect() as run:
        for _ in range(3):
            cf(x)
    root, *conts = run.report().functions
    assert root.function == "native_loop" and conts and root.graph_breaks
    for fr in (root, *conts):
        check_split(fr)
        assert fr.timed_calls >= 1
    for c in conts:  # each continuation call runs inside a call of the root
        assert c.total_seconds <= root.total_seconds + EPS
        assert c.compiled_seconds <= root.compiled_seconds + EPS
        assert c.capture_seconds <= root.capture_seconds + EPS


def test_a_native_loop_after_a_break_shows_more_python_than_a_graph_only_function():
    x, w = torch.randn(192, 192), torch.randn(192, 192)
    heavy, light = bcfront.capture(native_loop), bcfront.capture(graph_only)
    for _ in range(2):  # capture and warm up outside the measurement
        heavy(x), light(x, w)
    with bcfront.explain.collect() as run:
        for _ in range(3):
            heavy(x), light(x, w)
    fns = by_name(run.report())
    h, g = fns["native_loop"], fns["graph_only"]
    for fr in (h, g):
        check_split(fr)
        assert fr.compiled_seconds > 0 and fr.capture_seconds == 0
    assert python_share(h) > python_share(g)


def test_storm_warning_uses_every_call_not_only_the_misses():
    cf = bcfront.capture(graph_only, backend="eager", dynamic=False)  # a recompile per size
    w = torch.randn(3, 3)
    with bcfront.explain.collect() as run:
        for _ in range(8):
            cf(torch.randn(2, 3), w)  # one capture, then cache hits
        for n in (4, 5):
            cf(torch.randn(n, 3), w)  # two recompiles in ten calls: not a storm
    (fr,) = enrich(run.report()).functions
    assert fr.calls == 10 and len(fr.recompiles) == 2
    assert not any("recompile storm" in w for w in fr.warnings), fr.warnings

    storm = bcfront.capture(graph_only, backend="eager", dynamic=False)
    with bcfront.explain.collect() as run:
        for n in range(2, 7):
            storm(torch.randn(n, 3), w)  # every call a new shape
    (fr,) = enrich(run.report()).functions
    assert fr.calls == 5 and len(fr.recompiles) == 4
    assert any("failed on 4 of 5 calls" in w for w in fr.warnings), fr.warnings


def countdown(x, n):
    if n == 0:
        return x
    print("", end="")  # a break: the rest runs natively and calls the capture again
    return countdown(x + 1, n - 1)


def test_recursive_calls_are_counted_and_timed_once_as_part_of_the_outermost():
    global countdown
    plain = countdown
    countdown = bcfront.capture(plain)
    try:
        with bcfront.explain.collect() as run:
            for _ in range(2):
                out = countdown(torch.zeros(2), 3)
        assert torch.equal(out, torch.full((2,), 3.0))
        fr = run.report().functions[0]
        assert fr.function == "countdown"
        # 2 outer calls, 4 levels each: levels 3, 2 and 1 break, so their callers run them
        # through the wrapper; level 0 has no break and is inlined into its caller's trace
        assert (fr.calls, fr.timed_calls) == (6, 2)
        check_split(fr)
    finally:
        countdown = plain
