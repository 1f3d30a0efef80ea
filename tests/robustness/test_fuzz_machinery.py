"""The fuzzing machinery itself: generator, differential runner, shrinker, reproducers.

A fuzzer that cannot see a bug proves nothing, so the runner is checked
against deliberately wrong "captures" (each breaks one observable: the
result, an input's mutation, a global, printed output, an exception, a
gradient, aliasing, a stale cache) and must report exactly that part; the
plain function passed as its own capture must always pass.  The generator
must emit programs that compile, are deterministic per seed, terminate, and
exercise what they claim to (loops, closures, exceptions, views, in-place
ops); the shrinker must cut a planted bug down to a few statements, and a
written reproducer must run standalone and fail while the bug persists.
"""

from __future__ import annotations

import ast
import copy
import functools
import io
import os
import re
import subprocess
import sys

import pytest

from bcfront.testing import differential, shrink
from bcfront.testing.fuzzgen import generate
from bcfront.testing.program import CallSpec, from_source

from .helpers import HAS_TORCH

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def identity(fn):
    return fn


# -- wrong captures, one per observable ----------------------------------------------------------


def wrong_result(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        out = fn(*args, **kwargs)
        return (out, "extra") if out is not None else 0

    return run


def copies_inputs(fn):
    """Runs on copies: the caller never sees its arguments mutated."""
    return lambda *args, **kwargs: fn(*copy.deepcopy(args), **copy.deepcopy(kwargs))


def silent(fn):
    def run(*args, **kwargs):
        sys.stdout, old = io.StringIO(), sys.stdout
        try:
            return fn(*args, **kwargs)
        finally:
            sys.stdout = old

    return run


def swallows(fn):
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - the planted bug
            return None

    return run


def stale(fn):
    """Runs every call but returns the first call's result forever (a missing guard)."""
    memo = []

    def run(*args, **kwargs):
        out = fn(*args, **kwargs)
        memo.append(out)
        return memo[0]

    return run


def forgets_globals(fn):
    """Restores the function's global G after each call (a lost global write)."""

    def run(*args, **kwargs):
        g = fn.__globals__
        saved = g.get("G")
        try:
            return fn(*args, **kwargs)
        finally:
            g["G"] = saved

    return run


PLANTED = """
G = 0

def f(a, xs):
    global G
    G += a
    xs.append(a)
    print("a is", a)
    if a > 2:
        raise ValueError(f"big {a}")
    return a * 2, len(xs)
"""
PLANTED_CALLS = (("1", "[5]"), ("2", "[]"), ("3", "[1, 2]"))


@pytest.mark.parametrize(
    "capture, part",
    [
        (wrong_result, "result"),
        (copies_inputs, "args"),
        (silent, "stdout"),
        (swallows, "exception"),
        (stale, "result"),
        (forgets_globals, "globals"),
    ],
    ids=lambda x: getattr(x, "__name__", x),
)
def test_runner_sees_each_planted_bug(capture, part):
    verdict = differential.run(from_source(PLANTED, PLANTED_CALLS), capture)
    assert not verdict.ok, f"{capture.__name__} went unnoticed"
    assert verdict.mismatch.part == part, verdict.mismatch.describe()


def test_runner_passes_the_plain_function():
    verdict = differential.run(from_source(PLANTED, PLANTED_CALLS), identity)
    assert verdict.ok, verdict.mismatch.describe()
    assert verdict.eager_errors == 1


def test_runner_sees_a_lost_exception_chain():
    """Same type and message, but the exception no longer says what it was raised while handling."""

    def drops_context(fn):
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the planted bug
                raise type(e)(*e.args) from None

        return run

    src = """
def f(a):
    try:
        {}[a]
    except KeyError:
        raise ValueError(a)
"""
    assert differential.run(from_source(src, (("1",),)), identity).ok
    verdict = differential.run(from_source(src, (("1",),)), drops_context)
    assert verdict.mismatch.part == "exception", verdict.mismatch
    assert verdict.mismatch.eager == "ValueError: 1 (while handling KeyError)", verdict.mismatch
    assert verdict.mismatch.captured == "ValueError: 1"


def test_runner_reports_a_failing_capture_call():
    def refuses(fn):
        raise RuntimeError("cannot capture")

    verdict = differential.run(from_source(PLANTED, PLANTED_CALLS), refuses)
    assert verdict.mismatch.part == "capture" and verdict.mismatch.call == -1


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_runner_sees_tensor_bugs():
    src = """
import torch

def f(t):
    v = t[0]
    v.mul_(2)
    return v, t.sum()
"""
    calls = (("torch.ones(2, 3, requires_grad=False)",), ("torch.arange(6.0).reshape(2, 3)",))

    def returns_copy(fn):  # result no longer aliases the input
        def run(*args, **kwargs):
            v, s = fn(*args)
            return v.clone(), s

        return run

    def wrong_dtype(fn):
        def run(*args, **kwargs):
            v, s = fn(*args)
            return v, s.double()

        return run

    def detaches(fn):  # drops autograd history
        return lambda *args: fn(*args).detach()

    for capture, part in ((returns_copy, "result"), (wrong_dtype, "result")):
        verdict = differential.run(from_source(src, calls), capture)
        assert not verdict.ok and verdict.mismatch.part == part, capture.__name__
    assert differential.run(from_source(src, calls), identity).ok

    grad_src = """
import torch

def f(t):
    return (t * t).sum()
"""
    grad_calls = (("torch.ones(3, requires_grad=True)",),)
    verdict = differential.run(from_source(grad_src, grad_calls), detaches)
    assert not verdict.ok and verdict.mismatch.part == "result"

    def wrong_grad(fn):  # same forward value, different gradient
        def run(t):
            out = fn(t)
            return out + (t * 0.5).sum() - (t * 0.5).sum().detach()

        return run

    verdict = differential.run(from_source(grad_src, grad_calls), wrong_grad)
    assert not verdict.ok and verdict.mismatch.part == "grads", verdict.mismatch


def test_diff_reports_aliasing():
    xs = [1]
    assert differential.diff((xs, xs), ([1], [1])) is not None
    assert differential.diff((xs, xs), (xs, xs)) is None


# -- the generator ------------------------------------------------------------------------------------

MODES = ["py"] + (["tensor", "module"] if HAS_TORCH else [])


@pytest.mark.parametrize("mode", MODES)
def test_generator_is_deterministic(mode):
    assert generate(7, mode).source == generate(7, mode).source
    assert generate(7, mode).calls == generate(7, mode).calls
    assert generate(7, mode).source != generate(8, mode).source


def _unbounded_whiles(source: str) -> list[str]:
    """The tests of `source`'s counted while loops (all but ``while True``, which has a pinned
    break) that do not keep their bound in force: each must be ``w < N`` or ``w < N and ...``."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        test = node.test if isinstance(node, ast.While) else None
        if test is None or (isinstance(test, ast.Constant) and test.value is True):
            continue
        first = test.values[0] if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else test
        bound = isinstance(first, ast.Compare) and len(first.ops) == 1 and isinstance(first.ops[0], ast.Lt)
        if not (bound and isinstance(first.left, ast.Name) and first.left.id[0] == "w"):
            bad.append(ast.unparse(test))
    return bad


def test_while_bound_stays_in_force_whatever_the_extra_condition():
    """A counted while loop's extra condition is parenthesized: one that binds looser than `and`
    (an unparenthesized `a or b`, as the `builtins` feature's `$str.isdigit() or ...`) must not
    make the test ``(w < N and a) or b``, which can loop forever -- found as a campaign timeout,
    pyx-91000396.  The bool grammar here holds only such expressions."""
    from bcfront.testing.fuzzgen import Gen

    g = Gen(0, "py")
    loose = ("$str.isdigit() or $str.isalpha()", "$int > $lit or $bool", "not $bool or True")
    g.ex.rules = {**g.ex.rules, "bool": [(1, t) for t in loose]}
    sources = ["\n".join(g.s_while(0).lines(0)) for _ in range(60)]
    extra = [s for s in sources if " and " in s.split(":", 1)[0]]
    assert len(extra) >= 5, "the generator stopped adding extra conditions to while loops"
    bad = [b for s in sources for b in _unbounded_whiles(s)]
    assert not bad, bad


@pytest.mark.parametrize("mode", MODES)
def test_generated_programs_compile_run_and_cover_features(mode):
    """60 programs: all compile, each call of the plain function ends; features show up."""
    seen = set()
    features = {
        "while ": "while",
        "for ": "for",
        "try:": "try",
        "except": "except",
        "finally:": "finally",
        "def fn": "closure",
        "nonlocal": "nonlocal",
        "yield": "generator",
        "lambda": "lambda",
        "raise ": "raise",
        " for c_": "comprehension",
        "print(": "print",
        "break": "break",
        "continue": "continue",
        "match ": "match",
        ".append(": "list-mutation",
    }
    if mode != "py":
        features.update(
            {"_(": "in-place", "[0]": "view", ".t()": "transpose", "no_grad": "no_grad", ".item()": "item"}
        )
    if mode == "module":
        features.update(
            {
                "self.act(": "submodule",
                "self.scale": "parameter",
                "self.count": "buffer",
                "self.training": "training",
            }
        )
    for seed in range(60):
        program = generate(seed, mode)
        compile(program.source, program.name, "exec")
        assert not _unbounded_whiles(program.source), program.name
        seen |= {name for token, name in features.items() if token in program.source}
        verdict = differential.run(program, identity)
        assert verdict.ok, f"{program.name} disagrees with itself: {verdict.mismatch.describe()}"
    assert seen == set(features.values()), f"never generated: {set(features.values()) - seen}"


EXTRA_PATTERNS = {
    "sets": r"\{c_\d+ % \d for|set\(",
    "opaque": r"collections\.deque\(|len\(\w+\.(keys|items)\(\)\)",
    "dictiter": r"for [\w, ]+ in \w+(\.items\(\))?:",
    "classattr": r"\.kind\b",
    "exc": r"\n +raise\n|from e\n",
    "loops": r"while True:|for i\d+, \*i\d+ in",
    "tuples": r"(==|!=) \(-?\d+, ?-?\d*\)|divmod\(\w+, -?\d\) ==",
    "builtins": r"\.find\('a', 1\)|format\(|dict\.fromkeys|'%s' % \(|\)\.index\(",
    "breaks": r"nonlocal acc\d+|print\('fin'|yield j \*|err\d+ = e\d+",
    "objects": r"= Slot\(",
    "calls": r"kwf\(",
}


def test_extra_grammar_is_opt_in_and_covers_its_features():
    """`extra` programs compile, are deterministic, agree with themselves (they terminate) and
    show each feature's constructs; without `extra` a seed's program does not depend on them."""
    from bcfront.testing import fuzzextra

    assert generate(3, "py", extra=()).source == generate(3, "py").source
    assert generate(3, "py", extra=fuzzextra.FEATURES).name == "pyx-3"
    assert set(EXTRA_PATTERNS) | {"guards"} == set(fuzzextra.FEATURES)  # guards: in the calls
    seen = {feat: False for feat in EXTRA_PATTERNS}
    for seed in range(50):
        program = generate(seed, "py", extra=fuzzextra.FEATURES)
        assert program.source == generate(seed, "py", extra=fuzzextra.FEATURES).source
        compile(program.source, program.name, "exec")
        assert not _unbounded_whiles(program.source), program.name
        body = program.source.split("\ndef f(", 1)[1]
        seen.update({feat: True for feat, pattern in EXTRA_PATTERNS.items() if re.search(pattern, body)})
        verdict = differential.run(program, identity)
        assert verdict.ok, f"{program.name} disagrees with itself: {verdict.mismatch.describe()}"
    assert "kind = 0" in generate(0, "py", extra=("classattr",)).source
    befores = [c.before for seed in range(10) for c in generate(seed, "py", extra=("guards",)).calls]
    assert any(befores) and not any(c.before for c in generate(3, "py").calls)
    assert all(seen.values()), f"never generated: {[f for f, s in seen.items() if not s]}"


def test_extra_feature_names_are_checked():
    from bcfront.testing.fuzzextra import FEATURES, parse_features

    assert parse_features("all") == FEATURES and parse_features("") == ()
    assert parse_features("sets, exc") == ("sets", "exc")
    with pytest.raises(ValueError, match="unknown fuzz feature"):
        parse_features("sets,nope")


def test_most_generated_calls_do_not_raise():
    """Programs that always raise would test little; most calls must return normally."""
    calls = errors = 0
    for seed in range(40):
        verdict = differential.run(generate(seed, "py"), identity)
        calls += verdict.calls
        errors += verdict.eager_errors
    assert errors < calls / 2, f"{errors} of {calls} calls raised"


# -- shrinking and reproducers ---------------------------------------------------------------------


def test_shrinker_cuts_a_planted_bug_to_a_few_statements():
    """`silent` hides prints: the first big generated program that prints shrinks to a few lines."""
    capture = silent
    program = next(
        p
        for p in map(lambda s: generate(s, "py"), range(40))
        if p.size() > 20 and not differential.run(p, capture).ok
    )
    small, small_verdict = shrink.shrink_mismatch(program, capture, budget=150)
    assert not small_verdict.ok and small_verdict.mismatch.part == "stdout"
    assert small.size() <= 6 < program.size(), small.source
    assert not differential.run(small, capture).ok


def test_shrink_keeps_the_mismatch_kind():
    calls = []

    def still_fails(p):
        calls.append(p)
        return "print" in p.source

    program = from_source("def f(a):\n    x = a + 1\n    if x:\n        print(x)\n    return x\n", [["1"]])
    small = shrink.shrink(program, still_fails)
    assert "print" in small.source and small.size() == 1, small.source


def test_expression_variants():
    got = shrink.expression_variants("x = g(a + b, c)")
    assert "x = a + b" in got and "x = g(a + b)" in got and "x = c" in got
    assert shrink.expression_variants("case 0:") == []


def test_from_source_round_trip_is_shrinkable():
    src = """
def f(xs, k=2):
    total = 0
    for x in xs:
        if x > k:
            total += x
        else:
            continue
    try:
        total //= len(xs)
    except ZeroDivisionError as e:
        print(e)
    finally:
        print("done")
    return total
"""
    program = from_source(src, [["[1, 5, 7]"], ["[]", "0"]])
    assert program.size() > 5
    ns1, ns2 = {}, {}
    exec(src, ns1)
    exec(program.source, ns2)
    for args in (([1, 5, 7],), ([], 0)):
        assert ns1["f"](*args) == ns2["f"](*args)


def test_reproducer_runs_standalone_and_fails_while_the_bug_persists(tmp_path):
    program = from_source(PLANTED, PLANTED_CALLS, name="planted")
    verdict = differential.run(program, silent)
    path = tmp_path / "repro.py"
    path.write_text(shrink.reproducer(program, verdict, str(path)))
    # Standalone, the reproducer uses the real bcfront.capture: it must run and print a verdict.
    env = dict(os.environ, PYTHONPATH=REPO)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert ("ok" in done.stdout) == (done.returncode == 0), done.stdout
    assert "stdout differs" in path.read_text()


def test_call_spec_builds_positional_and_keyword_arguments():
    assert CallSpec(("1",)).build({}) == ((1,), {})
    assert CallSpec(("1", "[2]", "k=3", "*(4, 5)", "**{'z': 6}")).build({}) == (
        (1, [2], 4, 5),
        {"k": 3, "z": 6},
    )


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_module_programs_round_trip_through_source():
    """A module program (f is M.forward, MOD is called) re-parses with its postlude and entry."""
    program = generate(3, "module")
    again = from_source(program.source, program.calls, entry=program.entry)
    assert again.source.split("class M(")[1] == program.source.split("class M(")[1]
    assert differential.run(again, identity).ok
    verdict = differential.run(again, silent)
    assert again.entry == "MOD" and (verdict.ok or verdict.mismatch.part == "stdout")
