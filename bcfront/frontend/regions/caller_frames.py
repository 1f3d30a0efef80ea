"""The caller a native call at a graph break sees: the user's frame, not the region's.

Natively, a function called at the break instruction has the user's function as its caller:
``logging`` names that file, line and function in its records, ``warnings.warn`` files the
warning under that place and module, ``sys._getframe(1).f_globals`` is the user's module
(``namedtuple``, ``TypeVar``).  The region function that makes the call is generated code, so
the call goes through a stand-in instead (`stand_in`): a two-line function whose code claims
the user's file, function name and the break instruction's source position, and whose
globals are the user function's, which makes the call (``partial(stand_in, fn)(*args)``).
A captured function that runs natively as a whole is called the same way from a stand-in
of its caller's frame (`from_user_frame`).
"""

from __future__ import annotations

import functools
import itertools
import os
import sys

from .tracebacks import claiming

_STAND_INS: dict = {}  # (filename, name, qualname, positions, id(globals)) -> (function, globals)
_TEMPLATE = "def _stand_in(fn, /, *args, **kwargs):\n    return fn(*args, **kwargs)\n"


def stand_in(code, positions: tuple, fn_globals: dict):
    """A function calling its first argument with the rest, from a frame that looks like
    `code`'s at `positions` (lineno, end_lineno, col, end_col) with globals `fn_globals`."""
    key = (code.co_filename, code.co_name, code.co_qualname, positions, id(fn_globals))
    hit = _STAND_INS.get(key)
    if hit is not None and hit[1] is fn_globals:
        return hit[0]
    lineno, end_lineno, col, end_col = positions
    where = (lineno or code.co_firstlineno, end_lineno, col, end_col)
    fn = claiming(_TEMPLATE, code.co_filename, code.co_name, code.co_qualname, where, fn_globals)
    if len(_STAND_INS) > 10_000:
        _STAND_INS.clear()
    _STAND_INS[key] = (fn, fn_globals)
    return fn


def calling_through(ns, code, positions: tuple, fn_globals: dict, caller=None):
    """A `native.Ctx` caller: the callee expression wrapped so the call is made from the
    stand-in of `code` at `positions`, itself called from a stand-in of the user's frame
    that called the captured function (`through_user_frames`)."""
    site = ns.const(stand_in(code, positions, fn_globals), "as_caller")
    through = ns.const(through_user_frames, "through_user_frames")
    inner = caller or (lambda fn: fn)
    return lambda fn: f"{through}({site}, {inner(fn)})"


def through_user_frames(site, fn):
    """``fn`` to be called from `site` (the stand-in of the break's line), which is called
    from a stand-in of the first frame outside bcfront: ``warnings.warn(stacklevel=2)`` or
    logging's ``stacklevel=2`` in the callee name the user's caller, as natively."""
    inner = functools.partial(site, fn)
    f = sys._getframe(1)
    while f is not None and _ours(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return inner
    return functools.partial(stand_in(f.f_code, _positions(f.f_code, f.f_lasti), f.f_globals), inner)


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
        f = sys._getframe(1)
        while f is not None and _ours(f.f_code.co_filename):
            f = f.f_back
        if f is None:
            return fn(*args, **kwargs)
        return stand_in(f.f_code, _positions(f.f_code, f.f_lasti), f.f_globals)(fn, *args, **kwargs)

    run_natively.__wrapped__ = fn  # type: ignore[attr-defined]
    return run_natively
