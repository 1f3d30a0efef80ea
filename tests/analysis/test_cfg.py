"""CFG: blocks and typed successors against an oracle built from `dis` alone,
exception edges, reachability, block_of, and stack depths simulated along the
edges against the exception table and co_stacksize."""

from __future__ import annotations

import bisect
import dis
import types

import pytest
from corpus import CORPUS, corpus_code_objects, dead_code, stdlib_code_objects

from bcfront.analysis.cfg import CFG, EDGE_KINDS, build_cfg
from bcfront.analysis.decode import decode

CORPUS_CODES = corpus_code_objects()

# What ends a block, by dis opname (written out here, independently of decode).
DIS_JUMPS = frozenset(getattr(dis, "hasjump", dis.hasjrel + dis.hasjabs))
UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
RETURNS = {"RETURN_VALUE", "RETURN_CONST"}
RAISES = {"RAISE_VARARGS", "RERAISE"}


def dis_oracle(code: types.CodeType):
    """(block starts, {start: [offsets]}, {start: sorted [(dst, kind)]}, exit preds) from dis."""
    rows = list(dis.get_instructions(code))
    instrs, real, pending = [], {}, []
    for r in rows:
        if r.opname == "EXTENDED_ARG":
            pending.append(r.offset)
            continue
        for p in pending:
            real[p] = r.offset
        pending = []
        instrs.append(r)
    offsets = [r.offset for r in instrs]
    table = dis._parse_exception_table(code)
    leaders = {offsets[0]}
    for i, r in enumerate(instrs):
        if r.opcode in DIS_JUMPS:
            leaders.add(real.get(r.argval, r.argval))
        if (r.opcode in DIS_JUMPS or r.opname in RETURNS | RAISES) and i + 1 < len(instrs):
            leaders.add(offsets[i + 1])
    for e in table:
        leaders.add(real.get(e.start, e.start))
        leaders.add(real.get(e.target, e.target))
        k = bisect.bisect_left(offsets, e.end)  # first instruction at or after the end
        if k < len(offsets):
            leaders.add(offsets[k])
    handler_at = covering_handlers(table, real, offsets)
    starts = sorted(leaders)
    members: dict[int, list] = {s: [] for s in starts}
    cur = None
    for r in instrs:
        if r.offset in leaders:
            cur = r.offset
        members[cur].append(r)
    succs: dict[int, list] = {}
    exits = []
    for k, s in enumerate(starts):
        block = members[s]
        last = block[-1]
        out = []
        if last.opcode in DIS_JUMPS:
            out.append(
                (real.get(last.argval, last.argval), "jump" if last.opname in UNCONDITIONAL else "branch")
            )
        if last.opname not in UNCONDITIONAL | RETURNS | RAISES and k + 1 < len(starts):
            out.append((starts[k + 1], "fallthrough"))
        handlers = {handler_at[r.offset] for r in block if r.offset in handler_at}
        assert len(handlers) <= 1, f"block {s} has instructions with different handlers"
        out.extend((h, "exception") for h in handlers)
        if last.opname in RETURNS or (last.opname in RAISES and not handlers):
            exits.append(s)
        succs[s] = sorted(out)
    return starts, {s: [r.offset for r in m] for s, m in members.items()}, succs, exits


def covering_handlers(table, real, offsets) -> dict[int, int]:
    """Instruction offset -> handler offset, for the instructions the table covers."""
    out = {}
    for e in table:
        for k in range(bisect.bisect_left(offsets, e.start), bisect.bisect_left(offsets, e.end)):
            assert offsets[k] not in out, "overlapping exception-table entries"
            out[offsets[k]] = real.get(e.target, e.target)
    return out


def edges_by(cfg: CFG, end: str) -> dict[int, list]:
    out: dict[int, list] = {s: [] for s in cfg.blocks}
    for e in cfg.edges:
        out[getattr(e, end)].append(e)
    return out


def check_against_oracle(code: types.CodeType) -> CFG:
    cfg = build_cfg(code)
    starts, members, succs, exits = dis_oracle(code)
    assert list(cfg.blocks) == starts
    assert cfg.order == starts
    out_edges, in_edges = edges_by(cfg, "src"), edges_by(cfg, "dst")
    for s, blk in cfg.blocks.items():
        assert blk.start == s
        assert [i.offset for i in blk.instructions] == members[s]
        assert sorted((e.dst, e.kind) for e in out_edges[s]) == succs[s]
        assert sorted(blk.succs) == sorted(d for d, _ in succs[s])
        assert sorted(blk.preds) == sorted(e.src for e in in_edges[s])  # preds mirror succs
    assert sorted(cfg.exit_preds) == sorted(exits)
    assert {e.kind for e in cfg.edges} <= set(EDGE_KINDS)
    # reachability by breadth-first search over the oracle's edges
    seen, work = {starts[0]}, [starts[0]]
    while work:
        for d, _ in succs[work.pop()]:
            if d not in seen:
                seen.add(d)
                work.append(d)
    assert {s for s, b in cfg.blocks.items() if b.reachable} == seen
    assert sorted(cfg.reachable + cfg.unreachable) == starts
    return cfg


