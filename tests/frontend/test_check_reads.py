"""A check program's reads made once (`check_program.REUSE_READS`): a read the checks spell
again reuses what its first, unconditional, making found.  References: the same checks as
Python (the link), and the program that re-reads each one (`REUSE_READS` off)."""

from __future__ import annotations

import random
import types

import pytest

from bcfront import fast_call
from bcfront.frontend.regions import check_program

from .check_programs import (
    GLOBALS,
    LOG,
    MISS,
    arguments,
    check_statements,
    guarded,
    link_of,
    outcome,
    program,
    python_link,
)

pytestmark = pytest.mark.skipif(not fast_call.HAVE_C, reason="no C call (test_check_program says why)")

NS = types.SimpleNamespace


def kept(p) -> int:
    """How many of the program's ops read a kept read back (LOCAL, or a fused op starting with it)."""
    return sum(1 for line in p.listing() if line.split()[1].startswith("LOCAL"))


def test_a_read_spelled_again_is_made_once():
    lines = guarded(
        "if not (___box['j'].a.b == 1",
        "        and ___box['j'].a.b.c == 1",
        "        and ___box['j'].a.b.d == 1):",
        "    return ___miss",
    )
    ref = python_link(lines)
    link, p = program(lines, ref)
    assert kept(p) == 2
    assert outcome(link.passes, [0, 0])[0] == outcome(ref, [0, 0])[0] == "pass"
    LOG.clear()
    link.passes(0, 0)
    assert LOG.count(("box.j", "attr a")) == 1  # the link reads it three times
    assert LOG.count(("box.j.a", "attr b")) == 1


def test_a_read_made_on_some_paths_only_is_made_again_after_them():
    tree = {"k": NS(a=NS(b=NS(c=1)))}
    for test in (
        "(x is None or ___d['k'].a.b.c == 1) and ___d['k'].a.b.c == 1 and ___d['k'].a.b.c == 1",
        "(x is None or (x == 0 and ___d['k'].a.b.c == 1)) and ___d['k'].a.b.c == 1 and ___d['k'].a.b.c == 1",
        "((x is None and ___d['k'].a.b.c) or 1) and ___d['k'].a.b.c == 1 and ___d['k'].a.b.c == 1",
    ):
        lines = guarded(f"if not ({test}):", "    return ___miss")
        ref, (link, p) = link_of(lines, {"___d": tree})
        assert kept(p) >= 1
        for x in (None, 0, 2):
            assert link.passes(x) == (ref(x) is True), (test, x)
    # and a memo-like block's body: run on some calls only
    lines = guarded(
        "if not (x is None):",
        "    if not (___d['k'].a.b.c == 1 and ___d['k'].a.b.c == 1):",
        "        return ___miss",
        "if not (___d['k'].a.b.c == 1 and ___d['k'].a.b.c == 1):",
        "    return ___miss",
    )
    ref, (link, p) = link_of(lines, {"___d": tree})
    for x in (None, 0):
        assert link.passes(x) is True and ref(x) is True


def test_a_store_into_what_a_kept_read_reads_makes_it_again():
    box = {"j": NS(a=NS(a=2))}
    lines = guarded(
        "if not (___box['j'].a.a is not None and ___box['j'].a.a is not None):",
        "    return ___miss",
        "___box['j'] = x",
        "if not (___box['j'].a.a == 1 and ___box['j'].a.a == 1):",
        "    return ___miss",
    )
    ref, (link, p) = link_of(lines, {"___box": box})
    assert link.passes(NS(a=NS(a=1))) is True and ref(NS(a=NS(a=1))) is True
    box["j"] = NS(a=NS(a=2))
    assert link.passes(NS(a=NS(a=3))) is False and ref(NS(a=NS(a=3))) is MISS


def test_a_weak_referents_read_is_made_once_and_follows_its_object():
    class Member:
        pass

    m = Member()
    m._value_ = 2
    scope = {"___m": __import__("weakref").ref(m), "___int": int, "___type": type}
    test = "___type(___m()._value_) is ___int and ___m()._value_ == 2"
    lines = guarded(f"if not ({test}):", "    return ___miss")
    ref, (link, p) = link_of(lines, scope)
    assert kept(p) == 1
    assert link.passes(0) is True
    m._value_ = 3
    assert link.passes(0) is False and ref(0) is MISS
    del m
    assert link.passes(0) is False and ref(0) is MISS  # dead: None has no _value_


def repeated_lines(rng, guarded_):
    """Checks over a few deep sources, each spelled in several conjuncts (some under an
    ``or``), with a memo-like block and a store between them (`check_statements`)."""
    pool = [f"{rng.choice(['x', 'y', '___box', '___mod'])}" for _ in range(3)]
    pool = [s + "".join(rng.choice([".a", "['k']", "[0]"]) for _ in range(rng.randrange(2, 4))) for s in pool]

    def conj():
        s = rng.choice(pool)
        form = rng.choice([f"{s} == 1", f"{s} is not None", f"___len({s}) == 2", f"'k' in {s}", f"{s}"])
        return f"(x is None or {form})" if rng.random() < 0.2 else form

    def memo():
        if rng.random() < 0.5:
            return f"___f({rng.choice(pool)})", " and ".join(conj() for _ in range(3))
        return None

    def conjunction(lines):
        return " and ".join(conj() for _ in range(rng.randrange(2, 6)))

    return check_statements(rng, guarded_, conjunction, memo)


