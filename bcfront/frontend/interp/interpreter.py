"""The run loop: executes a symbolic frame instruction by instruction.

`run` dispatches each instruction to the handler table (keyed by `Instr.op`,
see `handlers`).  Handlers return None to continue, or a signal tuple:
``("return", value)``, ``("yield", value)`` or ``("generator", None)``.
A `SymbolicRaise` from a handler is unwound with the frame's exception table
(exactly as CPython 3.11+ does: truncate the stack to the entry's depth, push
lasti if asked, push the exception, jump); when no entry covers the
instruction it propagates to the caller frame.  An `UnsupportedError`
propagates to the capture driver, which turns it into a graph break at the
outermost frame's current instruction (see `capture`).

`inline_call` binds arguments like CPython and runs a callee frame;
generator functions return a `GeneratorV` that `resume_generator` advances.
"""

from __future__ import annotations

import builtins as _py_builtins
import inspect
import sys

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.frame import Frame, frame_entry, original_offset
from ..model.tracer import INLINE_DEPTH_LIMIT, STEP_LIMIT, SymbolicRaise
from ..model.values import Const, DictV, ExceptionV, GeneratorV, MadeFunctionV, ObjectV, TupleV
from ..semantics import dispatch, objects, own_code
from ..semantics.folding import NotConst, own_recursion
from ..semantics.iteration import Exhausted
from .handlers import HANDLERS, unsupported_opcode

CO_VARARGS = inspect.CO_VARARGS
CO_VARKEYWORDS = inspect.CO_VARKEYWORDS
CO_GENERATOR = inspect.CO_GENERATOR
CO_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def run(tx, frame: Frame):
    tx.frames.append(frame)
    try:
        return _loop(tx, frame)
    except UnsupportedError as e:
        if getattr(e, "user_stack", None) is None:
            # Remember where it happened (innermost frame) before the stack unwinds.
            e.user_stack = tx.user_stack()
            if frame.cur is not None:
                off = original_offset(frame.code, frame.cur.offset)
                e.instruction = f"{frame.cur.opname} at offset {off}"
            else:
                e.instruction = ""
        raise
    finally:
        tx.frames.pop()


def _loop(tx, frame: Frame):
    instrs = frame.instrs
    n = len(instrs)
    handlers = HANDLERS
    while True:
        if frame.ip >= n:
            raise UnsupportedError(BreakReason.MALFORMED_BYTECODE, "execution ran past the last instruction")
        ins = instrs[frame.ip]
        frame.cur = ins
        frame.snap = frame.stack[:]
        if frame.depth == 0:
            # A break anywhere inside this instruction resumes from exactly here.
            tx.root_cp = tx.checkpoint()
            frame.snap_kw = frame.kw_names
        frame.ip += 1
        tx.steps += 1
        if tx.steps > STEP_LIMIT:
            raise UnsupportedError(BreakReason.STEP_LIMIT, f"more than {STEP_LIMIT} instructions traced")
        handler = handlers.get(ins.op, unsupported_opcode)
        try:
            sig = handler(tx, frame, ins)
        except SymbolicRaise as e:
            _chain(tx, e.exc)
            _trace_back(tx, frame, ins, e.exc)
            if not unwind(tx, frame, ins, e.exc):
                raise
            continue
        except NotConst as e:
            # a model needed a constant where the trace has a symbolic value (range() of an
            # object with __index__, ...): the instruction runs natively, not an internal error
            raise UnsupportedError(
                BreakReason.UNSUPPORTED_CALL,
                f"{ins.opname} needs a constant, got {e.args[0].describe() if e.args else '?'}",
            ) from None
        except RecursionError as e:  # bcfront's own, over a deep value: the instruction runs natively
            raise own_recursion(e) from None
        if sig is not None:
            return sig


