"""Step recipes (`frontend/regions/step_recipes.py`, `bcfront/_crecipes.c`): a cached call whose
region stores into its arguments' items or calls built-in functions, then returns, has the C
call do it, without the region's frame.  Oracles: plain Python (what a native call returns and
leaves in its arguments), the Python links (``checked_links = False``: the region's own code),
and for hand-written region code the same statements run as Python."""

from __future__ import annotations

import bisect
import builtins
import collections
import heapq
import sys
import warnings
import weakref

import pytest

import bcfront
from bcfront.cfast import C
from bcfront.frontend.regions import step_recipes
from bcfront.frontend.regions.raise_recipes import MADE_DICT, MADE_PARAM, MADE_SLOT, MADE_STEPS, STEP_SET
from bcfront.frontend.regions.result_recipes import MADE_LIST, MADE_OBJECT, MADE_TUPLE
from bcfront.frontend.regions.step_recipes import (
    STEP_APPLY,
    STEP_RETURN,
    STEP_SETITEM,
    frameless,
    region_steps,
)

from .check_programs import frames_run, needs_c_call
from .test_whole_lists import seen_or_added

needs_c_call(globals())


def pushed(xs, x):
    heapq.heappush(xs, x)
    return xs


def popped(xs):
    return heapq.heappop(xs), xs


def grown(xs):
    xs.append(len(xs))
    return len(xs)


Point = collections.namedtuple("Point", "x y")


def point(a):
    return Point(a, 2)


def scaled(xs, k):
    for i in range(len(xs)):
        xs[i] = xs[i] * k


CALLS = [
    (pushed, [([1, 5, 3], 2), ([1, 5, 3], 2), ([1, 5, 3], 0), ([1, 5, 3], 2)]),
    (popped, [([5, 1, 3],), ([5, 1, 3],), ([],), ([5, 1, 3],), ([],)]),
    (grown, [([3, 1, 2],), ([3, 1, 2],), ([],), ([3, 1, 2],)]),
    (point, [(3,), (3,), (4,), (3,)]),
    (scaled, [([1.5, 2.5], 2.0), ([1.5, 2.5], 2.0), ([1.5], 2.0), ([1.5, 2.5], 2.0)]),
]


def copied(args) -> list:
    return [list(a) if type(a) is list else a for a in args]


def run(fn, args):
    """What a call returns or raises, and the arguments after it (a fresh copy each)."""
    args = copied(args)
    try:
        got = ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001
        got = ("raise", type(e), str(e))
    return got, args


@pytest.mark.parametrize("fn, calls", CALLS, ids=[f.__name__ for f, _ in CALLS])
def test_captured_calls_equal_plain_python_and_the_python_links(fn, calls):
    checked = bcfront.capture(fn)
    python = bcfront.capture(fn)
    python.checked_links = False
    for args in calls * 2:
        want = run(fn, args)
        assert run(checked, args) == want
        assert run(python, args) == want
    assert sum(getattr(e.link_names.checked, "hits", 0) for e in checked._entries) > 0


@pytest.mark.parametrize("fn, args", [(pushed, ([1, 5, 3], 2)), (grown, ([3, 1, 2],)), (point, (3,))])
def test_a_region_of_stores_and_builtin_calls_runs_without_a_frame(fn, args):
    cf = bcfront.capture(fn)
    cf(*copied(args))
    cf(*copied(args))  # the first cached call makes the CheckedLink (`links.PendingCheckedLink`)
    fresh = copied(args)
    result, frames = frames_run(cf, *fresh)
    want, after = run(fn, args)
    assert ("ok", result) == want and fresh == after and type(result) is type(want[1])
    assert frames == []
    if fn is pushed:
        assert result is fresh[0]  # the very list it was given, as natively


