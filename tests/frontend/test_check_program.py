"""Checked links (`frontend/regions/check_program.py`, `bcfront/_cchecks.c`): an exact link's
checks compiled to a C program must do exactly what the Python link does.  Oracles: the
same check statements run as Python (random programs of the generated forms, on values that
log every operation made on them and may raise), the Python link of each real capture's
generated checks (its verdict on the captured and on other inputs, and after changes of
what it reads), and plain Python for captured functions (``checked_links = False``, the
Python links, as the second reference)."""

from __future__ import annotations

import collections
import gc
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
from bcfront.frontend.regions.check_program import Untranslatable, compile_checks
from bcfront.frontend.regions.result_recipes import region_result

from .check_programs import (
    GLOBALS,
    MISS,
    PARAMS,
    arguments,
    c_link,
    check_lines,
    frames_run,
    guarded,
    link_of,
    needs_c_call,
    outcome,
    program,
    python_link,
)

needs_c_call(globals())
CheckedLink = C.CheckedLink if C is not None else None


# -- the program against the Python it is compiled from -----------------------------------


@pytest.mark.parametrize("guarded", [True, False])
def test_random_checks_do_what_their_python_does(guarded, monkeypatch):
    # every operation, in order: the reference that re-reads what the checks spell again
    # (`REUSE_READS`: tests/frontend/test_check_reads.py compares it)
    monkeypatch.setattr(check_program, "REUSE_READS", False)
    rng = random.Random(1234 + guarded)
    seen = {"pass": 0, "miss": 0, "escape": 0}
    for _ in range(500):
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
    assert min(seen.values()) >= 30  # every outcome is exercised


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


def test_a_str_literal_of_a_check_is_the_interned_object():
    # an argument equal to it is often that very object (name-like literals are interned),
    # which `x == k` tests first: no string compare on a cached call
    lines = ["    if not (x == 'for' and x != 'a b'):", "        return ___miss"]
    program = compile_checks(lines, "___miss", GLOBALS, PARAMS, ())
    texts = [k for k in program.consts if type(k) is str]
    assert texts and all(sys.intern(k) is k for k in texts)


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
        # an ASSERT_ITEMS constant not (indices, types, values) of one length: checked once
        ((check_program.OP["PARAM"], 0, check_program.OP["ASSERT_ITEMS"], 0, check_program.OP["END"], 0),
         ((None, (int,), (1, 2)),)),
        ((check_program.OP["PARAM"], 0, check_program.OP["ASSERT_ITEMS"], 0, check_program.OP["END"], 0),
         (((0, 1), (int,), (1,)),)),
        ((check_program.OP["PARAM"], 0, check_program.OP["ASSERT_ITEMS"], 0, check_program.OP["END"], 0),
         ([None, (int,), (1,)],)),
        ((check_program.OP["PARAM_ITEMS"], 1 << 20, check_program.OP["END"], 0), ((None, [int], (1,)),)),
    ],
)  # fmt: skip
def test_a_malformed_program_is_refused_when_made(code, consts):
    ref = python_link(["    pass"])
    with pytest.raises(ValueError, match="CheckedLink"):
        CheckedLink(code, consts, 0, 4, 2, True, True, ref, ref, ())


def test_an_items_check_of_the_wrong_shape_is_a_call_missing_as_python():
    # items_are with arguments it refuses raises TypeError in the Python link (a miss): the
    # program keeps the call, not an ASSERT_ITEMS whose constant the link would refuse
    check = guarded("if not (___items_are(x, ___i, ___t, ___v)):", "    return ___miss")
    for indices, kinds, values in (((0, 1), (int,), (1,)), (None, (int,), (1,)), ((0,), (int,), (1, 2))):
        scope = {"___items_are": C.items_are, "___i": indices, "___t": kinds, "___v": values}
        ref, (link, p) = link_of(check, scope)
        listing = "\n".join(p.listing())
        assert "ITEMS" not in listing and "CALL" in listing, listing
        assert link.passes([1, 2]) is False and ref([1, 2]) == MISS
    scope = {"___items_are": C.items_are, "___i": (0, 1), "___t": (int, int), "___v": (1, 2)}
    ref, (link, p) = link_of(check, scope)
    assert "ITEMS" in "\n".join(p.listing())
    assert link.passes([1, 2]) is (ref([1, 2]) is True) is True
    assert link.passes([1, 3]) is (ref([1, 3]) is True) is False


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
    cf(3)  # the first cached call makes the CheckedLink (`links.PendingCheckedLink`)
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


