"""Torch functions, Tensor methods, operators on tensors -> graph nodes.

Every tensor-valued call is run once on fake tensors (exact output dtype,
shape, stride, device and requires_grad, no kernels) and recorded as a node.
A call whose fake run produces no tensor is folded to a constant: fake tensors
carry no data, so such a result can only depend on metadata (which the
guards pin down); calls that would read data raise in the fake run and
become graph breaks ("data-dependent").  Calls with effects outside the
graph (hooks, RNG seeding, I/O) are breaks up front, as are calls
without tensor arguments that are not known factories or pure queries (they
would otherwise run at capture time).  ``backward()`` is one node whose writes to
``.grad`` `autograd_calls` models.

Global torch state (grad mode, inference mode, autocast) is symbolic: the
context managers (`torch_state`) change `tx.state`, every node records the state
it runs under.
"""

from __future__ import annotations

import operator
import types
import warnings

import torch
from torch.utils._pytree import tree_leaves

from ...errors import UnsupportedError
from ...ir.alias_facts import INPLACE_OPERATORS
from ...reasons import BreakReason
from ..model.builder import guard_storage_offsets
from ..model.node_checks import check_split, note_node
from ..model.values import (
    Const,
    DictV,
    ListV,
    NewObjectV,
    ObjectV,
    ScalarV,
    SliceV,
    TensorV,
    TupleV,
    Value,
    specialized_deep,
)
from . import autograd_calls, dispatch, scalars, symbolic, symbolic_index
from .classes import is_heap_type
from .folding import fold_model, from_python, raise_
from .kernel_checks import check_dtypes, check_inplace_cast, check_partial_overlap
from .kernel_checks import label as _label
from .torch_queries import call_without_tensors, special_for
from .torch_state import STATE_CONSTRUCTORS

_TENSOR_BASE = torch._C.TensorBase

_DATA, _EFFECT = BreakReason.DATA_DEPENDENT, BreakReason.UNSUPPORTED_TENSOR_METHOD
DENIED_METHODS = {
    "item": _DATA,
    "tolist": _DATA,
    "numpy": _DATA,
    "__bool__": _DATA,
    "__int__": _DATA,
    "__float__": _DATA,
    "__index__": _DATA,
    "__complex__": _DATA,
    "data_ptr": _DATA,
    "__array__": _DATA,
    "storage": _EFFECT,
    "untyped_storage": _EFFECT,
    "_cdata": _EFFECT,
    "__repr__": BreakReason.IO,
    "__str__": BreakReason.IO,
    "__format__": BreakReason.IO,
    "__reduce_ex__": _EFFECT,
    "__deepcopy__": _EFFECT,
    "__hash__": _EFFECT,
    "register_hook": BreakReason.AUTOGRAD,
    "retain_grad": BreakReason.AUTOGRAD,
    "register_post_accumulate_grad_hook": BreakReason.AUTOGRAD,
    "record_stream": _EFFECT,
    "share_memory_": _EFFECT,
    "apply_": _EFFECT,
    "map_": _EFFECT,
    "map2_": _EFFECT,
    "set_": _EFFECT,
    "pin_memory": _EFFECT,
    "__setstate__": _EFFECT,
    "as_subclass": BreakReason.TENSOR_SUBCLASS,
    "_make_subclass": BreakReason.TENSOR_SUBCLASS,
}
# reads of a tensor's value kept in the graph under the option capture_scalar_outputs
_SCALAR_READS = {
    "item": "item",
    "tolist": "tolist",
    "__int__": "int",
    "__float__": "float",
    "__bool__": "bool",
    "__complex__": "complex",
}
DENIED_FUNCTIONS = {
    "manual_seed",
    "seed",
    "initial_seed",
    "set_rng_state",
    "save",
    "load",
    "set_default_dtype",
    "set_default_device",
    "set_default_tensor_type",
    "set_printoptions",
    "use_deterministic_algorithms",
    "set_num_threads",
    "set_num_interop_threads",
    "set_flush_denormal",
    "set_float32_matmul_precision",
    "from_numpy",
    "frombuffer",
    "backward",
    "grad",
    "set_anomaly_enabled",
    "set_grad_enabled",
    "_set_grad_enabled",
    "set_autocast_enabled",
}
FACTORIES = {
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "randperm",
    "arange",
    "range",
    "linspace",
    "logspace",
    "eye",
    "tensor",
    "as_tensor",
    "asarray",
    "empty_strided",
    "scalar_tensor",
    "normal",
    "tril_indices",
    "triu_indices",
    "hann_window",
    "hamming_window",
    "bartlett_window",
    "blackman_window",
    "kaiser_window",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "get_rng_state",
    "bernoulli",
    "complex",
    "polar",
}
_INLINED_TORCH_MODULES = (
    "torch.nn.modules",
    "torch.utils._contextlib",
    "torch._jit_internal",
    "torch.nn.utils.parametrize",
    "torch.autograd.grad_mode",
    "torch.amp.autocast_mode",
)