def test_region_steps_reads_stores_builtin_calls_and_the_result(monkeypatch):
    monkeypatch.setattr(step_recipes, "FORWARD_FIXED_SETS", False)  # a step per statement
    lines = ["    ___r = xs", "    xs[:] = [1, 2]", "    return ___r", "    return None"]
    full = slice(None, None, None)
    store = (
        STEP_SETITEM,
        (MADE_PARAM, 0),
        (MADE_OBJECT, full),
        (MADE_LIST, ((MADE_OBJECT, 1), (MADE_OBJECT, 2))),
    )
    assert region_steps(lines, {}, ("xs", "___r"), ("xs",)) == (
        (MADE_STEPS, (1, ((STEP_SET, 0, (MADE_PARAM, 0)), store, (STEP_RETURN, (MADE_SLOT, 0))))),
    )
    call = ["    ___t = ___new(___P, (3, 2))", "    return ___t"]
    scope = {"___new": tuple.__new__, "___P": Point}
    steps = ((STEP_APPLY, 0, tuple.__new__, ((MADE_OBJECT, Point), (MADE_OBJECT, (3, 2)))),)
    assert region_steps(call, scope, ("___t",)) == (
        (MADE_STEPS, (1, (*steps, (STEP_RETURN, (MADE_SLOT, 0))))),
    )
    item = ["    d[1] = (x, 2)", "    return None"]
    got = region_steps(item, {}, ("d", "x"), ("d", "x"))
    pair = (MADE_TUPLE, ((MADE_PARAM, 1), (MADE_OBJECT, 2)))
    assert got == (
        (
            MADE_STEPS,
            (0, ((STEP_SETITEM, (MADE_PARAM, 0), (MADE_OBJECT, 1), pair), (STEP_RETURN, (0, None)))),
        ),
    )


@pytest.mark.parametrize(
    "lines, scope",
    [
        (["    ___r = ___f(x)", "    return ___r"], {"___f": lambda x: x}),  # a Python function
        (["    ___r = ___f()", "    return ___r"], {"___f": builtins.locals}),  # reads the frame
        (["    ___r = ___f(1)", "    return ___r"], {"___f": sys._getframe}),
        (["    ___r = ___f(x, key=1)", "    return ___r"], {"___f": len}),  # keywords
        (["    ___r = ___f(*x)", "    return ___r"], {"___f": len}),  # unpacking
        (["    x.a = 1", "    return None"], {}),  # an attribute store
        (["    x[i + 1] = 1", "    return None"], {}),  # a key computed
        (["    x[:n] = [1]", "    return None"], {}),  # a slice bound not a constant
        (["    ___r = x + 1", "    return ___r"], {}),  # an operator
        (["    ___r = y", "    return ___r"], {}),  # a local never bound
    ],
)
def test_region_steps_refuses_what_it_cannot_do_exactly(lines, scope):
    assert region_steps(lines, scope, ("x", "y", "i", "n", "___r"), ("x", "i", "n")) == ()


def test_frameless_builtins_are_those_reading_no_frame():
    assert frameless(len) and frameless(tuple.__new__) and frameless([].append) and frameless(heapq.heappush)
    for fn in (builtins.locals, builtins.vars, builtins.globals, builtins.dir, builtins.eval, builtins.exec):
        assert not frameless(fn)
    assert (
        not frameless(sys._getframe) and not frameless(warnings.warn) and not frameless(builtins.__import__)
    )
    assert not frameless(pushed) and not frameless(tuple)  # a Python function, a class


def _python(lines, params, scope=None):
    src = f"def _r({', '.join(params)}):\n" + "\n".join(lines) + "\n"
    scope = {"___divmod": divmod, **(scope or {})}
    exec(src, scope)
    return scope