def _chain(tx, exc) -> None:
    """Implicit chaining, as CPython does when an exception is raised: its ``__context__`` is
    the exception being handled then (outside the function's handlers: the caller's, which
    the region sets at run time, `ExceptionV.outer_context`; None in the trace).  Set where it is first caught
    -- the innermost frame, still at the raising instruction -- so every way of raising
    (a failing lookup in a modelled builtin too) gets it (O19)."""
    if isinstance(exc, ExceptionV) and "__context__" not in exc.attrs:
        ctx = tx.exc_info if tx.exc_info is not exc else None
        tx.set(exc, "attrs", {**exc.attrs, "__context__": ctx if ctx is not None else Const(None)})
        if tx.exc_info is None:  # the caller's handled exception, at run time (codegen)
            tx.set(exc, "outer_context", True)


def _trace_back(tx, frame: Frame, ins, exc) -> None:
    """The traceback entry CPython adds as the exception leaves or is caught in this frame
    (kept for a rebuild after a break, O30); none for the Python standing in for a C
    function (`own_code.adds_no_frame`), as the C function adds none."""
    if own_code.adds_no_frame(frame.globals):
        return
    if isinstance(exc, ExceptionV):
        entry = frame_entry(frame, ins)
        if entry is not None:
            tx.set(exc, "tb", (entry,) + exc.tb)
    elif isinstance(exc, ObjectV):  # made outside the trace (at a break): its entries apart (O64)
        entry = frame_entry(frame, ins)
        if entry is not None:
            key = id(exc.obj)
            tx.set(tx, "object_tbs", {**tx.object_tbs, key: (entry,) + tx.object_tbs.get(key, ())})


def unwind(tx, frame: Frame, ins, exc) -> bool:
    """Jump to the exception handler covering `ins`, if any (CPython 3.11+ semantics)."""
    entry = frame.bc.handler_for(ins.offset)
    if entry is None:
        return False
    frame.stack = frame.snap[: entry.depth]
    if entry.lasti:
        frame.push(Const(ins.offset))
    frame.push(exc)
    frame.jump(entry.target)
    return True


# -- calls -----------------------------------------------------------------------------------


def builtins_of(fn_globals: dict) -> dict:
    b = fn_globals.get("__builtins__", _py_builtins)
    return b if isinstance(b, dict) else b.__dict__


def bind(code, args, kwargs, defaults, kwdefaults, make_tuple, make_dict, qualname=None) -> dict:
    """Bind call arguments to parameter names the way CPython does (TypeError on mismatch).

    The TypeError carries CPython's own message (`bind_error`): code that catches
    it and reads the text must see what it sees natively.  `qualname` is the
    function's ``__qualname__`` (the message's name; it may differ from its code's).
    """
    argc, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames
    flags = code.co_flags

    def fail(fallback: str):
        return bind_error(
            code, len(args), tuple(kwargs), len(defaults), tuple(kwdefaults), fallback, qualname
        )

    out = {}
    for i in range(min(len(args), argc)):
        out[names[i]] = args[i]
    extra = list(args[argc:])
    star_index = argc + kwonly
    if extra and not flags & CO_VARARGS:
        raise fail(f"takes {argc} positional arguments but {len(args)} were given")
    if flags & CO_VARARGS:
        out[names[star_index]] = make_tuple(extra)
    keyword_names = names[posonly : argc + kwonly]
    rest = {}
    for k, v in kwargs.items():
        if k in keyword_names:
            if k in out:
                raise fail(f"got multiple values for argument '{k}'")
            out[k] = v
        elif flags & CO_VARKEYWORDS:
            rest[k] = v
        else:
            raise fail(f"got an unexpected keyword argument '{k}'")
    if flags & CO_VARKEYWORDS:
        out[names[star_index + (1 if flags & CO_VARARGS else 0)]] = make_dict(rest)
    ndef = len(defaults)
    for i in range(argc):
        if names[i] not in out:
            j = i - (argc - ndef)
            if j < 0:
                raise fail(f"missing required positional argument: '{names[i]}'")
            out[names[i]] = defaults[j]
    for k in names[argc : argc + kwonly]:
        if k not in out:
            if k not in kwdefaults:
                raise fail(f"missing required keyword-only argument: '{k}'")
            out[k] = kwdefaults[k]
    return out


