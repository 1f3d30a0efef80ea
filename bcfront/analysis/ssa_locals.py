"""SSA renaming of the instructions on fast locals, one handler per opcode.

`ssa_build.Builder` renames the common loads and stores inline; the rest of the
instructions that read or write a fast local (3.13's paired loads and stores, a
load of a cell, ``LOAD_FAST_AND_CLEAR``, ``DELETE_FAST``, ``MAKE_CELL``, and every
one of them in a tracked protected block) go through `LOCAL_OPS`, indexed by
opcode byte.  A handler gets (renamer, instruction position, inputs, block,
is_last) and returns (values for the effect's new outputs, values used, values
defined).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from .opcodes import OPNAME

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .bytecode import Bytecode
    from .stack import StackInfo

# A value id (see `ssa_form.IntegerSSA`): an op value's number (>= 0), or ``~k`` for record k.
ValueId: TypeAlias = int


class LocalRenamer(Protocol):
    """What the handlers read and change of an SSA construction (`ssa_build.Builder` is one)."""

    bc: Bytecode
    stack: StackInfo
    loc: list[ValueId]  # the value id of each SSA local
    cell_params: dict[str, ValueId]  # cell parameter -> its entry value

    def local_ids(self) -> dict[str, int]: ...
    def local(self, arg: int | None) -> str: ...
    def new(self, kind: str, var: Any, b: int, offset: int | None, args: Any = ()) -> ValueId: ...
    def set(self, var: int, val: int, last: bool = False) -> None: ...


# -- per-opcode handlers for fast locals: (builder, instruction position, inputs, block,
#    is_last) -> (values for the effect's new outputs, values used, values defined)

_Result: TypeAlias = "tuple[Sequence[ValueId], tuple[ValueId, ...], tuple[ValueId, ...]]"
_Handler: TypeAlias = "Callable[[LocalRenamer, int, list[ValueId], int, bool], _Result]"


def _names(bd: LocalRenamer, i: int) -> tuple[str, ...]:
    a: Any = bd.bc.argval(i)  # (a name, or a pair of names)
    return a if a.__class__ is tuple else (a,)


def _load(bd: LocalRenamer, name: str, i: int, b: int, uses: list[ValueId], defs: list[ValueId]) -> ValueId:
    """The value a load of `name` pushes: the local's value, or a new one for a cell."""
    var = bd.local_ids().get(name)
    if var is None:
        v = bd.new("op", bd.stack.depth[i] - bd.stack.effects[i].pops + len(defs), b, bd.bc.offsets[i])
        defs.append(v)
        return v
    v = bd.loc[var]
    uses.append(v)
    return v


def _store(
    bd: LocalRenamer, name: str, val: ValueId, i: int, b: int, last: bool, defs: list[ValueId]
) -> None:
    var = bd.local_ids().get(name)
    if var is not None:
        v = bd.new("store", name, b, bd.bc.offsets[i], (val,))
        defs.append(v)
        bd.set(var, v, last)


def _clear(bd: LocalRenamer, name: str, i: int, b: int, last: bool, defs: list[ValueId]) -> None:
    var = bd.local_ids().get(name)
    if var is not None:
        v = bd.new("undef", name, b, bd.bc.offsets[i])
        defs.append(v)
        bd.set(var, v, last)


def _h_load_fast(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    # a load of a local never gets here (`LocalRenamer.step` handles it first): a cell's
    uses: list[ValueId]
    defs: list[ValueId]
    uses, defs = [], []
    news = [_load(bd, bd.local(bd.bc.args[i]), i, b, uses, defs)]
    return news, tuple(uses), tuple(defs)


def _h_load_pair(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    uses: list[ValueId]
    defs: list[ValueId]
    uses, defs = [], []
    news = [_load(bd, n, i, b, uses, defs) for n in _names(bd, i)]
    return news, tuple(uses), tuple(defs)


def _h_load_and_clear(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    uses: list[ValueId]
    defs: list[ValueId]
    uses, defs = [], []
    name = bd.local(bd.bc.args[i])
    news = [_load(bd, name, i, b, uses, defs)]
    _clear(bd, name, i, b, last, defs)
    return news, tuple(uses), tuple(defs)


def _h_delete_fast(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    uses: list[ValueId]
    defs: list[ValueId]
    uses, defs = [], []
    name = bd.local(bd.bc.args[i])
    var = bd.local_ids().get(name)
    if var is not None:
        uses.append(bd.loc[var])
    _clear(bd, name, i, b, last, defs)
    return (), tuple(uses), tuple(defs)


def _h_store_fast(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    defs: list[ValueId] = []
    _store(bd, bd.local(bd.bc.args[i]), inputs[0], i, b, last, defs)
    return (), (inputs[0],), tuple(defs)


def _h_store_store(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    first, second = _names(bd, i)
    defs: list[ValueId] = []
    _store(bd, first, inputs[1], i, b, last, defs)  # the first store takes the top
    _store(bd, second, inputs[0], i, b, last, defs)
    return (), (inputs[1], inputs[0]), tuple(defs)


def _h_store_load(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    store, load = _names(bd, i)
    uses: list[ValueId]
    defs: list[ValueId]
    uses, defs = [inputs[0]], []
    _store(bd, store, inputs[0], i, b, last, defs)
    pushed = _load(bd, load, i, b, uses, defs)
    if defs and uses[-1] == defs[0]:  # `x = ...; x`: it reloads what it stored
        uses.pop()
    return (pushed,), tuple(uses), tuple(defs)


def _h_make_cell(bd: LocalRenamer, i: int, inputs: list[ValueId], b: int, last: bool) -> _Result:
    v = bd.cell_params.get(bd.local(bd.bc.args[i]))
    return (), ((v,) if v is not None else ()), ()


def _local_ops() -> list[_Handler | None]:
    """opcode byte -> handler (None for the opcodes that do not touch a fast local)."""
    by_name: dict[str | None, _Handler] = {
        "LOAD_FAST": _h_load_fast,
        "LOAD_FAST_CHECK": _h_load_fast,
        "LOAD_FAST_LOAD_FAST": _h_load_pair,
        "LOAD_FAST_AND_CLEAR": _h_load_and_clear,
        "DELETE_FAST": _h_delete_fast,
        "STORE_FAST": _h_store_fast,
        "STORE_FAST_STORE_FAST": _h_store_store,
        "STORE_FAST_LOAD_FAST": _h_store_load,
        "MAKE_CELL": _h_make_cell,
    }
    return [by_name.get(n) for n in OPNAME]


LOCAL_OPS = _local_ops()
