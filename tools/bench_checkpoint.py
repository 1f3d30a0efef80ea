"""Activation checkpointing's memory: the bytes autograd saves for backward, eager vs bcfront.

The zoo's ``train_gpt2_ckpt`` (a GPT-2 AdamW step, ``gradient_checkpointing_enable()``),
run by: eager PyTorch; the same model with checkpointing off; ``bcfront.capture`` on the
eager backend; and with ``backend="fx", joint_graph=True`` (AOT autograd's partitioner).
For a step after the compiling ones, the bytes and number of floating-point tensors
autograd saved (``torch.autograd.graph.saved_tensors_hooks``; the parameters aside, a
reference to one costs nothing), and whether the parameters after the steps equal
eager's bit for bit.  Cheap (seconds): no timing.

    PYTHONPATH=. python tools/bench_checkpoint.py
"""

from __future__ import annotations

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bcfront
from tests.models import real_zoo

STEPS = 4  # the first two compile (and trace on fake tensors)


def saved(step, args) -> tuple[int, int]:
    """Bytes and count of the floating-point tensors autograd saves during ``step(*args)``."""
    own = {p.untyped_storage().data_ptr() for p in step.parameters()}
    total = [0, 0]

    def pack(t):
        if t.is_floating_point() and t.untyped_storage().data_ptr() not in own:
            total[0] += t.numel() * t.element_size()
            total[1] += 1
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        step(*args)
    return total[0], total[1]


def run(make) -> dict:
    torch.manual_seed(0)
    step, inputs = real_zoo.train_gpt2_ckpt()
    runner, model = make(step)
    out = None
    for i in range(STEPS):
        args, _ = inputs(i, 0)
        torch.manual_seed(i)
        if i < STEPS - 1:
            runner(*args)
        else:
            out = saved(runner, args)
    assert out is not None
    return {"bytes": out[0], "tensors": out[1], "params": [p.detach().clone() for p in model.parameters()]}


def main() -> None:
    def no_checkpointing(step):
        step.lm.gradient_checkpointing_disable()
        return step, step

    runners = {
        "eager": lambda step: (step, step),
        "eager, checkpointing off": no_checkpointing,
        "bcfront (eager backend)": lambda step: (bcfront.capture(step), step),
        "bcfront (fx, joint_graph)": lambda step: (
            bcfront.capture(step, backend="fx", joint_graph=True),
            step,
        ),
    }
    results = {name: run(make) for name, make in runners.items()}
    want = results["eager"]["params"]
    table = {}
    for name, r in results.items():
        same = all(torch.equal(p, q) for p, q in zip(r["params"], want))
        table[name] = {"saved_bytes": r["bytes"], "saved_tensors": r["tensors"], "params_equal_eager": same}
        print(f"{name:28s} {r['bytes']:>8d} B in {r['tensors']:>3d} tensors   params == eager's: {same}")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "bench_checkpoint.json")
    with open(path, "w") as f:
        json.dump({"model": "train_gpt2_ckpt", "step": STEPS, "runners": table}, f, indent=2)


if __name__ == "__main__":
    main()