R = ["    ___r = None", "    xs[1] = x", "    ___a(xs, 5)", "    return ___r"]
FORWARDED = [  # (region lines, its locals, its parameters, arguments, steps left: 0 a value)
    (
        ["    ___r = xs", "    xs[:] = [1, 2]", "    return ___r", "    return None"],
        ("___r",),
        ("xs",),
        ([3],),
        2,
    ),
    (["    ___r = xs", "    return ___r"], ("___r",), ("xs",), ([3],), 0),
    (R, ("___r",), ("xs", "x"), ([1, 5], 2), 3),
    (R, ("___r",), ("xs", "x"), ([1], 2), 3),  # (raises)
    (
        ["    ___k = 1", "    ___t = (x, ___k)", "    xs[___k] = ___t", "    return ___t"],
        ("___k", "___t"),
        ("xs", "x"),
        ([0, 0], 4),
        3,
    ),
    (["    ___r = x", "    ___r = ___len(xs)", "    return ___r"], ("___r",), ("xs", "x"), ([0], 4), 3),
    (  # ___s is ___r, a local set once: read as it, without its step
        ["    ___r = ___len(xs)", "    ___s = ___r", "    return (___s, ___r)"],
        ("___r", "___s"),
        ("xs",),
        ([0],),
        2,
    ),
    (  # ___s is set twice: a step of its own
        ["    ___r = ___len(xs)", "    ___s = ___r", "    ___s = ___len(xs)", "    return (___s, ___r)"],
        ("___r", "___s"),
        ("xs",),
        ([0],),
        4,
    ),
    (  # ___r is set twice: ___s holds its first value, a step of its own
        ["    ___r = ___len(xs)", "    ___s = ___r", "    ___r = ___len(___s)", "    return (___s, ___r)"],
        ("___r", "___s"),
        ("xs",),
        ([0],),
        4,
    ),
]


@pytest.mark.parametrize("lines, local_names, params, args, left", FORWARDED)
def test_a_constant_parameter_or_local_set_once_is_read_as_itself_without_its_step(
    lines, local_names, params, args, left, monkeypatch
):
    # oracle: the recipe with a step per statement (``FORWARD_FIXED_SETS = False``), and the
    # statements run as Python; the forwarded one makes the same objects, in the same state
    scope = {"___a": list.append, "___len": len}
    forwarded = region_steps(lines, scope, local_names, params)
    monkeypatch.setattr(step_recipes, "FORWARD_FIXED_SETS", False)
    plain = region_steps(lines, scope, local_names, params)
    assert len(forwarded[0][1][1]) == left if forwarded[0][0] == MADE_STEPS else left == 0
    python = _python(lines, list(params), scope)["_r"]
    outcomes = []
    for make in (C.Recipe(forwarded[0]), C.Recipe(plain[0]), python):
        fresh = [list(a) if type(a) is list else a for a in args]
        try:
            r = ("ok", make(*fresh))
        except Exception as e:  # noqa: BLE001 - what it raises is compared
            r = ("raise", type(e), str(e))
        same = [r[1] is a for a in fresh] if r[0] == "ok" else []
        outcomes.append((r, fresh, same))
    assert outcomes[0] == outcomes[1] == outcomes[2]


def test_a_call_statements_result_is_let_go_as_the_statement_ends_as_python_does():
    # ``xs.pop()`` alone: Python's POP_TOP drops the popped item right away, so its __del__
    # runs before the next statement's; the recipe lets the result go there too, no local
    # holding it to the end.  Oracle: the same statements run as Python.
    log: list = []

    class Noisy:
        def __del__(self):
            log.append("released")

    lines = ["    ___pop(xs)", "    ___log('next')", "    return xs"]
    scope = {"___pop": list.pop, "___log": log.append}
    recipe = region_steps(lines, scope, (), ("xs",))
    assert recipe and recipe[0][0] == MADE_STEPS
    orders = []
    for make in (C.Recipe(recipe[0]), _python(lines, ["xs"], scope)["_r"]):
        log.clear()
        assert make([Noisy()]) == []
        orders.append(list(log))
    assert orders[0] == orders[1] == ["released", "next"]


