"""decode: every field against `dis`, the exception table against
`dis._parse_exception_table`, bad input, and code objects of other versions."""

from __future__ import annotations

import dis
import functools
import importlib
import random
import sys
import types

import pytest
from corpus import CORPUS, corpus_code_objects, stdlib_code_objects

from bcfront.analysis.decode import (
    BytecodeVersionError,
    Instr,
    code_of,
    decode,
    guess_version,
    parse_exception_table,
)
from bcfront.analysis.versions import TABLES

PY = sys.version_info[:2]
HERE = f"{PY[0]}.{PY[1]}"
CORPUS_CODES = corpus_code_objects()

# Jumps as dis knows them (hasjump on 3.13, hasjrel/hasjabs before): an independent list.
DIS_JUMPS = frozenset(getattr(dis, "hasjump", dis.hasjrel + dis.hasjabs))


def dis_reference(code: types.CodeType) -> list[dict]:
    """What each folded instruction must be, computed from dis alone.

    EXTENDED_ARG rows are dropped (their offsets become the next instruction's
    start_offset), a jump aimed at a prefix is aimed at the instruction it
    extends, and next_offset is the next row's offset (dis hides caches).
    """
    rows = list(dis.get_instructions(code))
    real_after: dict[int, int] = {}
    pending: list[int] = []
    out = []
    for r in rows:
        if r.opname == "EXTENDED_ARG":
            pending.append(r.offset)
            continue
        for p in pending:
            real_after[p] = r.offset
        out.append({"row": r, "start_offset": pending[0] if pending else r.offset})
        pending = []
    for i, ref in enumerate(out):
        r = ref["row"]
        ref["next_offset"] = out[i + 1]["start_offset"] if i + 1 < len(out) else len(code.co_code)
        ref["next_offset"] = real_after.get(ref["next_offset"], ref["next_offset"])
        target = r.argval if r.opcode in DIS_JUMPS else None
        ref["jump_target"] = real_after.get(target, target)
        ref["argrepr"] = f"to {r.argval}" if PY >= (3, 13) and r.opcode in DIS_JUMPS else r.argrepr
    return out, real_after


def same_value(a, b) -> bool:
    return a is b or (type(a) is type(b) and a == b) or (a != a and b != b)


def check_against_dis(code: types.CodeType) -> None:
    bc = decode(code)
    ref, real_after = dis_reference(code)
    assert len(bc.instructions) == len(ref), code
    for ins, x in zip(bc.instructions, ref):
        r = x["row"]
        assert (ins.offset, ins.opname, ins.opcode, ins.arg) == (r.offset, r.opname, r.opcode, r.arg)
        assert same_value(ins.argval, r.argval), (ins, r)
        assert ins.argrepr == x["argrepr"], (ins, r)
        assert tuple(ins.positions) == tuple(r.positions), (ins, r)
        assert ins.lineno == r.positions.lineno and ins.end_col == r.positions.end_col_offset
        assert ins.start_offset == x["start_offset"]
        assert ins.next_offset == x["next_offset"]
        assert ins.jump_target == x["jump_target"]
        if r.opname == "RETURN_GENERATOR":  # normalized to 3.13's +1 (decode's version table)
            assert ins.stack_effect == 1
        else:
            assert ins.stack_effect == dis.stack_effect(r.opcode, r.arg, jump=False)
        if r.opcode in DIS_JUMPS:
            assert ins.jump_stack_effect == dis.stack_effect(r.opcode, r.arg, jump=True)
        else:
            assert ins.jump_stack_effect is None
    ref_table = dis._parse_exception_table(code)
    assert [(e.start, e.end, e.target, e.depth, e.lasti) for e in bc.exception_table] == [
        (real_after.get(e.start, e.start), e.end, real_after.get(e.target, e.target), e.depth, e.lasti)
        for e in ref_table
    ]


@pytest.mark.parametrize("name,code", CORPUS_CODES, ids=[n for n, _ in CORPUS_CODES])
def test_corpus_matches_dis(name, code, shallow_stack):
    with shallow_stack():
        decode(code)
    check_against_dis(code)


def test_stdlib_sample_matches_dis():
    codes = stdlib_code_objects(every=40)
    assert len(codes) > 1000
    for code in codes:
        check_against_dis(code)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # every code object of the standard library: minutes
def test_all_of_stdlib_matches_dis():
    for code in stdlib_code_objects():
        check_against_dis(code)


