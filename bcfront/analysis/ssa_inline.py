"""The SSA walk's inline renaming of a run of instructions (`rename_inline`), the plain
reference of the C kernel `bcfront._canalysis.rename_inline` (`ckernels.KERNELS`).

`Builder.walk` (`bcfront.analysis.ssa_build`) renames a block's instructions in runs:
`rename_inline` takes the common kinds one after another -- "simple" ones (read every
input, push new values), loads of locals, stores to locals outside a tracked block, and
3.13's paired loads and stores -- and stops at the first instruction of any other kind,
which the walk hands to `Builder.other`, then resumes after it.  Nothing here depends on
the Python version: the effects column (`StackInfo.effects`) says what each instruction
does, and the builder's `var_of_arg` maps a local-variable opcode's arg to its local.

The context `ctx` is the builder's state, one tuple per walk (`Builder.inline_context`):
``(stk, loc, flat, recs, special, stores, args, offsets, var_of, names)``; see
`bcfront.analysis.ssa_form.IntegerSSA` for what `flat`, `recs`, `special` and `stores`
record.
"""

from __future__ import annotations

from typing import Any

from .stack_effects import LOAD_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL, STORE_LOCAL_PAIR, Effect

# (stk, loc, flat, recs, special, stores, args, offsets, var_of, names)
InlineContext = tuple[
    list[Any], list[Any], list[int], list[Any], dict[int, Any], dict[int, int],
    list[Any], list[int], list[int], Any,
]  # fmt: skip


def rename_inline(
    ctx: InlineContext, effs: list[Effect], i: int, hi: int, d: int, nv: int, b: int, tracking: bool
) -> tuple[int, int, int]:
    """Rename instructions ``i, i+1, ...`` (below `hi`) of block `b` while they are of a
    kind renamed inline, from stack depth `d` with `nv` the next op value id; returns
    ``(i, d, nv)`` at the first one that is not (``i == hi`` at the block's end)."""
    stk, loc, flat, recs, special, stores, args, offsets, var_of, names = ctx
    while i < hi:
        eff = effs[i]
        if eff.simple:  # reads its inputs, pushes new values
            p = eff.pops
            if p == 1:  # (the commonest: no slice to build)
                d -= 1
                flat.append(stk[d])
            elif p:
                d -= p
                flat += stk[d : d + p]
            n = eff.news
            if n == 1:
                stk[d] = nv
                nv += 1
                d += 1
            elif n:
                stk[d : d + n] = range(nv, nv + n)
                nv += n
                d += n
        elif eff is LOAD_LOCAL:  # a load of a local pushes the local's value
            var = var_of[args[i]]
            if var >= 0:
                stk[d] = special[i] = loc[var]
            else:  # 3.13's load of a cell object: a new value
                stk[d] = nv
                nv += 1
            d += 1
        elif eff is STORE_LOCAL:  # a store to a local: a record, its one arg inline
            var = var_of[args[i]]
            if var < 0 or tracking:
                break
            d -= 1
            recs.append(("store", names[var], b, offsets[i], stk[d]))
            loc[var] = stores[i] = -len(recs)
        elif eff is LOAD_LOCAL_PAIR:  # 3.13: two loads in one (arg: two nibbles)
            arg = args[i]
            first, second = var_of[arg >> 4], var_of[arg & 15]
            if first < 0 or second < 0:
                break
            pair = stk[d], stk[d + 1] = loc[first], loc[second]
            special[i] = (pair, (), pair)
            d += 2
        elif eff is STORE_LOCAL_PAIR:  # 3.13: two stores in one; the first takes the top
            arg = args[i]
            first, second = var_of[arg >> 4], var_of[arg & 15]
            if first < 0 or second < 0 or tracking:
                break
            d -= 2
            top, below = stk[d + 1], stk[d]
            off = offsets[i]
            recs.append(("store", names[first], b, off, top))
            loc[first] = r1 = -len(recs)
            recs.append(("store", names[second], b, off, below))
            loc[second] = r2 = -len(recs)
            special[i] = ((top, below), (r1, r2), ())
        else:
            break
        i += 1
    return i, d, nv
