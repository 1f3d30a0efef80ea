"""From a captured `torch.fx.GraphModule` to a functional aten graph.

`make_fx` traces the module with fake tensors through `torch.func.functionalize`
(so the graph is free of mutation except trailing ``copy_`` into mutated
inputs) and a decomposition table chosen for fusion: composite ops that are
really pointwise + reductions (softmax, layer_norm, gelu, ...) are decomposed,
while ops better left to a library (matmul, convolution, attention, random
ops) are kept whole so that they become extern calls.
"""
from __future__ import annotations

import functools

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils._pytree import tree_flatten

aten = torch.ops.aten

# Kept whole even where torch ships a decomposition: library kernels beat ours.
_KEEP = ("scaled_dot_product", "embedding", "addmm", "convolution", "_flash_attention",
         "_efficient_attention", "_cudnn_attention")

# Lowered directly (index arithmetic); their decompositions gather through index tensors.
_LOWERED = ("roll",)

# Decomposed even though core ATen keeps them: they fuse into one kernel.
_DECOMPOSE = (
    "_softmax", "_log_softmax", "native_layer_norm", "gelu", "hardtanh", "leaky_relu", "elu",
    "hardswish", "hardsigmoid", "mish", "logsumexp", "_safe_softmax", "std", "std_mean",
    "rms_norm", "_fused_rms_norm", "native_dropout", "silu", "glu", "lerp", "addcmul", "addcdiv",
    "logit", "xlogy", "softplus", "threshold", "clamp_min", "clamp_max", "square", "frac",
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


def trace_aten(gm, example_inputs):
    """Return ``(aten_gm, out_spec)``: a functional aten GraphModule whose output
    is the flat list of `gm`'s outputs, and the pytree spec to rebuild them."""
    from torch.func import functionalize
    holder = {}

    def flat_fn(*args):
        out = gm(*args)
        flat, holder["spec"] = tree_flatten(out)
        return flat

    fake = any(isinstance(t, torch._subclasses.FakeTensor) for t in example_inputs)
    traced = make_fx(functionalize(flat_fn, remove="mutations"),
                     decomposition_table=decomposition_table(),
                     tracing_mode="real" if fake else "fake",
                     _allow_non_fake_inputs=True)(*example_inputs)
    return traced, holder["spec"]