def test_extended_arg_is_folded():
    for name in ("far_jumps", "many_constants"):
        bc = decode(CORPUS[name])
        raw_ext = sum(1 for r in dis.get_instructions(CORPUS[name]) if r.opname == "EXTENDED_ARG")
        assert raw_ext > 0
        assert all(i.opname != "EXTENDED_ARG" for i in bc.instructions)
        prefixed = [i for i in bc.instructions if i.start_offset < i.offset]
        assert sum((i.offset - i.start_offset) // 2 for i in prefixed) == raw_ext
        assert all(i.arg > 255 for i in prefixed if i.arg is not None)
        starts = {i.offset for i in bc.instructions}
        assert all(i.jump_target in starts for i in bc.instructions if i.jump_target is not None)
    far = decode(CORPUS["far_jumps"])
    assert any(i.jump_target is not None and i.start_offset < i.offset for i in far.instructions)


def test_fast_and_careful_paths_agree():
    mod = importlib.import_module("bcfront.analysis.bytecode")
    compared = 0
    for _, code in CORPUS_CODES:
        pos = mod._positions(code, len(code.co_code) // 2)
        fast = mod._instructions_from_columns(code, code.co_code, code.co_code[0::2], pos)
        slow = tuple(mod._instructions_one_by_one(code, code.co_code, pos))
        if dis.EXTENDED_ARG in code.co_code[0::2]:
            assert fast is None  # prefixes are the careful loop's job
        else:
            assert fast == slow
            compared += 1
    assert compared > 30


NORMALIZED = {
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}


def test_normalized_op():
    seen = set()
    for _, code in CORPUS_CODES:
        for ins in decode(code).instructions:
            want = NORMALIZED.get(ins.opname, ins.opname)
            if ins.opname == "LOAD_ATTR" and PY >= (3, 12) and ins.arg & 1:
                want = "LOAD_METHOD"
            assert ins.op == want, ins
            seen.add(ins.op)
            assert ins.is_jump == (want == "JUMP")
            assert ins.is_terminator == (
                ins.opname in ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")
            )
    assert {"JUMP", "POP_JUMP_IF_FALSE", "LOAD_METHOD"} <= seen


def test_bytecode_lookups():
    bc = decode(CORPUS["try_except_else_finally"])
    for i, ins in enumerate(bc.instructions):
        assert bc.index_of(ins.offset) == i and bc.at(ins.offset) is ins
        covering = [e for e in bc.exception_table if e.start <= ins.offset < e.end]
        assert bc.handler_for(ins.offset) == (covering[0] if covering else None)
        assert len(covering) <= 1  # CPython's table never overlaps
    with pytest.raises(KeyError):
        bc.index_of(1)
    assert bc.handler_for(10**6) is None


def test_exception_table_parser_matches_dis():
    for _, code in CORPUS_CODES:
        mine = [(e.start, e.end, e.target, e.depth, e.lasti) for e in parse_exception_table(code)]
        assert mine == [tuple(e) for e in dis._parse_exception_table(code)]


def test_instr_is_immutable_and_comparable():
    a = decode(CORPUS["straight_line"]).instructions
    b = decode(CORPUS["straight_line"]).instructions
    assert a == b and isinstance(a[0], Instr)
    with pytest.raises(AttributeError):
        a[0].offset = 3
    assert "RESUME" in repr(a[0])


# -- what callers pass ------------------------------------------------------------


class _Widget:
    def method(self):
        return 1


def _decorated():
    @functools.wraps(_Widget.method)
    def wrapper(*args):
        return args

    return wrapper


@pytest.mark.parametrize(
    "obj,needle",
    [
        (len, "built-in len"),
        ([].append, "built-in"),
        (int, "class int"),
        (_Widget, "class _Widget"),
        (3, "non-callable int"),
        ("text", "non-callable str"),
        (functools.partial(print, 1), "partial"),
        (None, "NoneType"),
    ],
)
def test_bad_input_raises_type_error(obj, needle):
    with pytest.raises(TypeError, match="Python function or code object") as err:
        decode(obj)
    assert needle in str(err.value)


def test_accepted_callables():
    w = _Widget()
    assert code_of(w.method) is _Widget.method.__code__
    assert code_of(_Widget.method) is _Widget.method.__code__
    assert code_of(_decorated()) is _decorated().__code__  # wraps sets __wrapped__; the wrapper wins
    assert code_of(CORPUS["empty"].__code__) is CORPUS["empty"].__code__
    assert decode(lambda: 0).instructions


# -- code objects of other CPython versions -----------------------------------------
# co_code of the four functions below as 3.11.7, 3.12.1 and 3.13.0 compile them
# (PYENV_VERSION=3.12.1 python -c '... print(f.__code__.co_code.hex())').


def foreign_loop(xs):
    t = 0
    for x in xs:
        if x > 1:
            t += x
    return t


def foreign_gen(n):
    try:
        yield n
    except ValueError:
        pass


def foreign_calls(o):
    return o.method(1, k=2), len(o), o[1:2]


def foreign_with(cm, d):
    with cm as c:
        return {k: v for k, v in d.items() if k is not c}


FOREIGN = {
    "3.11": {
        "foreign_loop": "970064017d017c0044005d0d7d027c0264026b040000000072057c017c027a0d00007d018c0e7c015300",
        "foreign_gen": "4b000100970009007c005600970101006400530023007400000000000000000000002400720401005900640053007700780359007701",
        "foreign_calls": "97007c00a000000000000000000000000000000000000000000064016402ac03a6020000ab0200000000000000007403000000000000000000007c00a6010000ab0100000000000000007c006401640285021900000000000000000066035300",
        "foreign_with": "870297007c0035008a0288026601640184087c01a0000000000000000000000000000000000000000000a6000000ab0000000000000000004400a6000000ab0000000000000000006302640064006400a6020000ab020000000000000000010053002300310073047702780359007701010059000100010064005300",
    },
    "3.12": {
        "foreign_loop": "970064017d017c0044005d0d00007d027c0264026b44000073018c097c017c027a0d00007d018c0f04007c015300",
        "foreign_gen": "4b000100970009007c009602970101007900230074000000000000000000240072030100590079007700780359007701ad037701",
        "foreign_calls": "97007c006a0100000000000000000000000000000000000064016402ac03ab02000000000000740300000000000000007c00ab010000000000007c00640164021a0066035300",
        "foreign_with": "97007c0035007d027c016a01000000000000000000000000000000000000ab0000000000000044008f038f046303690063025d0d00005c0200007d037d047c037c02750173018c0b7c037c0493028c0f040063037d047d036302640064006400ab02000000000000010053006302010063037d047d037700230031007301770201005900010001007900780359007701",
    },
    "3.13": {
        "foreign_loop": "950053016e0155001300480f00006e02550253023a940000640200004d0b000058122d0d00006e014d1100000b00200055012400",
        "foreign_gen": "2300200095001e005500760095012000670021005b00000000000000000007006103000020001f00670066003d031f00660137036601",
        "foreign_calls": "95005500520100000000000000000000000000000000000053015302530339025b03000000000000000055003501000000000000550053015302040034032400",
        "foreign_with": "9500550002006e02550152010000000000000000000000000000000000003500000000000000130056035604730330007302480d000075020000703458324c01640200004d0b000058345f024d0f00000b00200073036e046e0373025300530053003502000000000000200024007302200073036e046e03660021002c00280000000000000064010000660220001f002000200067003d031f006601",
    },
}


def _foreign_cases():
    fns = {f.__name__: f for f in (foreign_loop, foreign_gen, foreign_calls, foreign_with)}
    for version, codes in FOREIGN.items():
        if version == HERE:
            continue
        for name, hexcode in codes.items():
            yield pytest.param(version, fns[name], bytes.fromhex(hexcode), id=f"{version}-{name}")


@pytest.mark.parametrize("version,fn,raw", list(_foreign_cases()))
def test_foreign_bytecode_names_both_versions(version, fn, raw):
    assert raw != fn.__code__.co_code
    foreign = fn.__code__.replace(co_code=raw)
    with pytest.raises(BytecodeVersionError) as err:
        decode(foreign)
    msg = str(err.value)
    assert f"CPython {HERE}" in msg and f"CPython {version}" in msg, msg
    assert version in guess_version(foreign)
    assert isinstance(err.value, ValueError)  # callers catching ValueError still do


def test_own_bytecode_from_the_tables_decodes():
    # the shipped table of the running version is the one dis has
    have_arg, table = TABLES[PY]
    assert have_arg == dis.HAVE_ARGUMENT
    for name, (code, _caches) in table.items():
        assert dis.opmap[name] == code
    real = {n for n, c in dis.opmap.items() if c < 256 and not n.startswith("INSTRUMENTED_")}
    assert set(table) == real


def test_missing_resume_is_a_version_error():
    def f(x):
        return x

    code = f.__code__
    units = bytearray(code.co_code)
    i = next(r.offset for r in dis.get_instructions(code) if r.opname == "RESUME")
    units[i] = dis.opmap["LOAD_FAST"]  # RESUME 0 -> LOAD_FAST 0
    with pytest.raises(BytecodeVersionError, match=f"CPython {HERE}.*RESUME"):
        decode(code.replace(co_code=bytes(units)))


def test_invalid_opcode_and_bad_jump_are_version_errors():
    def f(x):
        while x:
            x -= 1
        return x

    code = f.__code__
    unknown = next(c for c in range(1, 256) if dis.opname[c].startswith("<"))
    units = bytearray(code.co_code)
    units[-2] = unknown
    with pytest.raises(BytecodeVersionError, match=f"CPython {HERE}"):
        decode(code.replace(co_code=bytes(units)))
    jump = next(r for r in dis.get_instructions(code) if r.opcode in DIS_JUMPS)
    units = bytearray(code.co_code)
    units[jump.offset + 1] += 1 if "BACKWARD" not in jump.opname else -1
    bad = code.replace(co_code=bytes(units))
    targets = {r.offset for r in dis.get_instructions(code)}
    new_target = next(r.argval for r in dis.get_instructions(bad) if r.offset == jump.offset)
    if new_target not in targets:  # the nudged jump now lands inside an instruction
        with pytest.raises(BytecodeVersionError, match="jumps to"):
            decode(bad)


def test_arguments_past_shortened_tables_are_refused_exactly_where_dis_fails():
    # decode checks every argument against the table it indexes (constants, names,
    # fast locals) without resolving each one; dis resolves them all, so it is the
    # oracle: shortening a table is refused exactly when dis cannot decode the result
    refused = 0
    for _, code in CORPUS_CODES:
        for field in ("co_consts", "co_names", "co_varnames"):
            table = getattr(code, field)
            if not table or (
                field == "co_varnames" and (code.co_argcount or code.co_cellvars or code.co_kwonlyargcount)
            ):
                continue
            changes = {field: table[:-1]}
            if field == "co_varnames":
                changes["co_nlocals"] = len(table) - 1
            short = code.replace(**changes)
            try:
                list(dis.get_instructions(short))
            except IndexError:
                refused += 1
                with pytest.raises(BytecodeVersionError, match="index out of range"):
                    decode(short)
            else:
                decode(short)
    assert refused > 20


def test_replaced_code_of_another_length_is_caught():
    def f(x):
        return x

    code = f.__code__
    longer = code.co_code[:-2] + bytes([dis.opmap["NOP"], 0]) + code.co_code[-2:]
    with pytest.raises(BytecodeVersionError, match="line table"):
        decode(code.replace(co_code=longer))
    # without a line table the same code is fine (positions are unknown)
    ok = decode(code.replace(co_code=longer, co_linetable=b""))
    assert all(i.lineno is None for i in ok.instructions)


def test_hot_code_still_decodes():
    # running a function quickens and specializes its bytecode in place (caches fill
    # with counters and type versions); co_code and the decode do not change
    class P:
        def __init__(self):
            self.x = 1

    def hot(objs, d):
        t = 0
        for o in objs:
            t += o.x + d["k"] + len(objs)
            if t > 10**9:
                t = 0
        return t

    before = decode(hot).instructions
    objs = [P() for _ in range(50)]
    for _ in range(400):
        hot(objs, {"k": 2})
    assert hot.__code__._co_code_adaptive != hot.__code__.co_code  # it was quickened
    assert decode(hot).instructions == before
    check_against_dis(hot.__code__)


def test_code_assembled_by_the_bytecode_library_with_wide_columns_decodes():
    """The `bytecode` library (which builds bcfront's continuations) writes one-line location
    entries with columns >= 128, which CPython's compiler never does; the fast count of the
    units a line table covers must not take those bytes for entry headers (MHA.forward's
    continuations were rejected as foreign bytecode)."""
    bytecode = pytest.importorskip("bytecode")
    pad = " " * 150
    ns = {}
    exec(f"def wide(a, b):\n    x = {pad}(a + b) * (a - b) + a\n    return x\n", ns)
    code = bytecode.Bytecode.from_code(ns["wide"].__code__).to_code()
    # this is the case the fast count gets wrong: a byte >= 128 after an entry's first byte
    assert len(list(code.co_positions())) == len(code.co_code) // 2
    bc = decode(code)
    assert [i.opname for i in bc.instructions] == [i.opname for i in dis.get_instructions(code)]


def test_byte_sum_is_exact_across_slices():
    # adler32 sums bytes modulo 65521, exactly only up to a bound: longer data goes in
    # slices; the oracles are sum() and the plain reference, at and around the slice
    # boundaries
    from bcfront.analysis.columns import byte_sum, byte_sum_reference

    rng = random.Random(7)
    for top in (1, 8, 11, 255):
        step = 65519 // top
        for n in (0, 1, step - 1, step, step + 1, 2 * step, 3 * step + 5):
            for data in (bytes([top]) * n, bytes(rng.randrange(top + 1) for _ in range(n))):
                assert byte_sum(data, top) == sum(data) == byte_sum_reference(data), (top, n)


def _varint(value: int, row_start: bool) -> bytes:
    """One number of co_exceptiontable: six-bit groups, big end first, bit 6 on all but the
    last, bit 7 on a row's first byte (written here from the format, not by the parser)."""
    groups = [value & 63]
    value >>= 6
    while value:
        groups.append(value & 63)
        value >>= 6
    groups.reverse()
    out = bytes(g | 64 for g in groups[:-1]) + bytes(groups[-1:])
    return bytes([out[0] | 128]) + out[1:] if row_start else out


def test_exception_table_parser_matches_dis_on_long_numbers():
    # numbers of one, two, three and four six-bit groups (code units past 64, 4096, 262144)
    rng = random.Random(3)
    code = CORPUS_CODES[0][1]
    for _ in range(200):
        rows = [
            [rng.choice((rng.randrange(64), rng.randrange(4096), rng.randrange(300_000))) for _ in range(4)]
            for _ in range(rng.randrange(1, 6))
        ]
        table = b"".join(_varint(v, k == 0) for row in rows for k, v in enumerate(row))
        short = code.replace(co_exceptiontable=table)
        mine = [(e.start, e.end, e.target, e.depth, e.lasti) for e in parse_exception_table(short)]
        assert mine == [tuple(e) for e in dis._parse_exception_table(short)]
    stdlib = [c for c in stdlib_code_objects(every=40) if c.co_exceptiontable]
    assert len(stdlib) > 100
    for code in stdlib:
        mine = [(e.start, e.end, e.target, e.depth, e.lasti) for e in parse_exception_table(code)]
        assert mine == [tuple(e) for e in dis._parse_exception_table(code)]


def test_exception_table_cut_short_is_a_version_error():
    # a table ends with the last byte of a row's fourth number: cut inside a number
    # (its last byte has bit 6 set, more follows) or between rows, it cannot be CPython's
    code = next(c for _, c in CORPUS_CODES if len(c.co_exceptiontable) > 8)
    table = code.co_exceptiontable
    for cut in range(1, len(table)):
        short = table[:cut]
        whole_rows = (
            sum(1 for b in short if b & 128) * 4 == sum(1 for b in short if not b & 64) and not short[-1] & 64
        )
        if whole_rows:
            continue  # a shorter table of whole rows: fine as far as the parser knows
        with pytest.raises(BytecodeVersionError, match=f"CPython {HERE}"):
            decode(code.replace(co_exceptiontable=short))


def test_huge_line_table_and_size_sums_are_counted_in_slices():
    # the line table's and the instruction sizes' byte sums run over slices past a bound;
    # a function that long still decodes, and one unit more is still caught
    from bcfront.analysis.opcodes import MAX_SIZE

    code = decode(CORPUS["huge_function"]).code
    # (`columns.byte_sum` sums at most (65521 - 2) // top bytes at one go)
    assert len(code.co_linetable) > 65519 // 8 and len(code.co_code) // 2 > 65519 // MAX_SIZE
    assert len(list(code.co_positions())) == len(code.co_code) // 2
    longer = code.co_code[:-2] + bytes([dis.opmap["NOP"], 0]) + code.co_code[-2:]
    with pytest.raises(BytecodeVersionError, match="line table"):
        decode(code.replace(co_code=longer))


def test_table_entries_off_the_instructions_are_refused():
    # the column decoder checks that every exception-table entry starts and lands on an
    # instruction (dis's offsets are the oracle) before it accepts bytecode without asking
    # check_structure; an entry moved onto a cache unit or past the end is another
    # version's table, named as such
    def f(x):
        try:
            return x.attr + len(x)
        except AttributeError:
            return None

    code = f.__code__
    starts = {r.offset for r in dis.get_instructions(code)}
    (entry, *rest) = dis._parse_exception_table(code)
    off = next(o for o in range(entry.start, entry.end, 2) if o not in starts)  # a cache unit
    moved = 0
    for start, target in ((off, entry.target), (entry.start, off), (entry.start, len(code.co_code))):
        rows = [(start, entry.end, target, entry.depth, entry.lasti)]
        rows += [(e.start, e.end, e.target, e.depth, e.lasti) for e in rest]
        table = b"".join(
            _varint(v, k == 0)
            for s, e, t, d, lasti in rows
            for k, v in enumerate((s // 2, (e - s) // 2, t // 2, 2 * d + lasti))
        )
        with pytest.raises(BytecodeVersionError, match="does not fit the instructions"):
            decode(code.replace(co_exceptiontable=table))
        moved += 1
    assert moved == 3
    assert decode(code).exception_table  # the real table is fine
