"""Checked links (`frontend/regions/check_program.py`, `bcfront/_cchecks.c`): an exact link's
checks compiled to a C program must do exactly what the Python link does.  Oracles: the
same check statements run as Python (random programs of the generated forms, on values that
log every operation made on them and may raise), the Python link of each real capture's
generated checks (its verdict on the captured and on other inputs, and after changes of
what it reads), and plain Python for captured functions (``checked_links = False``, the
Python links, as the second reference)."""

from __future__ import annotations

import gc
import os
import pathlib
import random
import re
import sys
import types
import weakref

import pytest

import bcfront
from bcfront import fast_call
from bcfront.cfast import C
from bcfront.frontend.regions import check_program, result_recipes
from bcfront.frontend.regions.check_program import LinkParameters, Untranslatable, compile_checks
from bcfront.frontend.regions.result_recipes import region_result

if not fast_call.HAVE_C:
    if os.environ.get("BCFRONT_PURE_PYTHON"):
        pytest.skip("BCFRONT_PURE_PYTHON is set: no C call", allow_module_level=True)

    def test_the_c_extension_is_built():  # a missing build fails, never skips
        pytest.fail("bcfront._cfast is not built: reinstall with a C compiler (pip install -e .)")

else:
    CheckedLink = C.CheckedLink


MISS = object()


# -- the program against the Python it is compiled from -----------------------------------


class Stop(BaseException):
    """Not an Exception: the link's ``except Exception`` lets it out."""


class Logged:
    """A value recording each operation made on it, in order, in `LOG`; `fail` makes its
    operations raise (ValueError: a miss; Stop: out of the checks)."""

    def __init__(self, tag, fail=None, truth=True, size=2):
        self.tag, self.fail, self.truth, self.size = tag, fail, truth, size

    def _op(self, what):
        LOG.append((self.tag, what))
        if self.fail is not None and random.Random(hash((self.tag, what))).random() < 0.5:
            raise self.fail(f"{self.tag}.{what}")

    def __eq__(self, other):
        self._op("eq")
        return self.truth

    def __ne__(self, other):
        self._op("ne")
        return not self.truth

    def __lt__(self, other):
        self._op("lt")
        return self.truth

    __hash__ = object.__hash__

    def __len__(self):
        self._op("len")
        return self.size

    def __bool__(self):
        self._op("bool")
        return self.truth

    def __getitem__(self, key):
        self._op(f"item {key!r}")
        return Logged(f"{self.tag}[{key!r}]", self.fail, not self.truth, self.size + 1)

    def __contains__(self, key):
        self._op(f"contains {key!r}")
        return self.truth

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._op(f"attr {name}")
        return Logged(f"{self.tag}.{name}", self.fail, self.truth, self.size)


LOG: list = []


def logged_call(*args):
    LOG.append(("call", len(args)))
    return args[0] if args else True


def _module():
    m = types.ModuleType("checked_module")
    m.a = Logged("mod.a")
    m.__getattr__ = lambda name: LOG.append(("mod getattr", name)) or 1  # PEP 562
    return m


GLOBALS = {
    "___mod": _module(),
    "___full": types.CellType(Logged("cell")),
    "___empty": types.CellType(),
    "___type": type,
    "___len": len,
    "___int": int,
    "___str": str,
    "___Logged": Logged,
    "___f": logged_call,
    "___none": None,
    "___cell": [0, 0],
    "___box": {"k": 1, "j": Logged("box.j")},
    "___miss": MISS,
}

PARAMS = LinkParameters(("x", "y"), "args", (), None)


def source(rng, depth=0):
    """A random source expression of the generated forms."""
    roots = ["x", "y", "args[0]", "args[1]", "___box", "___box['j']", "___cell", "___mod", "___mod.a"]
    roots += ["___mod.b", "___full.cell_contents", "___empty.cell_contents", "x.cell_contents"]
    s = rng.choice(roots)
    for _ in range(rng.randrange(3)):
        s = rng.choice([f"{s}.a", f"{s}['k']", f"{s}[0]", f"___f({s})"])
    return s