@pytest.mark.parametrize("name, order", [("___e", ["released", "next"]), ("e", ["next", "released"])])
def test_an_unread_result_in_bcfronts_own_local_is_let_go_at_once_a_users_local_keeps_it(name, order):
    # ``___e = xs.pop()`` where nothing reads ___e is the region's spelling of the user's
    # ``xs.pop()`` statement (`entry.early_reads`): its result goes at once, as the user's
    # POP_TOP lets it go; a user's own local ``e`` holds it to the end, as the user's frame
    # (and the region's code run as Python, the oracle here) does.
    log: list = []

    class Noisy:
        def __del__(self):
            log.append("released")

    lines = [f"    {name} = ___pop(xs)", "    ___log('next')", "    return xs"]
    scope = {"___pop": list.pop, "___log": log.append}
    recipe = region_steps(lines, scope, (name,), ("xs",), temp_prefix="___")
    assert recipe[0][1][0] == (0 if name.startswith("___") else 1)
    log.clear()
    assert C.Recipe(recipe[0])([Noisy()]) == []
    assert log == order
    log.clear()
    _python(lines, ["xs"], scope)["_r"]([Noisy()])
    assert log == ["next", "released"]  # the region's code as Python: the local holds it


@pytest.mark.parametrize(
    "lines, params, slots",
    [
        (R, ["xs", "x"], 0),  # ___r forwarded, the call's result discarded: no local left
        (["    ___r = ___len(xs)", "    ___a(xs, ___r)", "    return ___r"], ["xs"], 1),
        (["    ___k = 1", "    ___t = (xs, ___k)", "    ___u = ___len(xs)", "    return ___u"], ["xs"], 2),
    ],
)
def test_a_step_recipe_keeps_a_local_only_for_what_its_steps_still_set(lines, params, slots, monkeypatch):
    # the locals left after forwarding are numbered anew (the C call clears and drops only
    # those); the recipe does what the plain one and the statements as Python do
    scope = {"___a": list.append, "___len": len}
    names = ("___r", "___k", "___t", "___u")
    recipe = region_steps(lines, scope, names, params)
    assert recipe[0][0] == MADE_STEPS and recipe[0][1][0] == slots
    monkeypatch.setattr(step_recipes, "FORWARD_FIXED_SETS", False)
    plain = region_steps(lines, scope, names, params)
    args = ([1, 5], 2)[: len(params)]
    outcomes = []
    for make in (C.Recipe(recipe[0]), C.Recipe(plain[0]), _python(lines, params, scope)["_r"]):
        fresh = copied(args)
        outcomes.append((repr(make(*fresh)), fresh))
    assert outcomes[0] == outcomes[1] == outcomes[2]


@pytest.mark.parametrize("args", [((7, 2), [0, 0]), ((7, 0), [0, 0]), ((7, 2), [0])])
def test_a_step_recipe_does_what_its_statements_do_errors_included(args):
    lines = ["    ___q = ___divmod(*p)", "    xs[1] = ___q", "    return xs"]  # the recipe spells *p out
    recipe = (
        MADE_STEPS,
        (
            1,
            (
                (STEP_APPLY, 0, divmod, ((MADE_OBJECT, args[0][0]), (MADE_OBJECT, args[0][1]))),
                (STEP_SETITEM, (MADE_PARAM, 1), (MADE_OBJECT, 1), (MADE_SLOT, 0)),
                (STEP_RETURN, (MADE_PARAM, 1)),
            ),
        ),
    )
    made = C.Recipe(recipe)
    xs1, xs2 = list(args[1]), list(args[1])
    scope = _python(lines, ["p", "xs"])
    try:
        want = ("ok", scope["_r"](args[0], xs1))
    except Exception as e:  # noqa: BLE001
        want = ("raise", type(e), str(e))
    try:
        got = ("ok", made(args[0], xs2))
    except Exception as e:  # noqa: BLE001
        got = ("raise", type(e), str(e))
    assert got == want and xs1 == xs2
    if got[0] == "ok":
        assert got[1] is xs2  # the parameter itself


