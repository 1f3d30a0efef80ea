"""Calls in the static predictor: what a call returns, and whether it breaks the graph.

One handler per kind of callee (`CALLEES`): builtins, library callables known
by dotted name (torch, numpy, math, I/O, bcfront.capture itself), tensor
methods, and functions, classes and instances defined in the analysed file —
calls into those also *seed* the callee's parameters and record a call edge,
which is how tensors flow between functions of one file.
"""

from __future__ import annotations

from bcfront.reasons import BreakReason

from . import static_values as sv
from .static_values import NULL, TENSOR, UNKNOWN, V, derived


def _args_result(args: list[V]) -> V:
    """A call of something unknown: a tensor in, most likely a tensor out."""
    tensors = [a for a in args if a.kind == "tensor"]
    return V("tensor", any(a.certain for a in tensors)) if tensors else UNKNOWN


def _scalar(ins, certain: bool = True) -> V:
    return V("scalar", certain, origin=ins.offset)


def call_builtin(fl, ins, f: V, args: list[V], kwargs: dict) -> V:
    name, every = f.name, args + list(kwargs.values())
    if name in sv.BUILTIN_IO:
        if name == "print" and kwargs.get("file", UNKNOWN).kind == "stringio":
            return UNKNOWN  # a write to a StringIO made in the function: captured
        fl.predict(ins, BreakReason.IO, f"{name}()", True)
        return UNKNOWN
    first = args[0] if args else UNKNOWN
    if name in sv.BUILTIN_TO_PYTHON:
        if first.kind == "tensor":
            fl.predict(ins, BreakReason.DATA_DEPENDENT, f"{name}()", first.certain)
            return _scalar(ins, first.certain)
        return first if first.kind == "scalar" else UNKNOWN
    if name in sv.BUILTIN_COMPARE and any(a.kind == "tensor" for a in every):
        fl.predict(ins, BreakReason.DATA_DEPENDENT, f"{name}()", all(a.certain for a in every if a.tainted))
        return _scalar(ins) if name in ("any", "all") else TENSOR
    if name in ("enumerate", "zip"):
        elems = tuple(element(a) for a in args)
        return V(name, value=(UNKNOWN, *elems) if name == "enumerate" else elems)
    if name == "range":
        for a in every:
            fl.steer(a)  # a loop count read from a tensor steers control flow
        return UNKNOWN
    if name in sv.BUILTIN_FORMAT and first.kind == "tensor":
        fl.predict(ins, BreakReason.DATA_DEPENDENT, f"{name}()", first.certain)
        return UNKNOWN
    if name in sv.BUILTIN_META:
        return UNKNOWN
    return derived(every)


def element(v: V) -> V:
    """What iterating over `v` yields."""
    if v.kind in ("enumerate", "zip"):
        return V("tuple", value=v.value)
    if v.kind == "tuple":
        out = UNKNOWN
        for i, item in enumerate(v.value):
            out = item if i == 0 else sv.join(out, item)
        return out
    return derived([v])


def _is_capture(name: str) -> bool:
    return name in sv.CAPTURE_NAMES or (sv.root(name) == "bcfront" and name.endswith(".capture"))


def _mark_entry(fl, v: V) -> None:
    target = _callee_of(fl, v)
    if target:
        fl.facts.entries.add(target[0])


def call_mod(fl, ins, f: V, args: list[V], kwargs: dict) -> V:
    name, every = f.name, args + list(kwargs.values())
    top = sv.root(name)
    if _is_capture(name):
        if not args:
            return V("capdeco")  # @bcfront.capture(backend=...) returns a decorator
        _mark_entry(fl, args[0])
        return args[0]  # the captured function calls like the original
    if top == "bcfront" and name.endswith(".explain") and args:
        _mark_entry(fl, args[0])
        call(fl, ins, args[0], args[1:], kwargs)
        return UNKNOWN
    if name.startswith("torch.Tensor.") and args:
        # An unbound tensor method: torch.Tensor.item(t) is t.item().
        method = V("tmethod", args[0].certain, name.rsplit(".", 1)[1])
        return call_tensor_method(fl, ins, method, args[1:], kwargs) if args[0].kind == "tensor" else UNKNOWN
    if top == "torch":
        if any(a.kind == "ndarray" for a in every):
            fl.predict(ins, BreakReason.NUMPY_ARRAY, f"{name}()", True)
        return sv.torch_call_result(name)
    if top in sv.NUMPY_ROOTS:
        if any(a.kind == "tensor" for a in every):
            fl.predict(ins, BreakReason.NUMPY, name, all(a.certain for a in every if a.kind == "tensor"))
        return sv.NDARRAY
    if top in sv.SCALAR_C_ROOTS:
        tensors = [a for a in every if a.kind == "tensor"]
        if tensors:
            fl.predict(ins, BreakReason.DATA_DEPENDENT, f"{name}()", all(a.certain for a in tensors))
            return _scalar(ins)
        return derived(every)
    if sv.is_io(name):
        fl.predict(ins, BreakReason.IO, name, True)
        return UNKNOWN
    if name == "io.StringIO":  # its text is known to capture: print(file=) to it captures
        return V("stringio")
    return _args_result(every)


def call_tensor_method(fl, ins, f: V, args: list[V], kwargs: dict) -> V:
    name = f.name
    if name in sv.TENSOR_TO_PYTHON:
        fl.predict(ins, BreakReason.DATA_DEPENDENT, sv.TENSOR_TO_PYTHON[name], f.certain)
        return _scalar(ins, f.certain)
    if name in sv.TENSOR_TO_NUMPY:
        fl.predict(ins, BreakReason.NUMPY, f".{name}()", f.certain)
        return sv.NDARRAY
    if name in sv.TENSOR_META_METHODS:
        return UNKNOWN
    return V("tensor", f.certain)


