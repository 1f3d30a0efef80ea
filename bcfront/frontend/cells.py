"""Closure cells and zero-argument super(): reading and writing cell contents.

A cell that exists outside the trace (a closure of an outside function) is
loaded lazily, guarded through a `CellSource`; writes to such a cell are
replayed after the region like any other outside mutation.
"""
from __future__ import annotations

from ..errors import UnsupportedError
from .sources import CellSource, Ref
from .tracer import SymbolicRaise
from .values import CellV, Const, ExceptionV, ObjectV, SuperV


def load_cell(tx, cell: CellV):
    if not cell.loaded:
        try:
            real = cell.real.cell_contents
        except ValueError:
            contents = None
        else:
            from .builder import wrap
            contents = wrap(tx, real, CellSource(cell.name, Ref(cell.real)))
        tx.set(cell, "contents", contents)
        tx.set(cell, "loaded", True)
    if cell.contents is None:
        raise SymbolicRaise(ExceptionV(NameError, [Const(
            f"cannot access free variable '{cell.name}' where it is not associated with a value")]))
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
        raise UnsupportedError("unsupported-super", "super() without __class__ cell or arguments")
    cls = load_cell(tx, cls_cell)
    first = frame.locals.get(frame.code.co_varnames[0])
    if isinstance(first, CellV):
        first = load_cell(tx, first)
    if not isinstance(cls, ObjectV) or not isinstance(cls.obj, type) or first is None:
        raise UnsupportedError("unsupported-super", "super() in an unusual frame")
    return SuperV(cls.obj, first)
