"""Logging in captured code: a ``Logger`` call on known values, and a cached procedure such
as transformers' ``warning_once``, is made after the region's graph instead of breaking it,
with the records plain Python makes (message, level, the caller's file, line and function),
in order, and only where nothing the call reads changes before the region's end."""

from __future__ import annotations

import functools
import logging
import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.reasons import BreakReason  # noqa: E402


class Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records: list = []

    def emit(self, record):
        r = record
        self.records.append((r.name, r.levelname, r.getMessage(), r.pathname, r.lineno, r.funcName))


def fresh_logger(name: str, level=logging.DEBUG):
    logger = logging.getLogger(name)
    logger.handlers[:] = []
    logger.propagate = False
    logger.setLevel(level)
    handler = Collect()
    logger.addHandler(handler)
    return logger, handler


def run_both(make, args_list, **capture_kw):
    """`make(logger)` -> fn; run natively and captured on fresh loggers of the same name:
    (results, records) of each."""
    out = {}
    for mode in ("native", "captured"):
        logger, handler = fresh_logger("bcfront-test-deferred")
        fn = make(logger)
        run = bcfront.capture(fn, **capture_kw) if mode == "captured" else fn
        results = [run(*a) for a in args_list]
        out[mode] = ([r.tolist() if isinstance(r, torch.Tensor) else r for r in results], handler.records)
    return out


def test_logger_calls_are_made_with_the_callers_place_and_no_break():
    def make(logger):
        def fn(x):
            y = x * 2
            logger.info("scaled by %d", 2)
            logger.debug("debug %s", "on")
            z = y + 1
            logger.log(logging.WARNING, "done")
            return z

        return fn

    out = run_both(make, [(torch.ones(2),), (torch.ones(2),)], fullgraph=True)
    assert out["captured"] == out["native"]
    assert len(out["native"][1]) == 6  # three records a call, in order


def test_a_level_set_between_calls_is_read_when_the_call_is_made():
    logger, handler = fresh_logger("bcfront-test-deferred-level")

    def fn(x):
        logger.info("info")
        logger.error("error")
        return x + 1

    run = bcfront.capture(fn, fullgraph=True)
    run(torch.ones(1))
    logger.setLevel(logging.ERROR)
    run(torch.ones(1))
    assert [r[1] for r in handler.records] == ["INFO", "ERROR", "ERROR"]
    assert len(bcfront.explain(fn, torch.ones(1)).recompiles) == 0


def test_stacklevel_names_the_callers_caller():
    def make(logger):
        def helper(msg):
            logger.warning(msg, stacklevel=2)

        def fn(x):
            helper("from fn")
            return x - 1

        return fn

    out = run_both(make, [(torch.ones(2),)], fullgraph=True)
    assert out["captured"] == out["native"]
    assert out["native"][1][0][5] == "fn"


def test_a_tensor_argument_breaks_at_the_call_so_the_record_names_the_caller():
    def make(logger):
        def fn(x, obj):
            logger.warning("got %s", obj)  # an outside object: formatted with the record
            logger.warning("sum %s", x.sum())  # a tensor's text: the call runs natively
            logger.debug("quiet %s", x.sum())  # not enabled: nothing to do
            return x + 1

        return fn

    class Obj:
        def __repr__(self):
            return "Obj()"

    out = run_both(make, [(torch.ones(2), Obj())])
    assert out["captured"][1][0] == out["native"][1][0]
    assert [r[:3] for r in out["captured"][1]] == [r[:3] for r in out["native"][1]]
    logger, _ = fresh_logger("bcfront-test-deferred", level=logging.INFO)
    logger.isEnabledFor(logging.DEBUG)  # known disabled (cached): the debug call is dropped
    report = bcfront.explain(make(logger), torch.ones(2), Obj())
    assert [b.reason for b in report.graph_breaks] == [BreakReason.IO]


def test_a_call_run_natively_at_a_break_names_the_users_line():
    """O59: the call made at a break has the user's frame as its caller, also in a
    continuation after an earlier break, and warnings are filed under the user's line."""

    def make(logger):
        def fn(x):
            logger.warning("sum %s", x.sum())  # a tensor's text: the call runs natively
            y = x * 2
            logger.warning("max %s", y.max())  # the same, in the continuation
            return y + 1

        return fn

    out = run_both(make, [(torch.ones(2),), (torch.ones(2),)])
    assert out["captured"] == out["native"] and len(out["native"][1]) == 4

    def warn(x):
        warnings.warn(f"{x.sum()}", UserWarning, stacklevel=1)  # a tensor's text: a break
        return x + 1

    seen = {}
    for mode, run in (("native", warn), ("captured", bcfront.capture(warn))):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            run(torch.ones(2))
        seen[mode] = [(str(m.message), m.filename, m.lineno) for m in w]
    assert seen["captured"] == seen["native"] and len(seen["native"]) == 1


