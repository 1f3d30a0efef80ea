"""Calling symbolic values: functions, methods, classes, modules, partials, builtins.

`call(tx, fn, args, kwargs)` is the single entry point (the semantics below
this module reach it as `dispatch.call`, filled in at the bottom).  Python
functions are inlined (their bytecode is interpreted in a child frame, through
`dispatch.inline_call`, which the interpreter fills in); torch functions go to
`torch_calls`; builtins and C methods of builtin types to the model table
(`registry`, looked up by `builtins.model_for`); classes are constructed
(``__new__`` then ``__init__``, both inlined when written in Python);
nn.Module instances keep ``__call__`` semantics (hooks, then ``forward``).
Anything else is a graph break naming what could not be called.  The class
lookups it relies on (`lookup_dunder`, `mro_lookup`...) live in `classes`.
"""

from __future__ import annotations

import enum
import sys
import types
import weakref

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import call_through, guard_class_lookup, wrap
from ..model.c_instances import CInstanceV
from ..model.guard_kinds import GuardKind
from ..model.sources import AttrSource, ConstSource, PureCallSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import (
    NULL,
    CellV,
    Const,
    DictV,
    ExceptionV,
    ListV,
    MadeFunctionV,
    MethodV,
    NewObjectV,
    ObjectV,
    PartialV,
    RuntimeV,
    StateCMV,
    TupleV,
    Value,
)
from . import builtins as bmodels
from . import (
    class_build,  # noqa: F401  (registers its model of __build_class__ and the wrappers)
    constant_results,
    copying,  # noqa: F401  (its models of copy.copy/deepcopy register when imported)
    dispatch,
    dynamo_wrappers,
    enum_calls,
    fsdp_calls,
    inspect_models,  # noqa: F401  (registers its models of inspect.signature/unwrap)
    json_encoding,  # noqa: F401  (registers its models of json's C Encoder)
    json_twins,
    module_construction,
    whole_lists,
)
from .attrs import getattr_
from .classes import (
    MISS,
    builtin_subclass_instance,
    is_heap_type,
    lookup_dunder,
    mro_lookup,
    source_of,
    value_class,
)
from .folding import raise_
from .memo_lookups import MemoLookupV, call_lookup
from .object_slots import new_instance
from .own_code import owns_function

# -- calls ----------------------------------------------------------------------------


def call(tx, fn: Value, args: list, kwargs: dict) -> Value:
    if isinstance(fn, MethodV):
        return call(tx, fn.func, [fn.obj, *args], kwargs)
    if isinstance(fn, MadeFunctionV):
        return dispatch.inline_call(tx, fn, args, kwargs)
    if isinstance(fn, PartialV):
        merged = {**fn.kwargs, **kwargs}
        if not all(isinstance(k, str) for k in merged):  # ``partial(f, **{1: 2})``'s keywords
            if not checks_keyword_types(fn.func):
                what = f"a keyword that is no str to {fn.describe()}"
                raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, what)
            raise_(TypeError, "keywords must be strings")
        return call(tx, fn.func, [*fn.args, *args], merged)
    if isinstance(fn, ObjectV):
        return call_object(tx, fn, args, kwargs)
    if isinstance(fn, MemoLookupV):  # a cached memo's lookup: checked to memoize
        return call_lookup(tx, fn, args, kwargs)
    if isinstance(fn, (NewObjectV, CInstanceV)) or builtin_subclass_instance(fn):
        m = lookup_dunder(fn, "__call__", tx)  # a modelled C instance's: its C method's model
        if m is not None:
            return call(tx, m, [fn, *args], kwargs)
    if isinstance(fn, StateCMV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "a torch context manager used as a decorator")
    if isinstance(fn, (Const, TupleV)) or fn is NULL:
        raise_(TypeError, f"'{fn.python_type().__name__}' object is not callable")
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"calling {fn.describe()}")


