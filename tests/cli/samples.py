"""Hand-built reports for rendering and schema tests (no capture, no torch).

`source_file(tmp_path)` writes a small user file so that breaks and guards
point at real lines; `full_report(path)` exercises every field of the report.
"""

from __future__ import annotations

from pathlib import Path

from bcfront.report import (
    FunctionReport,
    GraphBreak,
    GraphInfo,
    GuardInfo,
    KernelInfo,
    NativeFallback,
    Recompile,
    Report,
    SideEffect,
    UserFrame,
)

USER_SOURCE = """\
def step(x, n):
    y = x * 2
    if y.sum() > 0:
        y = y - 1
    print("step", n)
    return helper(y)


def helper(y):
    return y.relu()
"""


def source_file(tmp_path: Path) -> Path:
    p = tmp_path / "user_model.py"
    p.write_text(USER_SOURCE)
    return p


def full_report(path: Path, calls: int = 6) -> Report:
    f = str(path)
    breaks = (
        GraphBreak(
            "data-dependent-branch",
            "branch on a tensor value: `y.sum() > 0`",
            f,
            3,
            "",
            "POP_JUMP_IF_FALSE at offset 40",
            (UserFrame("main", f, 20, "step(x, 3)"), UserFrame("step", f, 3, "if y.sum() > 0:")),
            count=3,
        ),
        GraphBreak("io", "print() does I/O [bold]not markup[/bold]", f, 5, 'print("step", n)'),
    )
    guards = (
        GuardInfo(
            "L['x']",
            "TENSOR_MATCH",
            "L['x'] is a float32 tensor of shape (4, 8) on cpu",
            UserFrame("step", f, 2, "y = x * 2"),
        ),
        GuardInfo("L['n']", "CONSTANT", "L['n'] == 3", UserFrame("step", f, 5, 'print("step", n)')),
    ) + tuple(GuardInfo(f"G['g{i}']", "ID_MATCH", f"id(G['g{i}']) == {1000 + i}") for i in range(20))
    recompiles = tuple(
        Recompile(
            "step",
            f"L['n'] == {i}",
            "L['n']",
            str(i),
            str(i + 1),
            "the value of L['n'] changed",
            UserFrame("step", f, 5, 'print("step", n)'),
        )
        for i in range(calls - 2)
    )
    graphs = (
        GraphInfo("step", "eager", 2, "def graph_0(x):\n    y = x * 2\n    return y.sum() > 0, y"),
        GraphInfo(
            "step (continuation at line 4)",
            "triton",
            3,
            "def graph_1(y):\n    return torch.relu(y - 1)",
            (
                KernelInfo(
                    "fused_sub_relu_0",
                    ("sub", "relu"),
                    "@triton.jit\ndef fused_sub_relu_0(in_ptr, out_ptr, n):\n    pass",
                ),
            ),
            ("aten.sort",),
        ),
    )
    step = FunctionReport(
        "step",
        f,
        1,
        graphs,
        breaks,
        guards,
        recompiles,
        (SideEffect("list.append", "G['log']", f, 5),),
        calls=calls,
        compiled_seconds=0.003,
        python_seconds=0.001,
        notes=("torch.relu is a C function: ran natively",),
        warnings=(),
        timed_calls=calls,
        total_seconds=0.009,
        capture_seconds=0.005,
        native_fallbacks=(
            NativeFallback(
                "loop-limit",
                "the loop around the break at line 5 kept recapturing: the rest runs natively",
                f,
                5,
                "step.<resume@60>",
                2,
            ),
        ),
        ops_in_graphs=6,
        ops_native=2,
    )
    clean = FunctionReport(
        "helper",
        f,
        9,
        (GraphInfo("helper", "eager", 1, "def g(y):\n    return y.relu()"),),
        calls=2,
        compiled_seconds=0.0,
        python_seconds=0.0,
    )
    return Report((step, clean))
