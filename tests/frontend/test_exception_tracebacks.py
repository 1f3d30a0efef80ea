"""An exception raised in traced code and read after a graph break has eager's traceback (O30).

The continuation gets the exception rebuilt as a real object; its ``__traceback__``
must list the same frames (file, function, line, source line) that CPython's would, and
the C fields (``StopIteration.value``) and chaining must survive.  Oracle: the plain
function.  Pure Python: runs on 3.11-3.13.
"""

from __future__ import annotations

import io
import sys
import traceback
from contextlib import redirect_stdout

import pytest

import bcfront
from bcfront.explain import reports_of


def frames(e):
    return [(f.filename, f.name, f.lineno, f.line) for f in traceback.extract_tb(e.__traceback__)]


def brk():
    print("break")  # print is a graph break: the caught exception crosses it


def raised_here(a):
    try:
        raise StopIteration(a)
    except StopIteration as e:
        brk()
        return e.value, frames(e)


def inner(a):
    raise KeyError(a)


def middle(a):
    return inner(a) + 1


def raised_two_calls_down(a):
    try:
        middle(a)
    except KeyError as e:
        brk()
        return e.args, frames(e)


def raised_again_by_name(a):
    try:
        raise ValueError(a)
    except ValueError as e:
        try:
            raise e
        except ValueError as e2:
            brk()
            return frames(e2), e2.__context__ is None


def bare_raise_adds_nothing(a):
    try:
        try:
            inner(a)
        except KeyError:
            raise
    except KeyError as e:
        brk()
        return frames(e)


def kept_in_a_local(a):
    err = None
    try:
        {}[a]
    except KeyError as e:
        err = e
    brk()
    return err.args, frames(err)


def formatted_after_break(a):
    try:
        middle(a)
    except KeyError as e:
        brk()
        return traceback.format_tb(e.__traceback__)  # source lines and carets included


def chained_cause(a):
    try:
        try:
            inner(a)
        except KeyError as k:
            raise ValueError("wrapped") from k
    except ValueError as e:
        brk()
        return frames(e), frames(e.__cause__), e.__suppress_context__


CASES = [
    raised_here,
    raised_two_calls_down,
    raised_again_by_name,
    bare_raise_adds_nothing,
    kept_in_a_local,
    formatted_after_break,
    chained_cause,
]


def _run(fn, arg):
    out = io.StringIO()
    with redirect_stdout(out):
        result = fn(arg)
    return result, out.getvalue()


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_traceback_of_an_exception_crossing_a_break_matches_eager(fn):
    cap = bcfront.capture(fn)
    for arg in (7, "k", 7):
        assert _run(cap, arg) == _run(fn, arg)
    reports = reports_of(cap)  # the function, its continuations and what they capture
    assert reports[0].graph_breaks, "the case must really cross a graph break"
    own = [r for r in reports if r.function.split(".<resume@")[0] == fn.__qualname__]
    notes = [n for r in own for n in r.notes + r.warnings]
    assert not any("natively" in n or "internal error" in n for n in notes), notes
    # traceback's own loops (a real generator stepped once per frame) may end in a
    # loop-limit fallback: visible, in the library, never an internal error
    lib = [n for r in reports if r not in own for n in r.notes + r.warnings]
    assert not any("internal error" in n for n in lib), lib


def test_rebuilt_exception_traceback_does_not_show_bcfront_frames():
    cap = bcfront.capture(raised_two_calls_down)
    _, tb = _run(cap, 3)[0]
    assert all("bcfront" not in f[0] for f in tb), tb
    assert sys.exc_info() == (None, None, None)  # rebuilding raised nothing that stays handled