def checks_keyword_types(fn: Value) -> bool:
    """Whether calling `fn` with a keyword that is no str raises "keywords must be
    strings" (vectorcall's _PyStack_UnpackDict: a Python function, a bound one); a C
    type called through ``tp_call`` may take it (``OrderedDict(**{1: 2})``)."""
    if isinstance(fn, MethodV):
        return checks_keyword_types(fn.func)
    if isinstance(fn, MadeFunctionV):
        return True
    return isinstance(fn, ObjectV) and isinstance(fn.obj, types.FunctionType)


def call_object(tx, fv: ObjectV, args, kwargs) -> Value:
    obj = fv.obj
    made = whole_lists.call_declared(tx, obj, args, kwargs)  # on values known at run time
    if made is not None:
        return made
    if constant_results.is_marked(obj):  # assume_constant_result: called now, a constant
        return constant_results.call(tx, fv, args, kwargs)
    model = bmodels.model_for(obj)
    if model is None and "torch.distributed" in sys.modules:
        from .collectives import model_for  # torch.distributed's calls, DDP's forward

        model = model_for(obj)
    if model is not None:
        return model(tx, args, kwargs)
    scanner = json_twins.scanner_twin(obj)
    if scanner is not None:  # a C json Scanner: the Python parser it replaced, on its hooks
        return scanner(tx, fv, args, kwargs)
    through = call_through(tx, fv)  # a captured function: its original code, inlined
    if through is not None:
        return call(tx, through, args, kwargs)
    torch_loaded = "torch" in sys.modules
    if isinstance(obj, types.FunctionType):
        made = tx.by_id.get(id(obj))
        if isinstance(made, MadeFunctionV):  # a stand-in in a class made by the trace: the real one
            return dispatch.inline_call(tx, made, args, kwargs)
        if torch_loaded and dynamo_wrappers.from_torch(obj):
            from . import autograd_functions, checkpoint_calls, optim_models, torch_calls

            if checkpoint_calls.is_checkpoint(obj):
                made = checkpoint_calls.call(tx, args, kwargs)
                if made is not None:
                    return made
            if obj is autograd_functions.APPLY:
                return autograd_functions.function_apply(tx, args, kwargs)
            if optim_models.is_step(obj):
                return optim_models.optimizer_step(tx, fv, args, kwargs)
            if optim_models.is_zero_grad(obj):
                done = optim_models.zero_grad(tx, args, kwargs)
                if done is not None:
                    return done
            if torch_calls.is_torch_function(obj) and not torch_calls.writable_arguments(args, kwargs):
                return torch_calls.call_function(tx, obj, args, kwargs)
        if torch_loaded:  # after the models above: opt.step's wrappers are theirs to see
            inner = dynamo_wrappers.unwrap(tx, obj)  # torch.compiler.disable & co.
            if inner is not None:
                return call(tx, ObjectV(inner), args, kwargs)
        return dispatch.inline_call(tx, fv, args, kwargs)
    if torch_loaded:
        from . import torch_calls

        if torch_calls.is_torch_callable(obj):
            return torch_calls.call_function(tx, obj, args, kwargs)
    if isinstance(obj, type):
        return construct(tx, fv, args, kwargs)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.nn.Module):
        return call_module(tx, fv, args, kwargs)
    if is_heap_type(type(obj)):
        raw = mro_lookup(type(obj), "__call__")
        if isinstance(raw, types.FunctionType):
            tx.guard(
                GuardKind.ID_MATCH,
                AttrSource(ConstSource(Ref(type(obj), type(obj).__qualname__)), "__call__"),
                raw,
            )
            return call(tx, ObjectV(raw), [fv, *args], kwargs)
    if type(obj) is weakref.ref and fv.source is not None and not args and not kwargs:
        return weak_referent(tx, fv)
    what = getattr(obj, "__qualname__", None) or type(obj).__name__
    if isinstance(
        obj,
        (
            types.BuiltinFunctionType,
            types.MethodDescriptorType,
            types.WrapperDescriptorType,
            types.MethodWrapperType,
        ),
    ):
        reason = BreakReason.IO if what in ("print", "input", "open") else BreakReason.CALL_TO_C_FUNCTION
        raise UnsupportedError(reason, f"call to {_c_name(obj)}, which bcfront cannot see into")
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"calling {what}")