def conjunct(rng, depth=0):
    s = source(rng)
    forms = [
        f"___type({s}) is {rng.choice(['___int', '___str', '___Logged'])}",
        f"{s} == {rng.choice(['0', '1', '2', repr('a'), '1.0', '-0.0', 'True', 'None', '(1, 2)', '-1'])}",
        f"{s} is {rng.choice(['___none', 'None', 'True', '___int'])}",
        f"{s} is not {rng.choice(['___none', 'None', 'False'])}",
        f"___len({s}) == {rng.randrange(4)}",
        f"{rng.choice([repr('k'), '0', '1'])} {rng.choice(['in', 'not in'])} {s}",
        f"___f({s}, {source(rng)})",
        f"{s} < {source(rng)}",
        f"not {s}",
        f"{s}",
        "___len(args) == 2",
        f"({s} != {rng.choice(['0', repr('a')])})",
    ]
    if depth < 2:
        forms += [
            f"({conjunct(rng, depth + 1)} or {conjunct(rng, depth + 1)})",
            f"({conjunct(rng, depth + 1)} or ({conjunct(rng, depth + 1)} and {conjunct(rng, depth + 1)}))",
            f"not ({conjunct(rng, depth + 1)} and {conjunct(rng, depth + 1)})",
        ]
    return rng.choice(forms)


def check_lines(rng, guarded=True):
    """Check statements as `GuardSet.function_body` makes them: a prologue of assignments, a
    memo-like block, and conjunctions that return ___miss where they fail."""
    pad = "        " if guarded else "    "
    lines = []
    if rng.random() < 0.4:
        lines.append(f"{pad}___v = {source(rng)}")
    if rng.random() < 0.4:
        lines += [
            f"{pad}if not ___f({source(rng)}):",
            f"{pad}    if not ({' and '.join(conjunct(rng) for _ in range(2))}):",
            f"{pad}        return ___miss",
            f"{pad}    ___cell[0] = ___cell[1]",
        ]
    for _ in range(rng.randrange(1, 3)):
        conj = [conjunct(rng) for _ in range(rng.randrange(1, 5))]
        if any("___v" in ln for ln in lines) and rng.random() < 0.5:
            conj.append("___v is not None")
        if rng.random() < 0.2:
            conj.append(f"(___w := {source(rng)}) is not None and ___w == 1")
        lines += [f"{pad}if not ({' and '.join(conj)}):", f"{pad}    return ___miss"]
    if guarded:
        lines = ["    try:", *lines, "    except Exception:", "        return ___miss"]
    return lines


def python_link(lines):
    """The checks as the Python reference: True where they pass, MISS where not."""
    src = "def ref(x, y, *args):\n" + "\n".join(lines) + "\n    return True\n"
    scope = dict(GLOBALS)
    exec(compile(src, "<checks>", "exec"), scope)  # the test's own source
    return scope["ref"]


def c_link(lines, ref):
    local_names = ref.__code__.co_varnames
    program = compile_checks(lines, "___miss", ref.__globals__, PARAMS, local_names)
    return CheckedLink(
        program.code, program.consts, program.nlocals, program.depth, 2, True, program.guarded, ref, ref, ()
    )


def arguments(rng):
    def value(tag):
        kinds = [
            lambda: rng.choice([0, 1, 2, -1, True, False, None, 1.0, -0.0, "a", "k", (1, 2), [1], {"k": 1}]),
            lambda: Logged(tag, None, rng.random() < 0.5, rng.randrange(4)),
            lambda: Logged(tag, ValueError, rng.random() < 0.5, rng.randrange(4)),
            lambda: Logged(tag, Stop, rng.random() < 0.5, rng.randrange(4)),
        ]
        return rng.choice(kinds)()

    return [value(f"a{i}") for i in range(rng.randrange(2, 5))]


def outcome(fn, args):
    """(result, the log of operations) -- or the escaping exception's type and message."""
    LOG.clear()
    GLOBALS["___cell"][:] = [0, 0]
    try:
        r = fn(*args)
        result = "pass" if r is True else "miss" if r is MISS or r is False else r
    except BaseException as e:  # noqa: BLE001 - what escapes is compared
        result = (type(e).__name__, str(e))
    return result, list(LOG), list(GLOBALS["___cell"])