def bind_error(
    code, nargs: int, kwnames: tuple, ndefaults: int, kwdefault_names: tuple, fallback: str, qualname=None
) -> TypeError:
    """The TypeError CPython raises for this failed binding, with its exact message.

    Whether a binding fails, and how, depends only on the signature, the number of
    positional arguments and the keyword names, so calling a stub with the same
    signature (an empty body, the callee's name and qualname) and placeholder
    arguments raises the very error -- wording, counts, plurals and order of checks
    included (they changed between versions).  `fallback` is used when no stub can
    be made (a parameter name that is not an identifier).
    """
    qualname = qualname or code.co_qualname
    stub = _stub(code, ndefaults, kwdefault_names, qualname)
    if stub is not None:
        try:
            stub(*(None,) * nargs, **dict.fromkeys(kwnames))
        except TypeError as e:
            return TypeError(*e.args)
    return TypeError(f"{qualname}() {fallback}")


_STUBS: dict = {}


def _stub(code, ndefaults: int, kwdefault_names: tuple, qualname: str):
    key = (code, ndefaults, kwdefault_names, qualname)
    if key in _STUBS:
        return _STUBS[key]
    argc, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames
    flags = code.co_flags
    n_all = argc + kwonly + bool(flags & CO_VARARGS) + bool(flags & CO_VARKEYWORDS)
    stub = None
    if all(n.isidentifier() for n in names[:n_all]):
        params = [n + ("=None" if i >= argc - ndefaults else "") for i, n in enumerate(names[:argc])]
        if posonly:
            params.insert(posonly, "/")
        i = argc + kwonly
        if flags & CO_VARARGS:
            params.append("*" + names[i])
            i += 1
        elif kwonly:
            params.append("*")
        params += [n + ("=None" if n in kwdefault_names else "") for n in names[argc : argc + kwonly]]
        if flags & CO_VARKEYWORDS:
            params.append("**" + names[i])
        ns: dict = {}
        exec(f"def stub({', '.join(params)}):\n    pass\n", ns)  # noqa: S102 - names are identifiers
        fn = ns["stub"]
        fn.__code__ = fn.__code__.replace(co_name=code.co_name, co_qualname=qualname)
        fn.__name__, fn.__qualname__ = code.co_name, qualname  # the messages use these
        stub = fn
    if len(_STUBS) > 256:
        _STUBS.clear()
    _STUBS[key] = stub
    return stub


def _sym_tuple(items):
    return TupleV(items)


def _sym_dict(d):
    return DictV({k: (Const(k), v) for k, v in d.items()})


