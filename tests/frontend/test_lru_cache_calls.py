"""functools.lru_cache functions called in captured code: the cache is observable, so its
side effects happen once, as natively (the call is made for real at capture)."""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def _run_both(make_fn, calls_between=None):
    out = {}
    for mode in ("native", "captured"):
        log: list = []

        @functools.lru_cache(None)
        def once(x, log=log):
            log.append(x)
            return x * 2

        fn = make_fn(once)
        run = bcfront.capture(fn) if mode == "captured" else fn
        t = torch.ones(2)
        results = []
        for i in range(4):
            if calls_between is not None and i == 2:
                calls_between(once)
            results.append(run(t).tolist())
        out[mode] = (results, list(log))
    return out


def test_side_effects_of_a_cached_function_happen_once():
    out = _run_both(lambda once: lambda t: t + once(3))
    assert out["captured"] == out["native"]


def test_cache_clear_runs_the_function_again():
    out = _run_both(lambda once: lambda t: t + once(3), calls_between=lambda once: once.cache_clear())
    assert out["captured"] == out["native"]
    assert out["native"][1] == [3, 3]


@functools.lru_cache(None)
def _warning_once(logger, msg):
    logger.warning(msg)


class _Holder:
    warning_once = _warning_once  # a cached function as a method (transformers' Logger.warning_once)

    def warning(self, msg):
        import logging

        logging.getLogger("bcfront-test-lru").warning(msg)


def test_warning_once_warns_once(lenient, caplog):
    import logging

    logger = logging.getLogger("bcfront-test-lru")
    holder = _Holder()

    def f(t):
        _warning_once(logger, "careful")
        holder.warning_once("bound")
        return t * 2

    cf = bcfront.capture(f)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            torch.testing.assert_close(cf(torch.ones(2)), torch.ones(2) * 2)
    assert [r.getMessage() for r in caplog.records] == ["careful", "bound"]
    assert cf.report().graph_breaks == ()


def test_unknown_arguments_or_a_bounded_cache_break_and_stay_right(lenient):
    logs = {}
    for mode in ("native", "captured"):
        log: list = []

        @functools.lru_cache(maxsize=2)
        def bounded(x, log=log):
            log.append(x)
            return x + 1

        def f(t, n):
            return t + bounded(n)

        run = bcfront.capture(f) if mode == "captured" else f
        for n in (1, 2, 1, 3, 2, 1):
            torch.testing.assert_close(run(torch.ones(2), n), torch.ones(2) + n + 1)
        logs[mode] = log
        if mode == "captured":
            assert run.report().graph_breaks
    assert logs["captured"] == logs["native"]
