"""Closure cells and zero-argument super(): reading and writing cell contents.

A cell that exists outside the trace (a closure of an outside function) is
loaded lazily, guarded through a `CellSource`; writes to such a cell are
replayed after the region like any other outside mutation.

A continuation (`resume.make_resume`) receives the cells of its original
function as arguments: the region before the break made (or was given) them,
and closures made before the break hold the same cells.  Such a cell is an
*input*: its value has a source (``L['n']``), its contents are read and
guarded through ``L['n'].cell_contents`` (so a new cell per call does not
recompile), and writes are replayed through the argument.  Functions passed
to a continuation -- closures the region rebuilt, a new object per call --
directly, in a cell, or in a list or tuple, are wrapped by code
(`function_by_code`): ``__code__`` identity, names, defaults and closure cells
as inputs, the cells aliased to the continuation's own.  A function carrying
attributes of its own (``functools.wraps``) stays identity-guarded.
"""

from __future__ import annotations

import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.sources import (
    CellFilledSource,
    CellSource,
    ConstSource,
    PlainFunctionSource,
    Ref,
    attr_source,
    item_source,
)
from ..model.tracer import SymbolicRaise
from ..model.values import CellV, Const, ExceptionV, MadeFunctionV, ObjectV, SuperV


def input_cell(tx, cell, source, name: str) -> CellV:
    """The value of a real cell reached through `source` (an argument of a continuation, or a
    closure item of a function passed in); one value per cell object, so that every path to
    it sees the same contents in the trace -- other paths are alias-guarded."""
    hit = tx.by_id.get(id(cell))
    if isinstance(hit, CellV):
        if hit.source is not None:
            tx.guard(GuardKind.TENSOR_ALIAS, source, hit.source)  # an identity check between sources
        elif hit.real is not None:
            tx.guard(GuardKind.ID_MATCH, source, hit.real)
        return hit
    v = CellV(None, real=cell, name=name)
    v.source = source
    tx.by_id[id(cell)] = v
    tx.keepalive.append(cell)
    return v


def function_by_code(tx, fn, source) -> MadeFunctionV:
    """A function argument of a continuation, guarded by what it does rather than identity:
    ``__code__``, ``__globals__`` and ``__kwdefaults__`` by identity, defaults like any value,
    closure cells as input cells."""
    from ..model.builder import wrap

    hit = tx.by_id.get(id(fn))
    if isinstance(hit, MadeFunctionV):
        return hit
    if fn.__dict__ or fn.__module__ != fn.__globals__.get("__name__"):
        return wrap(tx, fn, source)  # attributes set on it (functools.wraps): by identity
    tx.guard(GuardKind.TYPE_MATCH, source, types.FunctionType)
    # names read from the value: they must still be the object's (O43)
    tx.guard(
        GuardKind.CONSTANT_MATCH,
        PlainFunctionSource(source, fn.__name__, fn.__qualname__, fn.__module__),
        True,
    )
    for attr in ("__code__", "__globals__", "__kwdefaults__"):
        tx.guard(GuardKind.ID_MATCH, attr_source(source, attr), getattr(fn, attr))
    code = fn.__code__
    defaults = fn.__defaults__
    dsrc = attr_source(source, "__defaults__")
    if defaults and any(type(d) is types.FunctionType for d in defaults):
        tx.guard(GuardKind.TYPE_MATCH, dsrc, tuple)
        tx.guard(GuardKind.LENGTH, dsrc, len(defaults))
        defaults = tuple(by_code_or_wrap(tx, d, item_source(dsrc, i)) for i, d in enumerate(defaults))
    elif defaults:
        defaults = tuple(wrap(tx, defaults, dsrc).items)
    else:
        wrap(tx, defaults, dsrc)  # None or (): guarded to stay so
        defaults = None
    cells = None
    if fn.__closure__:
        clo = attr_source(source, "__closure__")
        tx.guard(GuardKind.LENGTH, clo, len(fn.__closure__))
        cells = tuple(
            input_cell(tx, c, item_source(clo, i), name)
            for i, (name, c) in enumerate(zip(code.co_freevars, fn.__closure__))
        )
    v = MadeFunctionV(
        code,
        fn.__globals__,
        fn.__qualname__,
        defaults,
        None if not fn.__kwdefaults__ else _kwdefaults(tx, fn, source),
        cells,
    )
    v.name = fn.__name__
    v.source = source
    tx.by_id[id(fn)] = v
    tx.keepalive.append(fn)
    return v


