"""A graph break inside the ``with`` block of a ``@contextmanager`` (HF ``generate()``'s
``with self._optimize_model_for_decode():`` around its decoding loop): the region rebuilds
the manager's generator suspended at its yield (`regions.resume_gen`), and the code after
the break runs the rest of it in the trace (`model.resumed_gens`) -- so the data-dependent
break is the only one: no ``with`` entered natively, no break at ``next()`` in
``__exit__``.  Outputs, the order of the manager's effects and the exceptions are plain
Python's; the code after the yield runs once."""

from __future__ import annotations

import contextlib

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402

from .test_with_entered_natively import LOG, tagged  # noqa: E402  (a plain try/finally one)


@contextlib.contextmanager
def nested(tag):
    LOG.append(("outer", tag))
    with tagged(tag + 1) as inner:  # the inner manager's __exit__ is on the stack at the yield
        yield inner
    LOG.append(("outer done", tag))


@contextlib.contextmanager
def suppressing():
    try:
        yield
    except ValueError as e:
        LOG.append(("suppressed", str(e)))


class Box:
    def __init__(self):
        self.mode = "base"


@contextlib.contextmanager
def switched(box, mode):
    old = box.mode
    box.mode = mode
    try:
        yield
    finally:
        box.mode = old


def body(x):
    y = x + 1
    with tagged(3) as t:
        y = y * t
        if y.sum() > 0:  # data-dependent: a break inside the with block
            y = y + 1
        y = y - 1
    return y * 2


def body_nested(x):
    with nested(1) as k:
        if x.sum() > 0:
            x = x + k
    return x


def body_raises(x):
    with suppressing():
        if x.sum() > 0:
            x = x * 2
        if x.sum() > 3:
            raise ValueError("big")
        x = x + 1
    return x


def body_switched(x, box):
    with switched(box, "fast"):
        LOG.append(box.mode)
        if x.sum() > 0:
            x = x + 1
        LOG.append(box.mode)
    LOG.append(box.mode)
    return x


def in_loop(x):
    with tagged(2):
        for _ in range(3):  # a break in every iteration, as generate()'s stop checks
            if x.sum() > 0:
                x = x - 1
            else:
                x = x + 2
    return x


def run(fn, xs, *extra):
    out = []
    for x in xs:
        LOG.clear()
        r = fn(x, *extra)
        out.append((r.tolist(), list(LOG)))
    return out


CASES = [body, body_nested, body_raises, in_loop]
XS = (torch.ones(2), -torch.ones(2), torch.full((2,), 3.0), torch.ones(2))


@pytest.mark.parametrize("fn", CASES)
def test_same_as_plain_python(fn):
    assert run(bcfront.capture(fn), XS) == run(fn, XS)


@pytest.mark.parametrize("fn", [body, body_nested, in_loop])  # (body_raises: gen.throw() breaks)
def test_only_the_data_dependent_breaks_remain(fn):
    report = bcfront.explain(fn, torch.ones(2))
    reasons = {b.reason for b in report.graph_breaks}
    assert reasons == {BreakReason.DATA_DEPENDENT_BRANCH}, report
    assert not report.native_fallbacks


def test_writes_of_the_manager_are_replayed_in_order():
    box = Box()
    expected = run(body_switched, XS, box)
    assert box.mode == "base"
    cf = bcfront.capture(body_switched)
    assert run(cf, XS, box) == expected
    assert box.mode == "base"
    report = bcfront.explain(body_switched, torch.ones(2), box)
    assert {b.reason for b in report.graph_breaks} == {BreakReason.DATA_DEPENDENT_BRANCH}


def test_a_break_in_the_managers_own_exit_code_runs_it_once():
    """A break inside the generator's own code after the yield: ``__exit__`` runs natively
    and steps the rebuilt generator itself; its finally block runs once."""

    @contextlib.contextmanager
    def breaking_exit(t):
        LOG.append("enter")
        try:
            yield
        finally:
            if t.sum() > 0:  # data-dependent: a break inside the generator's finally
                LOG.append("positive")
            LOG.append("exit")

    def fn(x):
        with breaking_exit(x):
            if x.sum() > -10:
                x = x * 3
        return x

    assert run(bcfront.capture(fn), XS) == run(fn, XS)


def test_the_generators_locals_are_guarded():
    """The code after the yield restores `old`, read from the rebuilt generator's frame:
    another value there (another starting mode) must not reuse what the trace saw."""
    cf = bcfront.capture(body_switched)
    for start in ("a", "b", "a", "c"):
        for x in (torch.ones(2), -torch.ones(2)):
            want_box, got_box = Box(), Box()
            want_box.mode = got_box.mode = start
            LOG.clear()
            want = body_switched(x, want_box)
            want_log = list(LOG)
            LOG.clear()
            got = cf(x, got_box)
            assert torch.equal(got, want) and LOG == want_log and got_box.mode == want_box.mode == start
