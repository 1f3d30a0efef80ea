"""`bcfront-explain` on a training script: a joint-graph step lists its forward and
backward graphs, the opaque parts with why they are opaque, and the optimizer step; a
step that still breaks names the reason.

Oracle: the report's content, in JSON and in the verbose text, against what the script
does (which Function prints, where ``backward(inputs=...)`` is).
"""

from __future__ import annotations

import json
import textwrap

from .helpers import run_cli

SCRIPT = textwrap.dedent(
    """
    import torch, bcfront

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Loud(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            print("loud")
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    @bcfront.capture(backend="fx", joint_graph=True)
    def step(x, y):
        opt.zero_grad(set_to_none=True)
        h = Loud.apply(Scale.apply(model[1](model[0](x))))
        loss = torch.nn.functional.cross_entropy(model[2](h), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    @bcfront.capture
    def second_order_step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward(inputs=list(model.parameters()))  # the break
        opt.step()
        return loss

    for i in range(2):
        x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
        step(x, y)
        second_order_step(x, y)
    """
)


def test_explain_lists_forward_backward_optimizer_and_break_reason(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    proc = run_cli("--json", str(script), env={"PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    functions = {f["function"]: f for f in json.loads(proc.stdout)["functions"]}
    joint = functions["step"]
    assert joint["graph_breaks"] == []
    names = [k["name"] for g in joint["graphs"] for k in g["kernels"]]
    for part in ("forward 0", "backward 0", "inference 0", "AdamW.step (optimizer step, eager)"):
        assert part in names, names
    assert "backward() (autograd engine: runs the backward graphs)" in names
    (loud,) = [n for n in names if n.startswith("Loud.apply")]
    assert "print" in loud  # why Loud stays opaque
    assert any("Scale traced into the joint graph" in n for n in joint["notes"])
    (brk,) = functions["second_order_step"]["graph_breaks"]
    assert brk["reason"] == "autograd" and "inputs=" in brk["message"]
    assert brk["source_line"].startswith("loss.backward(inputs=")

    text = run_cli("-v", str(script), env={"PYTHONWARNINGS": "ignore"}).stdout
    assert "kernel forward 0" in text and "kernel backward 0" in text
    assert "AdamW.step (optimizer step, eager)" in text
    assert "backward(inputs=...): only the given tensors get grads" in text
