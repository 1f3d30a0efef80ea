"""Whether a user's ``torch.autograd.Function`` may be traced into a joint graph.

AOT autograd traces ``MyFunction.apply`` like any torch code: ``forward`` runs once on
fake tensors (its aten ops go into the forward graph) and the engine runs ``backward``
inside the joint trace (its ops go into the backward graph).  From then on the compiled
graphs run, not the user's Python, so tracing is only sound when that Python has no
effect but its tensor work, and reads nothing that may change between calls without a
guard noticing.  `check(cls)` reads the bytecode of ``forward``, ``setup_context`` and
``backward`` (and of the plain Python functions and other Functions they name as
globals, transitively) and refuses, with the reason, a Function that

* writes or deletes a global, or writes a closure cell;
* reads a closure cell of its own (its contents are not guarded);
* sets an attribute on anything but ``ctx``;
* reads an attribute of a user class other than another Function's ``apply`` (class
  attributes are state shared between calls: a counter);
* calls ``ctx.set_materialize_grads`` (eager passes ``None`` where a trace passes zeros)
  or names a torch function that sets global state (``manual_seed``, ``set_rng_state``...);
* names a global that is not a module, a function, class or op from torch / the standard
  math and operator modules (a global tensor or module is state), a Python function or
  Function passing the same check, or an immutable constant; or a builtin outside a
  known side-effect-free list (``print``, ``open``, ``setattr``... are out).

The globals it reads that are not modules or builtins are returned as ``(globals dict,
name, value)``: the frontend guards each by identity, so rebinding one recompiles.
Results are cached per class, while the globals read still hold the values checked.
What this cannot see (a method with side effects of an object the Function receives; a
monkeypatched ``forward``) is documented in the README's Training section.  No frontend imports.
"""

from __future__ import annotations

import builtins
import dis
import os
import types
import weakref

import torch

_PURE_BUILTINS = frozenset(
    {
        *("abs", "all", "any", "bool", "callable", "dict", "divmod", "enumerate", "filter", "float"),
        *("frozenset", "getattr", "hasattr", "int", "isinstance", "issubclass", "iter", "len", "list"),
        *("map", "max", "min", "next", "pow", "range", "reversed", "round", "set", "slice", "sorted"),
        *("str", "sum", "tuple", "type", "zip", "NotImplemented", "None", "True", "False"),
        *("ValueError", "TypeError", "RuntimeError", "AssertionError", "NotImplementedError"),
        *("IndexError", "KeyError"),
    }
)
_TRUSTED_MODULES = ("torch", "math", "operator", "functools", "itertools", "numbers", "typing")
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), torch.dtype, torch.device)
# torch's functions, classes and ops (not instances: a global tensor or module is state)
_CODE_LIKE = (
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    torch._ops.OpOverloadPacket,
    torch._ops.OpOverload,
)
# torch functions that change global state (a trace would run them once, at trace time)
_STATE_SETTERS = frozenset(
    {
        *("manual_seed", "seed", "set_rng_state", "set_default_dtype", "set_default_device"),
        *("set_num_threads", "use_deterministic_algorithms", "set_printoptions", "save"),
        *("set_flush_denormal", "set_anomaly_enabled", "set_float32_matmul_precision"),
    }
)
_GLOBAL_WRITES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF"})
_ATTR_WRITES = frozenset({"STORE_ATTR", "DELETE_ATTR"})

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class NotTraceable(Exception):
    """Why a Function keeps its opaque node (the message names the place)."""


def check(cls) -> tuple:
    """The ``(globals, name, value)`` reads to guard, or raise `NotTraceable`."""
    hit = _CACHE.get(cls)
    if hit is None or any(g.get(name, _CACHE) is not v for g, name, v in hit[0]):
        checker = _Checker()
        try:
            hit = (tuple(checker.function_class(cls)), None)
        except NotTraceable as e:  # the reads so far too: rebinding one checks again
            hit = (tuple(checker.reads), str(e))
        _CACHE[cls] = hit
    reads, why = hit
    if why is not None:
        raise NotTraceable(why)
    return reads


_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def _trusted(obj) -> bool:
    code = getattr(obj, "__code__", None)
    if code is not None:  # a wrapper copies its wrapped function's __module__ (functools.wraps)
        return code.co_filename.startswith(_TORCH_DIR)
    mod = getattr(obj, "__module__", None) or ""
    return mod.split(".")[0] in _TRUSTED_MODULES