def is_torch_function(fn: types.FunctionType) -> bool:
    """A Python function from torch that is one op to us (not inlined)."""
    mod = getattr(fn, "__module__", None) or ""
    if not (mod == "torch" or mod.startswith("torch.")):
        return False
    if mod.startswith(_INLINED_TORCH_MODULES) or fn.__closure__ or hasattr(fn, "__wrapped__"):
        return False
    return True


def writable_arguments(args, kwargs) -> bool:
    """Whether a call passes a dict or an object it could write (``pg["lr"] = v`` in
    ``_update_param_group_val``, the GradScaler of ``GradScaler.scale(self, loss)``): a
    Python function of torch must then be traced, not run as one op on fake copies of its
    arguments, where its writes would be lost (and which no such object can be).  A module
    cannot be an op argument either: a method of a module class defined outside
    ``torch.nn.modules`` (a parametrization's ``_WeightNorm.forward(self, g, v)``) is traced."""
    work = [*args, *kwargs.values()]
    while work:
        v = work.pop()
        if isinstance(v, (DictV, NewObjectV)) or (
            type(v) is ObjectV and (_plain_instance(v.obj) or isinstance(v.obj, torch.nn.Module))
        ):
            return True
        if isinstance(v, (TupleV, ListV)):
            work.extend(v.items)
    return False


def _plain_instance(obj) -> bool:
    """An instance of a class written in Python (not a tensor, module, class or function)."""
    return is_heap_type(type(obj)) and not isinstance(
        obj, (torch.Tensor, torch.nn.Module, type, types.FunctionType, types.MethodType)
    )


def is_torch_callable(obj) -> bool:
    """A C function or method descriptor of torch."""
    if isinstance(obj, (types.MethodDescriptorType, types.WrapperDescriptorType, types.GetSetDescriptorType)):
        return getattr(obj, "__objclass__", None) is _TENSOR_BASE
    if isinstance(obj, types.BuiltinFunctionType):
        mod = getattr(obj, "__module__", None) or ""
        return mod == "torch" or mod.startswith("torch.")
    return isinstance(obj, (torch._ops.OpOverloadPacket, torch._ops.OpOverload))


# -- argument conversion -----------------------------------------------------------------


def convert(v: Value):
    """(fake value, graph argument) for a symbolic argument of a torch call."""
    if isinstance(v, ScalarV):  # a number read from a tensor: its stand-in (`scalars`)
        return v.example, v.node
    if isinstance(v, TensorV):
        return v.fake, v.node
    if isinstance(v, Const):
        return v.value, v.value
    if isinstance(v, SliceV):
        parts = [convert(p) for p in (v.start, v.stop, v.step)]
        return slice(*(p[0] for p in parts)), slice(*(p[1] for p in parts))
    if isinstance(v, (TupleV, ListV)):
        pairs = [convert(x) for x in v.items]
        fakes = [p[0] for p in pairs]
        graph = [p[1] for p in pairs]
        if isinstance(v, ListV):
            return fakes, graph
        if v.cls is torch.Size:
            return torch.Size(fakes), tuple(graph)
        return tuple(fakes), tuple(graph)
    if isinstance(v, DictV) and all(isinstance(k, str) for k in v.entries):
        pairs = {k: convert(e[1]) for k, e in v.entries.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"a torch call received {v.describe()}")