def test_capturing_leaves_linecache_alone_and_tracebacks_show_generated_source():
    """Capture adds no key to ``linecache.cache``: traced code may have read its keys (here
    through ``traceback.extract_tb``) and the fresh entry's guards must still pass.  A
    traceback through a region still shows the generated line (read lazily)."""
    import linecache

    def f(a):
        try:
            inner(a)
        except KeyError as e:
            return frames(e)

    before = set(linecache.cache)
    cf = bcfront.capture(f)
    assert cf(3) == f(3)
    assert cf(4) == f(4)
    guard = cf.entries[0].guard  # generated code, like the region
    name = guard.__code__.co_filename
    assert name.startswith("bcfront:") and name not in before and name not in linecache.cache
    assert linecache.getline(name, 1, guard.__globals__).startswith("def ")


# -- an exception raised by a cached region -------------------------------------------------


def reduces(xs, keep):
    import functools
    import operator

    return functools.reduce(operator.add, xs)  # [] raises TypeError in C, in a cached region


def _user_frames(e):
    """The frames of `e`'s traceback from user code (not bcfront's own or generated code)."""
    import os

    package = os.path.dirname(bcfront.__file__)
    return [f for f in frames(e) if not f[0].startswith(("bcfront:", package)) and f[1] != "_raises_from"]


def _raises_from(fn, *args):
    try:
        fn(*args)
    except TypeError as e:
        return e
    raise AssertionError("expected a TypeError")


class Held:
    """An argument whose lifetime the test watches."""


def test_a_cached_region_raising_gives_eager_frames_on_every_call():
    cap = bcfront.capture(reduces)
    want = _user_frames(_raises_from(reduces, [], None))
    for _ in range(3):  # capture, then the cached region (its traceback frames made once)
        got = _raises_from(cap, [], None)
        assert _user_frames(got) == want
        assert str(got) == "reduce() of empty iterable with no initial value"


def test_the_frames_of_a_cached_raise_keep_no_argument_alive():
    """The raisers' frames are kept for the next raise; a frame keeps its caller, and the
    region's frame holds the call's arguments."""
    import gc
    import weakref

    from bcfront.frontend.regions import tracebacks

    cap = bcfront.capture(reduces)
    _raises_from(cap, [], None)  # captured
    tracebacks._FRAMES.clear()
    held = Held()
    ref = weakref.ref(held)
    e = _raises_from(cap, [], held)  # cached: its frames are made now
    assert tracebacks._FRAMES, "the cached region's raise made its frames once"
    del e, held
    gc.collect()
    assert ref() is None


def test_rewriting_one_traceback_leaves_the_next_raise_alone():
    cap = bcfront.capture(reduces)
    _raises_from(cap, [], None)
    first = _raises_from(cap, [], None)
    tb = first.__traceback__
    while tb.tb_next is not None and tb.tb_next.tb_next is not None:
        tb = tb.tb_next
    tb.tb_next = None  # as a library hiding its own frames does
    assert _user_frames(_raises_from(cap, [], None)) == _user_frames(_raises_from(reduces, [], None))


def test_fast_attach_matches_attach_by_raising():
    from bcfront.frontend.regions.tracebacks import attach, attach_by_raising

    here = __file__
    entries = ((here, "outer", (10, 10, 4, 12)), (here, "inner", (20, 21, None, None)))
    fast, plain = attach(KeyError("k"), entries), attach_by_raising(KeyError("k"), entries)
    assert frames(fast) == frames(plain) and len(frames(fast)) == 2
    want = traceback.format_exception(plain)
    assert traceback.format_exception(fast) == want
    assert (fast.__context__, fast.__cause__) == (None, None)


# -- the exception a cached region raises, made inline (codegen.Rebuilder._exception) ------------


class TaggedError(ValueError):
    def __init__(self, code, note="n"):
        super().__init__(code)
        self.code, self.note = code, note


class NoArgsError(LookupError):
    def __init__(self):
        super().__init__()
        self.why = "none"


class FileGone(FileNotFoundError):  # OSError's C fields come from its __init__
    pass


class PlainError(ValueError):  # no __init__ of its own: made by calling it
    pass