@pytest.mark.parametrize("guarded", [True, False])
def test_random_checks_do_what_their_python_does(guarded, monkeypatch):
    # every operation, in order: the reference that re-reads what the checks spell again
    # (`REUSE_READS`: tests/frontend/test_check_reads.py compares it)
    monkeypatch.setattr(check_program, "REUSE_READS", False)
    rng = random.Random(1234 + guarded)
    seen = {"pass": 0, "miss": 0, "escape": 0}
    for _ in range(400):
        lines = check_lines(rng, guarded)
        ref = python_link(lines)
        ref.__globals__["___cell"] = GLOBALS["___cell"]
        link = c_link(lines, ref)
        for _ in range(6):
            args = arguments(rng)
            want = outcome(ref, args)
            got = outcome(link.passes, args)
            assert got == want, ("\n".join(lines), args)
            seen[want[0] if want[0] in seen else "escape"] += 1
    print(seen)
    assert min(seen.values()) >= 50  # every outcome is exercised


def test_the_ops_are_the_c_enum_in_order():
    src = (pathlib.Path(bcfront.__file__).parent / "_cchecks.c").read_text()
    enum = src[src.index("enum {") : src.index("OP_COUNT")]
    names = re.findall(r"^\s*OP_([A-Z_]+),", enum, re.M)
    assert tuple(names) == check_program.OPS
    assert C.CHECK_OPS == len(check_program.OPS)


def test_names_the_link_looks_up_in_builtins_give_no_program():
    with pytest.raises(Untranslatable):  # `len` is not in the link's globals: a later patch would count
        lines = ["    if not (len(x) == 2):", "        return ___miss"]
        compile_checks(lines, "___miss", GLOBALS, PARAMS, ())


def test_a_chained_comparison_and_a_local_read_unassigned_give_no_program():
    for line in ["0 < x < 2", "___v is None"]:
        with pytest.raises(Untranslatable):
            lines = [f"    if not ({line}):", "        return ___miss"]
            compile_checks(lines, "___miss", GLOBALS, PARAMS, ("___v",))


@pytest.mark.parametrize(
    "code, consts",
    [
        ((check_program.OP["CONST"], 3, check_program.OP["END"], 0), (1,)),  # constant out of range
        ((check_program.OP["JUMP"], 9, check_program.OP["END"], 0), ()),  # jump out of the program
        ((check_program.OP["CONST"], 0,), (1,)),  # no END
        ((99, 0, check_program.OP["END"], 0), ()),  # unknown op
        ((check_program.OP["PARAM"], 5, check_program.OP["END"], 0), ()),  # parameter out of range
    ],
)  # fmt: skip
def test_a_malformed_program_is_refused_when_made(code, consts):
    ref = python_link(["    pass"])
    with pytest.raises(ValueError, match="CheckedLink"):
        CheckedLink(code, consts, 0, 4, 2, True, True, ref, ref, ())


def test_region_result_is_a_recipe_of_what_the_region_only_returns():
    obj, tup, lst = result_recipes.MADE_OBJECT, result_recipes.MADE_TUPLE, result_recipes.MADE_LIST
    assert region_result(["    ___r = 2", "    return ___r", "    return None"], {}) == ((obj, 2),)
    assert region_result(["    return None"], {}) == ((obj, None),)
    assert region_result(["    ___r = [2]", "    return ___r"], {}) == ((lst, ((obj, 2),)),)  # new per call
    assert region_result(["    return (1, (2, 3))"], {}) == ((obj, (1, (2, 3))),)  # folded: one object
    made = region_result(["    ___t = ((___i := 3), 29,)", "    ___r = ___t", "    return ___r"], {})
    assert made == ((tup, ((obj, 3), (obj, 29))),)
    assert region_result(["    x[:] = [1]", "    return None"], {}) == ()  # a write
    assert region_result(["    return x"], {}, ("x",)) == ()  # a parameter
    assert region_result(["    ___l = [1]", "    return (___l, ___l)"], {}) == ()  # one list, twice