def _has_tensor(v: Value) -> bool:
    if isinstance(v, TensorV):
        return True
    if isinstance(v, (TupleV, ListV)):
        return any(_has_tensor(x) for x in v.items)
    if isinstance(v, DictV):
        return any(_has_tensor(e[1]) for e in v.entries.values())
    return False


def _contains_fake(x) -> bool:
    if isinstance(x, torch.Tensor):
        return True
    if isinstance(x, (tuple, list)):
        return any(_contains_fake(i) for i in x)
    return False


def record(tx, op: str, target, args: list, kwargs: dict, *, mutates: bool = False, label: str = "") -> Value:
    """Run a torch call on fakes and record it as a node; wrap its outputs."""
    # ``x * scale``, ``scale * x.shape[0]``: a changing float is an input, a SymFloat
    args, kwargs = symbolic.float_operands(tx, args, kwargs)
    if (
        op == "call"
        and not kwargs
        and scalars.is_scalar_op(args, kwargs)
        and (scalars.holds_scalar(args, kwargs) or scalars.is_python_op(target))
    ):
        return scalars.python_op(tx, target, args)  # numbers only: Python arithmetic
    if scalars.holds_scalar(args, kwargs):
        scalars.check_tensor_use(op, target, args, kwargs)
    check_split(tx)
    env = tx.torch_env()
    conv = [convert(a) for a in args]
    kconv = {k: convert(v) for k, v in kwargs.items()}
    fargs = [c[0] for c in conv]
    fkw = {k: c[0] for k, c in kconv.items()}
    if op == "method":
        fn = lambda *a, **k: getattr(a[0], target)(*a[1:], **k)  # noqa: E731
    elif op == "getattr":
        fn = lambda a: getattr(a, target)  # noqa: E731
    else:
        fn = target
    try:
        out = env.run(fn, fargs, fkw, tx.state)
    except UnsupportedError:
        raise
    except Exception as e:  # noqa: BLE001 - any fake-tensor failure becomes a break or the error eager raises
        spec_args = [specialized_deep(a) for a in args]
        spec_kwargs = {k: specialized_deep(v) for k, v in kwargs.items()}
        if any(a is not b for a, b in zip(spec_args, args)) or any(
            spec_kwargs[k] is not v for k, v in kwargs.items()
        ):
            # a meta function that takes no symbolic size (constant_pad_nd): on the values
            return record(tx, op, target, spec_args, spec_kwargs, mutates=mutates, label=label)
        name = type(e).__name__
        what = label or _label(op, target)
        out = None if mutates else _on_static_sizes(tx, env, fn, fargs, fkw, what, e)
        if out is not None:
            return _recorded(tx, op, target, args, kwargs, (conv, kconv, fargs, fkw), out, mutates, env)
        if "DataDependent" in name or "DynamicOutputShape" in name:
            raise UnsupportedError(
                BreakReason.DATA_DEPENDENT, f"{what} depends on tensor values ({name})"
            ) from None
        # (c10's errors append their C++ stack: explain says what failed, not where in C++)
        text = str(e).split("\nException raised from ", 1)[0]
        raise UnsupportedError(
            BreakReason.TORCH_ERROR, f"{what} failed on fake tensors: {name}: {text}"
        ) from None
    return _recorded(tx, op, target, args, kwargs, (conv, kconv, fargs, fkw), out, mutates, env)


def _recorded(tx, op, target, args, kwargs, converted, out, mutates, env) -> Value:
    """`record`'s second half: `out`, the fake run's result, checked and recorded."""
    conv, kconv, fargs, fkw = converted
    check_dtypes(tx, op, target, fargs, fkw)
    if mutates:
        check_inplace_cast(tx, _label(op, target), _out_of_place(op, target), fargs, fkw)
        check_partial_overlap(tx, _label(op, target), *_written(env, tx, op, target, fargs, fkw))
    mutates = mutates or bool(kwargs.get("out")) or "out" in kwargs
    # ints a fake run answered symbolically (``x.size()``, ``x.numel()``): a node computes them
    sizes = not _contains_fake(out) and symbolic.has_symbols(out)
    sizes = sizes and not isinstance(out, (torch.SymBool, torch.SymFloat))
    if not _contains_fake(out) and not mutates and not sizes:
        if (target if op == "method" else getattr(target, "__name__", None)) == "storage_offset":
            guard_storage_offsets(tx)
        return _wrap_python(symbolic.concrete(out))
    node = add_call(tx, op, target, conv, kconv, out, mutates=mutates)
    if mutates:
        tx.has_mutation = True
    note_node(tx)
    if sizes and not mutates:
        return symbolic.wrap_numbers(tx, node, out)
    return wrap_output(tx, node, out, args)


