"""Dynamo's disable wrappers at a call: torch's functions under them are traced as themselves,
a user's function under ``torch.compiler.disable`` runs natively at a reported break."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import bcfront  # noqa: E402
from bcfront.errors import GraphBreakError  # noqa: E402

relu_no_dynamo = torch._disable_dynamo(F.relu)  # torch's own decorator (torch.manual_seed's)
gelu_disabled = torch.compiler.disable(F.gelu)
CALLS: list = []


@torch.compiler.disable
def user_disabled(x):
    CALLS.append(x.shape)  # an effect: it must run once per call, natively
    return x * 3


def through_torch_wrappers(x):
    return relu_no_dynamo(x - 0.5) + gelu_disabled(x)


def through_a_user_disabled_function(x):
    y = x.sin()
    return user_disabled(y) + 1


def test_a_torch_function_under_a_disable_wrapper_is_traced():
    x = torch.randn(5)
    cf = bcfront.capture(through_torch_wrappers, fullgraph=True)
    torch.testing.assert_close(cf(x), through_torch_wrappers(x))
    rep = bcfront.explain(through_torch_wrappers, x)
    assert not rep.graph_breaks and len(rep.graphs) == 1


def test_a_user_function_under_compiler_disable_runs_natively_at_a_reported_break():
    x = torch.randn(4)
    CALLS.clear()
    want = through_a_user_disabled_function(x)
    cf = bcfront.capture(through_a_user_disabled_function)
    torch.testing.assert_close(cf(x), want)
    torch.testing.assert_close(cf(x), want)
    assert CALLS == [x.shape] * 3  # once natively above, once per captured call
    rep = bcfront.explain(through_a_user_disabled_function, x)
    reasons = {b.reason.value for b in rep.graph_breaks}
    assert reasons == {"compiler-disabled"}, rep.graph_breaks
    assert "user_disabled" in rep.graph_breaks[0].message
    with pytest.raises(GraphBreakError, match="torch.compiler.disable"):
        bcfront.capture(through_a_user_disabled_function, fullgraph=True)(x)
