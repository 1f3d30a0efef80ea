"""Raise recipes (`frontend/regions/raise_recipes.py`, `bcfront/_crecipes.c`): a cached call
whose region only makes an exception and raises it has the C call make it, without the
region's frame.  Oracles: plain Python (the exception a native call raises: type, args,
message, attributes, traceback frames and lines, chaining, notes), the Python links
(``checked_links = False``: the region's own code), and for hand-written region code the
same statements run as Python."""

from __future__ import annotations

import json
import sys
import types

import pytest

import bcfront
from bcfront.cfast import C
from bcfront.frontend.regions import raise_recipes
from bcfront.frontend.regions.raise_recipes import region_raise

from .check_programs import frames_run, needs_c_call

needs_c_call(globals())


# -- raising functions ------------------------------------------------------------------------


class MonthError(ValueError):
    def __init__(self, month):
        self.month = month

    def __str__(self):
        return f"bad month {self.month}"


def month_check(m):
    if not 1 <= m <= 12:
        raise MonthError(m)
    return m


def key_error(k):
    return {"a": 1}[k]


def empty_pop(xs):
    return xs.pop()


def _inner(x):
    raise ValueError(f"bad {x}")


def nested(x):
    return _inner(x) + 1


def while_handling(k):
    try:
        return {}[k]
    except KeyError:
        raise ValueError("no key") from None if k == "none" else ValueError("no key")


def raise_from(x):
    try:
        return 1 // x
    except ZeroDivisionError as e:
        raise RuntimeError("division") from e


def os_error(x):
    raise OSError(2, "No such file", f"{x}.txt")


def stop_iteration(x):
    raise StopIteration(x)


class KeywordInit(Exception):
    def __init__(self, a, *, b=2):
        super().__init__(a)
        self.b = b


def keyword_init(x):
    raise KeywordInit(x, b=5)


def type_error(x):
    return x + "s"


def json_error(s):
    return json.loads(s)


def unicode_error(b):
    return b.decode("utf-8")


def some_list_arg(n):
    raise LookupError("items", [n, n + 1])


def with_notes(x):
    e = ValueError(x)
    e.__notes__ = ["a note", str(x)]
    raise e


def with_attributes(x):
    e = KeyError(x)
    e.extra = {"k": x, "l": [x], 1: (x,)}
    raise e


RAISING = [
    (month_check, (13,)),
    (key_error, ("b",)),
    (empty_pop, ([],)),
    (nested, (3,)),
    (while_handling, ("x",)),
    (while_handling, ("none",)),
    (raise_from, (0,)),
    (os_error, ("f",)),
    (stop_iteration, (4,)),
    (keyword_init, (1,)),
    (type_error, (1,)),
    (unicode_error, (b"\xff",)),
    (some_list_arg, (3,)),
    (with_notes, (3,)),
    (with_attributes, (3,)),
]
# whose cached traceback is not the native one, recipe or not (json's C scanner's Python
# twin's frames): compared with the Python links' alone there
OTHER_FRAMES = [(json_error, ('{"a": 1,}',))]

C_FIELDS = ("errno", "strerror", "filename", "value", "encoding", "object", "start", "end", "reason")


def summary(e, depth=0):
    """What a user can see of an exception (its traceback from the catching frame on)."""
    if e is None or depth > 4:
        return None
    tb, frames = e.__traceback__, []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_name, tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return (
        type(e),
        repr(e.args),  # exceptions in them compare by identity
        str(e),
        dict(vars(e)),
        getattr(e, "__notes__", None),
        tuple(getattr(e, f, None) for f in C_FIELDS),
        frames,
        e.__suppress_context__,
        summary(e.__cause__, depth + 1),
        summary(e.__context__, depth + 1),
    )


def outcome(fn, args):
    """The summary of what `fn(*args)` raises (the one frame every call is caught in)."""
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the function's own exception
        return summary(e)
    pytest.fail("no exception")


def outcome_while_handling(fn, args):
    """`outcome` called while the caller handles an exception (implicit chaining)."""
    try:
        raise KeyError("outer")
    except KeyError:
        return outcome(fn, args)


def captured(fn, args, checked=True):
    cf = bcfront.capture(fn)
    cf.checked_links = checked
    for _ in range(2):  # traced, then cached
        outcome(cf, args)
    return cf


def without_frames(s):
    return None if s is None else (*s[:6], s[7], without_frames(s[8]), without_frames(s[9]))


ALL = RAISING + OTHER_FRAMES


@pytest.mark.parametrize("fn, args", ALL, ids=[f"{f.__name__}{a}" for f, a in ALL])
def test_a_cached_raise_is_the_native_one_and_the_region_codes(fn, args):
    cf, reference = captured(fn, args), captured(fn, args, checked=False)
    same = (lambda s: s) if (fn, args) in RAISING else without_frames
    for run in (outcome, outcome_while_handling):
        native = run(fn, args)
        got = run(cf, args)
        assert same(got) == same(native)
        assert got == run(reference, args)
        assert run(cf, args) == got  # again: nothing kept between calls