def test_a_constant_result_is_returned_without_a_frame():
    cf = bcfront.capture(constant)
    cf(1)
    cf(1)  # the first cached call makes the CheckedLink (`links.PendingCheckedLink`)
    assert frames_run(cf, 1) == (2, [])
    result, frames = frames_run(cf, 2)  # another value: a miss, traced
    assert result == 3 and frames


def tensor_work(t):
    return t * 2 + 1


def test_a_region_with_work_runs_its_region_only():
    torch = pytest.importorskip("torch")  # (the torch-free runs have no tensor region)

    cf = bcfront.capture(tensor_work)
    cf(torch.ones(2))
    cf(torch.ones(2))  # the first cached call makes the CheckedLink (`links.PendingCheckedLink`)
    result, frames = frames_run(cf, torch.ones(2))
    assert torch.equal(result, tensor_work(torch.ones(2)))
    # (a region that stores and calls built-ins only, as ``xs.append(...)`` traced, has none:
    # tests/frontend/test_step_recipes.py)
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
        for e in cf._entries:  # made now, not on a later call that reaches them (`fast_call`)
            fast_call.make_checked(e)
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
    ref, (link, _) = link_of(guarded(f"if not ({expr}):", "    return ___miss"), scope)
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


def test_class_and_descriptor_reads_are_served_by_the_cache_on_every_version():
    # 3.13 no longer sets Py_TPFLAGS_VALID_VERSION_TAG (a tag != 0 is valid): a cache that
    # asked for the flag never hit there, and every read was a full getattr
    class Cls:
        a = 1

    for expr, arg in (("___Cls.a == 1", 0), ("x.__mro__ is ___mro", Cls)):
        link, ref = attribute_link(expr, {"___Cls": Cls, "___mro": Cls.__mro__})
        assert same(link, ref, arg)
        before = link.cache_hits
        assert same(link, ref, arg)
        assert link.cache_hits == before + 2, expr  # both reads of `same`


def test_an_instance_dict_read_is_served_by_the_cache_on_313_and_follows_every_change():
    # 3.13 reads an attribute no class has from the instance dict directly; 3.11 and 3.12
    # read it by getattr (asking for their dict would move an object's inline values)
    class Plain:
        def __init__(self):
            self.a = 1

    class Other:
        a = property(lambda self: 1)

    link, ref = attribute_link("x.a == 1", {})
    p = Plain()
    assert same(link, ref, p)
    before = link.cache_hits
    assert same(link, ref, p)
    assert link.cache_hits == before + (2 if sys.version_info >= (3, 13) else 0)
    p.a = 2
    assert not same(link, ref, p)
    del p.a  # no entry: the generic read's AttributeError, a miss
    assert not same(link, ref, p)
    p.__dict__["a"] = 1
    assert same(link, ref, p)
    Plain.a = property(lambda self: 5)  # a data descriptor now comes first: the tag changes
    assert not same(link, ref, p)
    del Plain.a
    assert same(link, ref, p)
    Plain.a = 3  # a plain class attribute: the instance's entry still wins
    assert same(link, ref, p)
    del p.a
    assert not same(link, ref, p)  # now the class's
    del Plain.a
    p.__dict__ = {"a": 1}  # a new dict
    assert same(link, ref, p)
    q = Plain()
    q.a = 2
    assert not same(link, ref, q)  # another instance of the type: its own dict
    assert same(link, ref, Other())  # another type: its property


