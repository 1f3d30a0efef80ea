"""Triton backend: captured FX graphs become fused Triton kernels.

    compiled = compile_fx(gm, example_inputs)
    compiled(*inputs)          # same results as gm(*inputs)
    compiled.kernels           # [TritonKernel(name, ops, source, kind, numels)]
    compiled.fallback_ops      # aten ops left to torch
    compiled.wrapper_source    # the generated host function

Pipeline: `frontend` (make_fx + functionalize + decompositions) -> `lower`
(aten -> loop-level IR in `ir`, index arithmetic in `index`; per-family rules
in `rules_pointwise`, `rules_views`, `rules_reduce`, `rules_gather`, and
`rules_conv` / `rules_matmul` for windows and products as reductions) -> `fuse` (kernel
grouping) -> `codegen` + `codegen_reduce` (Triton source, op spellings in
`triton_ops`) -> `runtime` (cache, compile, autotune) and `wrapper` (host
code), tied together by `compile`.  Importing this package does not import
torch or triton; `compile_fx` does.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CompiledTritonGraph", "TritonConfig", "compile_fx"]


@dataclass(frozen=True)
class TritonConfig:
    """Knobs of the backend (defaults are what `compile_fx` uses)."""

    persistent_max: int = 4096  # widest reduction row held in registers
    looped_rblock: int | None = None  # force looped reductions with this RBLOCK
    fuse: bool = True  # False: one kernel per lowered buffer
    autotune: bool = True  # benchmark launch configs on first GPU use
    cache_dir: str | None = None  # default: $BCFRONT_CACHE_DIR or ~/.cache/bcfront
    # attention with at most this many scores per head (query x key length) is fused as
    # matmul + softmax + matmul; larger attention stays a library (flash) kernel
    attention_max: int = 128 * 128


def compile_fx(gm, example_inputs, config: TritonConfig | None = None):
    """Compile an FX graph for the inputs' shapes, strides and dtypes; other
    input layouts are compiled on first sight."""
    from .compile import CompiledTritonGraph

    return CompiledTritonGraph(gm, list(example_inputs), config or TritonConfig())


def __getattr__(name):
    if name == "CompiledTritonGraph":
        from .compile import CompiledTritonGraph

        return CompiledTritonGraph
    raise AttributeError(name)
