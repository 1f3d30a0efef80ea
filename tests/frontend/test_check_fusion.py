"""Fused check ops (`frontend/regions/check_fusion.py`, `_cchecks.c`'s OP_PARAM_TYPE ...): a
run of ops made one op must decide exactly as the run does.  Oracles: the check statements
run as Python (random programs of the generated forms, on values logging every operation
made on them), the unfused program (``FUSE_OPS = False``), and the pass's own contract
(jumps, fields) checked on hand-made programs."""

from __future__ import annotations

import random

import pytest

from bcfront.cfast import C
from bcfront.frontend.regions import check_fusion, check_program
from bcfront.frontend.regions.check_fusion import FUSED, REPEATS, fuse, pack

from .check_programs import (
    GLOBALS,
    LOG,
    Logged,
    Stop,
    arguments,
    check_lines,
    needs_c_call,
    outcome,
    program,
    python_link,
)
from .check_programs import guarded as guarded_lines

needs_c_call(globals())
OP, OPS = check_program.OP, check_program.OPS


def _names(code) -> list[str]:
    return [OPS[op] for op in code[::2]]


@pytest.mark.parametrize("fused", [True, False])
def test_random_checks_fused_or_not_do_what_their_python_does(fused, monkeypatch):
    monkeypatch.setattr(check_program, "FUSE_OPS", fused)
    monkeypatch.setattr(check_program, "REUSE_READS", False)  # every read made, as Python does
    rng = random.Random(99)
    made = 0
    for _ in range(300):
        lines = check_lines(rng, rng.random() < 0.7)
        ref = python_link(lines)
        ref.__globals__["___cell"] = GLOBALS["___cell"]
        link, p = program(lines, ref)
        made += sum(name in FUSED.values() for name in _names(p.code))
        for _ in range(5):
            args = arguments(rng)
            assert outcome(link.passes, args) == outcome(ref, args), ("\n".join(lines), args)
    assert (made > 200) if fused else (made == 0)  # the fused ops are what ran


def test_every_run_of_ops_it_lists_is_made_one_op_in_place():
    for run, name in FUSED.items():
        args = list(range(1, len(run) + 1))
        fields = args
        if name in REPEATS:  # the run reads one argument twice
            (a, b), at = REPEATS[name]
            args[b] = args[a]
            fields = [args[k] for k in at]
        code = [[OP[o], arg] for o, arg in zip(run, args)] + [[OP["END"], 0]]
        assert fuse(code, OPS) == [[OP[name], pack(fields)], [OP["END"], 0]]


def test_a_run_repeating_an_argument_is_fused_only_where_it_repeats():
    # ``type(x) is int and y == 4`` is two ops, not one: the EQ reads another parameter
    code = [[OP["PARAM"], 0], [OP["ASSERT_TYPE"], 0], [OP["PARAM"], 1], [OP["ASSERT_EQ"], 1], [OP["END"], 0]]
    assert [OPS[op] for op, _ in fuse(code, OPS)] == ["PARAM_TYPE", "PARAM_EQ", "END"]
    code[2][1] = 0
    assert [OPS[op] for op, _ in fuse(code, OPS)] == ["PARAM_TYPE_EQ", "END"]


def test_a_run_a_jump_lands_inside_stays_apart_and_jumps_follow_their_ops():
    # 0 PARAM 0; 1 ASSERT_TYPE 0 (a jump lands here); 2 PARAM 1; 3 ASSERT_IS 1; 4 JUMP 1; 5 JUMP 2; 6 END
    code = [[OP["PARAM"], 0], [OP["ASSERT_TYPE"], 0], [OP["PARAM"], 1], [OP["ASSERT_IS"], 1]]
    code += [[OP["JUMP"], 1], [OP["JUMP"], 2], [OP["END"], 0]]
    out = fuse(code, OPS)
    assert [OPS[op] for op, _ in out] == ["PARAM", "ASSERT_TYPE", "PARAM_IS", "JUMP", "JUMP", "END"]
    assert out[3][1] == 1  # still the ASSERT_TYPE
    assert out[4][1] == 2  # the PARAM it jumped to is now the fused op's start


def test_a_run_whose_arguments_do_not_fit_a_field_stays_apart():
    big = 1 << check_fusion.FIELD_BITS
    code = [[OP["PARAM"], 0], [OP["ASSERT_LEN"], big], [OP["END"], 0]]
    assert fuse(code, OPS) == code
    code[1][1] = big - 1
    assert _names(tuple(x for pair in fuse(code, OPS) for x in pair)) == ["PARAM_LEN", "END"]


def test_a_listing_shows_a_fused_ops_fields():
    lines = ["    if not (___type(x) is ___int and ___box['k'] is ___none):", "        return ___miss"]
    _, p = program(lines, python_link(lines))
    shown = [line.split()[1:] for line in p.listing()]
    assert shown[0][0] == "PARAM_TYPE" and shown[0][1].count(",") == 1
    assert shown[1][0] == "CONST_ITEM_IS" and shown[1][1].count(",") == 2