class CountingMeta(type):
    """A metaclass whose ``__call__`` has an effect: calling the class once more than the
    function did would show in `made`."""

    made = 0

    def __call__(cls, *args):
        CountingMeta.made += 1
        return super().__call__(*args)


class MetaError(ValueError, metaclass=CountingMeta):
    pass


def raises_kind(kind, x):
    if kind == 0:
        raise KeyError(x)
    if kind == 1:
        raise TaggedError(x, note=str(x))
    if kind == 2:
        raise NoArgsError()
    if kind == 3:
        raise FileGone(2, "gone", str(x))
    if kind == 4:
        raise StopIteration(x)
    if kind == 5:
        raise OSError(2, "no such file", f"f{x}")  # a FileNotFoundError, by its errno
    if kind == 7:
        raise PlainError(x, "two")
    if kind == 8:
        raise MetaError(x)
    try:
        raise TaggedError(x)
    except TaggedError as e:
        raise KeyError(x) from e


def _outcome(fn, *args):
    try:
        fn(*args)
    except BaseException as e:  # noqa: BLE001 - compared with the plain function's
        cause = e.__cause__
        return (
            type(e),
            e.args,
            str(e),
            {k: v for k, v in vars(e).items()},
            getattr(e, "errno", None),
            getattr(e, "filename", None),
            getattr(e, "value", None),
            (type(cause), cause.args) if cause is not None else None,
            e.__suppress_context__,
            [fr for fr in frames(e) if not fr[0].startswith("bcfront:")],
        )
    raise AssertionError("expected an exception")


KINDS = range(8)


@pytest.mark.parametrize("kind", KINDS)
def test_a_cached_raise_makes_the_exception_eager_makes(kind):
    cf = bcfront.capture(raises_kind)
    want = _outcome(raises_kind, kind, 7)
    for _ in range(3):  # the first call captures; the others are cached
        got = _outcome(cf, kind, 7)
        assert got[:-1] == want[:-1]
        assert got[-1][-1] == want[-1][-1]  # the raising line, where eager raised it


def test_an_exception_class_whose_metaclass_has_a_call_is_made_through_it():
    """A metaclass's ``__call__`` runs each time the class is called (here: counts), also
    where the class is an exception class (it was made as if called by `type`)."""
    cf = bcfront.capture(raises_kind)
    before = CountingMeta.made
    want = _outcome(raises_kind, 8, 7)
    assert CountingMeta.made == before + 1
    for i in range(3):
        assert _outcome(cf, 8, 7)[:-1] == want[:-1]
        assert CountingMeta.made == before + 2 + i


def test_an_exception_made_at_a_break_and_raised_after_it_shows_the_raising_frame():
    # O64: the trace raises a real object (made natively, at the break): its frames too
    cf = bcfront.capture(raises_kind)
    want = _outcome(raises_kind, 8, 7)[-1]
    _outcome(cf, 8, 7)  # captured (the metaclass call breaks the graph)
    assert _outcome(cf, 8, 7)[-1] == want  # cached (the first call has capture's frames too)


def _raise_given(e):
    raise e


def raises_through_a_helper(e, x):
    y = x + 1
    _raise_given(e)
    return y


def test_an_exception_object_from_outside_raised_through_two_frames_shows_both():
    # an argument's exception object, raised by an inlined helper: the traceback has the
    # helper's frame and the caller's, on the cached call (O64)
    cf = bcfront.capture(raises_through_a_helper)
    _outcome(cf, ValueError("v"), 1)
    want = _outcome(raises_through_a_helper, ValueError("v"), 1)
    got = _outcome(cf, ValueError("v"), 1)
    assert got == want and [f[1] for f in got[-1]][-2:] == ["raises_through_a_helper", "_raise_given"]


def _c_call(cf) -> None:
    """Fail (never skip) where the C call should serve `cf` and does not."""
    import os

    from bcfront.cfast import C

    if os.environ.get("BCFRONT_PURE_PYTHON"):
        pytest.skip("BCFRONT_PURE_PYTHON is set: the C call is not used")
    assert C is not None, "bcfront._cfast is not built: pip install -e . with a C compiler"
    assert type(cf).__call__ is C.DispatchBase.__call__, "the C call was not armed"