def weak_referent(tx, fv: ObjectV) -> Value:
    """``r()`` of an outside weak reference (``nn.RNNBase._weights_have_changed`` checks
    its parameters through them each call): the referent now, None once it died, read
    again by the guards through the reference (``weakref.ref.__call__(r)``), so that a
    referent that died or was replaced is a new entry; the guards hold no referent."""
    src = PureCallSource(Ref(weakref.ref.__call__, "weakref.ref.__call__"), (fv.source,), (type(fv.source),))
    return wrap(tx, fv.obj(), src)


def weak_reference(tx, clsv: ObjectV, args, kwargs) -> Value:
    """``weakref.ref(o)`` of an outside object `o` (torch's ``RemovableHandle`` keeps one to
    a module's hooks dict): the real reference, made at capture (CPython shares one plain
    reference per live referent, as this one is), and made again from `o`'s source where
    the region needs it (``weakref.ref(o)``): it holds no referent.  A callback, or an
    object made in the trace, is no such case."""
    v = args[0] if len(args) == 1 and not kwargs else None
    obj = outside_object(tx, v) if v is not None and v.source is not None else _NONE
    if v is None or obj is _NONE:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL, "weakref.ref() of an object made in the trace, or with a callback"
        )
    try:
        ref = weakref.ref(obj)
    except TypeError as e:
        raise_(TypeError, str(e))
    return wrap(tx, ref, PureCallSource(Ref(weakref.ref, "weakref.ref"), (v.source,), (type(v.source),)))


_NONE = object()


def outside_object(tx, v: Value):
    """The real object behind `v`, a value of an outside object (`tx.by_id`), or `_NONE`."""
    if isinstance(v, ObjectV):
        return v.obj
    return next((o for o in tx.keepalive if tx.by_id.get(id(o)) is v), _NONE)


bmodels.CONSTRUCTORS[weakref.ref] = weak_reference


def _c_name(obj) -> str:
    mod = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
    return f"{mod}.{name}" if mod and mod != "builtins" else f"the built-in {name}"


def _os_error(cls, args, kwargs) -> ExceptionV:
    """An OSError (or subclass) made by its C ``__new__``/``__init__``, which pick the class
    by errno (``OSError(2, ...)`` is a FileNotFoundError) and keep only (errno, strerror) as
    `args` when a filename is given: made for real on constant arguments, whose result
    tells both."""
    if kwargs or not all(type(a) in (Const, RuntimeV) for a in args):
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL, f"{cls.__name__}() of values not known at capture"
        )
    made = cls(*(a.value for a in args))
    exc = ExceptionV(type(made), [Const(a) for a in made.args])
    exc.ctor_args = tuple(args)  # what the C __init__ takes (errno, strerror, filename...)
    return exc


def _own_construction(cls, meta_call) -> bool:
    """Making an instance of `cls` runs code of the program's own beyond ``__init__``: its
    metaclass's ``__call__`` or a ``__new__`` written in Python (the general path below
    handles or breaks on them; an exception class is otherwise made as an ExceptionV)."""
    if meta_call is not type.__call__ and meta_call is not MISS:
        return True
    new = mro_lookup(cls, "__new__")
    return isinstance(new, (staticmethod, types.FunctionType))