@pytest.mark.parametrize("name,code", CORPUS_CODES, ids=[n for n, _ in CORPUS_CODES])
def test_corpus_matches_dis_oracle(name, code, shallow_stack):
    with shallow_stack():
        build_cfg(code)
    check_against_oracle(code)


def test_stdlib_sample_matches_dis_oracle():
    for code in stdlib_code_objects(every=40):
        check_against_oracle(code)


def test_every_covered_instruction_has_an_exception_edge():
    checked = 0
    for _, code in CORPUS_CODES:
        cfg = build_cfg(code)
        exc = {(e.src, e.dst) for e in cfg.edges if e.kind == "exception"}
        ins = cfg.bytecode.instructions
        offsets = [i.offset for i in ins]
        starts = [i.start_offset for i in ins]  # an entry may name an EXTENDED_ARG prefix
        for e in dis._parse_exception_table(code):
            target = ins[bisect.bisect_right(starts, e.target) - 1].offset
            for k in range(bisect.bisect_left(offsets, e.start), bisect.bisect_left(offsets, e.end)):
                assert (cfg.block_of(offsets[k]).start, target) in exc
                checked += 1
    assert checked > 1000


def test_block_of():
    cfg = build_cfg(CORPUS["try_except_else_finally"])
    for blk in cfg.blocks.values():
        for ins in blk.instructions:
            assert cfg.block_of(ins.offset) is blk
            for off in range(ins.offset, ins.next_offset, 2):  # caches belong to their instruction
                assert cfg.block_of(off) is blk
    for bad in (-2, len(cfg.bytecode.code.co_code)):
        with pytest.raises(KeyError):
            cfg.block_of(bad)


def test_edge_kinds_appear():
    kinds = set()
    for name in ("try_except_else_finally", "while_loop", "if_elif_else"):
        kinds |= {e.kind for e in build_cfg(CORPUS[name]).edges}
    assert kinds == set(EDGE_KINDS)


def test_unreachable_blocks_are_kept_and_flagged():
    cfg = build_cfg(dead_code())
    assert list(cfg.blocks) == [0, 6]
    assert cfg.blocks[0].reachable and not cfg.blocks[6].reachable
    assert cfg.unreachable == [6] and cfg.reachable == [0]
    assert sorted(cfg.exit_preds) == [0, 6]
    assert cfg.rpo == [0]


def test_empty_and_straight_line():
    cfg = build_cfg(CORPUS["empty"])
    assert len(cfg.blocks) == 1 and not cfg.edges and cfg.exit_preds == [cfg.entry]
    assert build_cfg(decode(CORPUS["straight_line"])).entry == 0


# -- stack depths ------------------------------------------------------------


def simulate_depths(cfg: CFG) -> dict[int, int]:
    """Entry depth of each reachable block, propagating decoded stack effects along
    edges and the exception table's depths along exception edges; asserts agreement."""
    code = cfg.bytecode.code
    table = dis._parse_exception_table(code)
    offsets = [i.offset for i in cfg.bytecode.instructions]
    entry_at = {}
    for e in table:
        for k in range(bisect.bisect_left(offsets, e.start), bisect.bisect_left(offsets, e.end)):
            entry_at[offsets[k]] = e
    out_edges = edges_by(cfg, "src")
    depth_in = {cfg.entry: 0}
    work = [cfg.entry]
    while work:
        b = work.pop()
        blk = cfg.blocks[b]
        d = depth_in[b]
        for ins in blk.instructions:
            if ins.offset in entry_at:  # the handler unwinds to its depth: it must be there
                assert d >= entry_at[ins.offset].depth, (code.co_qualname, ins, d)
            if ins is not blk.instructions[-1]:
                d += ins.stack_effect
                assert 0 <= d <= code.co_stacksize, (code.co_qualname, ins, d)
        last = blk.instructions[-1]
        for e in out_edges[b]:
            if e.kind == "exception":
                entry = entry_at[last.offset]
                nd = entry.depth + entry.lasti + 1
            elif e.kind in ("jump", "branch"):
                nd = d + last.jump_stack_effect
            else:
                nd = d + last.stack_effect
            assert 0 <= nd <= code.co_stacksize, (code.co_qualname, e, nd)
            if e.dst in depth_in:
                assert depth_in[e.dst] == nd, (code.co_qualname, e, depth_in[e.dst], nd)
            else:
                depth_in[e.dst] = nd
                work.append(e.dst)
    return depth_in


@pytest.mark.parametrize("name,code", CORPUS_CODES, ids=[n for n, _ in CORPUS_CODES])
def test_stack_depths_are_consistent(name, code):
    cfg = build_cfg(code)
    depths = simulate_depths(cfg)
    assert set(depths) == set(cfg.reachable)


def test_stack_depths_stdlib_sample():
    for code in stdlib_code_objects(every=60):
        simulate_depths(build_cfg(code))
