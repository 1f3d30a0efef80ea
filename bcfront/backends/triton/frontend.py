"""From a captured `torch.fx.GraphModule` to a functional aten graph.

`make_fx` traces the module with fake tensors through `torch.func.functionalize`
(so the graph is free of mutation except trailing ``copy_`` into mutated
inputs) and a decomposition table chosen for fusion: composite ops that are
really pointwise + reductions (softmax, layer_norm, gelu, ...) are decomposed,
while attention and random ops are kept whole so that they become extern
calls, and embedding, addmm and convolution are kept whole for their rules
(one gather; one reduction with its epilogue).
"""

from __future__ import annotations

import functools

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils._pytree import tree_flatten

aten = torch.ops.aten

# Kept whole even where torch ships a decomposition: library kernels beat ours, or
# a rule lowers the whole op (embedding: one gather; addmm, convolution: one reduction).
_KEEP = (
    "scaled_dot_product",
    "embedding",
    "addmm",
    "convolution",
    "_flash_attention",
    "_efficient_attention",
    "_cudnn_attention",
)

# Lowered directly (index arithmetic); their decompositions gather through index tensors.
_LOWERED = ("roll",)

# Decomposed even though core ATen keeps them: they fuse into one kernel.
_DECOMPOSE = (
    "_softmax",
    "_log_softmax",
    "native_layer_norm",
    "gelu",
    "hardtanh",
    "leaky_relu",
    "elu",
    "hardswish",
    "hardsigmoid",
    "mish",
    "logsumexp",
    "_safe_softmax",
    "std",
    "std_mean",
    "rms_norm",
    "_fused_rms_norm",
    "native_dropout",
    "silu",
    "glu",
    "lerp",
    "addcmul",
    "addcdiv",
    "logit",
    "xlogy",
    "softplus",
    "threshold",
    "clamp_min",
    "clamp_max",
    "square",
    "frac",
    "native_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit_functional",
    "native_group_norm",
    "group_norm",
)


@functools.lru_cache(maxsize=1)
def decomposition_table() -> dict:
    import torch._decomp as D

    table = dict(D.core_aten_decompositions())
    for op in list(table):
        if any(k in str(op) for k in _KEEP) or op.name().split("::")[-1].split(".")[0] in _LOWERED:
            del table[op]
    wanted = [getattr(aten, name) for name in _DECOMPOSE if hasattr(aten, name)]
    table.update(D.get_decompositions(wanted))
    return table


def module_state(gm) -> tuple[list, list]:
    """Names and tensors of `gm`'s parameters and buffers (traced as inputs)."""
    if not isinstance(gm, torch.nn.Module):
        return [], []
    items = list(gm.named_parameters(remove_duplicate=False)) + list(gm.named_buffers(remove_duplicate=False))
    return [n for n, _ in items], [t for _, t in items]


def trace_aten(gm, example_inputs):
    """Return ``(aten_gm, out_spec, state)``: a functional aten GraphModule whose
    inputs are `state` (the module's parameters and buffers) followed by the
    example inputs and whose output is the flat list of `gm`'s outputs, and the
    pytree spec to rebuild them.

    Lifting the state to inputs keeps tracing from touching it (a batch-norm
    in training mode bumps its counters in place) and turns writes to buffers
    into ordinary input mutations, copied back after the kernels."""
    from torch.func import functional_call, functionalize

    holder = {}
    names, state = module_state(gm)
    n_state = len(names)

    def flat_fn(*args):
        if n_state:
            out = functional_call(gm, dict(zip(names, args[:n_state])), tuple(args[n_state:]))
        else:
            out = gm(*args)
        flat, holder["spec"] = tree_flatten(out)
        return flat

    inputs = list(state) + list(example_inputs)
    fake = any(isinstance(t, torch._subclasses.FakeTensor) for t in inputs)
    traced = make_fx(
        functionalize(flat_fn, remove="mutations"),
        decomposition_table=decomposition_table(),
        tracing_mode="real" if fake else "fake",
        _allow_non_fake_inputs=True,
    )(*inputs)
    return traced, holder["spec"], state
