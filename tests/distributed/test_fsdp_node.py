"""The FSDP call node's run-time check, without a process group: the node returns what its
module's capture returned only when that matches the fake run the trace continued on."""

from __future__ import annotations

import pytest
import torch

from bcfront.frontend.semantics.fsdp_calls import FSDPModuleCall


def _node(returns, traced):
    module = torch.nn.Linear(3, 3)
    node = FSDPModuleCall(module, lambda *a: returns, traced, "L['self'].block", "'0' (2 ranks)")
    return node, module  # (the node holds the module weakly)


def test_outputs_as_traced_pass_through():
    out = torch.ones(2, 3)
    node, _ = _node(out, torch.empty(2, 3))
    assert node(torch.zeros(2, 3)) is out
    pair = (torch.ones(2, 3), torch.ones(4))
    node, _ = _node(pair, (torch.empty(2, 3), torch.empty(4)))
    assert node(torch.zeros(1)) is pair


@pytest.mark.parametrize(
    "returns",
    [
        torch.ones(3, 3),
        torch.ones(2, 3, dtype=torch.float64),
        torch.ones(2, 3, requires_grad=True),
        (torch.ones(2, 3),),
    ],
    ids=["shape", "dtype", "requires_grad", "structure"],
)
def test_outputs_other_than_traced_raise_a_clear_error(returns):
    node, _ = _node(returns, torch.empty(2, 3))
    with pytest.raises(
        RuntimeError, match=r"fsdp_call\[Linear L\['self'\]\.block, group '0' \(2 ranks\)\] returned"
    ):
        node(torch.zeros(2, 3))
