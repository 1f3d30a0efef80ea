"""Continuations that cross a break with iterators, comprehensions and 3.12+/3.13 layouts.

Pure Python (3.11-3.13, no torch).  Each case is a small function whose
breaks (`print`) sit where the continuation has to rebuild an iterator, a
comprehension's hidden stack or an exception-table entry.  Oracle: the same
function run by CPython on a deep copy of the arguments -- result, printed
output, exception and the arguments afterwards must agree.  `test_validate`
checks the continuation validator against CPython's own stack effects.
"""

from __future__ import annotations

import contextlib
import copy
import dis
import inspect
import io
import sys
import types

import pytest

import bcfront
from bcfront.analysis import analyze
from bcfront.errors import UnsupportedError
from bcfront.frontend.regions import resume
from bcfront.frontend.regions.resume import make_resume
from bcfront.frontend.regions.resume_check import check_bound_locals, check_continuation

CASES: dict = {}


def case(*calls):
    def register(fn):
        CASES[fn.__name__] = (fn, list(calls))
        return fn

    return register


@case(([],), ([1],), ([1, 2],))
def loop_over_appended_list(xs):
    """O3: the list grew before the loop; the iterator index must not be clamped."""
    xs.append(0)
    for c in xs:  # noqa: B007 - subject: only the iteration count matters
        print(end="|")
    return xs


@case(([0],), ([],))
def exhausted_iterator_stays_exhausted(xs):
    """A list iterator run to its end ignores items appended later."""
    it = iter(xs)
    for _ in it:
        pass
    xs.append(1)
    print(end="")
    return list(it)


@case(
    ([0, 1],),
)
def iterator_advanced_after_growth(xs):
    """The rebuilt position is past the list's length before the appends are replayed."""
    it = iter(xs)
    next(it)
    xs.extend([5, 6])
    next(it)
    next(it)
    print(end="")
    return list(it), xs


@case(([1, 2, 3],), ([],))
def many_locals_pair_store(xs):
    """3.13: STORE_FAST_STORE_FAST (p, q) after a break; the continuation's parameters push
    p and q past local index 15, which a superinstruction cannot encode (O4-O6)."""
    p = q = None
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = a8 = a9 = a10 = a11 = a12 = 1
    print(end="")
    for p, q in zip(xs, xs[1:]):
        a12 = p
        a11 = q
    return (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, p)


@case(([3, 1],), ([],))
def nested_comprehensions_with_break(xs):
    """A break in an inner (inlined on 3.12+) comprehension, in a loop that grows the list."""
    for i, x in enumerate(list(xs)):  # noqa: B007 - subject: the loop's shape is tested
        xs += [len([c for c in [print(end="|") or d for d in xs] if c > 1])]
    return xs


@case((1, [5]), (0, []))
def augmented_assignment_in_try(a, xs):
    """The continuation resumes inside a try; the handler's depth is the original's."""
    try:
        v, *rest = [print(end="") or 3]  # noqa: F841 - subject: the unpacking is tested
        a += xs if rest else 8
    except ArithmeticError:
        a = None
    return a


@case(([1, 2],), ([],))
def generator_expression_consumed_by_a_builtin(xs):
    """A break inside an unstarted generator driven by sum(): it is rebuilt and run natively."""
    g = (print(end="|") or x * 2 for x in xs)
    return sum(g), list(g)


@case(
    ([1, 2, 3],),
)
def generator_in_a_for_loop(xs):
    total = 0
    for v in (print(end=".") or x for x in xs):
        total += v
    return total


def _gen(a, *rest, k=1, **kw):
    print(end="g")
    yield a * k
    yield from rest
    yield kw


@case((2,), (0,))
def generator_function_with_every_kind_of_parameter(n):
    return list(_gen(n, 1, 2, k=3, z=4))


@case(
    ([1, 2, 3],),
)
def started_generator(xs):
    """A generator advanced before the break that happens in its body."""
    g = (x for x in xs)
    first = next(g)
    return first, [print(end="") or v for v in g]


