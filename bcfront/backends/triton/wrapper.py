"""Host code: one generated Python function that runs a compiled graph.

It allocates the buffers kernels write, launches the kernels and the extern
(torch) calls in schedule order, frees intermediates after their last use,
copies input mutations back in order, and returns the outputs.  Everything
referenced from user code or torch (ops, constants, view replays) goes through
tables in the function's globals; only generated identifiers and integers are
pasted into the source.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .fuse import KernelPlan
from .ir import Compute, Extern, LoweredProgram, TensorRef
from .symsize import SizeExpr, holes, read_source, source


@dataclass(frozen=True, slots=True)
class TritonKernel:
    """What explain shows for a generated kernel."""

    name: str
    ops: tuple
    source: str
    kind: str = ""
    numels: tuple = ()


def _replay(steps):
    """A view chain as a function; symbolic sizes in its arguments come as `sizes`."""
    sized, fill = holes([list(args) for _, args, _ in steps])
    plain = [args for _, args, _ in steps]

    def view(t, sizes=()):
        for (fn, _, _), args in zip(steps, fill(sizes) if sized else plain):
            t = fn(t, *args)
        return t

    view.sizes = sized
    return view


def _sized(sizes: list) -> str:
    """The ``sizes=`` argument passing symbolic sizes' values (nothing when none)."""
    return f", sizes=({''.join(source(s) + ', ' for s in sizes)})" if sizes else ""


def _shape(sizes) -> str:
    return f"({''.join(source(s) + ', ' for s in sizes)})"


class _Builder:
    def __init__(self, prog: LoweredProgram):
        self.prog = prog
        self.lines: list[str] = []
        self.glob: dict = {
            "torch": torch,
            "K": [],
            "E": [],
            "V": [],
            "C": [],
            "empty_strided": torch.empty_strided,
        }

    def ref(self, r: TensorRef) -> str:
        if not r.steps:
            return r.base
        view = _replay(r.steps)
        self.glob["V"].append(view)
        return f"V[{len(self.glob['V']) - 1}]({r.base}{_sized(view.sizes)})"

    def const(self, v) -> str:
        self.glob["C"].append(v)
        return f"C[{len(self.glob['C']) - 1}]"

    def emit(self, line: str):
        self.lines.append("    " + line)


def build(prog: LoweredProgram, steps: list, launchers: dict, sources: dict, reads=None) -> tuple:
    """Return ``(call, source)``: `call(args)` runs the graph and returns the flat outputs.

    `reads` (a symbolic lowering): ``(name, input index, kind, dim)`` binding each
    symbol from the inputs; sizes, strides, numels and launch arguments are then
    expressions over those names, evaluated at each call (`symsize`)."""
    b = _Builder(prog)
    names = [n for n, _ in prog.inputs]
    b.emit(f"{', '.join(names) + (',' if len(names) == 1 else '')} = args" if names else "pass")
    for sym, k, kind, dim in reads or ():
        b.emit(f"{sym} = {read_source(names[k], kind, dim)}")
    for name in prog.constants:
        b.emit(f"{name} = C[{len(b.glob['C'])}]")
        b.glob["C"].append(prog.constants[name])
    allocated = set()
    device = prog.device if prog.device is not None else torch.device("cpu")
    b.glob["device"] = device

    defined = set(names) | set(prog.constants)

    def alloc(name):
        defined.add(name)
        if name in allocated:
            return
        allocated.add(name)
        lay = prog.layouts[name]
        b.emit(
            f"{name} = empty_strided({_shape(lay.shape)}, {_shape(lay.stride)}, "
            f"dtype=torch.{lay.dtype}, device=device)"
        )

    last_use = _last_uses(prog, steps)
    keep = {r.base for r in prog.outputs if isinstance(r, TensorRef)}
    keep |= {n for n, _ in prog.inputs} | set(prog.constants)
    for node in prog.nodes:  # empty buffers: allocated, never computed
        if isinstance(node, Compute) and node.layout.numel == 0:
            alloc(node.name)
    for k, st in enumerate(steps):
        if isinstance(st, KernelPlan):
            ks = sources[id(st)]
            for name in ks.args:
                if name in st.stored:
                    alloc(name)
            b.glob["K"].append(launchers[id(st)])
            b.emit(f"# {ks.name}: {', '.join(ks.ops)}")
            call_args = [*ks.args, *map(source, ks.int_args)]  # int_args: lifted sizes
            if reads is not None:  # a `SizedLauncher`: the numels first
                call_args.insert(0, _shape(ks.numels))
            b.emit(f"K[{len(b.glob['K']) - 1}]({', '.join(call_args)})")
        else:
            b.glob["E"].append(st.call)
            outs = [n for n, _ in st.outputs]
            defined.update(outs)
            lhs = ", ".join(outs) + ("," if len(outs) == 1 else "") if outs else "_"
            args = ", ".join(b.ref(r) for r in st.inputs)
            b.emit(f"# {st.op_name} (torch)")
            b.emit(f"{lhs} = E[{len(b.glob['E']) - 1}]({args}{_sized(getattr(st.call, 'sizes', []))})")
        dead = sorted(n for n, last in last_use.items() if last == k and n not in keep and n in defined)
        if dead:
            b.emit(f"del {', '.join(dead)}")
    for dst, ref in prog.copy_backs:
        b.emit(f"{dst}.copy_({b.ref(ref)})  # input mutation")
    outs = [_output(b, r) for r in prog.outputs]
    b.emit(f"return [{', '.join(outs)}]")
    lines = b.lines
    if device.type == "cuda":
        # kernels launch on the current device; make it the tensors' one
        lines = ["    with torch.cuda.device(device):"] + ["    " + ln for ln in lines]
    text = "def call(args):\n" + "\n".join(lines) + "\n"
    code = compile(text, "<bcfront-triton-wrapper>", "exec")
    ns = dict(b.glob)
    exec(code, ns)  # noqa: S102 - the wrapper source is generated here, from the graph
    return ns["call"], text


def _output(b: _Builder, r) -> str:
    if not isinstance(r, tuple):
        return b.ref(r)
    return source(r[1]) if isinstance(r[1], SizeExpr) else b.const(r[1])  # a size: its value now


def _last_uses(prog: LoweredProgram, steps: list) -> dict:
    """Index of the last step that reads each buffer (copy-backs count as the end)."""
    last: dict[str, int] = {}
    for k, st in enumerate(steps):
        if isinstance(st, Extern):
            for r in st.inputs:
                last[r.base] = k
        else:
            for m in st.members:
                for buf in m.node.reads(prog.arena):
                    last[buf] = k
    end = len(steps)
    for _, r in prog.copy_backs:
        last[r.base] = end
    return last
