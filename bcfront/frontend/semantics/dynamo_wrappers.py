"""Dynamo's "disable" wrappers at a call: seen through for torch's functions, honoured for the user's.

``torch._disable_dynamo(fn)`` (torch's own decorator: ``torch.manual_seed``, optimizer
internals) and ``torch.compiler.disable(fn)`` / ``torch._dynamo.disable(fn)`` wrap `fn` in
a function that switches Dynamo's frame evaluation off around the call
(``set_eval_frame``).  That switch means nothing to bcfront's trace, and tracing the
wrapper would break on it.  A torch function under either wrapper is traced as itself
(torch disables Dynamo where Dynamo cannot follow, not bcfront); a user's function under
``torch.compiler.disable`` runs natively at a break (`BreakReason.COMPILER_DISABLED`): the
user asked compilers to leave it alone.  The wrapped function is read from the wrapper's
closure cell, guarded by identity.
"""

from __future__ import annotations

import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.sources import CellSource, Ref

# (file suffix, qualified name of the wrapper's code)
_WRAPPERS = frozenset(
    {
        ("torch/_compile.py", "_disable_dynamo.<locals>.inner"),
        ("torch/_dynamo/eval_frame.py", "DisableContext.__call__.<locals>._fn"),
    }
)


def _is_wrapper(code: types.CodeType) -> bool:
    name = getattr(code, "co_qualname", code.co_name)
    path = code.co_filename.replace("\\", "/")
    return any(name == qualname and path.endswith(suffix) for suffix, qualname in _WRAPPERS)


def from_torch(fn) -> bool:
    """Whether `fn` was defined in torch (its ``__module__``)."""
    mod = getattr(fn, "__module__", None) or ""
    return mod == "torch" or mod.startswith("torch.")


def unwrap(tx, fn: types.FunctionType):
    """The function to trace in place of `fn`, when `fn` is a Dynamo-disable wrapper around
    a torch function (its closure cell guarded); raises the `compiler-disabled` break for
    a user's function under ``torch.compiler.disable``; None when `fn` is no such wrapper."""
    if not _is_wrapper(fn.__code__) or fn.__closure__ is None:
        return None
    names = fn.__code__.co_freevars
    if "fn" not in names:
        return None
    cell = fn.__closure__[names.index("fn")]
    inner = cell.cell_contents
    if not from_torch(inner):
        what = getattr(inner, "__qualname__", None) or repr(inner)
        raise UnsupportedError(
            BreakReason.COMPILER_DISABLED,
            f"{what} is marked torch.compiler.disable: it runs natively, as under torch.compile",
        )
    tx.guard(GuardKind.ID_MATCH, CellSource("fn", Ref(cell, f"{fn.__qualname__}.fn")), inner)
    return inner
