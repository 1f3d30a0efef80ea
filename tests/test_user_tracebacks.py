"""An exception out of a captured function shows the user's frames, never bcfront's.

Every way a captured call runs -- the capture (first call), a cached call, a call crossing a
graph break (the continuation, the native call at the break), a recompile, ``fullgraph``,
``dynamic``, the native fallback past the recompile limit, a raise inside a generator, a
``with`` block or a nested function, a torch op failing inside a graph, `bcfront.explain` --
must raise an exception whose traceback lists what the same call made natively lists: each
frame's file, line, function and (3.11+) column anchors, in order.  The oracle is the native
call of the same function from the same line (`_outcome`), never bcfront's own output.  The
exception itself (type, args, chaining, notes) must be equal too.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import traceback
import warnings

import pytest

import bcfront
from bcfront.errors import GraphBreakError
from bcfront.report import NativeFallbackWarning

# -- the user's functions ------------------------------------------------------------------


def divides(x):
    return 1 / x


def helper(x):
    y = x + 1
    return 10 // (y - 1)


def calls_a_helper(x):
    return helper(x) + 1


def breaks_then_raises(x):
    print("break")  # print is a graph break: the raise is in the continuation
    return 1 / x


def raises_at_the_break(x):
    y = x + 1
    print(y, sep=None if x else x)  # the native call at the break raises at 0 (sep: a str)
    return y


def steps(x):
    yield 1
    yield 1 / x


def sums_a_generator(x):
    return sum(steps(x))


@contextlib.contextmanager
def managed():
    yield 1


def raises_in_a_with(x):
    with managed() as one:
        return one / x


def chains_a_cause(x):
    try:
        return {1: 1, 2: 2}[x]
    except KeyError as e:
        raise ValueError("no such key", x) from e


def raises_with_a_note(x):
    try:
        return 1 / x
    except ZeroDivisionError as e:
        e.add_note(f"x was {x}")
        raise


def raises_in_a_handler(x):
    try:
        return [][x]
    except IndexError:
        return 1 / x


def breaks_then_calls(x):
    print("break")
    return helper(x)


def calls_a_breaking_helper(x):
    return breaks_then_raises(x) + 1  # the helper is captured on its own (it breaks)


class Exits:
    def __enter__(self):
        return self

    def __exit__(self, typ, value, tb):
        if typ is not None:
            raise RuntimeError("from __exit__")  # its __context__: the block's exception


def raises_in_exit(x):
    with Exits():
        y = 1 / x
    return y


def breaks_in_a_with(x):
    with managed():
        print("break")
        return 1 / x


def yields(x):
    yield 1 / x


def drained(fn, x):
    return list(fn(x))


def keyword(fn, x):
    return fn(x=x)


def adds(a, b):
    c = a * 2
    return c + b


def adds_then_breaks(a, b):
    c = a + b
    print("break")
    return c.sum()


# -- comparing with the native call --------------------------------------------------------


def _frames(e) -> list:
    out = []
    for f in traceback.extract_tb(e.__traceback__):
        where = (f.filename, f.lineno, f.name, getattr(f, "end_lineno", None))
        out.append((*where, getattr(f, "colno", None), getattr(f, "end_colno", None)))
    return out


def _exception(e, depth=0):
    """What is compared of the exception itself: type, args, notes, chaining (recursively;
    a chained exception's frames too)."""
    if e is None or depth > 5:
        return None
    return (
        type(e),
        repr(e.args),
        getattr(e, "__notes__", None),
        _exception(e.__cause__, depth + 1),
        _exception(e.__context__, depth + 1),
        e.__suppress_context__,
        _frames(e) if depth else None,
    )


def _outcome(fn, *args):
    """The exception of ``fn(*args)`` and its frames; every call is made from this line."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", NativeFallbackWarning)
            fn(*args)  # the one line every call (native and captured) is made from
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return _exception(e), _frames(e)
    return None, []


def _same_as_native(fn, call, *args, library=None):
    """`call(*args)` raises what `fn(*args)` does, through the same frames (but those of the
    file `library`: the machinery a captured call models instead of running it)."""
    got = _outcome(call, *args)
    want = _outcome(fn, *args)
    assert want[0] is not None, "the case must raise natively"
    if library is not None:
        want = (want[0], [f for f in want[1] if f[0] != library])
    assert got == want
    return got


def _torch():
    return pytest.importorskip("torch")


# -- the cases -----------------------------------------------------------------------------

PLAIN = [divides, calls_a_helper, sums_a_generator, raises_in_a_with, chains_a_cause]
PLAIN += [raises_with_a_note, raises_in_a_handler, breaks_then_raises, raises_at_the_break]
PLAIN += [breaks_then_calls, calls_a_breaking_helper, raises_in_exit, breaks_in_a_with]


@pytest.mark.parametrize("fn", PLAIN, ids=lambda f: f.__name__)
def test_first_and_cached_calls(fn):
    cf = bcfront.capture(fn)
    for _ in range(3):  # the capture, then cached calls
        _same_as_native(fn, cf, 0)


@pytest.mark.parametrize("fn", PLAIN, ids=lambda f: f.__name__)
def test_a_recompile(fn):
    cf = bcfront.capture(fn)
    with contextlib.redirect_stdout(io.StringIO()):
        for x in (1, 2):
            assert cf(x) == fn(x)
    _same_as_native(fn, cf, 0)  # a guard miss (x is specialized): captured again, raising
    _same_as_native(fn, cf, 0)


@pytest.mark.parametrize("fn", [divides, calls_a_helper, sums_a_generator, chains_a_cause])
def test_fullgraph(fn):
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):
        _same_as_native(fn, cf, 0)


@pytest.mark.parametrize("fn", [divides, calls_a_helper, breaks_then_raises])
@pytest.mark.parametrize("dynamic", [True, False])
def test_dynamic(fn, dynamic):
    cf = bcfront.capture(fn, dynamic=dynamic)
    for _ in range(2):
        _same_as_native(fn, cf, 0)


@pytest.mark.parametrize("fn", [divides, calls_a_helper, breaks_then_raises])
def test_native_after_the_recompile_limit(fn):
    cf = bcfront.capture(fn, recompile_limit=1)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cf(1) == fn(1)
    for _ in range(2):  # a miss past the limit: the function runs natively
        _same_as_native(fn, cf, 0)


@pytest.mark.parametrize("fn", [divides, calls_a_helper, breaks_then_raises, raises_at_the_break])
def test_explain(fn):
    _same_as_native(fn, functools.partial(bcfront.explain, fn), 0)  # (a partial adds no frame)
    cf = bcfront.capture(fn)
    _same_as_native(fn, cf, 0)
    _same_as_native(fn, functools.partial(bcfront.explain, cf), 0)


@pytest.mark.parametrize("fn", [adds, adds_then_breaks])
def test_a_torch_op_raising_in_a_graph(fn):
    torch = _torch()
    a, b = torch.ones(2), torch.ones(3)
    cf = bcfront.capture(fn)
    for _ in range(3):
        exc, frames = _same_as_native(fn, cf, a, b)
        assert exc[0] is RuntimeError


def test_a_torch_op_raising_after_a_capture_that_passed():
    torch = _torch()
    cf = bcfront.capture(adds, dynamic=True)
    assert torch.equal(cf(torch.ones(2), torch.ones(2)), adds(torch.ones(2), torch.ones(2)))
    for _ in range(2):
        _same_as_native(adds, cf, torch.ones(3), torch.ones(4))


def gathers(x, i):
    y = x * 2
    return y[i] + 1


def test_a_torch_op_raising_when_the_graph_runs():
    """An index out of range is not seen by the trace (it reads no value): the graph raises
    when it runs, on the cached call too."""
    torch = _torch()
    cf = bcfront.capture(gathers)
    x, ok, bad = torch.ones(3), torch.tensor([1]), torch.tensor([5])
    assert torch.equal(cf(x, ok), gathers(x, ok))
    for _ in range(2):
        exc, _ = _same_as_native(gathers, cf, x, bad)
        assert exc[0] is IndexError


def test_a_method_and_a_module():
    torch = _torch()

    class Net(torch.nn.Module):
        def forward(self, x):
            return divides(x)

    class Thing:
        def go(self, x):
            return calls_a_helper(x)

    m, t = Net(), Thing()
    # natively the module's call runs through nn.Module.__call__'s frames, which the capture
    # models (its root is the forward): the user's frames are compared
    library = torch.nn.Module.__call__.__code__.co_filename
    for native, cf in ((m, bcfront.capture(m)), (t.go, bcfront.capture(t.go))):
        for _ in range(3):
            _same_as_native(native, cf, 0, library=library)


@pytest.mark.parametrize("fn", [divides, breaks_then_raises, raises_at_the_break])
def test_a_keyword_call(fn):
    cf = bcfront.capture(fn)
    for _ in range(3):
        _same_as_native(functools.partial(keyword, fn), functools.partial(keyword, cf), 0)


def test_a_captured_generator_function():
    cf = bcfront.capture(yields)
    for _ in range(3):
        _same_as_native(functools.partial(drained, yields), functools.partial(drained, cf), 0)


def _bcfront_frames(e) -> list:
    package = os.path.dirname(bcfront.__file__)
    return [f for f in _frames(e) if f[0].startswith((package, "bcfront:"))]


def test_bcfronts_own_errors_keep_bcfronts_frames():
    """A graph break under ``fullgraph=True`` is bcfront's error: where in bcfront it was
    raised is part of what it reports."""
    cf = bcfront.capture(breaks_then_raises, fullgraph=True)
    with pytest.raises(GraphBreakError) as info, contextlib.redirect_stdout(io.StringIO()):
        cf(1)
    assert _bcfront_frames(info.value)


def test_bcfront_debug_keeps_every_frame(monkeypatch):
    monkeypatch.setenv("BCFRONT_DEBUG", "1")
    cf = bcfront.capture(divides)
    with pytest.raises(ZeroDivisionError) as info:
        cf(0)
    assert _bcfront_frames(info.value)  # the capture's: what a bcfront developer looks at


# -- a handler of the user's, inside the captured function ----------------------------------


def catches_the_break(x):
    try:
        print("b", sep=x)  # the native call at the break raises; the handler reads its frames
    except TypeError as e:
        return _frames(e), _exception(e)


def catches_an_op(a, b):
    try:
        return a + b  # a shape mismatch: the op runs natively at a break, and raises
    except RuntimeError as e:
        return _frames(e), type(e)


def test_a_handler_inside_sees_the_native_frames():
    cf = bcfront.capture(catches_the_break)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore", NativeFallbackWarning)
        for _ in range(3):
            assert cf(0) == catches_the_break(0)


def test_a_handler_inside_sees_the_native_frames_of_a_torch_op():
    torch = _torch()
    a, b = torch.ones(2), torch.ones(3)
    cf = bcfront.capture(catches_an_op)
    for _ in range(3):
        assert cf(a, b) == catches_an_op(a, b)


_AFTER_A_COPY = """
import shutil, sys, traceback
import bcfront

shutil.copytree({pkg!r}, {copy!r}, ignore=shutil.ignore_patterns("__pycache__"))
sys.path.insert(0, {root!r})
import bcfront_copy.capture  # a second copy of the package, as tools/ab_analysis.py stages

def divides(x):
    return 1 / x

cf = bcfront.capture(divides)
for _ in range(2):
    try:
        cf(0)
    except ZeroDivisionError as e:
        print([f.name for f in traceback.extract_tb(e.__traceback__)])
"""


def test_a_copy_of_the_package_imported_later_leaves_the_frames_hidden(tmp_path):
    # the full suite's order: tests/analysis stages copies of bcfront whose C module is this
    # package's own; importing one must not re-point the hook that hides bcfront's frames
    import subprocess
    import sys

    pkg = os.path.dirname(bcfront.__file__)
    script = _AFTER_A_COPY.format(pkg=pkg, copy=str(tmp_path / "bcfront_copy"), root=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
    ).stdout.split("\n")
    assert out[:2] == ["['<module>', 'divides']"] * 2


def dumps_a_set(x):
    import json

    return json.dumps({x})  # raises in JSONEncoder.default, under the C encoder


def test_a_cached_raise_under_a_modelled_c_function_has_no_frame_to_hide():
    # bcfront models the C json encoder in Python: natively it adds no traceback entry, so
    # the cached raise must not list the model's frames -- with the hook off, nothing hides
    # them (a hook call per raise was most of the cached call's time)
    from bcfront.cfast import C
    from bcfront.frontend.regions import hidden_frames

    if C is None:
        pytest.skip("the C call is not built")
    cf = bcfront.capture(dumps_a_set)
    for _ in range(2):
        _outcome(cf, 1)  # the capture, then a cached raise
    C._set_frame_hook(None)
    try:
        assert _outcome(cf, 1) == _outcome(dumps_a_set, 1)
    finally:
        hidden_frames.install()
