"""Attributes of a function made in the trace (`MadeFunctionV`), read and written as CPython.

A ``def`` or ``lambda`` run in the trace is a `MadeFunctionV`; what code reads and writes
on it -- ``functools.wraps`` sets ``__module__``, ``__name__``, ``__qualname__``,
``__doc__`` (and ``__type_params__`` on 3.12+), updates ``__dict__`` and sets
``__wrapped__`` -- is kept on the value: the special attributes set (`specials`:
``__doc__``, ``__module__``, ``__type_params__``), its ``__dict__`` (`attrs`, a
`DictV` made on first use, the one dict both ``f.x = v`` and ``f.__dict__`` reach) and
its annotations.  The region that rebuilds the function sets them on the real one
(`codegen`).  A function passed in from outside (one with a source) keeps its reads and
writes beyond the names and defaults native: a break.
"""

from __future__ import annotations

import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import Const, DictV, MadeFunctionV, TupleV, Value
from .classes import MISS, mro_lookup
from .descriptors import is_data_descriptor
from .folding import as_python, attribute_error, raise_

# read from the value's own fields (`attrs._made_fn_attr`) or run natively
_SPECIAL = frozenset({"__name__", "__qualname__", "__code__", "__defaults__", "__get__", "__annotations__"})


def made_annotations(tx, v: MadeFunctionV) -> DictV:
    """``f.__annotations__``: as CPython, the dict made once from MAKE_FUNCTION's tuple of
    names and values (an empty one without), then kept."""
    ann = v.annotations
    if isinstance(ann, DictV):
        return ann
    if ann is None:
        items = []
    else:
        items = list(ann.items) if isinstance(ann, TupleV) else [Const(x) for x in ann.value]
    names = [as_python(k) for k in items[::2]]
    d = DictV({k: (Const(k), x) for k, x in zip(names, items[1::2])})
    tx.set(v, "annotations", d)
    return d


def function_dict(tx, v: MadeFunctionV) -> DictV:
    """``f.__dict__``: made empty on first use, then the same dict."""
    if v.attrs is None:
        tx.set(v, "attrs", DictV({}))
    return v.attrs


def read(tx, v: MadeFunctionV, name: str) -> Value:
    """``f.name`` for a name not among the value's own fields (`_SPECIAL`)."""
    if v.source is not None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"function attribute {name}")
    if name in v.specials:
        return v.specials[name]
    if name == "__module__":
        return Const(v.globals.get("__name__"))
    if name == "__doc__":
        consts = v.code.co_consts  # CPython's rule: a str first constant is the docstring
        return Const(consts[0] if consts and isinstance(consts[0], str) else None)
    if name == "__type_params__" and sys.version_info >= (3, 12):
        return Const(())  # (a generic function's are set by an intrinsic the trace refuses)
    if name == "__dict__":
        return function_dict(tx, v)
    if v.attrs is not None and name in v.attrs.entries:
        return v.attrs.entries[name][1]
    if mro_lookup(types.FunctionType, name) is not MISS or name in ("__closure__", "__globals__"):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"function attribute {name}")
    attribute_error("function", name)
    raise AssertionError("attribute_error raises")


def write(tx, v: MadeFunctionV, name: str, value: Value) -> None:
    """``f.name = value`` for a name other than ``__name__``/``__qualname__``."""
    if v.source is not None or name in ("__dict__", "__closure__", "__globals__", "__code__"):
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"setting {name} on {v.describe()}")
    if name in ("__module__", "__doc__"):
        tx.set(v, "specials", {**v.specials, name: value})
    elif name == "__type_params__" and sys.version_info >= (3, 12):
        if not (isinstance(value, Const) and type(value.value) is tuple):
            raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"setting {name} to {value.describe()}")
        tx.set(v, "specials", {**v.specials, name: value})
    elif name == "__annotations__":
        if not isinstance(value, DictV) or value.cls is not dict:
            if isinstance(value, Const) and value.value is None:
                raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, "deleting a function's annotations")
            raise_(TypeError, "__annotations__ must be set to a dict object")
        tx.set(v, "annotations", value)
    elif is_data_descriptor(mro_lookup(types.FunctionType, name)):  # __defaults__, __type_params__...
        raise UnsupportedError(BreakReason.UNSUPPORTED_ATTRIBUTE, f"setting {name} on {v.describe()}")
    else:
        d = function_dict(tx, v)
        tx.set(d, "entries", {**d.entries, name: (Const(name), value)})


def has_own_state(v: MadeFunctionV) -> bool:
    """Whether `v` carries attributes a plain remake of its code would not have."""
    return bool(v.specials) or bool(v.attrs and v.attrs.entries)