def returns_a_new_tuple(n):
    return (n % 7, n * 2)


def returns_a_new_list(n):
    return [n, [n + 1]]


@pytest.mark.parametrize("fn", [returns_a_new_tuple, returns_a_new_list])
def test_a_result_made_of_constants_is_made_anew_each_call_without_a_frame(fn):
    cf = bcfront.capture(fn)
    cf(3)
    first, frames = frames_run(cf, 3)
    second = cf(3)
    assert first == second == fn(3) and type(first) is type(fn(3)) and frames == []
    assert first is not second  # a display makes a new object each call, natively too
    if type(first) is list:
        first[1].append(0)
        assert cf(3) == fn(3)  # nothing shared between calls


# -- captured functions: checked links against the Python links and plain Python ----------


def twice_plus(x, y):
    return x * 2 + y


def with_defaults(x, y=10, *, k=3):
    return (x, y, k)


def items(xs):
    return sorted(xs)[0]


def constant(n):
    return n + 1


def raising(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x


def both(fn):
    checked = bcfront.capture(fn)
    python = bcfront.capture(fn)
    python.checked_links = False
    return checked, python


def hits(cf) -> int:
    return sum(getattr(e.link_names.checked, "hits", 0) for e in cf._entries)


CALLS = [
    (twice_plus, [(1, 2), (1, 2), (2.0, 1), (1, 2), ("a", "b"), (True, 1)]),
    (with_defaults, [(1,), (1, 2), (1,), (1, 2), ("z",)]),
    (items, [([3, 1, 2],), ([3, 1, 2],), ([5, 4],), ([3, 1, 2],)]),
    (constant, [(1,), (1,), (2,), (1,), (2,)]),
    (raising, [(1,), (-1,), (-1,), (2,), (-1,)]),
]


def run(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e), str(e))


@pytest.mark.parametrize("fn, calls", CALLS, ids=[f.__name__ for f, _ in CALLS])
def test_captured_calls_equal_plain_python_and_the_python_links(fn, calls):
    checked, python = both(fn)
    for args in calls * 2:
        want = run(fn, args)
        assert run(checked, args) == want
        assert run(python, args) == want
    assert hits(checked) > 0  # the C checks served calls
    assert hits(python) == 0


def frames_run(call, *args):
    """(the result, the Python frames a call runs)."""
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        result = call(*args)
    finally:
        sys.setprofile(None)
    return result, seen


def test_a_constant_result_is_returned_without_a_frame():
    cf = bcfront.capture(constant)
    cf(1)
    assert frames_run(cf, 1) == (2, [])
    result, frames = frames_run(cf, 2)  # another value: a miss, traced
    assert result == 3 and frames


def grown(xs):
    xs.append(len(xs))
    return len(xs)


def test_a_region_with_work_runs_its_region_only():
    cf = bcfront.capture(grown)
    cf([3, 1, 2])
    xs = [3, 1, 2]
    result, frames = frames_run(cf, xs)
    assert result == 4 and xs == [3, 1, 2, 3]
    assert all(f.startswith("bcfront:region") for f in frames) and frames


def test_keyword_calls_and_changed_defaults_bind_as_the_root():
    checked, python = both(with_defaults)
    for cf in (checked, python):
        assert cf(1, k=5) == (1, 10, 5) and cf(1, k=5) == (1, 10, 5)
        assert cf(1) == (1, 10, 3) and cf(1) == (1, 10, 3)
    with_defaults.__kwdefaults__["k"] = 4  # in place: the links share the dict
    try:
        assert checked(1) == python(1) == with_defaults(1) == (1, 10, 4)
    finally:
        with_defaults.__kwdefaults__["k"] = 3
    assert checked(1) == (1, 10, 3)
    with pytest.raises(TypeError) as native:
        with_defaults(1, 2, 3)
    with pytest.raises(TypeError) as got:
        checked(1, 2, 3)
    assert str(got.value) == str(native.value)


def test_checked_links_do_not_keep_their_captured_function_alive():
    cf = bcfront.capture(twice_plus)
    cf(1, 2)
    cf(1, 2)
    assert hits(cf) == 1
    ref = weakref.ref(cf)
    del cf
    gc.collect()
    assert ref() is None