@pytest.mark.parametrize(
    "recipe",
    [
        (MADE_STEPS, (1, ((STEP_APPLY, 0, len, ((MADE_OBJECT, "ab"),)),))),  # no ending
        (MADE_STEPS, (1, ((STEP_RETURN, (MADE_OBJECT, 1)), (STEP_RETURN, (MADE_OBJECT, 2))))),  # two
        (MADE_STEPS, (1, ((STEP_APPLY, 0, tuple, ()), (STEP_RETURN, (MADE_SLOT, 0))))),  # not a C function
        (MADE_STEPS, (1, ((STEP_APPLY, 3, len, ()), (STEP_RETURN, (MADE_SLOT, 0))))),  # no such slot
        (
            MADE_STEPS,
            (0, ((STEP_SETITEM, (MADE_PARAM, 0), (MADE_OBJECT, 1)), (STEP_RETURN, (MADE_OBJECT, 1)))),
        ),
        (MADE_STEPS, (1, ((STEP_APPLY, 0, len, tuple((MADE_OBJECT, i) for i in range(17))),))),
        *(  # a slot below 0 other than a STEP_APPLY's -1 (its result discarded)
            (MADE_STEPS, (1, ((kind, dst, *rest), (STEP_RETURN, (MADE_OBJECT, 1)))))
            for kind, dst, *rest in [
                (STEP_APPLY, -2, len, ((MADE_OBJECT, "ab"),)),
                (STEP_APPLY, 2**70, len, ((MADE_OBJECT, "ab"),)),
                (STEP_SET, -1, (MADE_OBJECT, 1)),
            ]
        ),
    ],
)
def test_a_malformed_step_recipe_is_refused_when_made(recipe):
    with pytest.raises(ValueError, match="Recipe"):
        C.Recipe(recipe)


class Logged:
    """An item that logs its release (the order in which a store lets go of the old items)."""

    log: list = []

    def __init__(self, name):
        self.name = name

    def __del__(self):
        Logged.log.append(self.name)


class ListSub(list):
    pass


@pytest.mark.parametrize("old", [0, 1, 3, 4, 6, 20])
@pytest.mark.parametrize("new", [0, 2, 4, 7])
@pytest.mark.parametrize("kind", [list, ListSub])
def test_a_list_written_back_whole_is_as_the_slice_store_leaves_it(old, new, kind):
    """``xs[:] = [...]`` on an exact list of few items is done in place (`list_replace`):
    the same contents, the same list, the old items released in the same order."""
    parts = tuple((MADE_OBJECT, i) for i in range(new))
    full = (MADE_OBJECT, slice(None, None, None))
    recipe = C.Recipe(
        (
            MADE_STEPS,
            (0, ((STEP_SETITEM, (MADE_PARAM, 0), full, (MADE_LIST, parts)), (STEP_RETURN, (MADE_PARAM, 0)))),
        )
    )
    results = []
    for how in ("python", "recipe"):
        xs = kind(Logged(f"{how}{i}") for i in range(old))
        Logged.log = []
        if how == "python":
            xs[:] = list(range(new))
            got = xs
        else:
            got = recipe(xs)
        assert got is xs and type(xs) is kind
        results.append((list(xs), [name.removeprefix(how) for name in Logged.log]))
    assert results[0] == results[1] == (list(range(new)), [str(i) for i in reversed(range(old))])


class Growing:
    """A key whose hashing grows the list the store then replaces."""

    def __init__(self, xs):
        self.xs = xs

    def __hash__(self):
        self.xs.extend(range(5000))  # past any room kept for a few items
        return 1


