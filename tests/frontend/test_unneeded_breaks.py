"""Calls that used to break the graph for no reason, from real library code.

Torch calls without tensor arguments (state queries, pure helpers, ``torch._assert``),
``typing`` generics built at run time, ``contextvars`` reads and writes: each is captured
in one graph (``fullgraph=True`` does not raise), and the result equals plain execution
on the same inputs.  A query whose answer can change between calls is guarded: flipping
the state makes the next call recompile (or run) with the new answer, as eager would.
Oracle: the plain function on identical inputs.
"""

from __future__ import annotations

import contextvars
import typing
from typing import Dict, List, Optional, Tuple, Union

import pytest

torch = pytest.importorskip("torch")

import torch.fx._symbolic_trace as fx_trace  # noqa: E402

import bcfront  # noqa: E402


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b) and a.dtype == b.dtype
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


def check_fullgraph(fn, *args):
    """One graph, no break, and the plain function's result (twice: the second call hits)."""
    want = fn(*args)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):
        got = cf(*args)
        assert _same(want, got), (want, got)
    rep = bcfront.explain(fn, *args)
    assert rep.graph_breaks == [], rep.graph_breaks
    return cf


# -- torch queries without tensor arguments ------------------------------------------------------


def queries(x):
    flags = (
        torch.compiler.is_exporting(),
        torch.jit.is_tracing(),
        torch.jit.is_scripting(),
        fx_trace.is_fx_tracing(),
        torch.onnx.is_in_onnx_export(),
        torch.overrides.is_tensor_like(x),
        torch.overrides.is_tensor_like(3),
        torch.is_autocast_enabled(),
        torch.is_autocast_enabled("cpu"),
        torch.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        torch.are_deterministic_algorithms_enabled(),
        torch.is_anomaly_enabled(),
    )
    y = x + sum(int(f) for f in flags)
    return y, flags, torch.get_default_dtype(), torch.promote_types(torch.int32, torch.float16)


def test_queries_fold_in_one_graph():
    check_fullgraph(queries, torch.randn(3, 4))