@case(
    ([1],),
)
def generator_over_a_list_grown_after_creation(xs):
    g = (x for x in xs)
    xs.append(9)
    return [print(end="") or v for v in g]


class _Exits:
    """A context manager whose __exit__ breaks the graph and reports what it received."""

    def __enter__(self):
        return self

    def __exit__(self, t, v, tb):
        print("exit", t.__name__ if t else None, v, tb is not None)
        return t is KeyError


def _raises(x):
    print(end="")
    if x > 1:
        raise KeyError(x)
    if x > 0:
        raise ValueError(x)


@case((0,), (1,), (2,))
def exit_breaks_on_a_native_exception(x):
    """WITH_EXCEPT_START breaks (print in __exit__) on an exception raised natively: the
    region calls __exit__ with the real exception and its traceback, then continues."""
    out = []
    try:
        with _Exits():
            out.append(1)
            _raises(x)
            out.append(2)
    except ValueError as e:
        out.append(("caught", str(e)))
    return out


@case((0,), (1,), (2,))
def exit_breaks_on_a_traced_exception(x):
    """The same with the exception raised in the trace: rebuilt, it would lose its
    traceback, so this one runs natively (the results must still agree)."""
    out = []
    try:
        with _Exits():
            if x > 1:
                raise KeyError(x)
            if x > 0:
                raise ValueError(x)
    except ValueError as e:
        out.append(("caught", str(e)))
    return out


GENERATOR_CASES = [
    "generator_expression_consumed_by_a_builtin",
    "generator_in_a_for_loop",
    "generator_function_with_every_kind_of_parameter",
]


