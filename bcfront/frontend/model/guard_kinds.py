"""The guard vocabulary: each kind of check, and what its `expected` and `extra` hold.

A `Guard(kind, source, expected, extra)` (`guards.py`) checks one fact about
the value `source` fetches.  `GuardKind` names the kinds; its values are the
names the explain report shows.  Each member's `.meaning` says what the check
is and which fields it uses.  Kinds whose expected value has several parts
carry it as a named tuple (`TensorMatch`, `StorageLayout`), so the code that
generates and diagnoses checks reads `g.expected.shape`, not `g.expected[3]`.

Plain data, no torch: guards.py turns these into generated source.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...described import DescribedStrEnum


class GuardKind(DescribedStrEnum):
    """A kind of guard; `.meaning` says what it checks and what `expected`/`extra` hold."""

    ID_MATCH = "ID_MATCH", "source is `expected` (the object itself)"
    TYPE_MATCH = "TYPE_MATCH", "type(source) is `expected` (a class)"
    CONSTANT_MATCH = "CONSTANT_MATCH", "source has the type of `expected` and equals it (a constant)"
    LENGTH = "LENGTH", "len(source) == `expected` (an int)"
    DICT_KEYS = "DICT_KEYS", "list(source) == `expected` (a dict's keys in order), typed as they or `extra`"
    NOT_PRESENT = "NOT_PRESENT", "`extra` (a name) is not a key of source (a dict)"
    HASATTR = "HASATTR", "hasattr(source, `extra`) is `expected` (a bool)"
    NO_HOOKS = "NO_HOOKS", "the hook dicts named in `extra` of source (an nn.Module) are all empty"
    SAME_OBJECT = "SAME_OBJECT", "source is the object `extra` (another source) fetches"
    DISTINCT_OBJECTS = "DISTINCT_OBJECTS", "source is not the object `extra` (another source) fetches"
    GLOBAL_STATE = "GLOBAL_STATE", "torch state `extra` (a STATE_NAMES key) reads `expected`; no source"
    TENSOR_MATCH = "TENSOR_MATCH", "source is a tensor as `expected` (a TensorMatch) describes"
    TENSOR_ALIAS = "TENSOR_ALIAS", "source is the same tensor as `expected` (another source) fetches"
    TENSOR_DISTINCT = (
        "TENSOR_DISTINCT",
        "the tensors `expected` (a tuple of sources) fetches are all different",
    )
    TENSOR_STORAGE = "TENSOR_STORAGE", "the tensors share storage as `expected` (a StorageLayout) records"
    SHAPE = (
        "SHAPE",
        (
            "a relation between symbolic sizes the trace relied on holds; `expected` is it over "
            "symbols (``2 <= s0``), `extra` a ShapeCheck (the expression over placeholders, and "
            "the sources they stand for); no source"
        ),
    )


class TensorMatch(NamedTuple):
    """TENSOR_MATCH's expected value: what the compiled graph assumed of an input tensor."""

    ptype: type  # the exact Python type (Tensor, Parameter, ...)
    dtype: Any  # torch.dtype
    device: Any  # torch.device
    shape: tuple[int | None, ...]  # None: a symbolic size (its relations are SHAPE guards)
    stride: tuple[int | None, ...]
    requires_grad: bool


class ShapeCheck(NamedTuple):
    """SHAPE's extra: a ShapeEnv guard as Python over placeholder names, and what each
    placeholder stands for (a tensor input's source, or an int input's)."""

    code: str  # e.g. "2 <= __bcs0__.size()[1]"
    inputs: tuple  # ((placeholder name, source), ...)
    symbols: tuple = ()  # the symbols the readable form names: ((symbol, source, dim or None), ...)

    @property
    def legend(self) -> str:
        """``s0 = L['x'].shape[1], s1 = L['n']``"""
        return ", ".join(
            f"{sym} = {src.readable()}" + (f".shape[{dim}]" if dim is not None else "")
            for sym, src, dim in self.symbols
        )


class StorageLayout(NamedTuple):
    """TENSOR_STORAGE's expected value: which input tensors share storage, and where."""

    sources: tuple  # the inputs' sources, in graph-input order
    signature: tuple  # guards.storage_signature of those tensors when captured