@pytest.mark.parametrize("kind", KINDS)
def test_a_cached_raise_through_the_c_call_has_exactly_eager_frames(kind):
    """The exact link returns the exception for the C call to raise: no frame of bcfront's
    (a raise in the link would add the link's own) -- the whole traceback is eager's."""

    def raised_frames(fn):
        try:
            fn(kind, 7)
        except BaseException as e:  # noqa: BLE001 - compared with the plain function's
            return frames(e)  # all of them: bcfront's too
        raise AssertionError("expected an exception")

    cf = bcfront.capture(raises_kind)
    want = raised_frames(raises_kind)
    raised_frames(cf)  # captured
    _c_call(cf)
    assert raised_frames(cf) == want


@pytest.mark.parametrize("keywords", [False, True], ids=["positional", "keywords"])
def test_a_cached_raise_makes_no_reference_cycle(keywords):
    """Eager frees a call's arguments when the exception is dropped, without the collector;
    so must a cached raise (a raise through the region's frame would keep the frame, with
    the arguments and the exception in its locals, in a cycle with the exception), from
    the C call (positional) and from the plain loop's Python raise (keywords)."""
    import gc
    import weakref

    def call(held):
        return _raises_from(lambda: cf(xs=[], keep=held)) if keywords else _raises_from(cf, [], held)

    cf = bcfront.capture(reduces)
    for _ in range(2):  # captured, then cached
        call(Held())
    if not keywords:
        _c_call(cf)
    calls = cf.calls
    held = Held()
    ref = weakref.ref(held)
    gc.disable()  # (this test's own: the cycle, if any, must stay uncollected)
    try:
        e = call(held)
        del e, held
        assert ref() is None
        assert cf.calls == calls + 1 and len(cf._entries) == 1  # (the cached raise)
    finally:
        gc.enable()


def test_the_reference_maker_calls_the_class_with_its_constructor_arguments():
    from bcfront.frontend.regions import codegen

    made = codegen._make_exception(FileGone, (2, "gone"), {}, (), (2, "gone", "f"))
    want = FileGone(2, "gone", "f")
    assert (type(made), made.args, made.errno, made.strerror, made.filename, str(made)) == (
        type(want),
        want.args,
        want.errno,
        want.strerror,
        want.filename,
        str(want),
    )


# -- implicit chaining: the caller's handled exception is the context, known only at the call --


def raises_in_own_handler(kind, x):
    try:
        raise TaggedError(x)
    except TaggedError:
        if kind == 0:
            raise KeyError(x)  # noqa: B904 - context: the TaggedError (whose context: the caller's)
        raise KeyError(x) from None


def returns_caught(kind, x):
    try:
        raise KeyError(x)
    except KeyError as e:
        return e  # its context: the caller's handled exception


def _context_chain(e, outer):
    out = []
    while e is not None and len(out) < 5:
        out.append("OUTER" if e is outer else (type(e), e.args, e.__suppress_context__))
        e = e.__context__
    return out


def _under_a_handler(fn, kind, keywords):
    try:
        raise ZeroDivisionError("outer")
    except ZeroDivisionError as outer:
        try:
            got = fn(kind=kind, x=7) if keywords else fn(kind, 7)
        except BaseException as e:  # noqa: BLE001 - compared with the plain function's
            got = e
        return _context_chain(got, outer)