def construct(tx, clsv: ObjectV, args, kwargs) -> Value:
    cls = clsv.obj
    ctor = bmodels.constructor_for(cls)
    if ctor is not None:
        return ctor(tx, clsv, args, kwargs)
    meta_call = mro_lookup(type(cls), "__call__")
    if issubclass(cls, BaseException) and not _own_construction(cls, meta_call):
        init = mro_lookup(cls, "__init__")
        if issubclass(cls, OSError) and not isinstance(init, types.FunctionType):
            return _os_error(cls, args, kwargs)
        exc = ExceptionV(cls, args)
        if isinstance(init, types.FunctionType):
            call(tx, ObjectV(init), [exc, *args], kwargs)
        elif kwargs:
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{cls.__name__}(**kwargs)")
        return exc
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(cls, torch.nn.Module):
        return module_construction.construct_module(tx, clsv, args, kwargs)
    if meta_call is not type.__call__ and meta_call is not MISS:
        if isinstance(cls, enum.EnumType):
            made = enum_calls.enum_call(tx, clsv, args, kwargs)
            if made is not None:
                return made
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"metaclass {type(cls).__name__}.__call__")
    if not is_heap_type(cls):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"constructing the C type {cls.__qualname__}")
    new = mro_lookup(cls, "__new__")
    if new is object.__new__ or new is MISS:
        if (args or kwargs) and mro_lookup(cls, "__init__") in (object.__init__, MISS):
            raise_(TypeError, f"{cls.__name__}() takes no arguments")  # before abstractness, as CPython
        inst = new_instance(tx, cls)
    elif isinstance(new, staticmethod) and isinstance(new.__func__, types.FunctionType):
        inst = call(tx, ObjectV(new.__func__), [clsv, *args], kwargs)
    elif isinstance(new, types.FunctionType):
        inst = call(tx, ObjectV(new), [clsv, *args], kwargs)
    else:
        # __new__ of a builtin base (tuple.__new__, ...) goes through its model.
        inst = call(tx, ObjectV(cls.__new__), [clsv, *args], kwargs)
    if (
        value_class(inst) is not None
        and isinstance(inst, (NewObjectV, TupleV, DictV, ListV))
        and issubclass(value_class(inst), cls)
    ):
        init = mro_lookup(cls, "__init__")
        if isinstance(init, types.FunctionType) or (
            isinstance(inst, (DictV, ListV)) and bmodels.model_for(init) is not None  # dict's, list's
        ):
            r = call(tx, ObjectV(init), [inst, *args], kwargs)
            if not (isinstance(r, Const) and r.value is None):
                raise_(TypeError, "__init__() should return None")
        elif init is not object.__init__ and init is not MISS and not isinstance(inst, TupleV):
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"C __init__ of {cls.__qualname__}")
    return inst


HOOK_DICTS = (
    "_forward_hooks",
    "_forward_pre_hooks",
    "_backward_hooks",
    "_backward_pre_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks_always_called",
)


def call_module(tx, mv: ObjectV, args, kwargs) -> Value:
    """``module(*args)``: nn.Module.__call__ semantics (pre-hooks, forward, hooks), inlined."""
    import torch

    mod = mv.obj
    cls = type(mod)
    guard_class_lookup(tx, cls, "__call__")
    call_impl = mro_lookup(cls, "__call__")
    if call_impl is not torch.nn.Module.__call__:
        if isinstance(call_impl, types.FunctionType):
            return call(tx, ObjectV(call_impl), [mv, *args], kwargs)
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{cls.__qualname__}.__call__")
    guard_global_hooks(tx)
    if fsdp_calls.is_fsdp_module(mod):  # one node: its hooks natively, its forward captured
        return fsdp_calls.call_fsdp_module(tx, mv, args, kwargs)
    src = source_of(mv)
    present = [n for n in HOOK_DICTS if getattr(mod, n, None)]
    tx.guard(GuardKind.NO_HOOKS, src, None, tuple(n for n in HOOK_DICTS if n not in present), example=mod)
    if any(n not in ("_forward_hooks", "_forward_pre_hooks") for n in present):
        raise UnsupportedError(BreakReason.MODULE_HOOKS, f"{cls.__qualname__} has backward or keyword hooks")
    if "_forward_pre_hooks" in present:
        hooks = wrap(tx, mod._forward_pre_hooks, AttrSource(src, "_forward_pre_hooks"))
        for _, (_, hook) in hooks.entries.items():
            r = call(tx, hook, [mv, TupleV(args)], {})
            if not (isinstance(r, Const) and r.value is None):
                args = list(r.items) if isinstance(r, TupleV) else [r]
    forward = getattr_(tx, mv, "forward")
    out = call(tx, forward, list(args), kwargs)
    if "_forward_hooks" in present:
        hooks = wrap(tx, mod._forward_hooks, AttrSource(src, "_forward_hooks"))
        for _, (_, hook) in hooks.entries.items():
            r = call(tx, hook, [mv, TupleV(args), out], {})
            if not (isinstance(r, Const) and r.value is None):
                out = r
    return out