@pytest.mark.parametrize(
    "fn, args", [(month_check, (13,)), (key_error, ("b",)), (nested, (3,)), (while_handling, ("x",))]
)
def test_a_cached_raise_runs_no_frame_of_the_region(fn, args):
    cf = captured(fn, args)
    raised, frames = frames_run(cf, *args)
    assert isinstance(raised, Exception) and type(raised) is outcome(fn, args)[0]
    assert frames == []


def test_every_raising_region_here_has_a_recipe(monkeypatch):
    from bcfront.frontend.regions import links

    made = []

    def spy(*a):
        made.append(region_raise(*a))
        return made[-1]

    monkeypatch.setattr(links, "region_raise", spy)
    for fn, args in RAISING:
        captured(fn, args)
    assert len(made) >= len(RAISING) and all(made), made


# -- the call's arguments in the exception -------------------------------------------------


def raise_argument(x):
    raise ValueError(x)


def raise_default(x, y=[]):  # noqa: B006 - the very default is what it raises
    raise LookupError(x, y)


def raise_from_star(x, *rest):
    raise KeyError(x, len(rest))


@pytest.mark.parametrize(
    "fn, args",
    [
        (raise_argument, ([1, 2],)),
        (raise_argument, (object(),)),
        (raise_default, ([3],)),
        (raise_from_star, ([4], 1, 2)),
    ],
)
def test_a_recipe_raises_the_very_arguments_of_the_call(fn, args):
    cf = captured(fn, args)
    assert outcome(cf, args) == outcome(fn, args) == outcome(captured(fn, args, checked=False), args)
    raised, frames = frames_run(cf, *args)
    assert isinstance(raised, Exception) and type(raised) is outcome(fn, args)[0]
    assert frames == []  # the recipe's: no frame
    try:
        cf(*args)
    except Exception as e:  # noqa: BLE001
        assert e.args[0] is args[0]  # the argument itself, as natively
        if fn is raise_default:
            assert e.args[1] is fn.__defaults__[0]


# -- a recipe after the capture: what the code reads at run time ---------------------------


class Patched(Exception):
    def __init__(self, x):
        self.x = x


def raise_patched(x):
    raise Patched(x)


def test_a_recipe_reads_the_class_attributes_when_it_runs():
    cf, reference = captured(raise_patched, (1,)), captured(raise_patched, (1,), checked=False)
    old = Patched.__new__

    def new(cls, *args):
        made = old(cls, *args)
        made.patched = True
        return made

    Patched.__new__ = new
    try:
        got, want = outcome(cf, (1,)), outcome(reference, (1,))
        assert got == want and got[3].get("patched") is True
    finally:
        del Patched.__new__


# -- hand-written region code: the recipe against the statements run as Python -------------


def _frame():
    return sys._getframe()


FRAME = _frame()


class Fussy(Exception):
    """Its construction fails with a TypeError: the code's fallback serves."""

    def __init__(self, *args):
        raise TypeError(f"Fussy takes no {args}")


def fallback(cls, args):
    made = cls.__new__(cls, *args)
    made.context_seen = sys.exception()
    return made


GLOBALS = {
    "___ValueError": ValueError,
    "___Fussy": Fussy,
    "___KeyError": KeyError,
    "___fallback": fallback,
    "___TracebackType": types.TracebackType,
    "___frame": FRAME,
    "___handled_exception": sys.exception,
    "___setattr": setattr,
}
if C is not None:
    GLOBALS["___raised"] = C.raised


def run_both(lines):
    """What the recipe raises and what the lines return as Python (`raised` standing for
    the exception itself), each summarized."""
    (recipe,) = region_raise(lines, GLOBALS)
    try:
        C.Recipe(recipe)()
    except BaseException as e:  # noqa: BLE001
        got = e
    else:
        pytest.fail("the recipe raised nothing")
    got.__traceback__ = got.__traceback__.tb_next  # this frame's own entry
    scope = dict(GLOBALS, ___raised=lambda e, chain: e)
    exec("def body():\n" + "\n".join(lines) + "\n", scope)
    return summary(got), summary(scope["body"]())


def test_a_recipe_calls_the_fallback_while_handling_the_type_error():
    lines = [
        "    ___a = ('x', 1)",
        "    try:",
        "        ___e = ___Fussy(*___a)",
        "    except TypeError:",
        "        ___e = ___fallback(___Fussy, ___a)",
        "    ___e.__traceback__ = ___TracebackType(___e.__traceback__, ___frame, 2, 7)",
        "    ___e.__traceback__ = ___TracebackType(___e.__traceback__, ___frame, 4, 9)",
        "    ___setattr(___e, 'not an identifier', [1])",
        "    return ___raised(___e, True)",
    ]
    got, want = run_both(lines)
    assert got[3]["context_seen"].args == ("Fussy takes no ('x', 1)",)
    got[3]["context_seen"] = want[3]["context_seen"] = None  # one TypeError per run
    assert got == want
    assert [line for _, _, line in got[6]] == [9, 7]


