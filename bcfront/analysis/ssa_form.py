"""The result of SSA construction, on integer value ids (`IntegerSSA`).

`bcfront.analysis.ssa_build` fills one; `bcfront.analysis.ssa.SSA` reads it and
builds the `SSAValue` and `SSAOp` objects from it on first request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any


class IntegerSSA:
    """What a construction produces: SSA on integer value ids, which `ssa.SSA` turns
    into `SSAValue` and `SSAOp` objects when a caller first asks for them.

    A value id is either an ``op`` value's number (>= 0: a value an instruction
    pushes, numbered by a counter; its slot and block follow from the stack and the
    CFG), or ``~k`` for record k of `recs`, the other values: (kind, var, block,
    offset, args) -- args are ids, a list for a phi, the one id itself (an int) for a
    store renamed inline.  Per instruction position i:

    * ``special[i]`` an int: a load of a local, which reads and pushes that value;
    * ``special[i]`` a tuple (uses, defs, results) of ids: any other instruction
      that is not plain;
    * ``stores[i]`` the id r of a store to a local renamed inline: it reads the
      record's arg and defines r, pushes nothing (three tuples fewer per store);
    * else it reads all its inputs and pushes new values, recorded in bulk: per
      block b, ``starts[b] = f`` and ``op_starts[b] = v`` (absent: 0), and the plain
      instructions of b, in order,
      read the consecutive entries of `flat` from f on (``pops`` each) and push
      consecutive op ids from v on (``news`` each; the op values of the other
      instructions of b are numbered in the same sequence).

    ``stack_in[b]``: the ids on the stack when block b begins (absent: empty).  The
    tuples hold ints only, which the cyclic collector stops tracking after one pass;
    a one-block code object makes none of these three dicts.
    """

    # what only a code object with phis or handlers fills (read-only until then)
    phis: Mapping[int, list[int]] = MappingProxyType({})  # block -> its phis' ids
    phi_edges: Mapping[int, tuple[tuple[int, str], ...]] = MappingProxyType({})
    handler_values: Mapping[int, list[int]] = MappingProxyType({})  # handler -> pushed ids
    catches: Mapping[int, list[int]] = MappingProxyType({})  # block -> its catch ids
    entry: Sequence[int] = ()  # the entry values' ids (`Builder.make_entry`: a list or a range)
    order: Sequence[int] = ()  # the reachable blocks in renaming order (the CFG's RPO list)
    # (the walk makes them when there are several blocks; see above)
    starts: Mapping[int, int] = MappingProxyType({})
    op_starts: Mapping[int, int] = MappingProxyType({})
    stack_in: Mapping[int, tuple[int, ...]] = MappingProxyType({})

    def __init__(self) -> None:
        self.recs: list[Any] = []  # the non-op values' records (see above)
        # (nargs, entry block, n) when the first n records are the entry values of
        # the locals, kept as their names: a parameter's for the first nargs, else
        # "undef" (`Builder.make_entry`)
        self.lead: tuple[int, int, int] | None = None
        self.nops = 0  # how many op values
        self.flat: list[int] = []  # the plain instructions' inputs (see above)
        self.special: dict[int, Any] = {}
        self.stores: dict[int, int] = {}