def _on_static_sizes(tx, env, fn, fargs, fkw, what: str, error: Exception):
    """The fake run of an op whose fake kernel takes no symbolic sizes (aten ``lstm`` calls
    ``numel()`` on its inputs): run again on views of the tensors with every size, stride
    and offset pinned to its value -- each guarded equal by the ShapeEnv, so a new size is
    a capture of its own -- and say so in explain; the node still takes the tensors
    themselves.  None where no input has symbolic sizes or the op fails on those too."""
    if not any(_symbolic_shape(x) for x in tree_leaves((fargs, fkw))):
        return None
    text = str(error).split("\n", 1)[0]
    for decomposed in _decompositions(fn):  # (sizes kept symbolic: no capture per size)
        try:
            return env.run(decomposed, fargs, fkw, tx.state)
        except Exception:  # noqa: BLE001 - another overload, or the pinned sizes below
            continue
    try:
        with warnings.catch_warnings():  # (torch's own notes on the fake run: not the user's)
            warnings.simplefilter("ignore")
            out = env.run(lambda *a, **k: fn(*_pinned(a), **_pinned(k)), fargs, fkw, tx.state)
    except Exception:  # noqa: BLE001 - the first error stands
        return None
    note = f"{what} takes no symbolic sizes on fake tensors ({text}): its inputs' sizes are specialized"
    if note not in tx.notes:
        tx.notes.append(note)
    return out


def _decompositions(fn) -> list:
    """torch's Python decompositions (``torch._decomp``) of the aten op `fn` names (its
    overloads'), which run on symbolic sizes where the C++ kernel does not (aten ``lstm``:
    the output's metadata only, the graph keeps the op)."""
    from torch._decomp import decomposition_table

    name = getattr(fn, "__name__", None)
    packet = getattr(torch.ops.aten, name, None) if isinstance(name, str) and name.isidentifier() else None
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        return []
    overloads = [getattr(packet, o) for o in packet.overloads()]
    return [decomposition_table[o] for o in overloads if o in decomposition_table]


def _symbolic_shape(x) -> bool:
    """A tensor whose sizes are symbolic (a C++ kernel rejects them so, even where a guard
    has pinned their value and they read as ints)."""
    return isinstance(x, torch.Tensor) and bool(getattr(x, "_has_symbolic_sizes_strides", False))


def _pinned(x):
    """`x` with each tensor of symbolic sizes replaced by a view of it of static ones."""
    if _symbolic_shape(x):
        sizes, strides = [int(s) for s in x.shape], [int(s) for s in x.stride()]
        return x.as_strided(sizes, strides, int(x.storage_offset()))
    if isinstance(x, (tuple, list)):
        return type(x)(_pinned(i) for i in x)
    if isinstance(x, dict):
        return {k: _pinned(v) for k, v in x.items()}
    return x


def add_call(tx, op: str, target, conv: list, kconv: dict, out, *, mutates: bool = False):
    """The graph node of a call whose arguments `convert` gave (`conv`, `kconv`: (fake,
    node argument) pairs) and whose fake run returned `out`, at the trace's place and
    state (`record`, an autograd Function's ``apply``, an FSDP module's call)."""
    return tx.graph.add(
        op,
        target,
        [c[1] for c in conv],
        {k: c[1] for k, c in kconv.items()},
        meta=out,
        loc=tx.loc(),
        state=tx.node_state(),
        mutates=mutates,
    )