def guard_global_hooks(tx) -> None:
    module_construction.guard_global_call_hooks(tx)


def function_parts(tx, fv: Value, read_defaults: bool = True, read_kwdefaults: bool = True):
    """(code, globals, closure cells, defaults, kwdefaults, name) of a function value.

    The defaults are guarded (and returned) only when the call reads them: a call that
    passes every positional parameter does not depend on ``__defaults__``, nor one that
    passes every keyword-only parameter on ``__kwdefaults__`` (`defaults_read`); otherwise
    they come back empty, unguarded."""
    if isinstance(fv, MadeFunctionV):
        return (fv.code, fv.globals, fv.closure or (), fv.defaults or (), fv.kwdefaults or {}, fv.qualname)
    fn = fv.obj
    src = source_of(fv)
    if fn.__closure__:
        cells = []
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            c = tx.by_id.get(id(cell))
            if c is None:
                c = CellV(None, real=cell, name=name)
                tx.by_id[id(cell)] = c
                tx.keepalive.append(cell)
            cells.append(c)
    else:
        cells = ()
    # The function object is identity-guarded, but its body and defaults can be replaced in
    # place (IPython's autoreload assigns __code__): guard them too (O29) -- not those of
    # bcfront's own models of C code, which nobody replaces (`own_code`)
    own = owns_function(fn)
    guard = _no_guard if own else tx.guard
    guard(GuardKind.ID_MATCH, AttrSource(src, "__code__"), fn.__code__)
    defaults = ()
    if read_defaults:
        dsrc = None if own else AttrSource(src, "__defaults__")
        guard(GuardKind.ID_MATCH, dsrc, fn.__defaults__)
        if fn.__defaults__:
            defaults = wrap(tx, fn.__defaults__, dsrc).items
    kwdefaults = {}
    if read_kwdefaults:
        ksrc = None if own else AttrSource(src, "__kwdefaults__")
        guard(GuardKind.ID_MATCH, ksrc, fn.__kwdefaults__)
        if fn.__kwdefaults__:
            kw = wrap(tx, fn.__kwdefaults__, ksrc)
            kwdefaults = {k: e[1] for k, e in kw.entries.items()}
    return fn.__code__, fn.__globals__, tuple(cells), tuple(defaults), kwdefaults, fn.__qualname__


def _no_guard(*args) -> None:
    pass


def defaults_read(code, nargs: int, kwnames) -> tuple[bool, bool]:
    """Whether binding `nargs` positional arguments and keywords `kwnames` to `code`'s
    parameters reads the function's ``__defaults__`` and its ``__kwdefaults__``: only for a
    parameter the call leaves out (a failed binding's message reads both: see its caller)."""
    argc, posonly = code.co_argcount, code.co_posonlyargcount
    names = code.co_varnames
    positional = any(i >= nargs and (i < posonly or names[i] not in kwnames) for i in range(argc))
    keyword_only = any(k not in kwnames for k in names[argc : argc + code.co_kwonlyargcount])
    return positional, keyword_only


def raise_type_error(msg: str):
    raise SymbolicRaise(ExceptionV(TypeError, [Const(msg)]))


dispatch.call = call  # the entry point the modules below reach through `dispatch`


def _function_call_slot(tx, args, kwargs) -> Value:
    """``f.__call__(...)`` (the function type's slot, bound): the call itself."""
    if not args:
        raise_type_error("descriptor '__call__' of 'function' object needs an argument")
    return call(tx, args[0], list(args[1:]), kwargs)


bmodels.MODELS[types.FunctionType.__call__] = _function_call_slot