def _run(fn, args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            out = ("ok", fn(*args))
        except Exception as e:  # noqa: BLE001 - compared with the oracle's
            out = ("raise", type(e), str(e))
    return out, buf.getvalue(), args


@pytest.mark.parametrize("name", sorted(CASES))
def test_continuation_matches_python(name):
    fn, calls = CASES[name]
    cf = bcfront.capture(fn)
    for args in calls + calls[:1]:
        expected = _run(fn, copy.deepcopy(args))
        assert _run(cf, copy.deepcopy(args)) == expected, f"{name}{args}"


@pytest.mark.parametrize("name", GENERATOR_CASES)
def test_break_in_an_unstarted_generator_continues(name):
    fn, calls = CASES[name]
    cf = bcfront.capture(fn)
    _run(cf, copy.deepcopy(calls[0]))
    entry = cf.entries[0]
    assert not entry.native, entry.notes
    assert entry.breaks and entry.children


def test_with_except_start_breaks_continue():
    fn, calls = CASES["exit_breaks_on_a_native_exception"]
    cf = bcfront.capture(fn)
    for args in calls:
        _run(cf, args)
    assert cf.entries and not any(e.native for e in cf.entries), [e.notes for e in cf.entries]


def test_outside_exhausted_iterator_replayed_to_its_end():
    def f(it, xs):
        for _ in it:
            pass
        xs.append(1)
        return it

    xs = [0]
    it = bcfront.capture(f)(iter(xs), xs)
    assert list(it) == [] and xs == [0, 1]


# -- the continuation validator (resume_check) ------------------------------------------------

PY = sys.version_info[:2]


def _after_first_print(fn) -> int:
    """Offset of the instruction after the first call of print (its result on the stack)."""
    ins = list(dis.get_instructions(fn))
    i = next(k for k, x in enumerate(ins) if x.argval == "print")
    j = next(k for k in range(i, len(ins)) if ins[k].opname in ("CALL", "CALL_KW"))
    return ins[j + 1].offset


def _sample(k):
    total = k
    print(end="")
    try:
        total += [k][0]
    except IndexError:
        total = -1
    return total, k


def test_validator_accepts_a_well_formed_continuation():
    fn = make_resume(_sample, _after_first_print(_sample), [False], ["total", "k"], "r")
    assert fn(None, 2, 3) == (5, 3)


def test_validator_refuses_a_prologue_with_the_wrong_stack_depth():
    with pytest.raises(UnsupportedError, match="invalid continuation bytecode: .*stack depth"):
        make_resume(_sample, _after_first_print(_sample), [False, False], ["total", "k"], "r")


def test_validator_refuses_a_stack_size_too_small_for_a_handler():
    fn = make_resume(_sample, _after_first_print(_sample), [False], ["total", "k"], "r")
    code = fn.__code__
    _, offmap = fn.__bcfront_resume__
    with pytest.raises(UnsupportedError, match="co_stacksize"):
        check_continuation(code.replace(co_stacksize=1), _sample.__code__, offmap)


def test_validator_refuses_changed_exception_table_depths(monkeypatch):
    real = resume._set_try_depths

    def deeper(b, reals, bc):
        real(b, reals, bc)
        for item in b:
            if type(item).__name__ == "TryBegin":
                item.stack_depth += 1

    monkeypatch.setattr(resume, "_set_try_depths", deeper)
    with pytest.raises(UnsupportedError, match="invalid continuation bytecode"):
        make_resume(_sample, _after_first_print(_sample), [False], ["total", "k"], "r")


def test_validator_refuses_a_missing_local_where_load_fast_does_not_check():
    """3.12+: LOAD_FAST of an unbound local pushes NULL (a crash later), so a continuation
    that does not receive a local it reads is refused; 3.11's LOAD_FAST checks."""
    offset = _after_first_print(_sample)
    if PY >= (3, 12):
        with pytest.raises(UnsupportedError, match="may be unbound"):
            make_resume(_sample, offset, [False], ["k"], "r")
    else:
        with pytest.raises(UnboundLocalError):
            make_resume(_sample, offset, [False], ["k"], "r")(None, 3)


@pytest.mark.skipif(PY < (3, 13), reason="superinstructions with local pairs are 3.13's")
def test_unsplit_superinstructions_are_refused_and_run_natively(monkeypatch):
    """Without the split, the library packs local indices >= 16 into 4 bits (a wrong local
    is written); the validator refuses that continuation and the function runs natively."""
    monkeypatch.setattr(
        resume,
        "_split_superinstructions",
        lambda body: (body, [1] * sum(type(x).__name__ == "Instr" for x in body)),
    )
    fn = many_locals_pair_store
    cf = bcfront.capture(fn)
    assert _run(cf, ([1, 2, 3],)) == _run(fn, ([1, 2, 3],))
    (entry,) = cf.entries
    assert entry.native and "invalid continuation bytecode" in entry.notes[0]


def _code_objects(code):
    work = [code]
    while work:
        c = work.pop()
        yield c
        work.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


@pytest.mark.skipif(PY < (3, 12), reason="3.11's LOAD_FAST checks; nothing to compare")
@pytest.mark.parametrize(
    "module",
    ["difflib", "argparse", "collections", "tarfile", "ast", "dataclasses", "json.decoder", "textwrap"],
)
def test_bound_locals_agree_with_cpythons_compiler(module):
    """Oracle: CPython emits an unchecked LOAD_FAST only where it proved the local bound.
    From a function's own entry the validator must prove every one of them too (else it
    would refuse continuations that are fine)."""
    import importlib

    mod = importlib.import_module(module)
    top = compile(inspect.getsource(mod), mod.__file__, "exec")
    n = 0
    for code in _code_objects(top):
        check_bound_locals(analyze(code).cfg, code)
        n += 1
    assert n > 10


def test_stack_check_accepts_original_code():
    """The original code mapped onto itself passes every check (stack depths, handlers)."""
    import difflib

    for code in _code_objects(difflib.Differ._fancy_replace.__code__):
        ident = {ins.offset: ins.offset for ins in dis.get_instructions(code)}
        check_continuation(code, code, ident)
