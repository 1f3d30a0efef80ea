"""bcfront's own Python models of C code, which traces read without guards.

Some C functions and classes are traced through Python code of bcfront's own: the
generators standing for itertools' classes (`py_twins`), ``re``'s substitution
(`re_twins`), a private copy of ``heapq``/``bisect`` loaded with its accelerator
blocked (`py_twins.twin`).  The C code they stand for reads no global name, no
function default and no ``__code__`` of anyone's: a user who rebinds ``builtins.len``
or a module attribute does not change what ``_heapq.heappush`` does.  So the names such
code reads from its own globals, and the functions of its own it calls, are taken as
they are (builtins as when bcfront was imported: `OWN_BUILTINS`), and guarded by nothing
(`owns_globals`, `owns_function`): a guard there would only cost each cached call
(``itertools.combinations`` checked four of them), and a patched builtin would make the
twin differ from the C function it stands for.

What the user passes in (a key function, an iterable) is not bcfront's and keeps every
guard it had.  The registered globals belong to modules that live as long as the
process (bcfront's own, and the twin copies `py_twins` keeps): ids stay valid.
"""

from __future__ import annotations

import builtins

_OWN_GLOBALS: set[int] = set()
# the builtins such code calls: as they were when bcfront was imported, as the C code's own
OWN_BUILTINS: dict = dict(vars(builtins))


_FRAMELESS: set[int] = set()


def register(globals_dict: dict, frameless: bool = False) -> None:
    """Mark `globals_dict` (a module's namespace, alive for the whole process) as holding
    only bcfront's models of C code; `frameless`: its functions stand in for a C function
    whose exception shows no frame of its own, so an exception leaving or caught in one of
    their frames gets no traceback entry for it (`adds_no_frame`; a user's function they
    call keeps its own)."""
    _OWN_GLOBALS.add(id(globals_dict))
    if frameless:
        _FRAMELESS.add(id(globals_dict))


def owns_globals(globals_dict) -> bool:
    return id(globals_dict) in _OWN_GLOBALS


def adds_no_frame(globals_dict) -> bool:
    """A frame over `globals_dict` adds no traceback entry (``register(frameless=True)``)."""
    return id(globals_dict) in _FRAMELESS


def owns_function(fn) -> bool:
    """`fn` is a function of bcfront's models of C code (its globals are registered)."""
    g = getattr(fn, "__globals__", None)
    return g is not None and id(g) in _OWN_GLOBALS
