"""Rebuilding a generator the trace created, for the code after a graph break.

A generator that has not started yet (its frame has run no user instruction:
a generator expression handed to ``sum``, ``list`` or a ``for`` loop whose
body breaks on the first item) is rebuilt by calling its function again with
the arguments it was bound to: a generator object is nothing but that frame.
A started one holds a suspended position no Python code can recreate, so it
stays unrebuildable (the whole function then runs natively).
"""
from __future__ import annotations

from ..errors import UnsupportedError
from .values import CellV, DictV, TupleV

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


def rebuild_generator(rb, gen) -> str:
    """An expression creating a fresh generator equal to the unstarted `gen` (memoized in
    `rb`, so every reference gets the same object)."""
    if gen.started or gen.done:
        raise UnsupportedError("unreconstructable",
                               "a generator suspended inside its body cannot be rebuilt")
    frame = gen.frame
    code = frame.code
    if frame.fn is None:
        raise UnsupportedError("unreconstructable", "a generator without its function")
    names = code.co_varnames
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount

    def arg(name):
        v = frame.locals[name]
        return rb.expr(v.contents if isinstance(v, CellV) else v)

    parts = [arg(n) for n in names[:n_pos]]
    i = n_pos + n_kw
    if code.co_flags & CO_VARARGS:
        star = frame.locals[names[i]]
        if not isinstance(star, TupleV):
            raise UnsupportedError("unreconstructable", "a generator's *args is not a tuple")
        parts.append(f"*{rb.expr(star)}")
        i += 1
    kw = {n: arg(n) for n in names[n_pos:n_pos + n_kw]}
    parts.append("**{" + ", ".join(f"{k!r}: {e}" for k, e in kw.items()) + "}")
    if code.co_flags & CO_VARKEYWORDS:
        dstar = frame.locals[names[i]]
        if not isinstance(dstar, DictV):
            raise UnsupportedError("unreconstructable", "a generator's **kwargs is not a dict")
        parts.append(f"**{rb.expr(dstar)}")
    return rb.temp(f"{rb.expr(frame.fn)}({', '.join(parts)})", gen, "gen")