def test_every_corpus_guard_translates_or_is_refused_cleanly():
    # the checks the corpus's links have either compile to a program whose structure is
    # well-formed (validated by CheckedLink) or are refused: nothing else escapes
    from tests.stdlib.corpus import CORPUS, rooted

    made = 0
    for fn, inputs in list(CORPUS.values())[:40]:
        root = fn if type(fn).__name__ == "function" else rooted(fn)
        cf = bcfront.capture(root)
        for a in inputs[:2]:
            try:
                cf(*__import__("copy").deepcopy(a))
            except Exception:  # noqa: BLE001 - the function's own exception
                pass
        made += sum(e.link_names is not None and e.link_names.checked is not None for e in cf._entries)
    assert made > 30


# -- the checks bcfront generates, translated, against their Python link ------------------

CONFIG = types.ModuleType("checked_config")  # a module whose attribute a capture reads
CONFIG.scale = 3
OFFSET = 5  # a global a capture reads


class Box:
    def __init__(self, v):
        self.v = v


def on_ints(a, b):
    return a * 2 + b


def on_strs(s, t):
    return s.upper() + t


def on_lists(xs):
    return sum(xs) + len(xs)


def on_dicts(d):
    return d["a"] + d.get("b", 0)


def adder(k):
    def add(x):
        return x + k

    return add


ADD = adder(2)


def on_module_and_global(x):
    return x * CONFIG.scale + OFFSET


def on_defaults(x, y=10, *, k=3):
    return x + y + k


def on_star(*args):
    return len(args) + args[0]


def on_attribute(box, n):
    return box.v + n


class StrSub(str):
    pass


def _set(obj, name, value):
    """A change of `obj`'s attribute (or item) `name`, and its undoing."""
    get = obj.__getitem__ if type(obj) is dict else lambda n: getattr(obj, n)
    put = obj.__setitem__ if type(obj) is dict else lambda n, v: setattr(obj, n, v)
    old = get(name)
    return (lambda: put(name, value)), (lambda: put(name, old))


# (function, the captured call's arguments, other arguments, changes made after the capture)
GENERATED = [
    (on_ints, (3, 4), [(3, 5), (4, 4), (3.0, 4), (True, 4), ("3", 4), (3, -4)], []),
    (on_strs, ("ab", "!"), [("ab", "?"), ("ac", "!"), (StrSub("ab"), "!"), (b"ab", "!")], []),
    (on_lists, ([1, 2, 3],), [([1, 2],), ([1, 2, 4],), ([1, 2, 3, 4],), ((1, 2, 3),), ([1, 2, "3"],)], []),
    (on_dicts, ({"a": 1},), [({"a": 1, "b": 2},), ({"a": 2},), ({"b": 1},), ({"a": 1.5},)], []),
    (ADD, (1,), [(2,), (1.0,)], [_set(ADD.__closure__[0], "cell_contents", 7)]),
    (on_module_and_global, (2,), [(3,)], [_set(CONFIG, "scale", 4), _set(globals(), "OFFSET", 6)]),
    (on_defaults, (1,), [(1, 10), (1, 11), (2,)], [_set(on_defaults.__kwdefaults__, "k", 4)]),
    (on_star, (1, 2), [(1,), (1, 2, 3), (2, 2), (1.0, 2)], []),
    (on_attribute, (Box(1), 2), [(Box(2), 2), (Box(1), 2), (Box("1"), 2), (1, 2)], []),
]


NEXT = object()  # what the Python link's next link returns here: its checks failed


def python_link_passes(entry, args) -> bool:
    """Whether the entry's Python link takes `args` (runs its region) rather than calling the
    next link: the link itself, its next link bound to a stand-in."""
    link = entry.link
    scope = {**link.__globals__, entry.link_names.next: lambda *a, **k: NEXT}
    twin = types.FunctionType(link.__code__, scope, link.__name__, link.__defaults__, link.__closure__)
    twin.__kwdefaults__ = link.__kwdefaults__
    return twin(*args) is not NEXT


