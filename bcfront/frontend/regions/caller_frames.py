"""The caller a native call at a graph break sees: the user's frame, not the region's.

Natively, a function called at the break instruction has the user's function as its caller:
``logging`` names that file, line and function in its records, ``warnings.warn`` files the
warning under that place and module, ``sys._getframe(1).f_globals`` is the user's module
(``namedtuple``, ``TypeVar``).  The region function that makes the call is generated code, so
the call goes through a stand-in instead (`stand_in`): a two-line function whose code claims
the user's file, function name and the break instruction's source position, and whose
globals are the user function's, which makes the call (``stand_in(fn, args, kwargs)``).
The arguments travel to it as a tuple and a dict, positionally, and only the stand-in
spreads them (``fn(*args, **kwargs)``): CPython's own rules for that call then decide, a
``**m`` with keys that are not str included (``OrderedDict(**{1: 2})`` takes them, a
Python function refuses them), with CPython's own message.  A captured function that runs
natively as a whole is called the same way from a stand-in of its caller's frame
(`from_user_frame`).
"""

from __future__ import annotations

import functools
import itertools
import os
import sys

from ...cfast import C
from .hidden_frames import CALLER_MARK
from .tracebacks import claiming

_STAND_INS: dict = {}  # (template, filename, name, qualname, positions, id(globals)) -> (function, globals)
# the one place the arguments are spread: a ``**kwargs`` parameter on the way would refuse
# keys that are not str before the callee could take them
_SPREADING = "def _stand_in(fn, args, kwargs, /):\n    return fn(*args, **kwargs)\n"
# a stand-in of the user's caller: its parameter's name (`hidden_frames.CALLER_MARK`) tells a
# traceback's rewriting that its frame duplicates the caller's own
_CALLER_SPREADING = (
    f"def _stand_in({CALLER_MARK}, args, kwargs, /):\n    return {CALLER_MARK}(*args, **kwargs)\n"
)
_PASSING = f"def _stand_in({CALLER_MARK}, /, *args):\n    return {CALLER_MARK}(*args)\n"


def stand_in(code, positions: tuple, fn_globals: dict, *, spreading: bool = True, caller: bool = False):
    """A function calling its first argument from a frame that looks like `code`'s at
    `positions` (lineno, end_lineno, col, end_col) with globals `fn_globals`: spreading,
    ``stand_in(fn, args, kwargs)`` calls ``fn(*args, **kwargs)``; else ``stand_in(fn, *rest)``
    calls ``fn(*rest)`` (always a `caller`'s: the user's frame that called the captured
    function, which a traceback lists already)."""
    template = (_CALLER_SPREADING if caller else _SPREADING) if spreading else _PASSING
    key = (template, code.co_filename, code.co_name, code.co_qualname, positions, id(fn_globals))
    hit = _STAND_INS.get(key)
    if hit is not None and hit[1] is fn_globals:
        return hit[0]
    lineno, end_lineno, col, end_col = positions
    where = (lineno or code.co_firstlineno, end_lineno, col, end_col)
    fn = claiming(template, code.co_filename, code.co_name, code.co_qualname, where, fn_globals)
    if len(_STAND_INS) > 10_000:
        _STAND_INS.clear()
    _STAND_INS[key] = (fn, fn_globals)
    return fn


def calling_through(ns, code, positions: tuple, fn_globals: dict, callee=None):
    """A `native.Ctx` caller: ``(fn, args, kwargs) -> expression`` of the call
    ``fn(*args, **kwargs)`` made from the stand-in of `code` at `positions`, itself called
    from a stand-in of the user's frame that called the captured function
    (`through_user_frames`).  `callee` wraps the callee expression first (a captured callee)."""
    site = ns.const(stand_in(code, positions, fn_globals), "as_caller")
    through = ns.const(through_user_frames, "through_user_frames")
    inner = callee or (lambda fn: fn)
    return lambda fn, args, kwargs: f"{through}({site}, {inner(fn)})({args}, {kwargs or '{}'})"