def test_a_list_grown_while_the_new_items_are_made_is_replaced_as_python_does():
    parts = ((MADE_DICT, ((MADE_PARAM, 1), (MADE_OBJECT, 1))),)  # [{key: 1}]
    full = (MADE_OBJECT, slice(None, None, None))
    recipe = C.Recipe(
        (
            MADE_STEPS,
            (0, ((STEP_SETITEM, (MADE_PARAM, 0), full, (MADE_LIST, parts)), (STEP_RETURN, (MADE_PARAM, 0)))),
        )
    )
    xs = [1, 2]
    key = Growing(xs)
    xs[:] = [{key: 1}]
    ys = [1, 2]
    got = recipe(ys, Growing(ys))
    assert got is ys and len(ys) == len(xs) == 1 and list(ys[0].values()) == [1]


class _LoggedList(list):
    def __setitem__(self, k, v):
        self.log = [*getattr(self, "log", []), k]
        super().__setitem__(k, v)


class _Item:
    pass


@pytest.mark.parametrize("key", [0, 2, -1, -3, 3, -4, 2**70, True])
@pytest.mark.parametrize("kind", [list, _LoggedList])
def test_an_item_store_does_what_the_statement_does(key, kind):
    # an exact list and an exact int key in range store directly (`list_item_store`); any
    # other store -- out of range, too large an index, a bool, a subclass -- the generic way
    old = _Item()
    gone = weakref.ref(old)
    xs1, xs2 = kind([old, 1, 2]), kind([old, 1, 2])
    del old
    recipe = (MADE_STEPS, (0, ((STEP_SETITEM, (MADE_PARAM, 0), (MADE_OBJECT, key), (MADE_OBJECT, "v")),
                               (STEP_RETURN, (MADE_PARAM, 0)))))  # fmt: skip
    made = C.Recipe(recipe)
    try:
        xs1[key] = "v"
        want = ("ok",)
    except Exception as e:  # noqa: BLE001
        want = ("raise", type(e), str(e))
    try:
        got = ("ok",) if made(xs2) is xs2 else ("wrong result",)
    except Exception as e:  # noqa: BLE001
        got = ("raise", type(e), str(e))
    assert got == want and xs1 == xs2 and getattr(xs1, "log", None) == getattr(xs2, "log", None)
    if want == ("ok",) and key in (0, -3):
        del xs1
        assert gone() is None  # the item it replaced let go


def test_items_appended_to_a_whole_list_are_written_back_without_a_frame():
    # once the list's length varied (`semantics.whole_lists`), the appended item is written
    # back by ``list.append`` (a built-in method a step recipe calls), not ``xs.extend``
    cf = bcfront.capture(seen_or_added)
    for n in range(6):  # lengths vary: the whole-list entries
        xs = list(range(n))
        assert cf(list(xs), 99) == seen_or_added(list(xs), 99)
    cases = (([1, 2, 3, 4, 5, 6, 7, 8], 50), ([3, 1], 7), ([], 0))
    for xs, x in cases * 3:  # (the first cached call that reaches an entry makes its CheckedLink)
        cf(list(xs), x)
    made = len(cf._entries)
    for xs, x in cases:
        fresh, want = list(xs), list(xs)
        result, frames = frames_run(cf, fresh, x)
        assert result == seen_or_added(want, x) and fresh == want
        assert frames == []
    assert len(cf._entries) == made


def rooted_bisect(*args):
    return bisect.bisect(*args)


def test_a_star_args_region_reads_its_items_as_parameters_without_a_frame():
    # ``def f(*args): return g(*args)`` (a C function behind a Python root): the region's
    # ``___bisect_right(args[0], args[1])`` is a step recipe reading the call's arguments
    cf = bcfront.capture(rooted_bisect)
    for n in (3, 5, 2, 6, 1):  # the list whole from its third length
        xs = sorted(range(0, 2 * n, 2))
        assert cf(xs, 3) == bisect.bisect(xs, 3)
    cases = (([1, 3, 5, 7], 4), ([0, 1], 0), ([2, 2, 2, 9, 10], 2))
    for xs, x in cases * 3:  # (the first cached call reaching an entry makes its CheckedLink)
        cf(list(xs), x)
    made = len(cf._entries)
    for xs, x in cases:
        result, frames = frames_run(cf, list(xs), x)
        assert result == bisect.bisect(xs, x) and frames == []
    assert len(cf._entries) == made