def test_a_codes_check_is_one_op_deciding_as_the_call():
    # ``___codes_are(F, C)`` (the functions a trace inlined keep their code) is ASSERT_CODES,
    # no CALL; oracle: the Python link, as the functions' code changes or the constants are
    # not what codes_are takes (its TypeError: a miss)
    def f():
        return 1

    def g():
        return 2

    f_code, g_code = f.__code__, g.__code__
    check = guarded("if not (x == 1 and ___codes_are(___fns, ___codes)):", "    return ___miss")
    for functions, codes in (((f, g), (f_code, g_code)), ((f,), (f_code, g_code)), ([f], [f_code])):
        scope = {"___codes_are": C.codes_are, "___fns": functions, "___codes": codes}
        ref, (link, p) = link_of(check, scope)
        listing = "\n".join(p.listing())
        assert "ASSERT_CODES" in listing and "CALL" not in listing, listing
        try:
            for x in (1, 2):
                assert link.passes(x) == (ref(x) is True), (functions, x)
            f.__code__ = g.__code__
            assert link.passes(1) == (ref(1) is True) is False
        finally:
            f.__code__ = f_code
        assert link.passes(1) == (ref(1) is True)


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


def test_a_cached_identity_check_of_a_global_or_module_attribute_follows_every_change():
    # CONST_ITEM_IS / CONST_MODULE_ATTR_IS decide by their last read while the dict is
    # unchanged (no read at all): every change to the dict, or the module's class, is seen
    mod, f, g = types.ModuleType("m"), len, abs
    mod.f = f
    table = {"mod": mod}
    scope = {"___table": table, "___mod": mod, "___f": f}
    checks = guarded("if not (___table['mod'] is ___mod and ___mod.f is ___f):", "    return ___miss")
    ref, (link, p) = link_of(checks, scope)
    assert {"CONST_ITEM_IS", "CONST_MODULE_ATTR_IS"} <= {line.split()[1] for line in p.listing()}
    assert same(link, ref, None)

    class Shadowing(types.ModuleType):
        f = property(lambda self: g)

    for change, undo in [
        (lambda: setattr(mod, "f", g), lambda: setattr(mod, "f", f)),
        (lambda: delattr(mod, "f"), lambda: setattr(mod, "f", f)),
        (lambda: table.update(mod=types.ModuleType("m")), lambda: table.update(mod=mod)),
        (lambda: table.pop("mod"), lambda: table.update(mod=mod)),
        (lambda: setattr(mod, "__class__", Shadowing), lambda: setattr(mod, "__class__", types.ModuleType)),
    ]:
        change()
        assert not same(link, ref, None)
        undo()
        assert same(link, ref, None)
    mod.other, table["other"] = 1, 2  # another key changed: read again, the same verdict
    assert same(link, ref, None)


MEMO_CHECKS = [
    "if not ___unchanged(___cell, ___g, ___b):",
    "    if not (___b['len'] is ___f and 'len' not in ___g and ___g['k'] == 1):",
    "        return ___miss",
    "    ___cell[0] = ___cell[1]",
    "if not (x == 1):",
    "    return ___miss",
]


@pytest.mark.parametrize("fused", [True, False])
def test_a_guard_memo_block_is_its_own_ops_and_skips_the_checks_exactly_where_the_call_would(
    fused, monkeypatch
):
    # `guard_memo._c_memo`'s block: DICTS_SAME keeps the tags ``dicts_unchanged`` keeps in
    # the cell, DICTS_PASSED marks them valid -- no CALL, no bytes object, no store
    monkeypatch.setattr(check_program, "FUSE_OPS", fused)
    g, b = {"k": 1}, {"len": len}
    scope = {"___unchanged": C.dicts_unchanged, "___cell": [None, None], "___g": g, "___b": b, "___f": len}
    ref, (link, p) = link_of(guarded(*MEMO_CHECKS), scope)
    listing = [line.split() for line in p.listing()]
    names = [op for _, op, *_ in listing]
    assert "CALL" not in names and "STORE_SUBSCR" not in names
    same_at, passed_at = names.index("DICTS_SAME"), names.index("DICTS_PASSED")
    assert int(listing[same_at][2].split(",")[1]) == passed_at + 1  # on to the checks after it
    assert same(link, ref, 1) and not same(link, ref, 2)
    for change, undo in [
        (lambda: g.update(len=abs), lambda: g.pop("len")),
        (lambda: b.update(len=abs), lambda: b.update(len=len)),
        (lambda: g.update(k=2), lambda: g.update(k=1)),
        (lambda: g.pop("k"), lambda: g.update(k=1)),  # a KeyError in the checks: a miss
    ]:
        change()
        assert not same(link, ref, 1)
        assert not same(link, ref, 1)  # a failed check leaves the memo invalid
        undo()
        assert same(link, ref, 1) and same(link, ref, 1)
    g["other"] = 0  # a change the checks do not read: they run again and pass
    assert same(link, ref, 1) and not same(link, ref, 2)