def test_a_write_to_the_logger_after_a_call_breaks_there():
    def make(logger):
        def fn(x):
            logger.warning("before")
            logger.setLevel(logging.CRITICAL)  # the call above must not see this level
            logger.warning("after")
            return x + 1

        return fn

    out = run_both(make, [(torch.ones(2),)])
    assert out["captured"] == out["native"]
    assert [r[2] for r in out["native"][1]] == ["before"]
    logger, _ = fresh_logger("bcfront-test-deferred")
    report = bcfront.explain(make(logger), torch.ones(2))
    # (setLevel then takes logging's lock, a C call: later breaks)
    assert report.graph_breaks[0].reason is BreakReason.WRITE_AFTER_LOGGING


@functools.lru_cache(None)
def _warning_once(logger, msg):
    logger.warning(msg)


def test_a_cached_logging_procedure_warns_once_and_never_recompiles():
    def make(logger):
        def fn(x, box):
            box.count = box.count + 1  # a write before it (transformers sets a collector)
            _warning_once(logger, "only once")
            return x * box.count

        return fn

    class Box:
        count = 0

    _warning_once.cache_clear()
    native_box = Box()
    logger, handler = fresh_logger("bcfront-test-deferred-once")
    fn = make(logger)
    for _ in range(3):
        fn(torch.ones(1), native_box)
    native = handler.records
    _warning_once.cache_clear()
    logger, handler = fresh_logger("bcfront-test-deferred-once")
    box = Box()
    run = bcfront.capture(make(logger), fullgraph=True)
    got = [run(torch.ones(1), box).item() for _ in range(3)]
    assert got == [1.0, 2.0, 3.0] and box.count == native_box.count == 3
    assert handler.records == native and len(native) == 1
    _warning_once.cache_clear()
    report = bcfront.explain(make(logger), torch.ones(1), Box())
    assert not report.graph_breaks
    assert "deferred-call" in [e.kind for e in report.side_effects]


class Flag:
    def __init__(self):
        self.active = False


def test_a_set_and_reset_flag_around_the_forward_keeps_backward_in_the_graph():
    """transformers sets an output collector before its forward and resets it after, in a
    try/finally; the backward after it writes .grad, which cannot be undone.  The flag is
    back to its value before the backward, so an error there is seen with eager's state: no
    split is needed."""

    flag = Flag()
    lin = torch.nn.Linear(3, 1)

    def fn(x):
        flag.active = True
        try:
            loss = lin(x).sum()
        finally:
            flag.active = False
        loss.backward()
        return loss.detach()

    ref_lin = torch.nn.Linear(3, 1)
    ref_lin.load_state_dict(lin.state_dict())
    x = torch.randn(4, 3)
    report = bcfront.explain(fn, x)
    assert not report.graph_breaks and len(report.graphs) == 1
    ref_lin(x).sum().backward()
    lin.zero_grad()
    run = bcfront.capture(fn)
    run(x)
    assert torch.equal(lin.weight.grad, ref_lin.weight.grad) and flag.active is False


def test_a_list_written_before_the_backward_still_splits():
    """Into grads the leaf already has, the backward accumulates in place: no putting back
    undoes it, so an error in it must see the list written before it.  A list is no
    constant the region can write among the graph's statements (a flag is: see
    test_backward_in_graph): a split."""
    seen = []
    lin = torch.nn.Linear(3, 1)
    lin(torch.randn(2, 3)).sum().backward()

    def fn(x):
        try:
            loss = lin(x).sum()
        finally:
            seen.append(1)  # not undone: an error in backward must see it
        loss.backward()
        return loss.detach()

    report = bcfront.explain(fn, torch.randn(4, 3))
    assert [b.reason for b in report.graph_breaks] == [BreakReason.WRITE_BEFORE_ERROR]


def test_get_logger_of_an_existing_logger_is_that_logger_without_a_break():
    def make(logger):
        def fn(x):
            logging.getLogger(logger.name).warning("by name")
            return x + 1

        return fn

    out = run_both(make, [(torch.ones(2),), (torch.ones(2),)], fullgraph=True)
    assert out["captured"] == out["native"] and len(out["native"][1]) == 2


def test_torch_api_usage_log_is_made_after_the_graph():
    """torchvision's `_log_api_usage_once` reaches `torch._C._log_api_usage_once(name)` in
    every forward: no break, and the call stays (an API-usage logger sees it)."""

    def fn(x):
        torch._C._log_api_usage_once("bcfront.test.usage")
        return x + 1

    assert torch.equal(bcfront.capture(fn, fullgraph=True)(torch.ones(2)), torch.ones(2) + 1)
    report = bcfront.explain(fn, torch.ones(2))
    assert not report.graph_breaks
    assert [e.kind for e in report.side_effects] == ["deferred-call"]


def test_the_dispatch_mode_stack_is_a_guarded_query():
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    def fn(x):
        return x * (len(_get_current_dispatch_mode_stack()) + 1)

    run = bcfront.capture(fn, fullgraph=True)
    assert torch.equal(run(torch.ones(2)), torch.ones(2))


CONFIG = {"verbose": True}


@functools.lru_cache(None)
def _warn_if_verbose(logger, msg):
    if CONFIG["verbose"]:
        logger.warning(msg)