def _written(env, tx, op, target, fargs, fkw) -> tuple:
    """(the tensor an in-place call writes, the operands it reads) on fakes."""
    if "out" in fkw:
        return fkw["out"], [fargs, [v for k, v in fkw.items() if k != "out"]]
    if op == "call" and target is operator.setitem and len(fargs) == 3:
        t, key, value = fargs
        try:
            view = env.run(operator.getitem, [t, key], {}, tx.state)
        except Exception:  # noqa: BLE001 - not an indexing the fake run accepts: no view
            view = None
        # basic indexing copies into a view of `t`; advanced indexing (index_put_) writes `t`
        basic = isinstance(view, torch.Tensor) and view._base is not None
        return (view if basic else t), [value]
    return (fargs[0] if fargs else None), [fargs[1:], list(fkw.values())]


def _out_of_place(op, target):
    """The out-of-place variant of an in-place method or operator call (None: not known)."""
    if (
        op == "method"
        and isinstance(target, str)
        and target.endswith("_")
        and not target.endswith("__")
        and callable(getattr(torch.Tensor, target[:-1], None))
    ):
        return lambda *a: getattr(a[0], target[:-1])(*a[1:])
    if op == "call" and target in INPLACE_OPERATORS:
        name = target.__name__[1:]  # iadd -> add, iand -> and_ (a keyword gets a _)
        return getattr(operator, name, None) or getattr(operator, name + "_")
    return None


def _wrap_python(x) -> Value:
    if isinstance(x, torch.Size):
        return TupleV([Const(int(i)) for i in x], torch.Size)
    if isinstance(x, (tuple, list)) and type(x) in (tuple, list):
        items = [_wrap_python(i) for i in x]
        return TupleV(items) if type(x) is tuple else ListV(items)
    return from_python(x)


def wrap_output(tx, node, out, inputs=()) -> Value:
    if isinstance(out, torch.Tensor):
        for a in inputs:
            if isinstance(a, TensorV) and a.fake is out:
                return TensorV(node, out, a.ptype)  # in-place: same object as its input
        return TensorV(node, out, torch.Tensor)
    if isinstance(out, (tuple, list)):
        items = []
        for i, x in enumerate(out):
            if isinstance(x, torch.Tensor):
                n = tx.graph.add("call", operator.getitem, [node, i], meta=x, loc=node.loc, state=node.state)
                items.append(TensorV(n, x, torch.Tensor))
            else:
                items.append(_wrap_python(x))
        if isinstance(out, list):
            return ListV(items)
        return TupleV(items, type(out))
    return _wrap_python(out)


# -- calls -------------------------------------------------------------------------------------


def call_function(tx, fn, args: list, kwargs: dict) -> Value:
    special = special_for(fn)
    if special is not None:
        return special(tx, args, kwargs)
    name = getattr(fn, "__name__", "")
    if getattr(fn, "__objclass__", None) is _TENSOR_BASE or (
        isinstance(fn, types.FunctionType) and fn.__qualname__.startswith("Tensor.")
    ):
        if not args or not isinstance(args[0], TensorV):
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"Tensor.{name} on a non-tensor")
        return call_method(tx, args[0], name, args[1:], kwargs)
    if fn is torch.autograd.backward:
        return autograd_calls.autograd_backward(tx, args, kwargs)
    if name in DENIED_FUNCTIONS:
        raise UnsupportedError(
            BreakReason.TORCH_GLOBAL_EFFECT, f"torch.{name} changes state outside the graph"
        )
    has_tensor = any(_has_tensor(a) for a in args) or any(_has_tensor(v) for v in kwargs.values())
    if not has_tensor and name not in FACTORIES:
        return call_without_tensors(tx, fn, args, kwargs)
    from .lowering import lower

    low = lower(tx, fn, args, kwargs, record)
    if low is not None:
        return low
    return record(tx, "call", fn, args, kwargs, mutates=name.endswith("_") and not name.endswith("__"))


