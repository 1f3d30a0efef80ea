"""From a captured `torch.fx.GraphModule` to a functional aten graph.

`make_fx` traces the module with fake tensors through `torch.func.functionalize`
(so the graph is free of mutation except trailing ``copy_`` into mutated
inputs) and a decomposition table chosen for fusion: composite ops that are
really pointwise + reductions (softmax, layer_norm, gelu, ...) are decomposed,
while attention and random ops are kept whole so that they become extern
calls, and embedding, addmm and convolution are kept whole for their rules
(one gather; one reduction with its epilogue).  Small attention is the
exception: a `scaled_dot_product_attention` call whose score matrix (query
length x key length) has at most ``attention_max`` entries and no dropout is
traced through torch's math path (matmul, softmax, matmul) so it fuses like
the rest; larger ones stay a library call (flash / memory-efficient kernels).
"""

from __future__ import annotations

import functools

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.overrides import TorchFunctionMode
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


_SDPA = torch.nn.functional.scaled_dot_product_attention
_SDPA_ARGS = ("attn_mask", "dropout_p", "is_causal")


class InlineAttention(TorchFunctionMode):
    """Runs small, dropout-free `scaled_dot_product_attention` calls as torch's math
    path (`aten._scaled_dot_product_attention_math`: q k^T, mask, softmax, @ v; a fully
    masked row gives zeros as the fused kernels do), which make_fx then traces op by op."""

    def __init__(self, max_scores: int):
        super().__init__()
        self.max_scores = max_scores

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is _SDPA and len(args) >= 3:
            q, k, v, *rest = args
            kwargs.update(zip(_SDPA_ARGS, rest))
            small = q.dim() >= 2 and q.shape[-2] * k.shape[-2] <= self.max_scores
            if small and not kwargs.get("dropout_p"):
                kwargs.pop("dropout_p", None)
                mask = kwargs.get("attn_mask")
                if mask is not None and mask.dtype == torch.bool:
                    # the math path adds its mask: a boolean one becomes 0 / -inf first (as
                    # scaled_dot_product_attention does before choosing a kernel)
                    zero = torch.zeros((), dtype=q.dtype, device=mask.device)
                    kwargs["attn_mask"] = torch.where(mask, zero, zero - float("inf"))
                return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, **kwargs)[0]
        return func(*args, **kwargs)


def trace_aten(gm, example_inputs, attention_max: int = 0):
    """Return ``(aten_gm, out_spec, state)``: a functional aten GraphModule whose
    inputs are `state` (the module's parameters and buffers) followed by the
    example inputs and whose output is the flat list of `gm`'s outputs, and the
    pytree spec to rebuild them.

    Lifting the state to inputs keeps tracing from touching it (a batch-norm
    in training mode bumps its counters in place) and turns writes to buffers
    into ordinary input mutations, copied back after the kernels.  Attention
    with at most `attention_max` scores per head is traced as math (`InlineAttention`)."""
    from torch.func import functional_call, functionalize

    holder = {}
    names, state = module_state(gm)
    n_state = len(names)

    def flat_fn(*args):
        with InlineAttention(attention_max):
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