@pytest.mark.parametrize("keywords", [False, True], ids=["positional", "keywords"])
@pytest.mark.parametrize(
    "fn, kind",
    [(raises_kind, k) for k in KINDS]
    + [(raises_in_own_handler, 0), (raises_in_own_handler, 1), (returns_caught, 0)],
)
def test_exceptions_chain_to_the_exception_the_caller_handles(fn, kind, keywords):
    """CPython sets an exception's ``__context__`` where it is raised: outside the function's
    handlers that is the exception its caller handles, which the trace cannot know -- each
    cached call takes it from its own caller (positional: the C call; keywords: the plain
    loop), and one raised inside the function's handler keeps the context it has there."""
    want = _under_a_handler(fn, kind, keywords)
    assert "OUTER" in want
    cf = bcfront.capture(fn)
    for _ in range(3):
        assert _under_a_handler(cf, kind, keywords) == want
    assert _context_chain(cf(kind, 7) if fn is returns_caught else _raises_from_any(cf, kind), None) == (
        _context_chain(fn(kind, 7) if fn is returns_caught else _raises_from_any(fn, kind), None)
    )  # and with no handler, no context


def _raises_from_any(fn, kind):
    try:
        fn(kind, 7)
    except BaseException as e:  # noqa: BLE001
        return e
    raise AssertionError("expected an exception")


# -- the inline exception (Rebuilder._exception) against its reference (_make_exception) -----

_TB = (("/work/user_code.py", "user_fn", (12, 12, 4, 21)),)

INLINE_CASES = [
    (KeyError, (7,), {}, None),
    (ValueError, ("a", 2), {"note": "x"}, None),
    (TaggedError, (7,), {"code": 7, "note": "n"}, None),
    (NoArgsError, (), {"why": "none"}, None),
    (PlainError, (7, "two"), {}, None),
    (StopIteration, (5,), {}, None),
    (FileGone, (2, "gone"), {}, (2, "gone", "f7")),
    (OSError, (2, "no such file"), {}, (2, "no such file", "f7")),  # a FileNotFoundError
    (KeyError, (7,), {"__cause__": None, "__suppress_context__": True}, None),
    (RuntimeError, ("r",), {"__context__": None, "__suppress_context__": False}, None),
]


def _inline_exception(cls, args, attrs, ctor, tb):
    """The exception `Rebuilder._exception` spells for an `ExceptionV`, made by running it."""
    from bcfront.frontend.model.namespace import Namespace
    from bcfront.frontend.model.values import Const, ExceptionV
    from bcfront.frontend.regions import codegen
    from bcfront.frontend.regions.codegen import Rebuilder

    v = ExceptionV(cls, [Const(a) for a in args], {k: Const(x) for k, x in attrs.items()})
    v.tb = tb
    if ctor is not None:
        v.ctor_args = tuple(Const(a) for a in ctor)
    ns, lines = Namespace(), []
    name = Rebuilder(ns, {}, lines).expr(v)
    scope = dict(ns.globals)
    assert not any(x is codegen._make_exception for x in scope.values())  # spelled inline
    exec("def make():\n" + "\n".join(lines) + f"\n    return {name}\n", scope)
    return scope["make"]()


def _described(e):
    return (
        type(e),
        e.args,
        str(e),
        dict(vars(e)),
        [getattr(e, k, None) for k in ("errno", "strerror", "filename", "value")],
        (e.__context__, e.__cause__, e.__suppress_context__),
        [(f.filename, f.name, f.lineno) for f in traceback.extract_tb(e.__traceback__)],
    )


@pytest.mark.parametrize("with_tb", [False, True], ids=["no-traceback", "traceback"])
@pytest.mark.parametrize("case", INLINE_CASES, ids=lambda c: f"{c[0].__name__}{c[1]}")
def test_the_inline_exception_equals_the_reference_maker(case, with_tb):
    from bcfront.frontend.regions import codegen

    cls, args, attrs, ctor = case
    tb = _TB if with_tb else ()
    inline = _inline_exception(cls, args, attrs, ctor, tb)
    reference = codegen._make_exception(cls, args, attrs, tb, ctor)
    assert _described(inline) == _described(reference)
    # and both are what calling the class in user code gives (its own __init__ set `attrs`)
    if not attrs or cls in (TaggedError, NoArgsError):
        native = cls(*(ctor or args))
        assert _described(inline)[:5] == _described(native)[:5]