def test_a_guard_memo_of_a_local_dict_follows_each_dict_and_misses_on_another_type():
    checks = [
        "___d = x",
        "if not ___unchanged(___cell, ___d):",
        "    if not (___d['k'] == 1):",
        "        return ___miss",
        "    ___cell[0] = ___cell[1]",
    ]
    ref, (link, p) = link_of(guarded(*checks), {"___unchanged": C.dicts_unchanged, "___cell": [None, None]})
    assert "DICTS_SAME" in {line.split()[1] for line in p.listing()}
    d = {"k": 1}
    assert same(link, ref, d) and same(link, ref, d)
    d["k"] = 2
    assert not same(link, ref, d)
    d["k"] = 1
    assert same(link, ref, d)
    assert not same(link, ref, {"k": 2}) and same(link, ref, {"k": 1})  # new dicts, new tags
    assert not same(link, ref, [1])  # not a dict: dicts_unchanged's TypeError, a miss
    assert not same(link, ref, collections.UserDict(k=1)) and same(link, ref, d)


def test_a_guard_memo_block_of_another_shape_is_a_plain_if():
    scope = {"___unchanged": C.dicts_unchanged, "___cell": [None, None], "___g": {"k": 1}}
    for checks in (
        ["if not ___unchanged(___cell, ___g):", "    if not (___g['k'] == 1):", "        return ___miss"],
        [
            "if not ___unchanged(___cell, ___g):",
            "    if not (___g['k'] == 1 and ___cell[0] is None):",
            "        return ___miss",
            "    ___cell[0] = ___cell[1]",
        ],
    ):
        ref, (link, p) = link_of(guarded(*checks), scope)
        assert "DICTS_SAME" not in {line.split()[1] for line in p.listing()}
        assert same(link, ref, 0) == ref(0)


@pytest.mark.parametrize(
    "expr, as_condition",
    [
        ("(x is ___none or (y is not None and x.a is ___int)) is True", True),
        ("(not x or (___f(y) and 'k' in x)) is True", True),
        ("(x is ___none or ___f(y)) is True", False),  # ___f's value may be true, not True
        ("(x == 1 or y is None) is True", False),  # so may ==
    ],
)
def test_an_is_true_of_a_condition_true_only_as_true_is_tested_as_its_truth(expr, as_condition):
    # ``(a or (b and c)) is True`` (a bound C method's guard in a cell) where the value,
    # wherever true, is True itself: the condition's jumps, no value made and compared
    lines = guarded(f"if not ({expr}):", "    return ___miss")
    ref = python_link(lines)
    link, p = program(lines, ref)
    names = {line.split()[1] for line in p.listing()}
    assert ("ASSERT_IS" not in names and "JUMP_IF_TRUE_OR_POP" not in names) == as_condition
    rng = random.Random(7)
    seen = set()
    for _ in range(300):
        args = arguments(rng)
        want = outcome(ref, args)
        assert outcome(link.passes, args) == want, (expr, args)
        seen.add(want[0] if want[0] in ("pass", "miss") else "escape")
    assert {"pass", "miss"} <= seen


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


