"""Calls of functions marked as constant (``torch._dynamo.assume_constant_result``).

A function carrying the marker ``_dynamo_marked_constant`` (set by
``torch._dynamo.assume_constant_result``, and by transformers' install probes such
as ``is_torch_available``, under their ``lru_cache``) has a result its author
declares fixed for the life of the process.  As TorchDynamo does, such a call on
values known now is made for real at capture time and its result is a constant of
the entry: the probe's code (``importlib.metadata`` walking the file system) is not
traced.  A call on values not known now (a tensor, a value computed in the trace)
stays a graph break.
"""

from __future__ import annotations

import functools
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import ConstSource, Ref
from ..model.values import ObjectV, TupleV, Value
from .deferred_calls import is_literal_tree
from .folding import as_python, from_python, python_args

MARKER = "_dynamo_marked_constant"


def is_marked(obj) -> bool:
    """A Python function (or an ``lru_cache`` wrapper of one, which copies its ``__dict__``)
    marked constant; read from the instance dict only, so no user code runs."""
    if not isinstance(obj, (types.FunctionType, functools._lru_cache_wrapper)):
        return False
    d = getattr(obj, "__dict__", None)
    return type(d) is dict and d.get(MARKER) is True


def call(tx, fv: ObjectV, args: list, kwargs: dict) -> Value:
    fn = fv.obj
    what = f"{getattr(fn, '__qualname__', 'a function')} (assume_constant_result)"

    def known(v: Value):
        if isinstance(v, ObjectV):
            if v.source is not None:
                tx.guard(GuardKind.ID_MATCH, v.source, v.obj)
            return v.obj
        if isinstance(v, TupleV) and v.cls is tuple:
            return tuple(known(x) for x in v.items)
        return as_python(v)

    unknown = f"{what} on values known at run time"
    pa, pk = python_args(args, kwargs, BreakReason.CALL_TO_C_FUNCTION, unknown, known)
    try:
        out = fn(*pa, **pk)
    except Exception:  # noqa: BLE001 - the native call raises (again) at its place
        raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"{what} raised") from None
    if is_literal_tree(out):
        return from_python(out)
    return wrap(tx, out, ConstSource(Ref(out, f"{what} result")))