def through_user_frames(site, fn):
    """``call(args, kwargs)``: ``fn(*args, **kwargs)`` made from `site` (the stand-in of the
    break's line), which is called from a stand-in of the first frame outside bcfront:
    ``warnings.warn(stacklevel=2)`` or logging's ``stacklevel=2`` in the callee name the
    user's caller, as natively."""
    inner = functools.partial(site, fn)
    f, ours = user_frame(sys._getframe(1))
    if f is None:
        return inner
    where = _positions(f.f_code, f.f_lasti)
    user = functools.partial(stand_in(f.f_code, where, f.f_globals, spreading=False), inner)
    # natively: the user's frame, the function's, the callee; here `ours` frames (the
    # region's among them), `_deeper`, the two stand-ins, the callee
    return functools.partial(_deeper, ours + 2, user)


def _deeper(extra: int, call, /, *args):
    """``call(*args)`` with the recursion limit `extra` frames higher (bcfront's own frames
    between the user's caller and the native call, this one's included): the native code
    runs out of stack at exactly the depth it does natively, RecursionError and all.  The
    limit is set back unless the call set one of its own.  Positional only: the keyword
    arguments of the native call travel inside `args` as one dict (see `stand_in`)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + extra)
    try:
        return call(*args)
    finally:
        if sys.getrecursionlimit() == limit + extra:
            sys.setrecursionlimit(limit)


# 3.11 counts a call of an object through its type's ``tp_call`` (a captured function:
# ``_PyObject_MakeTpCall``) against the recursion limit too; 3.12+ counts C recursion apart.
# Where the C call is built, every captured function is called through its vectorcall
# (`fast_call.install`), which 3.11 does not count
_TP_CALL = 1 if sys.version_info < (3, 12) and C is None else 0


def user_frame(f):
    """The first frame from `f` outwards that is not bcfront's (None: none), and what
    bcfront's frames passed on the way cost against the recursion limit: one each, and on
    3.11 one more per call of a captured function (its ``__call__`` frame, or the region
    its C ``__call__`` called from the user's frame)."""
    units, last = 0, None
    while f is not None and _ours(f.f_code.co_filename):
        last = f.f_code.co_name
        units += 1 + (_TP_CALL if last == "__call__" else 0)
        f = f.f_back
    if last is not None and last != "__call__":
        units += _TP_CALL
    return f, units


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
_POSITIONS: dict = {}  # (code, lasti) -> positions; bounded below


def _ours(filename: str) -> bool:
    return filename.startswith((_PACKAGE_DIR, "<bcfront", "bcfront:"))


def _positions(code, lasti: int) -> tuple:
    key = (code, lasti)
    hit = _POSITIONS.get(key)
    if hit is None:
        hit = next(itertools.islice(code.co_positions(), max(lasti, 0) // 2, None), (None,) * 4)
        if len(_POSITIONS) > 10_000:
            _POSITIONS.clear()
        _POSITIONS[key] = hit
    return hit


def from_user_frame(fn):
    """`fn`, called from a stand-in of the first frame outside bcfront (the user's call of
    the captured function): a function that runs natively sees its real caller's code,
    line and globals in ``sys._getframe(1)`` (O57), not bcfront's dispatch."""

    def run_natively(*args, **kwargs):
        f, ours = user_frame(sys._getframe(1))
        if f is None:
            return fn(*args, **kwargs)
        # natively: the user's frame, then the function's; here `ours` frames, this one,
        # `_deeper`, the stand-in, the function
        user = stand_in(f.f_code, _positions(f.f_code, f.f_lasti), f.f_globals, caller=True)
        return _deeper(ours + 3, user, fn, args, kwargs)

    run_natively.__wrapped__ = fn  # type: ignore[attr-defined]
    return run_natively