def _callee_of(fl, f: V) -> tuple[str, int] | None:
    """(qualname, number of implicit leading arguments) of a file function `f` calls into."""
    if f.kind == "func" and f.name in fl.facts.functions:
        return f.name, 0
    if f.kind == "bfunc":
        return f.name, 1
    if f.kind == "class":
        init = f"{f.name}.__init__"
        return (init, 1) if init in fl.facts.functions else None
    if f.kind in ("inst", "self"):
        for meth in ("forward", "__call__"):
            if meth in fl.facts.methods.get(f.name, ()):
                return f"{f.name}.{meth}", 1
    return None


def _register(fl, f: V, args: list[V], kwargs: dict) -> None:
    """``self.register_buffer("name", t)``: afterwards ``self.name`` is that tensor."""
    owner = f.value
    name = args[0] if args else kwargs.get("name", UNKNOWN)
    value = args[1] if len(args) > 1 else kwargs.get("tensor", kwargs.get("param", UNKNOWN))
    if name.kind == "const" and isinstance(name.value, str):
        attrs = fl.facts.class_attrs.setdefault(owner, {})
        attrs[name.value] = sv.join(attrs[name.value], value) if name.value in attrs else value


def call(fl, ins, f: V, args: list[V], kwargs: dict) -> V:
    """The result of calling `f`; records predictions, seeds and call edges."""
    if f.kind == "register":
        _register(fl, f, args, kwargs)
        return UNKNOWN
    handler = CALLEES.get(f.kind)
    if handler is not None:
        return handler(fl, ins, f, args, kwargs)
    target = _callee_of(fl, f)
    every = args + list(kwargs.values())
    if target is None:
        if f.kind == "class":
            return V("inst", name=f.name)
        if f.kind == "capdeco" and args:
            _mark_entry(fl, args[0])
            return args[0]
        if f.kind == "tinst":
            return _args_result(every) if every else UNKNOWN
        return _args_result(every)
    qual, implicit = target
    facts = fl.facts
    facts.calls.setdefault(fl.qualname, set()).add(qual)
    for i, a in enumerate(args):
        facts.seed(qual, i + implicit, a)
    for k, a in kwargs.items():
        facts.seed(qual, k, a)
    if f.kind == "class":
        return V("inst", name=f.name)
    ret = facts.returns.get(qual)
    return ret if ret is not None and ret.kind != "none" else _args_result(every)


def call_build_class(fl, ins, f: V, args: list[V], kwargs: dict) -> V:
    """A ``class`` statement inside a function (not module or class-body code, which runs
    at import): captured (`semantics/class_build.py`), unless it has class keywords
    (``metaclass=``) or a base known to bring a metaclass, ``__mro_entries__`` or an
    ``__init_subclass__`` of its own: then its ``__build_class__`` call runs natively."""
    if not fl.code.co_flags & CO_OPTIMIZED:
        return UNKNOWN
    if kwargs:
        fl.predict(ins, BreakReason.CALL_TO_C_FUNCTION, "class statement with class keywords", True)
    elif any(b.kind == "mod" and b.name in NATIVE_BASES for b in args[2:]):
        fl.predict(ins, BreakReason.CALL_TO_C_FUNCTION, "class statement on a base with a metaclass", True)
    return UNKNOWN


CO_OPTIMIZED = 0x01
# library bases a class statement cannot be modelled on (a metaclass, __mro_entries__ or
# __init_subclass__ of theirs)
NATIVE_BASES = frozenset(
    {
        "abc.ABC",
        "enum.Enum",
        "enum.IntEnum",
        "enum.Flag",
        "enum.IntFlag",
        "enum.StrEnum",
        "typing.NamedTuple",
        "typing.Generic",
        "typing.Protocol",
        "typing.TypedDict",
    }
)


def call_ndarray_method(fl, ins, f: V, args: list[V], kwargs: dict) -> V:
    fl.predict(ins, BreakReason.NUMPY_ARRAY, f"ndarray.{f.name}()", True)
    return sv.NDARRAY


CALLEES = {
    "builtin": call_builtin,
    "mod": call_mod,
    "tmethod": call_tensor_method,
    "ndmethod": call_ndarray_method,
    "buildclass": call_build_class,
}


def _split(items: list[V]) -> tuple[V, list[V]]:
    """(callee, implicit self arguments) from the two slots below a call's arguments."""
    a, b = items
    if a == NULL or a.kind == "null":
        return b, []
    return a, ([] if b.kind == "null" else [b])


def op_call(fl, ins):
    argc = ins.arg or 0
    names, fl.kwnames = fl.kwnames, ()
    items = fl.pop(argc + 2)
    f, implicit = _split(items[:2])
    args = items[2:]
    kw = {}
    if names:
        kw = dict(zip(names, args[len(args) - len(names) :]))
        args = args[: len(args) - len(names)]
    fl.push(call(fl, ins, f, implicit + args, kw))


def op_call_kw(fl, ins):
    (names,) = fl.pop()
    fl.kwnames = tuple(names.value or ())
    op_call(fl, ins)


def op_call_function_ex(fl, ins):
    n = 3 + (ins.arg & 1)
    items = fl.pop(n)
    f, implicit = _split(items[:2])
    spread = derived(items[2:])
    fl.push(call(fl, ins, f, implicit + ([spread] if spread.tainted else []), {}))