def test_a_recipe_reading_an_args_item_not_passed_runs_the_region_instead():
    # (the checks read what the region reads, so this cannot happen through a capture: the
    # C call still never reads past the arguments)
    from bcfront.frontend.regions.check_program import LinkParameters, compile_checks

    def region(x, *args):
        return ("region", x, args)

    recipe = C.Recipe(
        (MADE_STEPS, (1, ((STEP_APPLY, 0, len, ((MADE_PARAM, 2),)), (STEP_RETURN, (MADE_SLOT, 0)))))
    )
    params = LinkParameters(("x",), "args", (), None)
    p = compile_checks(
        ["    if not (x == 1):", "        return ___miss"], "___miss", {}, params, ("x", "args")
    )
    link = C.CheckedLink(p.code, p.consts, p.nlocals, p.depth, 1, True, p.guarded, region, region, (recipe,))
    assert link(1, "a", "bcd") == 3  # args[1]: the recipe
    assert link(1, "a") == ("region", 1, ("a",))  # not passed: the region


class _Str(str):
    pass


@pytest.mark.parametrize(
    "fn, args",
    [
        (list.append, ([1], 2)),  # a method descriptor, METH_O
        (list.append, (ListSub([1]), 2)),  # ... on a subclass of its type
        (list.append, ((1,), 2)),  # ... on another type: its TypeError
        (list.append, (None, 2)),
        (list.append, ([1], 2, 3)),  # ... with more arguments than it takes
        (list.append, ([1],)),
        (list.pop, ([1, 2],)),  # METH_FASTCALL
        (list.pop, ([1, 2], 0)),
        (list.pop, ([],)),
        (list.pop, ([1], "x")),
        (list.insert, ([1, 2], -1, 9)),
        (dict.get, ({"a": 1}, "a")),
        (dict.get, ({"a": 1}, "b", 0)),
        (dict.get, ({"a": 1}, [])),  # unhashable: its TypeError
        (list.clear, ([1, 2],)),  # METH_NOARGS
        (list.clear, ([1, 2], 3)),
        (str.upper, (_Str("ab"),)),
        (str.join, (",", ["a", "b"])),
        (str.join, (",", [1])),
        (len, ([1, 2],)),  # a builtin function, METH_O
        (len, (3,)),
        (divmod, (7, 2)),  # ... METH_FASTCALL
        (divmod, (7, 0)),
        (heapq.heappush, ([1, 5, 3], 2)),
        (heapq.heappush, ((1,), 2)),
    ],
)
def test_a_c_function_a_step_applies_directly_does_what_its_call_does(fn, args):
    # STEP_APPLY of a C function or method descriptor whose convention is METH_O,
    # METH_NOARGS or METH_FASTCALL calls its C function itself (`_crecipes.c` apply_direct);
    # oracles: the call made as Python, and the step through PyObject_Vectorcall
    parts = tuple((MADE_PARAM, i) for i in range(len(args)))
    made = C.Recipe((MADE_STEPS, (1, ((STEP_APPLY, 0, fn, parts), (STEP_RETURN, (MADE_SLOT, 0))))))

    def outcome(call):
        fresh = copied(args)
        fresh = [ListSub(a) if type(b) is ListSub else a for a, b in zip(fresh, args)]
        try:
            r = ("ok", call(*fresh))
        except Exception as e:  # noqa: BLE001 - what it raises is compared
            r = ("raise", type(e), str(e))
        return r, fresh, [type(a) for a in fresh]

    was = C._direct_calls(False)
    try:
        through_vectorcall = outcome(made)
    finally:
        C._direct_calls(was)
    assert was is True
    assert outcome(made) == outcome(fn) == through_vectorcall
