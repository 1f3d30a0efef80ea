"""Build-time validation of a continuation's bytecode: refuse what CPython could not run.

CPython trusts its compiler: the interpreter does not check stack depths,
exception-table depths or (3.12+) whether a `LOAD_FAST` local is bound, so
bytecode that breaks one of the compiler's invariants crashes the process
instead of raising.  A continuation (`resume.make_resume`) is the original
code behind a generated prologue, assembled by the `bytecode` library; before
it is ever run, `check_continuation` proves three things and raises
``UnsupportedError("no-continuation")`` otherwise (the function then runs
natively, which is always correct):

1. **mirror** -- every instruction after the prologue means what the original
   instruction it stands for meant: same operation, same argument (local,
   name, constant, flag bits, as decoded back from the assembled code) and,
   for jumps, a target that maps back to the original target, under the same
   exception handler.  A split 3.13 superinstruction stands for its halves.
   This catches arguments the assembler encoded wrongly (O4-O6: local indices
   packed into 4-bit halves that overflowed).
2. **stack** -- the analyzer's stack simulation (`analysis.stack.StackInfo`:
   no underflow, depths agree where control merges, handlers entered at
   ``depth + lasti + 1``) succeeds on the continuation; its deepest point fits
   ``co_stacksize``; every instruction reached has the depth the original
   instruction has; and an instruction covered by an exception-table entry
   holds at least the entry's depth (unwinding only pops down to it).
3. **locals** (3.12+, where `LOAD_FAST` does not check) -- every unchecked
   local read is of a local assigned on every path from the continuation's
   entry (parameters are assigned; `DELETE_FAST` and `LOAD_FAST_AND_CLEAR`
   unassign; a handler sees what every instruction it covers sees).
"""

from __future__ import annotations

import sys

from ...errors import UnsupportedError
from ...reasons import BreakReason

PY = sys.version_info[:2]
SUPER = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
}


def refuse(why: str):
    raise UnsupportedError(BreakReason.NO_CONTINUATION, f"invalid continuation bytecode: {why}")


def check_continuation(new_code, orig_code, offmap: dict[int, int], aliases=None) -> None:
    """Raise UnsupportedError unless `new_code` (a continuation of `orig_code` whose body
    instructions map to original offsets by `offmap`) is bytecode CPython can run.

    `aliases` ({offset: original offset}) are the starts of instructions inserted before an
    original instruction (a loop runner's hand-offs): a jump there stands for a jump to
    it.  Inserted instructions are not mirrored; the stack checks cover them."""
    from ...analysis import analyze
    from ...analysis.stack import StackDepthError

    try:
        new, orig = analyze(new_code), analyze(orig_code)
        check_mirror(new.bytecode, orig.bytecode, offmap, aliases or {})
        check_stack(new.cfg, new.stack, orig.stack, offmap, new_code.co_stacksize)
        if PY >= (3, 12):
            check_bound_locals(new.cfg, new_code)
    except UnsupportedError:
        raise
    except StackDepthError as e:
        refuse(str(e))
    except Exception as e:  # noqa: BLE001 - unvalidated is unsafe: an analyzer failure refuses too
        refuse(f"the analysis failed ({type(e).__name__}: {e})")


# -- 1. mirror ------------------------------------------------------------------------------


def _atoms(ins) -> list[tuple]:
    """(opname, meaning) of the plain instructions `ins` stands for."""
    pair = SUPER.get(ins.opname)
    if pair is not None:
        return [(op, name) for op, name in zip(pair, ins.argval)]
    return [(ins.opname, _meaning(ins))]


def _meaning(ins):
    if ins.opname == "LOAD_CONST":
        return ("const", type(ins.argval), repr(ins.argval))
    # argrepr carries the flag bits argval leaves out ("print + NULL", "bool(<)")
    return (ins.argval, ins.argrepr)