def _fused_link(name, fields, consts=(int,), nlocals=0):
    ref = python_link(["    pass"])
    code = (OP[name], pack(fields), OP["END"], 0)
    return C.CheckedLink(code, consts, nlocals, 4, 2, True, True, ref, ref, ())


@pytest.mark.parametrize(
    "name, fields, nlocals",
    [
        ("PARAM_TYPE", (2, 0), 0),  # parameter out of range (two of them)
        ("PARAM_TYPE", (0, 1), 0),  # constant out of range
        ("ITEM_IS", (0, 0, 1), 0),  # a field past the op's last set
        ("LOCAL_ITEM", (1, 0), 1),  # local out of range
        ("CONST_ITEM_IS", (0, 0, 3), 0),  # the third field's constant out of range
    ],
)
def test_a_fused_op_with_a_field_out_of_range_is_refused_when_made(name, fields, nlocals):
    with pytest.raises(ValueError, match="CheckedLink"):
        _fused_link(name, fields, nlocals=nlocals)


def test_a_fused_parameter_check_reads_a_default_where_the_argument_is_missing():
    def ref(x, y=7):
        return True

    code = (OP["PARAM_EQ"], pack((1, 0)), OP["END"], 0)
    link = C.CheckedLink(code, (7,), 0, 2, 2, False, True, ref, ref, ())
    assert link.passes(1) is True
    assert link.passes(1, 8) is False


def _both_forms(body: list[str]) -> tuple[list[str], list[str]]:
    """The check statements `body` as an unguarded link has them, and as a guarded one."""
    return ["    " + b for b in body], guarded_lines(*body)


class _Compared:
    """Compared with `==`: logs it, then says `truth` -- or raises `error`."""

    def __init__(self, truth=True, error=None):
        self.truth, self.error = truth, error

    def __eq__(self, other):
        LOG.append(("compared with", other))
        if self.error is not None:
            raise self.error("eq")
        return self.truth

    __hash__ = object.__hash__


class _Raising(dict):
    """Its items raise `error`: a miss in a guarded check where an Exception, else out."""

    def __init__(self, error):
        super().__init__()
        self.error = error

    def __getitem__(self, key):
        raise self.error(f"item {key!r}")


def test_fused_reads_of_a_checks_local_and_constant_containers_do_what_python_does(monkeypatch):
    # the fused ops the random forms rarely make: a check's local's items, constants' items
    monkeypatch.setattr(check_program, "REUSE_READS", False)
    body = [
        "___v = x",
        "if not (___v['k'] is ___none and 'j' in ___box and ___type(___v[0]) is ___int):",
        "    return ___miss",
        "if not ('z' not in ___box and ___v['k'] is ___none and ___v[1] == 2 and ___v[2][0] is ___none):",
        "    return ___miss",
        "if not (___type(___box['k']) is ___int and ___box['k'] == 1 and ___int.__name__ == 'int'):",
        "    return ___miss",
        "if not (___type(y) is ___int and y == 0):",
        "    return ___miss",
        "if not (___type(___v) is ___type(x) and ___len(___v) >= 0 and x[1] == 2):",
        "    return ___miss",
        "if not ((___w := x[0]) is not None and ___type(___w) is ___int and ___len(___v) == 4):",
        "    return ___miss",
    ]
    for lines in _both_forms(body):
        ref = python_link(lines)
        link, p = program(lines, ref)
        made = {"LOCAL_ITEM_IS", "LOCAL_ITEM_TYPE", "LOCAL_ITEM_EQ", "LOCAL_ITEM", "CONST_NOT_IN"}
        made |= {"CONST_ITEM_TYPE", "CONST_ITEM_EQ", "CONST_ATTR", "PARAM_TYPE_EQ"}
        made |= {"PARAM_ITEM", "KEEP", "LOCAL_TYPE", "LOCAL_LEN"}
        assert made <= set(_names(p.code))
        values = [{"k": None, 0: 1, 1: 2, 2: [None]}, {"k": None, 0: 1, 1: 2, 2: [1]}]
        values += [{"k": None, 0: None, 1: 2, 2: [None]}]
        values += [{"k": None, 0: "a", 1: 2}, {"k": 0}, [1, 2], None]
        values += [Logged("v", None, True, 2), Logged("v", ValueError), Logged("v", Stop)]
        values += [_Raising(ValueError), _Raising(Stop)]  # (Logged's raises follow the str hash seed)
        seen = set()
        for x in values:
            for y in (0, None, 0.0, 1):
                want = outcome(ref, (x, y))
                assert outcome(link.passes, (x, y)) == want, ("\n".join(lines), x, y)
                seen.add(want[0] if want[0] in ("pass", "miss") else "escape")
        assert seen == {"pass", "miss", "escape"}


