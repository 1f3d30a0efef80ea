"""The FX backend: the graph as a `torch.fx.GraphModule`, optionally compiled further.

Inputs become placeholders, ``call`` nodes ``call_function``, ``method`` nodes
``call_method`` and tensor properties ``call_function(getattr, ...)``; the
output is always a tuple.  Nodes under another grad mode are bracketed by
``torch._C._set_grad_enabled`` calls, autocast regions by
``_enter_autocast``/``_exit_autocast`` (the conventions TorchDynamo uses, which
AOTAutograd and Inductor understand).  Each placeholder carries
``meta["example_value"]`` (the fake tensor) and ``meta["val"]``.

With a compiler callable (``backend=callable``) the region calls
``compiler(gm, example_inputs)``'s result; without one it calls ``gm``.
"""

from __future__ import annotations

import operator

import torch
import torch.fx

from ..ir.graph import map_nodes
from .checkpoints import checkpoint_function, outlined
from .compiled import CompiledGraph


def to_fx(graph, regions=None, tagged: bool = False) -> torch.fx.GraphModule:
    """`regions`: the checkpointed regions to outline (default: all `checkpoints.outlined`
    finds), each a submodule the graph calls through `_checkpoint_call` (`tagged`: through
    TorchDynamo's ``tag_activation_checkpoint``, for AOT autograd)."""
    g = torch.fx.Graph()
    root = torch.nn.Module()
    env = {}
    regions = outlined(graph) if regions is None else regions
    starts = {o.nodes[0]: o for o in regions}
    hidden = {n for o in regions for n in o.nodes}
    for n in graph.inputs:
        p = g.placeholder(n.name)
        p.meta["example_value"] = n.meta
        p.meta["val"] = n.meta
        env[n] = p
    entry_grad = None
    current = None
    autocast: list = []  # [(args, enter node)] currently open, outermost first
    for n in graph.body:
        if n in hidden and n not in starts:
            continue
        # (a checkpoint call runs in the state it was called in; its nodes bring their own)
        state = starts[n].region.state if n in starts else n.state
        _switch_autocast(g, autocast, state.autocast if state is not None else ())
        want = None if state is None else state.grad
        if want != current:
            if want is None:
                g.call_function(torch._C._set_grad_enabled, (entry_grad,))
            else:
                if entry_grad is None:
                    entry_grad = torch.is_grad_enabled()
                g.call_function(torch._C._set_grad_enabled, (want,))
            current = want
        if n in starts:
            _checkpoint_call(g, root, starts[n], env, tagged)
            continue
        args = map_nodes(n.args, env.__getitem__)
        kwargs = map_nodes(n.kwargs, env.__getitem__)
        if n.op == "call":
            fx_node = g.call_function(n.target, tuple(args), kwargs)
        elif n.op == "method":
            fx_node = g.call_method(n.target, tuple(args), kwargs)
        elif n.op == "getattr":
            fx_node = g.call_function(getattr, (args[0], n.target))
        else:
            raise ValueError(f"unknown node op {n.op}")
        fx_node.meta["example_value"] = n.meta
        fx_node.meta["val"] = n.meta
        if n.loc is not None:
            fx_node.meta["stack_trace"] = (
                f'  File "{n.loc.filename}", line {n.loc.lineno}, in {n.loc.function}\n    {n.loc.line}\n'
            )
        env[n] = fx_node
    _switch_autocast(g, autocast, ())
    if current is not None:
        g.call_function(torch._C._set_grad_enabled, (entry_grad,))
    g.output(tuple(env[o] for o in graph.outputs))
    gm = torch.fx.GraphModule(root, g)
    gm.meta["bcfront_graph"] = graph.name
    return gm


def _checkpoint_call(g, root, o, env, tagged: bool) -> None:
    """``torch.utils.checkpoint.checkpoint(<submodule>, *inputs, use_reentrant=False, ...)``
    for the region `o`, its nodes a submodule of `root`, and an item of the result per output.
    `tagged`: ``torch.ops.higher_order.tag_activation_checkpoint(<submodule>, *inputs)``
    instead, as TorchDynamo hands checkpointing to AOT autograd: it traces the submodule
    and tags its nodes to be recomputed, which its partitioner then does."""
    name = f"checkpointed_{len(root._modules)}"
    root.add_module(name, to_fx(o.subgraph(name), []))
    args = (g.get_attr(name), *(env[x] for x in o.inputs))
    if tagged:
        call = g.call_function(torch.ops.higher_order.tag_activation_checkpoint, args, {})
    else:
        call = g.call_function(checkpoint_function(), args, dict(o.region.kwargs))
    call.meta["example_value"] = call.meta["val"] = tuple(x.meta for x in o.outputs)
    for i, x in enumerate(o.outputs):
        item = g.call_function(operator.getitem, (call, i))
        item.meta["example_value"] = item.meta["val"] = x.meta
        env[x] = item


def _switch_autocast(g, open_: list, want: tuple) -> None:
    """Exit/enter autocast contexts (TorchDynamo's _enter_autocast/_exit_autocast nodes)."""
    from torch.amp.autocast_mode import _enter_autocast, _exit_autocast

    keep = 0
    while keep < len(open_) and keep < len(want) and open_[keep][0] == want[keep]:
        keep += 1
    while len(open_) > keep:
        g.call_function(_exit_autocast, (open_.pop()[1],))
    for args in want[keep:]:
        open_.append((args, g.call_function(_enter_autocast, tuple(args))))


def compile_graph(graph, example_inputs, compiler, name: str) -> CompiledGraph:
    gm = to_fx(graph)
    from ..errors import BackendCompilerFailed

    try:
        fn = gm if compiler is None else compiler(gm, list(example_inputs))
    except Exception as e:  # the user's compiler: its error is theirs, named (as torch.compile does)
        raise BackendCompilerFailed(name, e) from e
    if not callable(fn):
        raise BackendCompilerFailed(name, f"returned {type(fn).__name__}, not a callable")

    def emit(graph, ns, lines, indent="    "):
        ins = ", ".join(n.name for n in graph.inputs)
        outs = ", ".join(o.name for o in graph.outputs)
        call = f"{ns.const(fn, 'compiled_graph')}({ins})"
        if graph.outputs:
            lines.append(
                f"{indent}{outs}, = {call}" if len(graph.outputs) == 1 else f"{indent}{outs} = {call}"
            )
        else:
            lines.append(f"{indent}{call}")

    kernels = tuple(getattr(fn, "kernels", ()) or ())
    fallback = tuple(getattr(fn, "fallback_ops", ()) or ())
    out = CompiledGraph(name, emit, kernels, fallback)
    out.gm = gm
    return out