def by_code_or_wrap(tx, obj, source):
    """`obj` reached from a continuation's arguments: a function by its code, a list or tuple
    holding functions item by item (like `wrap`'s), anything else by `wrap`."""
    t = type(obj)
    if t is types.FunctionType:
        return function_by_code(tx, obj, source)
    from ..model.builder import enter_nesting, wrap

    if (
        (t is list or t is tuple)
        and len(obj) <= 64
        and tx.by_id.get(id(obj)) is None
        and any(type(x) in (types.FunctionType, list, tuple) for x in obj)
    ):
        from ..model.values import ListV, TupleV

        tx.guard(GuardKind.TYPE_MATCH, source, t)
        tx.guard(GuardKind.LENGTH, source, len(obj))
        v = TupleV((), tuple, source) if t is tuple else ListV([], source)
        tx.by_id[id(obj)] = v  # aliases of the list or tuple are the same value (as `wrap`'s)
        tx.keepalive.append(obj)
        depth = enter_nesting(tx)
        try:
            items = [by_code_or_wrap(tx, x, item_source(source, i)) for i, x in enumerate(obj)]
        finally:
            tx.__dict__["wrap_depth"] = depth
        v.items = tuple(items) if t is tuple else items
        return v
    return wrap(tx, obj, source)


def _kwdefaults(tx, fn, source) -> dict:
    from ..model.builder import wrap

    d = wrap(tx, fn.__kwdefaults__, attr_source(source, "__kwdefaults__"))
    return {k: e[1] for k, e in d.entries.items()}


def load_cell(tx, cell: CellV):
    if not cell.loaded:
        try:
            real = cell.real.cell_contents
        except ValueError:
            contents = None
        else:
            from ..model.builder import wrap

            src = (
                attr_source(cell.source, "cell_contents")
                if cell.source is not None
                else CellSource(cell.name, Ref(cell.real))
            )
            # a continuation's cell may hold a closure made per call
            contents = by_code_or_wrap(tx, real, src) if cell.source is not None else wrap(tx, real, src)
        if contents is None:  # a later call's may be full (the same cell, bound since)
            base = (
                cell.source if cell.source is not None else ConstSource(Ref(cell.real, f"cell {cell.name}"))
            )
            tx.guard(GuardKind.CONSTANT_MATCH, CellFilledSource(base), False)
        tx.set(cell, "contents", contents)
        tx.set(cell, "loaded", True)
    if cell.contents is None:
        code = tx.frames[-1].code if tx.frames else None
        if code is not None and cell.name in code.co_cellvars:  # the frame's own variable
            raise SymbolicRaise(
                ExceptionV(
                    UnboundLocalError,
                    [
                        Const(
                            f"cannot access local variable '{cell.name}' where it is not associated "
                            "with a value"
                        )
                    ],
                )
            )
        raise SymbolicRaise(
            ExceptionV(
                NameError,
                [
                    Const(
                        f"cannot access free variable '{cell.name}' where it is not associated with a value"
                        " in enclosing scope"
                    )
                ],
            )
        )
    return cell.contents


def store_cell(tx, cell: CellV, value) -> None:
    tx.set(cell, "contents", value)
    tx.set(cell, "loaded", True)
    if cell.real is not None:
        tx.mark_mutated(cell)


def zero_arg_super(tx):
    frame = tx.frames[-1]
    cls_cell = frame.locals.get("__class__")
    if not isinstance(cls_cell, CellV) or not frame.code.co_argcount:
        raise UnsupportedError(BreakReason.UNSUPPORTED_SUPER, "super() without __class__ cell or arguments")
    cls = load_cell(tx, cls_cell)
    first = frame.locals.get(frame.code.co_varnames[0])
    if isinstance(first, CellV):
        first = load_cell(tx, first)
    if not isinstance(cls, ObjectV) or not isinstance(cls.obj, type) or first is None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_SUPER, "super() in an unusual frame")
    return SuperV(cls.obj, first)