def call_method(tx, t: TensorV, name: str, args, kwargs) -> Value:
    if isinstance(t, ScalarV):
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, f"Tensor.{name}() of a number read from a tensor")
    if name == "backward":
        return autograd_calls.tensor_backward(tx, t, args, kwargs)
    denied = DENIED_METHODS.get(name)
    if name in _SCALAR_READS and not args and not kwargs and scalars.enabled(tx):
        return scalars.read(tx, t, _SCALAR_READS[name])
    if denied is not None:
        raise UnsupportedError(
            denied,
            f"Tensor.{name}() "
            + {
                BreakReason.DATA_DEPENDENT: "reads the tensor's data",
                BreakReason.TENSOR_SUBCLASS: "makes a tensor subclass instance, whose "
                "__torch_function__ is not traced",
            }.get(denied, "has effects outside the graph"),
        )
    inplace = INPLACE_DUNDERS.get(name)
    if inplace is not None and not kwargs:
        # `t.__setitem__(k, v)` / `t.__iadd__(u)` called by name: the same effect as the
        # statement (a name ending in "__" is not in-place by the "_" rule below).
        return inplace(tx, t, *args)
    if name == "requires_grad_" and _keeps_requires_grad(t, args, kwargs):
        return t  # (a hook's ``output.requires_grad_(True)`` on an output that requires grad)
    mutates = name.endswith("_") and not name.endswith("__")
    return record(tx, "method", name, [t, *args], kwargs, mutates=mutates)


def _keeps_requires_grad(t: TensorV, args, kwargs) -> bool:
    """``t.requires_grad_(flag)`` changes nothing: `t` already has that flag (its fake's,
    which the guards on the inputs' flags and the grad mode fix), so it returns `t` as is."""
    if len(args) + len(kwargs) > 1 or (kwargs and "requires_grad" not in kwargs):
        return False
    flag = args[0] if args else kwargs.get("requires_grad", Const(True))
    return isinstance(flag, Const) and type(flag.value) is bool and t.fake.requires_grad is flag.value


def _setitem_dunder(tx, t, *args) -> Value:
    if len(args) != 2:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"Tensor.__setitem__ with {len(args)} arguments")
    setitem(tx, t, *args)
    return Const(None)


def _inplace_operator(fn):
    def m(tx, t, *args):
        return call_operator(tx, fn, [t, *args])

    return m


INPLACE_DUNDERS = {
    "__setitem__": _setitem_dunder,
    **{f"__{fn.__name__}__": _inplace_operator(fn) for fn in INPLACE_OPERATORS},
}


def call_operator(tx, fn, args) -> Value:
    return record(tx, "call", fn, args, {}, mutates=fn in INPLACE_OPERATORS)


def getitem(tx, t: TensorV, key: Value) -> Value:
    view = symbolic_index.view_of(tx, t, key, record)  # ``t[:, n]`` with n symbolic: select
    return view if view is not None else record(tx, "call", operator.getitem, [t, key], {})


def setitem(tx, t: TensorV, key: Value, value: Value) -> None:
    if not symbolic_index.write(tx, t, key, value, record):
        record(tx, "call", operator.setitem, [t, key, value], {}, mutates=True)


def unbind_for_iter(tx, t: TensorV) -> tuple:
    if t.fake.dim() == 0:
        raise_(TypeError, "iteration over a 0-d tensor")
    out = record(tx, "method", "unbind", [t, Const(0)], {})
    return out.items


def _size_ctor(tx, clsv, args, kwargs):
    items = dispatch.to_list(tx, args[0]) if args else []
    return TupleV(items, torch.Size)


def _fold_ctor(cls):
    def c(tx, clsv, args, kwargs):
        return fold_model(cls)(tx, args, kwargs)

    return c


def _unsupported_ctor(reason, message):
    def c(tx, clsv, args, kwargs):
        raise UnsupportedError(reason, message)

    return c


_device_ctor = _fold_ctor(torch.device)


CONSTRUCTORS = {
    **STATE_CONSTRUCTORS,
    torch.Size: _size_ctor,
    torch.device: _device_ctor,
    torch.nn.Parameter: _unsupported_ctor(
        BreakReason.PARAMETER_CONSTRUCTION, "creating an nn.Parameter inside captured code"
    ),
    torch.Tensor: _unsupported_ctor(BreakReason.UNSUPPORTED_CALL, "torch.Tensor(...)"),
    torch.finfo: _fold_ctor(torch.finfo),
    torch.iinfo: _fold_ctor(torch.iinfo),
}


def constructor_for(cls):
    return CONSTRUCTORS.get(cls)