@pytest.mark.parametrize("fused", [True, False])
def test_a_lists_items_checked_by_value_or_type_are_one_op_that_does_what_the_call_does(fused, monkeypatch):
    # ``___items_are(x, ...)`` and ``___items_of_type(x, t) is True`` (`guard_batches`,
    # `sources`) are ASSERT_ITEMS / ASSERT_ITEMS_TYPE (fused with the parameter's read), no
    # CALL; oracle: the Python link, which makes the call itself
    monkeypatch.setattr(check_program, "FUSE_OPS", fused)
    monkeypatch.setattr(check_program, "REUSE_READS", False)
    scope = {"___items_are": C.items_are, "___items_of_type": C.items_of_type}
    scope["___types"], scope["___values"] = (int, str, _Compared, float), (1, "a", None, 2.5)
    scope["___ints"] = (int,)
    body = [
        "if not (___items_are(x, (0, 1, 2, -1, ), ___types, ___values)):",
        "    return ___miss",
        "if not (___items_of_type(y, ___int) is True and ___items_are(args[0], (0, ), ___ints, (3, ))):",
        "    return ___miss",
    ]
    for lines in _both_forms(body):
        ref = python_link(lines)
        ref.__globals__.update(scope)
        link, p = program(lines, ref)
        names = set(_names(p.code))
        assert "CALL" not in names
        want = (
            {"PARAM_ITEMS", "PARAM_ITEMS_TYPE", "ASSERT_ITEMS"}
            if fused
            else {"ASSERT_ITEMS", "ASSERT_ITEMS_TYPE"}
        )
        assert want <= names
        nan = float("nan")
        i, L = _Compared(), type("L", (list,), {})
        xs = [[1, "a", i, 2.5], (1, "a", i, 2.5), [1, "a", _Compared(False), 2.5], [1, "a", Logged("i"), 2.5]]
        xs += [
            [1, "a", _Compared(error=ValueError), 2.5],
            [1, "a", _Compared(error=Stop), 2.5],
            [1, "a", 2.5],
        ]
        xs += [[True, "a", i, 2.5], [1, "b", i, 2.5], [1, "a", i, nan], [1, "a", i, 2.5, 2.5]]
        xs += [[1, "a"], [], None, Logged("x"), L([1, "a", i, 2.5])]
        ys = [[1, 2], [1, 3], [1, True, 3], [], (1, 3), [1.0, 3], None, L([1, 3])]
        seen = set()
        for x in xs:
            for y in ys:
                for rest in ((), ([3],), ([4],), ([],), ((3,),)):
                    want_out = outcome(ref, (x, y, *rest))
                    assert outcome(link.passes, (x, y, *rest)) == want_out, ("\n".join(lines), x, y, rest)
                    seen.add(want_out[0] if want_out[0] in ("pass", "miss") else "escape")
        assert seen == {"pass", "miss", "escape"}


def test_a_lists_first_items_in_order_are_read_as_the_call_reads_them():
    # indices 0, 1, ... in order: the op reads the items without an index each, and skips the
    # comparison where an item is its value itself and of a type whose identity is equality
    # (int, str, bytes); oracle: the Python link, calling ``items_are`` with the indices
    big, text = 10**30, "".join(["ab", "c"])
    scope = {"___items_are": C.items_are, "___big": big, "___text": text}
    scope["___types"] = (int, str, bytes, float, int, _Compared)
    scope["___values"] = (7, text, b"b", 2.5, big, None)
    body = ["if not (___items_are(x, (0, 1, 2, 3, 4, 5, ), ___types, ___values)):", "    return ___miss"]
    for lines in _both_forms(body):
        ref = python_link(lines)
        ref.__globals__.update(scope)
        link, p = program(lines, ref)
        assert any(type(k) is tuple and len(k) == 3 and k[0] is None for k in p.consts)  # in order
        i, nan, MyInt = _Compared(), float("nan"), type("MyInt", (int,), {})
        same = [7, text, b"b", 2.5, big, i]
        equal = [int("7"), "".join(["a", "bc"]), bytes([98]), 2.5, 10**30 + 0 * len(same), i]
        assert equal[4] is not big and equal[1] is not text  # compared, not identical
        xs = [same, equal, tuple(same), [7.0, *same[1:]], [True, *same[1:]], [MyInt(7), *same[1:]]]
        xs += [[7, "abd", *same[2:]], [7, text, b"c", *same[3:]], [*same[:3], nan, *same[4:]]]
        xs += [[*same[:4], big + 1, i], [*same[:5], _Compared(False)], [*same[:5], _Compared(error=Stop)]]
        xs += [same[:5], [], same + [1], None]
        seen = set()
        for x in xs:
            want = outcome(ref, (x, None))
            assert outcome(link.passes, (x, None)) == want, ("\n".join(lines), x)
            seen.add(want[0] if want[0] in ("pass", "miss") else "escape")
        assert seen == {"pass", "miss", "escape"}
    # a NaN is itself and not equal to itself: identity decides only for int, str, bytes
    nan = float("nan")
    body = ["if not (___items_are(x, (0, ), ___floats, ___nans)):", "    return ___miss"]
    for lines in _both_forms(body):
        ref = python_link(lines)
        ref.__globals__.update({"___items_are": C.items_are, "___floats": (float,), "___nans": (nan,)})
        link, p = program(lines, ref)
        assert "CALL" not in _names(p.code)
        for x in ([nan], [float("nan")], (nan,)):
            assert outcome(link.passes, (x, None)) == outcome(ref, (x, None)) == ("miss", [], [0, 0])
