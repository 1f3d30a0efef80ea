"""The lowering rules' table and the values they exchange with `lower`.

A leaf below `lower` and the `rules_*` modules: each rules module registers its
functions here with `@rule(...)`, and `lower` imports the rules modules (to fill
the table) and reads `RULES`.  Keeping the table here means the rules never
import `lower`, so there is no import cycle between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .ir import TensorRef
from .symsize import from_torch


class Unsupported(Exception):
    """A rule cannot lower this node; it runs through torch instead."""


@dataclass(frozen=True, slots=True)
class TV:
    """A lowered tensor value: `expr` gives element ``(i0, i1, ...)``.

    `ref` is set when the value is (a view of) a real buffer; `hint` carries the
    eager strides of the fx node it came from (used when it gets materialized);
    `origins` names the fx nodes whose work is inlined into `expr`.
    """

    shape: tuple
    dtype: str
    expr: int
    ref: TensorRef | None = None
    hint: tuple | None = None
    origins: frozenset = frozenset()

    @property
    def ndim(self) -> int:
        return len(self.shape)


RULES: dict = {}


def rule(*ops):
    """Register a lowering rule for aten overloads or overload packets."""

    def deco(fn):
        for op in ops:
            RULES[op] = fn
        return fn

    return deco


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def torch_dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def sizes_of(seq) -> tuple:
    """Sizes or strides of a node's value as ints, or `SizeExpr` where symbolic."""
    return tuple(from_torch(d) for d in seq)


def dense_strides_ok(shape, stride) -> bool:
    """True when `stride` is a permutation of a contiguous layout of `shape`."""
    dims = sorted((st, sz) for sz, st in zip(shape, stride) if sz != 1)
    expect = 1
    for st, sz in dims:
        if st != expect:
            return False
        expect *= sz
    return True