def test_a_config_dict_written_after_a_cached_procedure_breaks_there():
    """The procedure runs at the region's end natively: a later write to a dict it reads
    must not land first."""

    def make(logger):
        def fn(x):
            _warn_if_verbose(logger, "verbose")
            CONFIG["verbose"] = False  # the call above saw True
            return x + 1

        return fn

    out = {}
    for mode in ("native", "captured"):
        _warn_if_verbose.cache_clear()
        CONFIG["verbose"] = True
        logger, handler = fresh_logger("bcfront-test-deferred-config")
        fn = make(logger)
        (bcfront.capture(fn) if mode == "captured" else fn)(torch.ones(1))
        out[mode] = [r[2] for r in handler.records]
    assert out["captured"] == out["native"] == ["verbose"]
    CONFIG["verbose"] = True


def test_stacklevel_two_at_a_break_names_the_users_caller():
    """`warnings.warn(stacklevel=2)` in a call made natively at a break files the warning
    under the line that called the captured function, as natively."""

    def warns(x):
        warnings.warn(f"{x.sum()}", UserWarning, stacklevel=2)  # a tensor's text: a break
        return x + 1

    def call_it(fn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn(torch.ones(2))
        return [(m.filename, m.lineno) for m in w]

    assert call_it(bcfront.capture(warns)) == call_it(warns)


@functools.lru_cache(None)
def _warning_once_like(self, *args, **kwargs):  # transformers' `logger.warning_once`
    self.warning(*args, **kwargs)


def test_an_outside_dict_written_after_a_warning_once_keeps_one_graph():
    """`warning_once`'s code is one logger call passing its own arguments on: it reads no
    dict, so a later write to one (an LR scheduler's param group) needs no break; the
    warning comes once, between the records around it, as natively."""
    state = {"step": 0}

    def make(logger):
        def fn(x):
            logger.info("before")
            _warning_once_like(logger, "once %s", "here")
            state["step"] = state["step"] + 1  # the procedure above does not read it
            logger.info("after %d", 7)
            return x * state["step"]

        return fn

    out = {}
    for mode in ("native", "captured"):
        _warning_once_like.cache_clear()
        state["step"] = 0
        logger, handler = fresh_logger("bcfront-test-deferred-once-dict")
        fn = bcfront.capture(make(logger)) if mode == "captured" else make(logger)
        results = [fn(torch.ones(2)).tolist() for _ in range(3)]
        out[mode] = (results, handler.records, dict(state))
    assert out["captured"] == out["native"]
    assert [r[2] for r in out["native"][1]].count("once here") == 1
    _warning_once_like.cache_clear()
    logger, _ = fresh_logger("bcfront-test-deferred-once-dict")
    report = bcfront.explain(make(logger), torch.ones(2))
    assert not report.graph_breaks and len(report.graphs) == 1
    _warning_once_like.cache_clear()


SETTINGS = {"verbose": True, "text": "first", "messages": ["a", "b"]}


@functools.lru_cache(None)
def _warn_verbose(logger, msg):
    if SETTINGS["verbose"]:
        logger.warning(msg)


@functools.lru_cache(None)
def _warn_setting(logger, msg):
    logger.warning(msg, SETTINGS["text"])  # straight code, but a subscript


@functools.lru_cache(None)
def _warn_each(logger, msg):
    for m in SETTINGS["messages"]:
        logger.warning(msg, m)


class _TaggedLogger(logging.Logger):
    @property
    def tag(self):
        return SETTINGS["text"]


@functools.lru_cache(None)
def _warn_tagged(logger, msg):
    logger.warning(msg, logger.tag)  # the property's code reads the dict


def _set_verbose():
    SETTINGS["verbose"] = False


def _set_text():
    SETTINGS["text"] = "second"


def _add_message():
    SETTINGS["messages"].append("late")


@pytest.mark.parametrize(
    ("procedure", "write"),
    [
        (_warn_verbose, _set_verbose),
        (_warn_setting, _set_text),
        (_warn_each, _add_message),
        (_warn_tagged, _set_text),
    ],
    ids=["if-config", "subscript", "loop", "property"],
)
def test_a_dict_a_cached_procedure_reads_written_after_it_breaks_there(procedure, write):
    """A procedure that reads an outside dict or list (a test, a subscript, a loop, an
    attribute whose code reads one) runs at the region's end: a later write to what it
    reads must not land first."""

    def make(logger):
        def fn(x):
            procedure(logger, "got %s")
            write()
            return x + 1

        return fn

    def reset():
        procedure.cache_clear()
        SETTINGS.update(verbose=True, text="first", messages=["a", "b"])
        logger = _TaggedLogger("bcfront-test-deferred-reads")
        handler = Collect()
        logger.addHandler(handler)
        return logger, handler

    out = {}
    for mode in ("native", "captured"):
        logger, handler = reset()
        fn = bcfront.capture(make(logger)) if mode == "captured" else make(logger)
        fn(torch.ones(1))
        out[mode] = [r[2] for r in handler.records]
    assert out["captured"] == out["native"] and out["native"]
    logger, _ = reset()
    report = bcfront.explain(make(logger), torch.ones(1))
    assert [b.reason for b in report.graph_breaks][:1] == [BreakReason.WRITE_AFTER_LOGGING]
    reset()