def test_a_list_of_known_items_is_checked_by_identity_in_one_op_deciding_as_python():
    # ``len(x) == 3 and items_are(x, (0, 1, 2), types, values)`` of exact ints: one internal
    # op compares an exact list's or tuple's items with the values by identity and decides
    # both checks; anything else (an equal item that is another object, a subclass, another
    # length) runs the two checks as they are.  Oracle: the Python link on the same argument.
    big = 10**20
    check = guarded(
        "if not (___len(x) == 3 and ___items_are(x, (0, 1, 2, ), ___types, ___values)):", "    return ___miss"
    )
    scope = {"___len": len, "___items_are": C.items_are}
    scope.update({"___types": (int, int, str), "___values": (1, big, "a")})
    ref, (link, p) = link_of(check, scope)
    listing = "\n".join(p.listing())
    assert "PARAM_LEN" in listing and "PARAM_ITEMS" in listing, listing

    class Longer(list):
        def __len__(self):
            return 3

    cases = [
        ([1, big, "a"], True),  # the very objects: the shortcut
        ((1, big, "a"), True),
        ([1, int(str(big)), "a"], False),  # equal, not the same object: the checks themselves
        ([1, big, "b"], False),
        ([1, big], False),
        ([1, big, "a", 4], False),
        ([True, big, "a"], False),  # equal, of another type
        (Longer([1, big, "a"]), False),
        (Longer([1, big, "a", 5]), False),
        ("1ba", False),
        (None, False),
    ]
    for arg, by_identity in cases:
        before = link.cache_hits
        assert link.passes(arg) == (ref(arg) is True), arg
        assert link.cache_hits == before + by_identity, arg


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_floats_sign_test_is_its_sign_bit_deciding_as_python(sign):
    # a float guard's ``copysign(1.0, x) == 1.0`` (-0.0 == 0.0 but not its sign): one
    # internal op reads an exact float's sign bit, no call; anything else calls copysign
    # as the plain ops do.  Oracle: the Python link on the same argument.
    import math

    check = guarded(f"if not (___copysign(1.0, x) == {sign!r}):", "    return ___miss")
    ref, (link, p) = link_of(check, {"___copysign": math.copysign})
    assert "CALL" in "\n".join(p.listing())

    class F(float):
        pass

    nan = float("nan")
    floats = [0.0, -0.0, 1.5, -1.5, math.inf, -math.inf, nan, -nan, math.copysign(nan, -1.0), 5e-324]
    others = [0, -0, 3, -3, True, F(-0.0), F(2.0), "x", None, 10**400]
    for arg in floats + others:
        before = link.cache_hits
        assert link.passes(arg) == (ref(arg) is True), arg
        assert link.cache_hits == before + (type(arg) is float), arg


@pytest.mark.parametrize("constant", [2, -7, 10**20, "ab", b"x", 2.5])
def test_a_scalar_guard_passes_its_very_constant_without_comparing_deciding_as_python(constant):
    # ``type(x) is int and x == 2``: where the type is exact int, str or bytes (equal where
    # identical, comparing runs no code) the very constant passes with no comparison; an
    # equal other object, another value, a subclass or a float compares as the plain op
    # does.  Oracle: the Python link on the same argument.
    check = guarded("if not (___type(x) is ___t and x == ___k):", "    return ___miss")
    ref, (link, p) = link_of(check, {"___type": type, "___t": type(constant), "___k": constant})
    assert "PARAM_TYPE_EQ" in "\n".join(p.listing())

    class Sub(type(constant)):
        pass

    other = type(constant)(constant)  # equal; another object for a big int, str, bytes
    if type(constant) is int:
        other = int(str(constant))
    elif type(constant) is str:
        other = "".join([constant[:1], constant[1:]])
    by_identity = type(constant) is not float
    cases = [(constant, by_identity), (other, by_identity and other is constant), (Sub(constant), False)]
    cases += [(v, False) for v in (3, "b", b"y", True, 2.0, None, float("nan"))]
    for arg, shortcut in cases:
        before = link.cache_hits
        assert link.passes(arg) == (ref(arg) is True), arg
        assert link.cache_hits == before + shortcut, arg