@pytest.mark.parametrize("guarded_", [True, False])
def test_random_checks_with_reads_made_once_decide_as_their_python(guarded_, monkeypatch):
    # Logged values fail and answer the same each time an operation is made on them: the
    # program that reads once decides, and lets out, what the link (and the re-reading
    # program) does; only the log, which counts the reads, is shorter
    rng = random.Random(77 + guarded_)
    reused = 0
    for _ in range(300):
        lines = repeated_lines(rng, guarded_)
        ref = python_link(lines)
        ref.__globals__["___cell"] = GLOBALS["___cell"]
        link, p = program(lines, ref)
        monkeypatch.setattr(check_program, "REUSE_READS", False)
        every, _ = program(lines, ref)
        monkeypatch.undo()
        reused += kept(p) > 0
        for _ in range(4):
            args = arguments(rng)
            want, want_log, want_cell = outcome(ref, args)
            for fn in (link.passes, every.passes):
                got, log, cell = outcome(fn, args)
                assert (got, cell) == (want, want_cell), ("\n".join(lines), args)
                assert set(log) <= set(want_log) and len(log) <= len(want_log)
    assert reused >= 100


@pytest.mark.parametrize("n", [7, 20, 40])  # kept in the C call's own locals, then in memory
def test_many_kept_reads_decide_as_their_python(n):
    tree = {f"k{i}": NS(a=NS(b=i)) for i in range(n)}
    test = " and ".join(f"___d['k{i}'].a.b == {i} and ___d['k{i}'].a.b >= 0" for i in range(n))
    lines = guarded(f"if not (x is not None and {test}):", "    return ___miss")
    ref, (link, p) = link_of(lines, {"___d": tree})
    assert p.nlocals >= n
    assert link.passes(0) is True and ref(0) is True
    tree[f"k{n - 1}"].a.b = -1
    assert link.passes(0) is False and ref(0) is MISS


# -- checks of constants left out (`FOLD_CONSTANT_CHECKS`) -----------------------------------


class Plain:
    pass


class Other:
    pass


def test_checks_of_immutable_constants_true_when_made_are_left_out():
    scope = {"___t": (None, 3, "s"), "___tuple": tuple, "___type": type, "___len": len, "___int": int}
    test = (
        "___type(___t) is ___tuple and ___len(___t) == 3 and ___t[0] is None and ___t[1] == 3"
        " and ___type(___t[1]) is ___int and ___t[-1] == 's' and x is not None"
    )
    ref, (link, p) = link_of(guarded(f"if not ({test}):", "    return ___miss"), scope)
    assert [line.split()[1] for line in p.listing()] == ["PARAM", "ASSERT_IS_NOT", "END"]
    for x in (0, None):
        assert link.passes(x) == (ref(x) is True)


def test_checks_of_constants_that_can_change_or_fail_are_kept():
    k, items = Plain(), [1, 2]
    scope = {"___k": k, "___Plain": Plain, "___items": items, "___type": type, "___len": len}
    scope["___nan"] = float("nan")
    for test, change in (
        ("___type(___k) is ___Plain", lambda: setattr(k, "__class__", Other)),  # a class assignable
        ("___len(___items) == 2", lambda: items.append(3)),  # a list's length
        ("___items[0] == 1", lambda: items.__setitem__(0, 5)),
    ):
        ref, (link, p) = link_of(guarded(f"if not ({test}):", "    return ___miss"), scope)
        assert len(p.listing()) >= 2, test  # the check is made (an op, fused or not, and END)
        assert link.passes(0) is True and ref(0) is True
        change()
        assert link.passes(0) is False and ref(0) is MISS
    ref, (link, p) = link_of(guarded("if not (___nan == ___nan):", "    return ___miss"), scope)
    assert link.passes(0) is False and ref(0) is MISS  # false when made: kept, and misses


def test_programs_with_folds_decide_as_without_them(monkeypatch):
    rng = random.Random(5)
    consts = ["___t", "___t[0]", "___t[1]", "___t[-1]", "___type(___t)", "___len(___t)", "___type(___t[1])"]
    consts.append("x")
    objects = ["___tuple", "___int", "None", "___t[0]", "___t[1]", "x"]  # (no `is` of a literal)
    scope = {"___t": (None, 3, "s"), "___tuple": tuple, "___type": type, "___len": len, "___int": int}

    def conjunct():
        if rng.random() < 0.5:
            return f"{rng.choice(consts)} {rng.choice(['is', 'is not'])} {rng.choice(objects)}"
        other = rng.choice([*objects, "3", "2", repr("s")])
        return f"{rng.choice(consts)} {rng.choice(['==', '!='])} {other}"

    folded = 0
    for _ in range(200):
        conj = [conjunct() for _ in range(3)]
        lines = guarded(f"if not ({' and '.join(conj)}):", "    return ___miss")
        ref, (link, p) = link_of(lines, scope)
        monkeypatch.setattr(check_program, "FOLD_CONSTANT_CHECKS", False)
        _, (every, q) = link_of(lines, scope)
        monkeypatch.undo()
        folded += len(p.listing()) < len(q.listing())
        for x in (None, 3, "s", (None, 3, "s"), 2.0):
            assert link.passes(x) == every.passes(x) == (ref(x) is True), (lines, x)
    assert folded >= 30
