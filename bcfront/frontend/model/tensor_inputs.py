"""Tensors and ints from outside as graph inputs: `wrap_tensor` (a tensor or parameter,
guarded by TENSOR_MATCH, TENSOR_ALIAS when reached again) and `wrap_sym_int` (an int
argument whose value changed between captures), with the dims whose sizes or strides are
symbolic in this capture (`shape_policy`) and their placeholder names.  `builder.wrap`
calls them for the tensors and ints it meets.
"""

from __future__ import annotations

import sys

from ...errors import UnsupportedError
from ...reasons import BreakReason
from .guard_kinds import GuardKind, TensorMatch
from .shape_policy import NeedDynamic, strict_marks
from .tracer import remember
from .values import Const, SymIntV, TensorV


def torch_mod():
    return sys.modules.get("torch")


def is_tensor(obj) -> bool:
    torch = torch_mod()
    return torch is not None and isinstance(obj, torch.Tensor)


def wrap_tensor(tx, t, source, guard=True):
    """A graph input for real tensor `t`."""
    known = tx.by_id.get(id(t))
    if known is not None:
        if guard and source is not None and known.source is not None and known.source != source:
            tx.guard(GuardKind.TENSOR_ALIAS, source, known.source)
        return known
    torch = torch_mod()
    ptype = type(t)
    if ptype is not torch.Tensor and not (isinstance(t, torch.nn.Parameter) and _no_overrides(ptype)):
        # a subclass's __torch_function__/__torch_dispatch__ (also of a parameter's data)
        # would be skipped by the fake run: its own code decides what ops return
        raise UnsupportedError(
            BreakReason.TENSOR_SUBCLASS,
            f"tensor subclass {ptype.__qualname__}: its __torch_function__ is not traced",
        )
    if source is None:
        raise UnsupportedError(
            BreakReason.TENSOR_WITHOUT_SOURCE, "a tensor with no way to fetch it at run time"
        )
    env = tx.torch_env()
    dims = sdims = frozenset()
    if guard:
        dims, sdims = _dynamic_dims(tx, t, source, ptype)
    if (dims or sdims) and not env.dynamic:
        raise NeedDynamic(source)
    try:
        name = env_placeholder(tx, source) if dims or sdims else ""
        fake = env.from_real(t, dims, name, sdims)
        if name and t.__dict__:
            strict = strict_marks(t) & dims
            if strict:
                tx.strict_marks[name] = strict
    except Exception as e:  # noqa: BLE001 - sparse, nested or quantized tensors and the like
        raise UnsupportedError(
            BreakReason.FAKE_TENSOR, f"cannot make a fake tensor of this input: {e}"
        ) from None
    node = tx.graph.add_input(source, fake)
    if guard:
        shape, stride = tuple(t.shape), tuple(t.stride())
        if dims or sdims:
            shape, stride = _static_parts(fake.shape), _static_parts(fake.stride())
        tx.guard(
            GuardKind.TENSOR_MATCH,
            source,
            TensorMatch(ptype, t.dtype, t.device, shape, stride, t.requires_grad),
            example=t,
        )
    v = TensorV(node, fake, ptype, source)
    remember(tx, t, v)
    tx.input_tensors.append(v)
    tx.real_tensors[id(v)] = t
    return v


def _no_overrides(cls) -> bool:
    """Whether tensor class `cls` keeps torch's own ``__torch_function__`` and
    ``__torch_dispatch__`` (``nn.Parameter`` and plain subclasses of it)."""
    torch = torch_mod()
    tf = getattr(cls, "__torch_function__", None)
    td = getattr(cls, "__torch_dispatch__", None)
    plain_tf = (torch.Tensor.__torch_function__.__func__, torch._C._disabled_torch_function_impl)
    return getattr(tf, "__func__", tf) in plain_tf and getattr(td, "__func__", td) is getattr(
        torch.Tensor.__torch_dispatch__, "__func__", torch.Tensor.__torch_dispatch__
    )


# -- symbolic sizes (`shape_policy`) -----------------------------------------------------------


def _static_parts(dims) -> tuple:
    """Sizes or strides of a fake with the symbolic ones as None."""
    return tuple(d if type(d) is int else None for d in dims)


def _under_module_store(source) -> bool:
    """A parameter or buffer read through a module's stores: its sizes stay static."""
    while source is not None:
        if type(source).__name__ == "ModuleAttrSource":
            return True
        source = getattr(source, "base", None)
    return False


def _dynamic_dims(tx, t, source, ptype) -> tuple[frozenset, frozenset]:
    """(dims whose size, dims whose stride) input `t` has symbolic in this capture."""
    policy = tx.shape_policy
    none: frozenset = frozenset()
    if policy is None or t.dim() == 0 or _under_module_store(source):
        return none, none
    if ptype is not torch_mod().Tensor:  # a Parameter: static, as torch.compile keeps them
        return none, none
    policy.saw_tensors = True
    dims = policy.tensor_dims(source, tuple(t.shape), t)
    strided = t.layout == torch_mod().strided
    return dims, (policy.stride_dims(source, tuple(t.stride())) if strided else none)


_ROOTS = frozenset({"LocalSource", "GlobalSource", "CellSource", "ConstSource"})
_STEPS = frozenset({"ItemSource", "AttrSource", "ModuleAttrSource", "StoredItemSource"})


def input_path(source) -> bool:
    """An argument (a local at the capture's start: what crosses a break too), a global, a
    closure cell or an object held by identity, or what is reached from one through
    constant keys and attribute names (``pair[0]``, ``cfg["n"]``, ``sched._step_count``, a
    continuation's stacked tuple): ints there change from call to call as arguments do (a
    step counter), and the region fetches them with the other graph inputs, before any
    write it makes."""
    while type(source).__name__ in _STEPS:
        source = source.base
    return type(source).__name__ in _ROOTS


def dynamic_int(tx, source, value) -> bool:
    """Whether int input `value` read from `source` is made a symbol (`wrap_sym_int`)."""
    policy = tx.shape_policy
    if policy is None or source is None:
        return False
    if not input_path(source):  # not a computed value (a type's, a storage offset...)
        return False
    # remembered always; made a symbol where torch is at hand: in functions that touch
    # tensors, and in pure-Python ones once the program imported torch (never imported here)
    dynamic = policy.int_dynamic(source, value)
    if not policy.saw_tensors and (tx.static_ints or policy.ints_broke or "torch" not in sys.modules):
        return False
    return dynamic


def env_placeholder(tx, source) -> str:
    """A fresh placeholder name for an input with symbols; remembered with its source."""
    names = tx.shape_inputs
    name = f"__bcs{len(names)}__"
    names[name] = source
    return name


def wrap_sym_int(tx, value: int, source):
    """An int input whose value changed between captures: a symbol of the capture's
    ShapeEnv, a graph input (0 and 1 stay constants, as torch specializes them)."""
    env = tx.symbol_env()
    if not env.dynamic:
        raise NeedDynamic(source)
    sym = env.sym_int(value, env_placeholder(tx, source))
    if type(sym) is int:
        tx.guard(GuardKind.CONSTANT_MATCH, source, value)
        return Const(value, source)
    tx.guard(GuardKind.TYPE_MATCH, source, int)
    node = tx.graph.add_input(source, sym)
    v = SymIntV(node, env.scalar_fake(), int, sym)
    v.source = source
    return v