@pytest.mark.parametrize("fn, captured, others, changes", GENERATED, ids=[g[0].__name__ for g in GENERATED])
def test_generated_checks_translate_and_decide_as_their_python_link(fn, captured, others, changes):
    cf = bcfront.capture(fn)
    assert cf(*captured) == cf(*captured) == fn(*captured)
    (entry,) = cf._entries
    program = entry.link_names.checked
    assert program is not None, entry.guard_source  # translated: no Untranslatable
    verdicts = []

    memos = [v for k, v in entry.link.__globals__.items() if k.startswith("___memo") and type(v) is list]

    def compare():
        for args in [captured, *others]:
            for cell in memos:  # cold: the memoized checks run (else the first run's pass skips them)
                cell[:] = [None] * len(cell)
            want = python_link_passes(entry, args)
            for cell in memos:
                cell[:] = [None] * len(cell)
            assert program.passes(*args) is want, (args, entry.guard_source)
            assert program.passes(*args) is want  # again: the memo and cached reads warm
            verdicts.append(want)

    compare()
    for change, undo in changes:
        change()
        try:
            compare()
        finally:
            undo()
        compare()
    assert True in verdicts and False in verdicts  # both ways decided


# -- attribute reads cached by type version tags ---------------------------------------------


def attribute_link(expr: str, scope: dict):
    """A CheckedLink and its Python reference for ``if not (<expr>): return ___miss`` over
    the parameter x (one positional)."""
    lines = ["    try:", f"        if not ({expr}):", "            return ___miss", "    except Exception:"]
    lines.append("        return ___miss")
    src = "def ref(x):\n" + "\n".join(lines) + "\n    return True\n"
    glb = {**scope, "___miss": MISS}
    exec(compile(src, "<checks>", "exec"), glb)  # the test's own source
    ref = glb["ref"]
    params = LinkParameters(("x",), None, (), None)
    program = compile_checks(lines, "___miss", ref.__globals__, params, ref.__code__.co_varnames)
    link = CheckedLink(
        program.code, program.consts, program.nlocals, program.depth, 1, False, True, ref, ref, ()
    )
    return link, ref


def same(link, ref, *args):
    want = ref(*args)
    assert link.passes(*args) == (want is True)
    assert link.passes(*args) == (want is True)  # the second read: from the cache
    return want is True


def test_a_cached_class_attribute_follows_changes_to_the_class_its_bases_and_metaclass():
    class Meta(type):
        pass

    class Base(metaclass=Meta):
        a = 1

    class Cls(Base):
        pass

    link, ref = attribute_link("___Cls.a == 1", {"___Cls": Cls})
    assert same(link, ref, 0)
    Base.a = 2  # a base's dict
    assert not same(link, ref, 0)
    Cls.a = 1  # the class's own
    assert same(link, ref, 0)
    del Cls.a
    assert not same(link, ref, 0)
    Base.a = 1
    assert same(link, ref, 0)
    Meta.a = property(lambda cls: 3)  # a data descriptor on the metatype wins
    assert not same(link, ref, 0)
    del Meta.a
    assert same(link, ref, 0)
    Cls.__bases__ = (Meta("B2", (), {"a": 5}),)  # other bases
    assert not same(link, ref, 0)


def test_a_class_attribute_with_a_getter_is_read_each_time():
    reads = []

    class Getter:
        def __get__(self, obj, owner):
            reads.append(1)
            return len(reads)

    class Cls:
        a = Getter()

    link, ref = attribute_link("___Cls.a >= 1", {"___Cls": Cls})
    link.passes(0)
    link.passes(0)
    assert reads == [1, 1]  # not cached: a __get__ may answer differently each time


def test_a_cached_slot_read_follows_its_class_and_the_instance():
    class Slotted:
        __slots__ = ("a",)

    class Other:
        def __init__(self):
            self.a = 1

    link, ref = attribute_link("x.a == 1", {})
    s = Slotted()
    s.a = 1
    assert same(link, ref, s)
    s.a = 2
    assert not same(link, ref, s)
    del s.a  # an unset slot: AttributeError, a miss
    assert not same(link, ref, s)
    s.a = 1
    assert same(link, ref, s)
    descriptor = Slotted.a
    Slotted.a = property(lambda self: 7)  # the slot's descriptor replaced: the tag changes
    assert not same(link, ref, s)
    Slotted.a = descriptor
    assert same(link, ref, s)
    assert same(link, ref, Other())  # another type: the generic read


