"""From one call to a cache entry: trace the root frame, then generate guard and region code.

`trace_entry(root_fn, args, kwargs, options)` runs the root function's
bytecode symbolically on the real arguments (wrapped as inputs with
``L[...]`` sources) and returns an `Entry`:

* normally a compiled entry: one generated guard function and one generated
  region function, both with the root function's own signature;
* at a graph break, the entry produced by `breaks.compile_break` (region up
  to the break, the instruction run natively, a captured continuation);
  `fullgraph=True` raises `GraphBreakError` instead.

The entry itself (guard and region functions) is built in `entry`.
"""

from __future__ import annotations

import inspect
import threading

from ...errors import GraphBreakError, UnsupportedError
from ...reasons import BreakReason
from ..interp.interpreter import bind, builtins_of, run
from ..model.builder import guard_class_lookup, wrap
from ..model.frame import Frame
from ..model.guard_kinds import GuardKind
from ..model.shape_policy import NeedDynamic
from ..model.sources import AttrSource, ConstSource, ItemSource, LocalSource, Ref, Source
from ..model.tracer import SymbolicRaise, Tracer
from ..model.values import CellV, ObjectV
from ..semantics.folding import own_recursion
from .breaks import CallSite
from .entry import Entry, break_record, build_entry
from .region_errors import trace_with_splits

CAPTURE_LOCK = threading.RLock()  # one capture at a time (they share fake-tensor state)


class IntsStaticAgain(Exception):
    """A capture that made int arguments symbolic only because torch is imported (a function
    touching no tensor) met a graph break: it is traced again with those ints constant, as
    it was before symbolic ints reached pure-Python code, so that symbolic ints never cost
    a break a constant would not (`repr` of an exception holding one, a user's ``__len__``
    returning one...): such a function recaptures per value instead, up to the limit."""


class BindError(TypeError):
    """The call's arguments do not bind to the root's parameters (the native call raises too)."""


def raise_fullgraph(e: UnsupportedError):
    b = break_record(e)
    raise GraphBreakError(b.reason, b.message, b.filename, b.lineno, b.user_stack, b.instruction) from None


def trace_entry(cf, root, args, kwargs) -> Entry:
    """Symbolically execute `root(*args, **kwargs)` and build the entry for this call.

    Captures are serialized process-wide: they share fake-tensor state (`fake`).
    """
    from .breaks import EnterNatively
    from .fsdp_entry import fsdp_entry

    entry = fsdp_entry(cf, root, args)  # an FSDP2 module: its call is not traced
    if entry is not None:
        return entry
    with CAPTURE_LOCK:
        dynamic = cf.shape_policy.begin_capture(cf.fullgraph)
        try:
            return _trace_twice(cf, root, args, kwargs, dynamic)
        except EnterNatively as e:  # a root `with` to enter natively: once more
            return _trace_twice(cf, root, args, kwargs, dynamic, e.offset)


def _trace_twice(cf, root, args, kwargs, dynamic, enter=None) -> Entry:
    """The trace, again with a dynamic fake env when an input asked for a symbolic size
    after the (static) env was made."""
    try:
        try:
            return trace_with_splits(
                lambda split: _trace_entry(cf, root, args, kwargs, split, dynamic, enter)
            )
        except NeedDynamic:
            if dynamic:
                raise
        return trace_with_splits(lambda split: _trace_entry(cf, root, args, kwargs, split, True, enter))
    except IntsStaticAgain:
        static = cf.shape_policy.ints_broke = True  # and from now on: no trace twice per value
    return trace_with_splits(
        lambda split: _trace_entry(cf, root, args, kwargs, split, dynamic, enter, static)
    )


def _trace_entry(
    cf, root, args, kwargs, split=None, dynamic=False, enter_natively=None, static_ints=False
) -> Entry:
    tx = Tracer(root.__qualname__, root.__globals__, cf.options)
    tx.static_ints = static_ints
    try:
        return _trace_into(tx, cf, root, args, kwargs, split, dynamic, enter_natively)
    finally:
        tx.release()  # its cycles must not keep the call's tensors to the next collection (O60)