def check_mirror(new_bc, orig_bc, offmap: dict[int, int], aliases=None) -> None:
    targets = {**offmap, **(aliases or {})}  # where a jump may land
    groups: dict[int, list] = {}
    for ins in new_bc.instructions:
        o = offmap.get(ins.offset)
        if o is not None:
            groups.setdefault(o, []).append(ins)
    if len(groups) != len(orig_bc.instructions):
        refuse("the body does not cover the original instructions")
    for o_ins in orig_bc.instructions:
        got = groups.get(o_ins.offset, [])
        want = _atoms(o_ins) if len(got) != 1 else [(o_ins.opname, _meaning(o_ins))]
        if len(got) != len(want):
            refuse(f"offset {o_ins.offset} ({o_ins.opname}) became {len(got)} instructions")
        for n_ins, (op, meaning) in zip(got, want):
            if n_ins.opname != op:
                refuse(f"offset {o_ins.offset}: {n_ins.opname} stands for {op}")
            if o_ins.jump_target is not None:
                if targets.get(n_ins.jump_target) != o_ins.jump_target:
                    refuse(f"offset {o_ins.offset}: {op} jumps elsewhere than the original")
            elif len(want) == 1 and _meaning(n_ins) != meaning:
                refuse(
                    f"offset {o_ins.offset}: {op} has argument {n_ins.argrepr!r}, "
                    f"the original {o_ins.argrepr!r}"
                )
            elif len(want) == 2 and n_ins.argval != meaning:
                refuse(f"offset {o_ins.offset}: {op} of {n_ins.argval!r} stands for {meaning!r}")
            _check_handler(
                new_bc.handler_for(n_ins.offset), orig_bc.handler_for(o_ins.offset), offmap, o_ins.offset
            )


def _check_handler(got, want, offmap, offset) -> None:
    same = (got is None and want is None) or (
        got is not None
        and want is not None
        and offmap.get(got.target) == want.target
        and got.depth == want.depth
        and got.lasti == want.lasti
    )
    if not same:
        refuse(f"offset {offset} is covered by another exception handler than in the original")


# -- 2. stack -------------------------------------------------------------------------------


def check_stack(cfg, stack, orig_stack, offmap: dict[int, int], stacksize: int) -> None:
    if stack.max_depth > stacksize:
        refuse(f"the stack reaches depth {stack.max_depth}, co_stacksize is {stacksize}")
    seen: set[int] = set()
    for block in cfg.blocks.values():
        entry = block.handler
        for ins in block.instructions:
            d = stack.depth_before(ins.offset)
            if d < 0:
                continue  # unreachable in the continuation
            o = offmap.get(ins.offset)
            if o is not None and o not in seen:  # the first half of a split pair
                seen.add(o)
                od = orig_stack.depth_before(o)
                if od != d:
                    refuse(f"offset {o} runs at stack depth {d}, the original at {od}")
            if entry is not None and d < entry.depth:
                refuse(f"offset {ins.offset} has stack depth {d} below its handler's {entry.depth}")


# -- 3. locals ------------------------------------------------------------------------------


def _local_effects(ins) -> list[tuple[str, str]]:
    """("load" | "store" | "unbind", name) in execution order; unchecked loads only."""
    op = ins.opname
    if op == "LOAD_FAST":
        return [("load", ins.argval)]
    if op in SUPER:
        kinds = ["load" if half == "LOAD_FAST" else "store" for half in SUPER[op]]
        return list(zip(kinds, ins.argval))
    if op in ("STORE_FAST", "LOAD_FAST_CHECK"):  # a checked load raises or proves it bound
        return [("store", ins.argval)]
    if op in ("DELETE_FAST", "LOAD_FAST_AND_CLEAR"):
        return [("unbind", ins.argval)]
    return []


def check_bound_locals(cfg, code) -> None:
    """Must-be-assigned dataflow: sets of locals bound before each block, intersected where
    paths merge (None = not reached yet)."""
    params = (
        code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    )
    bound_in: dict[int, frozenset | None] = dict.fromkeys(cfg.blocks)
    # a cell's slot holds the cell from the start (3.13 reads it with LOAD_FAST for closures)
    bound_in[cfg.entry] = frozenset(code.co_varnames[:params] + code.co_cellvars + code.co_freevars)
    succs: dict[int, list] = {b: [] for b in cfg.blocks}
    for e in cfg.edges:
        succs[e.src].append(e)
    work = [cfg.entry]
    while work:
        b = work.pop()
        cur = set(bound_in[b])
        low = set(cur)  # bound at every instruction of the block
        for ins in cfg.blocks[b].instructions:
            for kind, name in _local_effects(ins):
                if kind == "load" and name not in cur:
                    refuse(f"offset {ins.offset} reads local {name!r}, which may be unbound")
                if kind == "store":
                    cur.add(name)
                elif kind == "unbind":
                    cur.discard(name)
                    low.discard(name)
        for e in succs[b]:
            out = frozenset(low if e.kind == "exception" else cur)
            old = bound_in[e.dst]
            new = out if old is None else old & out
            if new != old:
                bound_in[e.dst] = new
                work.append(e.dst)