def test_a_cached_read_of_a_class_through_its_metatypes_descriptor_follows_them():
    # ``cls.__mro__`` is type's own descriptor (before the class's dicts): read through it
    class Meta(type):
        pass

    class Base:
        pass

    class A(Base):
        pass

    class B(Base, metaclass=Meta):
        pass

    mro = B.__mro__
    link, ref = attribute_link("x.__mro__ is ___mro", {"___mro": mro})
    assert same(link, ref, B)
    B.__bases__ = (A,)  # a new MRO tuple, no change to the metatype
    assert not same(link, ref, B)
    link, ref = attribute_link("x.__mro__ is ___mro", {"___mro": B.__mro__})
    assert same(link, ref, B)
    Meta.other = 1  # a change of the metatype: its descriptor looked up again
    assert same(link, ref, B)
    assert not same(link, ref, A)  # another class of another metatype
    reads = []

    class Counting(type):
        @property
        def label(cls):  # a metatype's own data descriptor (not a C one): each read
            reads.append(1)
            return "counted"

    D = Counting("D", (), {})
    link, ref = attribute_link("x.label == 'counted'", {})
    assert same(link, ref, D) and len(reads) == 3  # the link's read, the program's two
    link, ref = attribute_link("x.__name__ == 'B'", {})
    assert same(link, ref, B)
    B.__name__ = "C"
    assert not same(link, ref, B)


def test_a_cached_dict_or_module_read_follows_every_change():
    mod = types.ModuleType("m")
    mod.a = 1
    table = {"k": 1}
    link, ref = attribute_link(
        "___mod.a == 1 and ___table['k'] == 1 and x['k'] == 1", {"___mod": mod, "___table": table}
    )
    arg = {"k": 1}
    assert same(link, ref, arg)
    for change, undo in [
        (lambda: setattr(mod, "a", 2), lambda: setattr(mod, "a", 1)),
        (lambda: delattr(mod, "a"), lambda: setattr(mod, "a", 1)),
        (lambda: table.update(k=2), lambda: table.update(k=1)),
        (lambda: table.pop("k"), lambda: table.update(k=1)),
        (lambda: arg.update(k=3), lambda: arg.update(k=1)),
    ]:
        change()
        assert not same(link, ref, arg)
        undo()
        assert same(link, ref, arg)
    assert not same(link, ref, {"k": 2})  # another dict
    assert same(link, ref, {"k": 1})
    for _ in range(50):  # new dicts, some at a freed one's address: each has a new tag
        assert same(link, ref, {"k": 1}) and not same(link, ref, {"k": 0})


def test_a_cached_c_attribute_is_read_anew_each_call():
    def f():
        return 1

    def g():
        return 2

    code = f.__code__
    link, ref = attribute_link("x.__code__ is ___code and x.__name__ == 'f'", {"___code": code})
    assert same(link, ref, f)
    f.__code__ = g.__code__  # the getter reads the new one
    assert not same(link, ref, f)
    f.__code__ = code
    assert same(link, ref, f)
    f.__name__ = "h"
    assert not same(link, ref, f)
    assert not same(link, ref, g) and not same(link, ref, len)  # another function, another type


BIG = list(range(3000))


def big_sum():
    return sum(BIG)


def test_a_guard_larger_than_the_translation_limit_keeps_its_python_link():
    # its checks (the list's 3,000 items) are more text than a first call should translate
    cf = bcfront.capture(big_sum)
    assert cf() == cf() == sum(BIG)
    (entry,) = cf._entries
    assert entry.link is not None and entry.link_names.checked is None
    assert len(entry.guard_source) > check_program.LARGEST_TRANSLATED
    BIG.append(1)  # and its checks still see a change
    try:
        assert cf() == sum(BIG)
    finally:
        BIG.pop()