def _trace_into(tx, cf, root, args, kwargs, split, dynamic, enter_natively) -> Entry:
    code = root.__code__
    tx.__dict__["enter_natively"] = enter_natively  # a root `with` offset: break there (`breaks`)
    tx.shape_policy = cf.shape_policy
    tx.dynamic = dynamic
    tx.split = split  # where to end the region early (`region_errors.Split`)
    tx.__dict__["own_capture"] = CallSite(cf, [])  # an FSDP module's node calls through it
    tx.graph.reserve(set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars))
    try:
        real_locals = bind(
            code, args, kwargs, root.__defaults__ or (), root.__kwdefaults__ or {}, tuple, dict
        )
    except TypeError as e:
        raise BindError(str(e)) from None
    root_src = ConstSource(Ref(root, root.__qualname__))
    if not is_continuation(root):
        # the body and defaults can be replaced in place (IPython's autoreload assigns __code__):
        # identity guards.  None defaults need none: the guard function binds the call with the
        # root's defaults of now, so a call that would need defaults added later fails to bind
        # there (a miss), and one that passes every parameter does not read them.  A
        # continuation is private to bcfront: nothing replaces its body.
        for attr in ("__code__", "__defaults__", "__kwdefaults__"):
            if attr == "__code__" or getattr(root, attr) is not None:
                tx.guard(GuardKind.ID_MATCH, AttrSource(root_src, attr), getattr(root, attr))
    frame = Frame(code, root.__globals__, builtins_of(root.__globals__), fn=ObjectV(root, root_src))
    tx.frames.append(frame)
    try:
        frame.locals = root_locals(tx, root, real_locals)
        if cf.module_root is not None and root is not cf.call_object:
            from ..semantics.objects import HOOK_DICTS, guard_global_hooks

            guard_global_hooks(tx)
            module_src = first_positional_source(code)
            tx.guard(GuardKind.NO_HOOKS, module_src, None, HOOK_DICTS, example=cf.module_root)
            tx.guard(
                GuardKind.NOT_PRESENT, AttrSource(module_src, "__dict__"), None, "forward"
            )  # an instance-level forward would shadow the class's
            for name in ("__call__", "forward"):  # the class's, which chose this root
                guard_class_lookup(tx, type(cf.module_root), name)
    except (UnsupportedError, RecursionError) as e:
        err = own_recursion(e) if isinstance(e, RecursionError) else e  # inputs nested too deep
        err.user_stack = getattr(err, "user_stack", None) or tx.user_stack()
        tx.frames.pop()
        return _broken(cf, root, tx, err, frame)
    tx.frames.pop()
    try:
        kind, value = run(tx, frame)
    except UnsupportedError as e:
        return _broken(cf, root, tx, e, frame)
    except SymbolicRaise as e:
        kind, value = "raise", e.exc
    if kind not in ("return", "raise"):
        err = UnsupportedError(BreakReason.UNSUPPORTED_GENERATOR, "the captured function yields")
        return _broken(cf, root, tx, err, frame)
    try:
        return build_entry(cf, root, tx, value, raises=kind == "raise")
    except (UnsupportedError, RecursionError) as e:
        err = own_recursion(e) if isinstance(e, RecursionError) else e  # a result nested too deep
        err.user_stack = getattr(err, "user_stack", None) or (tx.report_frame(frame),)
        return _broken(cf, root, tx, err, frame)


def first_positional_source(code) -> Source:
    """Where the call's first positional argument lands in a frame of `code`: its first
    parameter, or item 0 of the ``*args`` tuple when it has no positional parameter (a
    ``forward`` wrapped by a ``functools.wraps(f)``-style ``(*args, **kwargs)`` decorator)."""
    if code.co_argcount == 0 and code.co_flags & inspect.CO_VARARGS:
        return ItemSource(LocalSource(code.co_varnames[code.co_kwonlyargcount]), 0)
    return LocalSource(code.co_varnames[0])


def is_continuation(fn) -> bool:
    return hasattr(fn, "__bcfront_resume__")


def root_locals(tx, root, real_locals) -> dict:
    """The root frame's locals: arguments wrapped as inputs, closure cells.  A continuation's
    cell arguments and function arguments (the region before the break made them, new
    objects per call) are inputs by contents and code, not identity (`cells`)."""
    from ..semantics.cells import by_code_or_wrap, input_cell
    from .resume import CELL_PARAMS

    code = root.__code__
    out = {}
    for name, cell in zip(code.co_freevars, root.__closure__ or ()):
        out[name] = CellV(None, real=cell, name=name)
        tx.by_id[id(cell)] = out[name]  # a closure passed in may share it
    star = code.co_argcount + code.co_kwonlyargcount
    for flag, kind in ((inspect.CO_VARARGS, tuple), (inspect.CO_VARKEYWORDS, dict)):
        if code.co_flags & flag:  # the guard function binds it so: its type needs no check
            tx.guards.holds(GuardKind.TYPE_MATCH, LocalSource(code.co_varnames[star]), kind)
            star += 1
    if not is_continuation(root):
        out.update((name, wrap(tx, value, LocalSource(name))) for name, value in real_locals.items())
        return out
    cells = getattr(root, CELL_PARAMS)
    for name in cells:  # first: functions passed in may hold them
        out[name] = input_cell(tx, real_locals[name], LocalSource(name), name)
    for name, value in real_locals.items():
        if name not in cells:
            out[name] = by_code_or_wrap(tx, value, LocalSource(name))
    return out


def _broken(cf, root, tx, e, frame) -> Entry:
    if tx.shape_inputs and not tx.static_ints and not tx.shape_policy.saw_tensors:
        raise IntsStaticAgain  # symbolic ints only for torch's sake: constants, then the break
    if cf.fullgraph:
        raise_fullgraph(e)
    from . import breaks

    return breaks.compile_break(cf, root, tx, e, frame)
