"""Types of the analyzer's C kernels (`_canalysis.c`); see `bcfront/analysis/ckernels.py`."""

from typing import Any

class Kernels:
    def __init__(self, effect: type, load: Any, store: Any, load_pair: Any, store_pair: Any, /) -> None: ...
    def set_cfg(self, block: type, edge_kinds: tuple[tuple[str, ...], ...], /) -> None: ...
    def rename_inline(
        self,
        ctx: tuple[Any, ...],
        effs: list[Any],
        i: int,
        hi: int,
        d: int,
        nv: int,
        b: int,
        tracking: bool,
        /,
    ) -> tuple[int, int, int]: ...
    def block_depths(
        self, effs: list[Any], lo: int, hi: int, d: int, depth: list[int], /
    ) -> tuple[int, int] | None: ...
    def block_rpo(
        self, blocks: dict[int, Any], root: int, first: list[int], forward: bool, /
    ) -> list[int]: ...
    def make_blocks(
        self,
        bc: Any,
        cuts: list[int],
        starts: list[int],
        plists: list[list[int]],
        preds: dict[int, list[int]],
        ends: bytes,
        targets: list[int | None],
        ints: list[int],
        table: Any,
        blocks: dict[int, Any],
        out_kinds: dict[int, tuple[str, ...]],
        exit_preds: list[int],
        /,
    ) -> None: ...

INTERFACE: int