def autocast_queries(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        inside = (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
        y = x @ x.T
    with torch.autocast("cpu", enabled=False):
        off = torch.is_autocast_enabled("cpu")
    return y, inside, off, torch.is_autocast_enabled("cpu")


def test_autocast_queries_read_the_traced_state():
    check_fullgraph(autocast_queries, torch.randn(3, 4))


def deterministic(x):
    return x * 2 if torch.are_deterministic_algorithms_enabled() else x - 1


def test_state_query_is_guarded():
    """A query of global state folds to a constant with a guard: flipping it between calls
    gives eager's answer (a recompile), never the captured one."""
    cf = bcfront.capture(deterministic, fullgraph=True)
    x = torch.randn(3)
    before = torch.are_deterministic_algorithms_enabled()
    try:
        for mode in (False, True, False):
            torch.use_deterministic_algorithms(mode)
            assert torch.equal(cf(x), deterministic(x))
    finally:
        torch.use_deterministic_algorithms(before)


def fx_flag(x):
    return x + 1 if fx_trace.is_fx_tracing() else x - 1


def test_fx_tracing_flag_is_guarded():
    cf = bcfront.capture(fx_flag, fullgraph=True)
    x = torch.randn(3)
    assert torch.equal(cf(x), fx_flag(x))
    old = fx_trace._is_fx_tracing_flag
    fx_trace._is_fx_tracing_flag = True
    try:
        assert torch.equal(cf(x), x + 1)
    finally:
        fx_trace._is_fx_tracing_flag = old
    assert torch.equal(cf(x), x - 1)


def stream_capturing(x):
    """On a CPU-only build the query raises; eager's exception reaches the handler."""
    try:
        capturing = torch.cuda.is_current_stream_capturing()
    except RuntimeError:
        capturing = None
    return x + 1, capturing


def test_cuda_stream_query():
    check_fullgraph(stream_capturing, torch.randn(3))


# -- torch._assert ---------------------------------------------------------------------------------


def assert_const(x):
    torch._assert(x.dim() == 2, "expected a matrix")
    return x.sum(0)


def assert_tensor(x):
    torch._assert(x.sum() > 0, "sum must be positive")
    return x * 2


def test_assert_on_constant_condition():
    check_fullgraph(assert_const, torch.randn(3, 4))
    cf = bcfront.capture(assert_const)
    with pytest.raises(AssertionError, match="expected a matrix"):
        cf(torch.randn(3))


@pytest.mark.parametrize("backend", ["eager", "fx"])
def test_assert_on_tensor_condition_is_a_graph_op(backend):
    """A tensor condition is checked by the graph on every call: never dropped."""
    cf = bcfront.capture(assert_tensor, backend=backend, fullgraph=True)
    ok = torch.ones(3)
    assert torch.equal(cf(ok), assert_tensor(ok))
    with pytest.raises(AssertionError, match="sum must be positive"):
        assert_tensor(-ok)
    with pytest.raises(AssertionError, match="sum must be positive"):
        cf(-ok)
    assert torch.equal(cf(ok), assert_tensor(ok))


def assert_vector_condition(x):
    torch._assert(x > 0, "all positive")
    return x + 1


def test_assert_on_several_elements_raises_as_eager():
    x = torch.ones(3)
    with pytest.raises(RuntimeError) as want:
        assert_vector_condition(x)
    with pytest.raises(RuntimeError) as got:
        bcfront.capture(assert_vector_condition)(x)
    assert str(got.value) == str(want.value)


# -- typing generics evaluated at run time -----------------------------------------------------


def generics(x):
    kinds = (
        List[int],
        Optional[torch.Tensor],
        tuple[int, ...],
        int | None,
        Dict[str, List[int]],
        Union[int, str],
        Tuple[int, int],
        list[torch.Tensor] | None,
        typing.Callable[[int], str],
        Optional["Forward"],  # noqa: F821
    )
    scale = 2 if isinstance(3, int | None) else 3
    return x * scale, kinds


def test_generics_fold_to_the_same_objects():
    check_fullgraph(generics, torch.randn(3))


def bad_generic(x):
    try:
        Optional[int, str]
    except TypeError as e:
        return x + 1, e.args
    return x, None


def test_generic_errors_are_python_errors():
    check_fullgraph(bad_generic, torch.randn(3))


# -- contextvars ----------------------------------------------------------------------------------

SCALE = contextvars.ContextVar("scale", default=2)
COLLECTOR = contextvars.ContextVar("collector", default=None)
NO_DEFAULT = contextvars.ContextVar("no_default")


def reads_context(x):
    y = x * SCALE.get()
    out = COLLECTOR.get()
    if out is not None:
        out.append(y.sum())
    return y + NO_DEFAULT.get(10)


def test_context_var_get_is_captured_and_guarded():
    """get() reads the context of each call: a value set outside between calls is seen."""
    cf = bcfront.capture(reads_context, fullgraph=True)
    x = torch.randn(3)
    assert torch.equal(cf(x), reads_context(x))
    for scale in (3, 3, 5):
        token = SCALE.set(scale)
        try:
            assert torch.equal(cf(x), reads_context(x))
        finally:
            SCALE.reset(token)
    seen, want = [], []
    token = COLLECTOR.set(seen)
    try:
        got = cf(x)
        COLLECTOR.set(want)
        assert torch.equal(got, reads_context(x))
    finally:
        COLLECTOR.reset(token)
    assert len(seen) == len(want) == 1 and torch.equal(seen[0], want[0])
    assert bcfront.explain(reads_context, x).graph_breaks == []


def unset_context(x):
    try:
        NO_DEFAULT.get()
    except LookupError:
        return x + 1
    return x - 1


def test_context_var_without_value_raises_lookup_error():
    check_fullgraph(unset_context, torch.randn(3))


def sets_context(x):
    token = SCALE.set(7)
    try:
        return x * SCALE.get()
    finally:
        SCALE.reset(token)


def test_context_var_set_and_reset_are_captured():
    """set/reset are modelled with symbolic tokens (tests/frontend/test_context_vars.py)."""
    x = torch.randn(3)
    assert torch.equal(bcfront.capture(sets_context)(x), sets_context(x))
    assert SCALE.get() == 2
    assert bcfront.explain(sets_context, x).graph_breaks == []