def inline_call(tx, fnv, args, kwargs):
    """Call a Python function value by interpreting its bytecode in a child frame."""
    code = fnv.code if isinstance(fnv, MadeFunctionV) else fnv.obj.__code__
    reads = objects.defaults_read(code, len(args), kwargs)
    code, fn_globals, cells, defaults, kwdefaults, qualname = objects.function_parts(tx, fnv, *reads)
    if code.co_flags & CO_ASYNC:
        raise UnsupportedError(BreakReason.ASYNC, f"{qualname} is a coroutine or async generator")
    if code in tx.no_inline:
        raise UnsupportedError(
            BreakReason.CALLEE_BREAK, f"{qualname} breaks the graph; it is called, not inlined"
        )
    if len(tx.frames) > INLINE_DEPTH_LIMIT:
        raise UnsupportedError(
            BreakReason.RECURSION_LIMIT, f"inlining deeper than {INLINE_DEPTH_LIMIT} calls ({qualname})"
        )
    try:
        locals_ = bind(code, args, kwargs, defaults, kwdefaults, _sym_tuple, _sym_dict, qualname)
    except TypeError:
        if all(reads):
            raise SymbolicRaise(ExceptionV(TypeError, [Const(str(sys.exc_info()[1]))])) from None
        # the message counts the defaults: read (and guard) them, and bind again
        _, _, _, defaults, kwdefaults, _ = objects.function_parts(tx, fnv)
        try:
            locals_ = bind(code, args, kwargs, defaults, kwdefaults, _sym_tuple, _sym_dict, qualname)
        except TypeError as e:
            raise SymbolicRaise(ExceptionV(TypeError, [Const(str(e))])) from None
    parent = tx.frames[-1] if tx.frames else None
    frame = Frame(code, fn_globals, builtins_of(fn_globals), fn=fnv, parent=parent, locals_=locals_)
    for name, cell in zip(code.co_freevars, cells):
        frame.locals[name] = cell
    if code.co_argcount or code.co_flags & CO_VARARGS:
        frame.self_value = locals_.get(code.co_varnames[0]) if code.co_varnames else None
    kind, value = run(tx, frame)
    if kind == "generator":
        gen = GeneratorV(frame)
        frame.generator = gen
        return gen
    if kind != "return":
        raise UnsupportedError(BreakReason.UNSUPPORTED_GENERATOR, f"{kind} outside a generator")
    return value


def run_class_body(tx, fnv):
    """Run a class body (the function `__build_class__` gets) in a child frame whose
    STORE_NAME/LOAD_NAME use a namespace of their own; returns (namespace, what the body
    returned: its ``__class__`` cell or None).  A body that breaks makes the class statement
    run natively, as one call."""
    code, fn_globals, cells, _, _, qualname = objects.function_parts(tx, fnv, False, False)
    if code in tx.no_inline:
        raise UnsupportedError(BreakReason.CALLEE_BREAK, f"the body of class {qualname} breaks the graph")
    if len(tx.frames) > INLINE_DEPTH_LIMIT:
        raise UnsupportedError(
            BreakReason.RECURSION_LIMIT, f"inlining deeper than {INLINE_DEPTH_LIMIT} calls"
        )
    parent = tx.frames[-1] if tx.frames else None
    frame = Frame(code, fn_globals, builtins_of(fn_globals), fn=fnv, parent=parent)
    frame.namespace = {}
    for name, cell in zip(code.co_freevars, cells):
        frame.locals[name] = cell
    kind, value = run(tx, frame)
    if kind != "return":
        raise UnsupportedError(BreakReason.UNSUPPORTED_GENERATOR, f"{kind} in a class body")
    return frame.namespace, value


def resume_generator(tx, gen: GeneratorV, sent):
    """Run a generator frame until its next yield (Exhausted on return)."""
    if gen.done:
        raise Exhausted()
    f = gen.frame
    if not gen.started:
        if not (isinstance(sent, Const) and sent.value is None):
            raise SymbolicRaise(
                ExceptionV(TypeError, [Const("can't send non-None value to a just-started generator")])
            )
        tx.set(gen, "started", True)
    tx.set(gen, "steps", gen.steps + 1)
    if gen.source is not None:  # a generator from outside (`resumed_gens`): replayed on it
        tx.mark_mutated(gen)
    tx.set(f, "stack", f.stack[:])
    tx.set(f, "locals", dict(f.locals))
    tx.set(f, "ip", f.ip)
    f.push(sent)
    try:
        kind, value = run(tx, f)
    except SymbolicRaise:
        tx.set(gen, "done", True)
        raise
    if kind == "yield":
        if f.cur is not None and f.bc.handler_for(f.cur.offset) is not None:
            tx.suspended_in_try.append(gen)
        return value
    tx.set(gen, "done", True)
    raise Exhausted(None if isinstance(value, Const) and value.value is None else value)


# The semantics below reach these through their `dispatch` slots (a call inlines a
# function; iterating a generator resumes it), so they never import this module.
dispatch.inline_call = inline_call
dispatch.resume_generator = resume_generator
dispatch.run_class_body = run_class_body