def test_a_recipe_chains_the_handled_exception_and_the_region_exceptions():
    lines = [
        "    ___a0 = ('inner',)",
        "    ___e1 = ___KeyError.__new__(___KeyError, *___a0)",
        "    try:",
        "        ___ValueError.__init__(___e1, *___a0)",  # not a KeyError's: still its args
        "    except TypeError:",
        "        pass",
        "    if (___h2 := ___handled_exception()) is not None:",
        "        ___e1.__context__ = ___h2",
        "    ___a3 = ('outer', [___e1], )",
        "    try:",
        "        ___e4 = ___ValueError(*___a3)",
        "    except TypeError:",
        "        ___e4 = ___fallback(___ValueError, ___a3)",
        "    ___e4.__suppress_context__ = True",
        "    ___e4.__context__ = ___e1",
        "    ___r5 = ___e4",
        "    return ___raised(___r5, False)",
    ]
    try:
        raise IndexError("handled")
    except IndexError:
        got, want = run_both(lines)
    assert got == want
    assert got[-1][-1][0] is IndexError  # the inner one's context: what was handled


def test_a_type_error_of_the_base_init_is_caught_and_others_are_not():
    class Picky(ValueError):
        pass

    def init(self, *args):
        raise TypeError("no")

    GLOBALS["___Picky"] = Picky
    lines = [
        "    ___a = (1,)",
        "    ___e = ___Picky.__new__(___Picky, *___a)",
        "    try:",
        "        ___Picky.__init__(___e, *___a)",
        "    except TypeError:",
        "        pass",
        "    return ___raised(___e, True)",
    ]
    try:
        Picky.__init__ = init
        got, want = run_both(lines)
        assert got == want and got[0] is Picky
        Picky.__init__ = lambda self, *a: 1 / 0
        with pytest.raises(ZeroDivisionError):
            C.Recipe(region_raise(lines, GLOBALS)[0])()
    finally:
        del GLOBALS["___Picky"]


@pytest.mark.parametrize(
    "lines",
    [
        ["    return ___raised(x, True)"],  # a parameter
        ["    ___e = ___ValueError(1)", "    return ___raised(___e, True)"],  # another call
        ["    ___e = ___ValueError", "    print(___e)", "    return ___raised(___e, True)"],
        [
            "    ___a = (1,)",
            "    ___e = ___Unknown.__new__(___Unknown, *___a)",
            "    return ___raised(___e, True)",
        ],
        [
            "    ___a = (1,)",
            "    ___e = ___KeyError.__new__(___ValueError, *___a)",
            "    return ___raised(___e, True)",
        ],
        ["    return ___e"],  # no raise
        ["    ___e = ___ValueError", "    return ___raised(___e, ___e)"],  # chain not a constant
    ],
)
def test_other_code_has_no_recipe(lines):
    assert region_raise(lines, GLOBALS, ("x",)) == ()


def test_the_kinds_are_the_c_ones_in_order():
    import pathlib
    import re

    src = (pathlib.Path(bcfront.__file__).parent / "_crecipes.c").read_text()
    made = re.search(r"enum \{ (MADE_[^}]*)\}", src).group(1).replace(" ", "").split(",")[:-1]
    steps = (
        re.search(r"enum \{ (STEP_[^}]*)\}", src, re.S).group(1).replace(" ", "").replace("\n", "").split(",")
    )
    assert made[-1] == "MADE_DICT" and [getattr(raise_recipes, k) for k in made] == list(range(len(made)))
    assert [getattr(raise_recipes, k) for k in steps if k != "STEP_COUNT"] == list(range(len(steps) - 1))


def test_a_malformed_recipe_is_refused_when_made():
    ok = (
        raise_recipes.MADE_STEPS,
        (1, ((raise_recipes.STEP_RAISE, (raise_recipes.MADE_OBJECT, KeyError()), True),)),
    )
    C.Recipe(ok)  # well formed
    steps = raise_recipes.MADE_STEPS
    for bad in [
        (steps, (1, ())),  # no steps
        (steps, (1, ((raise_recipes.STEP_SET, 0, (0, 1)),))),  # not ending in a raise
        (steps, (1, ((raise_recipes.STEP_SET, 5, (0, 1)), ok[1][1][0]))),  # a slot out of range
        (steps, (1, ((raise_recipes.STEP_RAISE, (raise_recipes.MADE_SLOT, 3), True),))),
        (steps, (99, ok[1][1])),  # too many slots
        (steps, (1, ((42, 0),))),  # an unknown step
        (raise_recipes.MADE_SLOT, 0),  # a local outside steps
    ]:
        with pytest.raises(ValueError, match="Recipe"):
            C.Recipe(bad)
