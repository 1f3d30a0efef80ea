"""A loop whose body breaks on every iteration: the code after the loop is captured again.

Each iteration re-enters the loop body's continuation with different guards (the
loop variable, the iterator position); after `LOOP_RECAPTURES` captures from
inside the loop the rest of the loop runs natively.  The code after the loop
must not run natively with it: the loop's exits hand over to a captured
continuation there (`breaks.NativeLoop`), and the natively-run part is noted in
the function's notes (issue #24, cause 2; transformers' config-defaults helper
loops over four names this way).  Oracle: CPython running the same function
(results, printed output, exceptions); counts come from `bcfront.explain`.
"""

from __future__ import annotations

import contextlib
import io

import pytest

import bcfront
from bcfront.frontend.regions.tailcalls import LOOP_RECAPTURES

from .outcomes import assert_same_outcome, quiet_outcome

torch = pytest.importorskip("torch")


def _explain(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        return bcfront.explain(fn, *args)


class Cfg:
    a, b, c, d, e, f = 1, None, 3, 4, None, 6


def config_defaults(cfg, x, kwargs):
    """transformers' merge_with_config_defaults, in short."""
    for name in ["a", "b", "c", "d", "e", "f"]:  # more iterations than LOOP_RECAPTURES
        if kwargs.get(name) is not None:
            v = kwargs[name]
        else:
            print(name, end="")  # breaks
            v = getattr(cfg, name, None)
        if v is not None:
            kwargs[name] = v
    y = x.sin() * 2
    return y.cos() + len(kwargs)


def test_code_after_the_loop_is_captured_again():
    x = torch.randn(3)
    rep = _explain(config_defaults, Cfg(), x, {})
    ops = sum(g.op_count for g in rep.graphs)
    assert ops >= 4, rep.graphs  # sin, mul, cos, add: after the loop, captured
    notes = [n for f in rep.functions for n in f.notes]
    assert any("config_defaults" in n and "runs natively" in n and "captured again" in n for n in notes), (
        notes
    )
    line = config_defaults.__code__.co_firstlineno + 6  # the print
    assert any(f":{line})" in n for n in notes), notes


def test_the_native_part_of_the_loop_is_a_reported_fallback():
    from bcfront.report import FallbackKind, NativeFallbackWarning

    with pytest.warns(NativeFallbackWarning, match="config_defaults"):
        rep = _explain(config_defaults, Cfg(), torch.randn(3), {})
    loops = [f for f in rep.native_fallbacks if f.kind is FallbackKind("loop-limit")]
    assert loops and loops[0].lineno == config_defaults.__code__.co_firstlineno + 6, rep.native_fallbacks


def test_results_match_over_calls():
    cf = bcfront.capture(config_defaults)
    for seed, kw in ((1, {}), (2, {}), (3, {"b": 7}), (4, {}), (5, {"a": 2, "c": 0})):
        x = torch.randn(3, generator=torch.Generator().manual_seed(seed))
        got = quiet_outcome(cf, Cfg(), x, dict(kw))
        assert_same_outcome(got, quiet_outcome(config_defaults, Cfg(), x, dict(kw)))


def with_break(n, stop):
    total = 0
    for i in range(n):
        print(i, end="")
        if i == stop:
            break
        total += i * i
    return total * 2 + n


def with_return(n, stop):
    total = 0
    for i in range(n):
        print(i, end="")
        if i == stop:
            return -total
        total += i
    return total + 1


def with_raise(n, stop):
    out = []
    try:
        for i in range(n):
            print(i, end="")
            if i == stop:
                raise ValueError(i)
            out.append(i)
    except ValueError as e:
        out.append(("caught", e.args))
    finally:
        out.append("fin")
    out.append(len(out))
    return out


def nested(n, m):
    acc = []
    for i in range(n):
        for j in range(m):
            print(j, end="")
            acc.append(i * j)
        acc.append(sum(acc))
    return acc, len(acc)


def while_loop(n):
    k, s = 0, 0
    while k < n:
        print(k, end="")
        s += k
        k += 1
    return s * 3, k


def in_with_block(n):
    log = []
    with contextlib.suppress(KeyError):
        for i in range(n):
            print(i, end="")
            log.append(i)
        log.append("after")
        {}["missing"]
    log.append("out")
    return log


def closure_over_loop(n):
    seen = []

    def add(v):
        seen.append(v)

    for i in range(n):
        print(i, end="")
        add(i)
    total = sum(seen)
    return lambda: total + len(seen)


def maybe_unbound(n):
    for i in range(n):
        print(i, end="")
        if i == 3:
            late = i
    try:
        return late * 10  # unbound when the loop is short
    except UnboundLocalError:
        return "unbound"


CASES = {
    "break": (with_break, [(10, 5), (10, 50), (3, 1), (0, 0)]),
    "return": (with_return, [(10, 6), (10, 60), (2, 0)]),
    "raise": (with_raise, [(10, 7), (10, 70), (1, 0)]),
    "nested": (nested, [(3, 5), (4, 4), (1, 7)]),
    "while": (while_loop, [(8,), (20,), (0,)]),
    "with": (in_with_block, [(6,), (9,), (0,)]),
    "closure": (closure_over_loop, [(6,), (9,), (0,)]),
    "maybe_unbound": (maybe_unbound, [(8,), (2,), (9,)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_loop_exits_match_python(name):
    fn, calls = CASES[name]
    cf = bcfront.capture(fn)
    for args in calls + calls[:1]:
        got, want = quiet_outcome(cf, *args), quiet_outcome(fn, *args)
        if name == "closure":
            got = (("ok", got[0][1]()), got[1]) if got[0][0] == "ok" else got
            want = (("ok", want[0][1]()), want[1]) if want[0][0] == "ok" else want
        assert_same_outcome(got, want)


def test_after_loop_continuation_is_reused_across_calls():
    cf = bcfront.capture(with_break)
    for _ in range(3):
        assert_same_outcome(quiet_outcome(cf, 12, 100), quiet_outcome(with_break, 12, 100))
    conts = {}
    for fam in cf.continuations.values():
        for cap, _loop in fam.values():
            conts[cap.__qualname__] = cap
    body = [c for c in conts.values() if c.notes]
    assert body and all(len(c.entries) <= 1 + LOOP_RECAPTURES for c in body)
    after = [c for c in conts.values() if c is not body[0] and c.entries and not c.notes]
    assert any(c.calls >= 3 and len(c.entries) == 1 for c in after), [(c, c.calls) for c in after]