class _Checker:
    def __init__(self):
        self.seen: set = set()
        self.reads: list = []

    def function_class(self, cls) -> list:
        if cls in self.seen:
            return self.reads
        self.seen.add(cls)
        name = cls.__qualname__
        own = vars_chain(cls)
        for attr in ("jvp", "vmap"):  # forward-mode AD / vmap rules: the opaque node keeps them
            if attr in own:
                raise NotTraceable(f"{name} defines {attr}")
        new_style = "setup_context" in own
        for attr, has_ctx in (
            ("forward", not new_style),
            ("setup_context", True),
            ("backward", True),
            ("vjp", True),
        ):
            if attr in own:
                self.function(getattr(cls, attr), f"{name}.{attr}", has_ctx)
        return self.reads

    def function(self, fn, where: str, has_ctx: bool = False) -> None:
        while True:
            if isinstance(fn, (staticmethod, classmethod)):
                fn = fn.__func__
            if not (isinstance(fn, types.FunctionType) and _trusted(fn)):
                break
            inner = getattr(fn, "__wrapped__", None)  # once_differentiable: torch's wrapper
            if inner is None:
                return
            fn = inner
        if not isinstance(fn, types.FunctionType):
            raise NotTraceable(f"{where} is {type(fn).__name__}, not a Python function")
        if fn in self.seen:
            return
        self.seen.add(fn)
        if fn.__closure__:
            raise NotTraceable(f"{where} reads closure cells ({', '.join(fn.__code__.co_freevars)})")
        ctx = fn.__code__.co_varnames[0] if has_ctx and fn.__code__.co_argcount else None
        self.code(fn.__code__, fn.__globals__, where, ctx)

    def code(self, code, globs: dict, where: str, ctx) -> None:
        if "set_materialize_grads" in code.co_names:
            # eager hands backward None for an unused output; a traced backward gets zeros
            raise NotTraceable(f"{where} calls set_materialize_grads")
        effects = _STATE_SETTERS.intersection(code.co_names)
        if effects:
            raise NotTraceable(f"{where} names {sorted(effects)[0]!r}, which changes global state")
        prev = None
        for ins in dis.get_instructions(code):
            op = ins.opname
            if op in _GLOBAL_WRITES:
                raise NotTraceable(f"{where} writes {ins.argval!r} outside its frame")
            if op in _ATTR_WRITES and not (
                prev is not None and prev.opname == "LOAD_FAST" and prev.argval == ctx
            ):
                raise NotTraceable(f"{where} sets the attribute {ins.argval!r} on an object other than ctx")
            if prev is not None and prev.opname == "LOAD_GLOBAL":
                value = self.global_read(globs, prev.argval, where)
                if (
                    isinstance(value, type)
                    and not _trusted(value)
                    and not (ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "apply")
                ):
                    # a class's attributes are state shared between calls (a counter)
                    raise NotTraceable(
                        f"{where} uses the class {prev.argval} other than its apply (class state)"
                    )
            prev = ins
        if prev is not None and prev.opname == "LOAD_GLOBAL":
            self.global_read(globs, prev.argval, where)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):  # a nested function, lambda or comprehension
                self.code(const, globs, where, None)

    def global_read(self, globs: dict, name: str, where: str):
        """The global's value, once cleared (`NotTraceable` otherwise)."""
        if name in globs:
            value = globs[name]
        elif name in _PURE_BUILTINS and hasattr(builtins, name):
            return getattr(builtins, name)
        else:
            raise NotTraceable(f"{where} calls the builtin {name!r}, which may have effects")
        if isinstance(value, types.ModuleType):
            return value
        if isinstance(value, _IMMUTABLE) or (isinstance(value, _CODE_LIKE) and _trusted(value)):
            self.reads.append((globs, name, value))
            return value
        if isinstance(value, type) and issubclass(value, torch.autograd.Function):
            self.reads.append((globs, name, value))
            self.function_class(value)
            return value
        if isinstance(value, types.FunctionType):
            self.reads.append((globs, name, value))
            self.function(value, f"{where} -> {name}")
            return value
        self.reads.append((globs, name, value))
        raise NotTraceable(f"{where} reads the global {name!r} ({type(value).__name__}), which may change")


def vars_chain(cls) -> set:
    """The attribute names the user's classes define, up to ``torch.autograd.Function``."""
    names: set = set()
    for k in cls.__mro__:
        if _trusted(k):
            break
        names.update(vars(k))
    return names
