"""A bug inside bcfront never takes down the user's program.

Each test simulates an internal bug by monkeypatching one internal function
(tracing, an opcode handler, entry building, code generation, a backend) to
raise an exception no user code would.  The captured function must then

* return what the plain function returns (it runs natively),
* perform the plain function's side effects exactly once (tracing did not
  perform any for real, and the native run is not repeated),
* let the user's own exceptions through unchanged,
* warn exactly once, however many calls follow, with a message that says it
  is a bcfront bug and how to report it.

`bcfront/capture.py` catches unexpected exceptions around tracing and
compilation, marks the function native and warns once, saying how to report
it (docs/known-bugs.md F7).
"""

from __future__ import annotations

import warnings

import pytest

import bcfront

from .helpers import HAS_TORCH, outcome

# These tests check the fallback itself: strict mode (tests/conftest.py) would raise instead.
pytestmark = pytest.mark.usefixtures("lenient")


class SimulatedBug(Exception):
    """What a bug inside bcfront looks like to the caller."""


def _boom(*args, **kwargs):
    raise SimulatedBug("simulated internal failure")


def _patch_attr(path):
    module, _, name = path.rpartition(".")

    def apply(monkeypatch):
        import importlib

        monkeypatch.setattr(importlib.import_module(module), name, _boom)

    return apply


def _patch_handler(opname):
    def apply(monkeypatch):
        from bcfront.frontend.interp.handlers import HANDLERS

        monkeypatch.setitem(HANDLERS, opname, _boom)

    return apply


INTERNAL_POINTS = {
    "tracing": _patch_attr("bcfront.frontend.regions.driver.trace_entry"),
    "opcode-handler": _patch_handler("BINARY_OP"),
    "entry-building": _patch_attr("bcfront.frontend.regions.driver.build_entry"),
    # Patched where it is used: entry imported the name (patching codegen would not reach it,
    # and would leak into entry if entry were first imported while the patch is active).
    "codegen": _patch_attr("bcfront.frontend.regions.entry.compile_function"),
}


def user_fn(x, log):
    log.append(x)
    return x * 3 + 1


def user_fn_raises(x, log):
    log.append(x)
    if x > 2:
        raise ValueError(f"user error {x}")
    return x + 1


def _calls_with_warnings(cf, fn, xs):
    """[(captured outcome, plain outcome, captured log, plain log)], warnings issued by the captured calls."""
    rows = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in xs:
            got_log, want_log = [], []
            rows.append((outcome(cf, x, got_log), outcome(fn, x, want_log), got_log, want_log))
    return rows, [str(w.message) for w in caught]


def _check(rows, messages):
    for got, want, got_log, want_log in rows:
        assert got == want, f"captured {got}, plain {want}"
        assert got_log == want_log, f"side effects: captured {got_log}, plain {want_log}"
    assert len(messages) == 1, f"expected one warning, got {messages}"
    assert "bcfront" in messages[0], messages[0]


@pytest.mark.parametrize("point", sorted(INTERNAL_POINTS))
def test_internal_error_falls_back_to_native(point, monkeypatch):
    INTERNAL_POINTS[point](monkeypatch)
    cf = bcfront.capture(user_fn)
    _check(*_calls_with_warnings(cf, user_fn, [1, 2, 2, 5]))


@pytest.mark.parametrize("point", sorted(INTERNAL_POINTS))
def test_user_exceptions_pass_through_a_fallback(point, monkeypatch):
    INTERNAL_POINTS[point](monkeypatch)
    cf = bcfront.capture(user_fn_raises)
    _check(*_calls_with_warnings(cf, user_fn_raises, [1, 3, 3, 0]))


def test_fallback_warning_says_how_to_report(monkeypatch):
    INTERNAL_POINTS["tracing"](monkeypatch)
    _, messages = _calls_with_warnings(bcfront.capture(user_fn), user_fn, [1])
    text = messages[0].lower()
    assert "report" in text and ("issue" in text or "http" in text), messages[0]


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_backend_failure_falls_back_to_native(monkeypatch):
    import torch

    _patch_attr("bcfront.backends.compile_graph")(monkeypatch)

    def fn(x, log):
        log.append(1)
        return torch.relu(x) * 2

    cf = bcfront.capture(fn)
    rows, messages = _calls_with_warnings(cf, fn, [torch.linspace(-1, 1, 5)] * 3)
    for got, want, got_log, want_log in rows:
        assert got[0] == want[0] == "value" and torch.equal(got[1], want[1]), (got, want)
        assert got_log == want_log
    assert len(messages) == 1 and "bcfront" in messages[0], messages


def test_simulated_bug_is_not_a_user_exception_type():
    """The simulation is honest: no user code here raises SimulatedBug, so it can only come from bcfront."""
    assert not issubclass(SimulatedBug, (ValueError, TypeError, RuntimeError, bcfront.BcfrontError))
