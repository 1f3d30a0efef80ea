"""Python numbers read from tensors, kept in the graph (option ``capture_scalar_outputs``).

``t.item()``, ``int(t)``, ``float(t)``, ``bool(t)`` and ``t.tolist()`` become graph
nodes whose run-time value is the real Python number (or nested list of them); the
trace holds a `ScalarV` whose `example` is a stand-in of the same type.  What the
trace may do with it is what does not depend on its value:

* Python arithmetic and comparisons with other numbers: more scalar nodes (the
  result's type is the stand-ins' result type; ``**`` only with a constant integer
  exponent, whose result type is known without the value);
* a value operand of a tensor op (``x * s``, ``x.clamp(min=s)``, ``torch.full_like(x,
  s)``, ``torch.tensor(s)``): Python-number promotion rules follow from its type alone,
  so the fake run on the stand-in gives the right metadata (`check_tensor_use`).

Anything else -- a branch on it (truth), a shape, size, index or dimension argument,
a dict key, ``is`` -- depends on the value: a data-dependent graph break, after which
the native code sees the real number (the region returns it as a graph output).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

import torch
from torch._subclasses.fake_tensor import is_fake

from ...errors import UnsupportedError
from ...ir.alias_facts import INPLACE_OPERATORS
from ...reasons import BreakReason
from ..model.node_checks import check_split, note_node
from ..model.values import Const, ListV, ScalarV, SymFloatV, SymIntV, TensorV, TupleV, Value
from .symbolic import concrete, is_symbolic, number_value, specialize_all

_EXAMPLES = {bool: True, int: 3, float: 1.5, complex: 1.5 + 0.5j}
_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}


def enabled(tx) -> bool:
    return tx.options.capture_scalar_outputs


def python_type(dtype) -> type:
    """The type of ``t.item()`` for a tensor of `dtype`."""
    if dtype is torch.bool:
        return bool
    if dtype.is_complex:
        return complex
    if dtype.is_floating_point:
        return float
    return int


class ScalarRead:
    """A graph node's target: `how` on the real tensor (``Tensor.item``, ``int``, ...).  On
    a fake tensor -- graph passes re-run graphs on fakes -- it gives the stand-in."""

    def __init__(self, how, name: str, example):
        self.how = how
        self.__name__ = self.__qualname__ = name
        self.example = example

    def __call__(self, t):
        if is_fake(t):
            return self.example
        return self.how(t)

    def __repr__(self):
        return f"<scalar read {self.__name__}>"


def _nested_example(shape, example):
    if not shape:
        return example
    return [_nested_example(shape[1:], example) for _ in range(shape[0])]


def _scalar(tx, node, ptype: type) -> ScalarV:
    fake = tx.torch_env().run(lambda: torch.zeros((), dtype=_DTYPES[ptype]), [], {}, tx.state)
    return ScalarV(node, fake, ptype, node.meta)


def _add(tx, target, args, meta):
    check_split(tx)
    node = tx.graph.add("call", target, args, {}, meta=meta, loc=tx.loc(), state=tx.node_state())
    note_node(tx)
    return node


def read(tx, t: TensorV, how: str) -> Value:
    """``t.item()`` / ``t.tolist()`` (`how` is the method name) or ``int(t)`` / ``float(t)`` /
    ``bool(t)`` / ``complex(t)`` (`how` is the builtin's name) as a scalar node."""
    if isinstance(t, ScalarV):
        if how in ("item", "tolist"):
            raise UnsupportedError(BreakReason.DATA_DEPENDENT, f"{t.ptype.__name__}.{how}()")
        return python_op(tx, _BUILTINS[how], [t])
    fake = t.fake
    ptype = python_type(fake.dtype)
    if how == "tolist":
        shape = tuple(int(d) for d in fake.shape)
        example = _nested_example(shape, _EXAMPLES[ptype])
        node = _add(tx, ScalarRead(torch.Tensor.tolist, "tolist", example), [t.node], example)
        if not shape:
            return _scalar(tx, node, ptype)
        return _unpack(tx, node, shape, ptype)
    if fake.numel() != 1:
        raise UnsupportedError(
            BreakReason.TORCH_ERROR, f"{how}() of a tensor of {fake.numel()} elements raises: natively"
        )
    if how == "item":
        fn = torch.Tensor.item
    else:
        fn = _BUILTINS[how]
        if ptype is complex and fn is not complex:
            raise UnsupportedError(BreakReason.TORCH_ERROR, f"{how}() of a complex tensor; it runs natively")
        ptype = fn
    example = _EXAMPLES[ptype]
    node = _add(tx, ScalarRead(fn, how, example), [t.node], example)
    return _scalar(tx, node, ptype)


_BUILTINS = {"int": int, "float": float, "bool": bool, "complex": complex}


def _unpack(tx, node, shape, ptype) -> ListV:
    items = []
    for i in range(shape[0]):
        meta = node.meta[i]
        n = tx.graph.add("call", operator.getitem, [node, i], meta=meta, loc=node.loc, state=node.state)
        items.append(_unpack(tx, n, shape[1:], ptype) if len(shape) > 1 else _scalar(tx, n, ptype))
    return ListV(items)


# -- Python arithmetic on scalars ---------------------------------------------------------

_INPLACE_TO_BINARY = {
    fn: getattr(operator, fn.__name__[1:], None) or getattr(operator, fn.__name__[1:] + "_")
    for fn in INPLACE_OPERATORS
}
_PYTHON_OPS = {
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.neg,
    operator.pos,
    operator.abs,
    operator.invert,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.lshift,
    operator.rshift,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
    abs,
    int,
    float,
    bool,
    complex,
}


def is_scalar_op(args, kwargs) -> bool:
    """Whether a call's arguments are scalars and numbers only (no tensor among them)."""
    vals = list(args) + list(kwargs.values())
    return any(isinstance(a, ScalarV) for a in vals) and not any(
        isinstance(a, TensorV) and not isinstance(a, ScalarV) for a in vals
    )


def is_python_op(fn) -> bool:
    """Whether `fn` is Python arithmetic or a comparison on numbers (``operator.isub`` too)."""
    try:
        return _INPLACE_TO_BINARY.get(fn, fn) in _PYTHON_OPS
    except TypeError:  # an unhashable callable
        return False


def python_op(tx, fn, args: list) -> Value:
    """`fn` (an operator, ``abs``, a number type) on scalars and constant numbers: a node."""
    fn = _INPLACE_TO_BINARY.get(fn, fn)
    name = getattr(fn, "__name__", repr(fn))
    if any(isinstance(a, _SYMBOLIC) for a in args) and not any(_data_scalar(a) for a in args):
        return _sym_op(tx, fn, args)
    if fn not in _PYTHON_OPS:
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, f"{name}() of a number read from a tensor")
    for a in args:
        if not (isinstance(a, ScalarV) or (isinstance(a, Const) and type(a.value) in _EXAMPLES)):
            raise UnsupportedError(
                BreakReason.DATA_DEPENDENT, f"{name} of a number read from a tensor and {a.describe()}"
            )
    if fn is operator.pow:
        base, exp = args
        # int ** negative int is a float, float ** fraction of a negative base a complex:
        # only a constant integer exponent leaves the type independent of the value
        if not (
            isinstance(exp, Const)
            and type(exp.value) is int
            and (exp.value >= 0 or base.python_type() in (float, complex))
        ):
            raise UnsupportedError(
                BreakReason.DATA_DEPENDENT, "** of a number read from a tensor: the type depends on the value"
            )
    examples = [_stand_in(a) for a in args]
    try:
        example = fn(*examples)
    except Exception as e:  # noqa: BLE001 - it may raise for the real value too: natively
        raise UnsupportedError(
            BreakReason.DATA_DEPENDENT, f"{name} of a number read from a tensor ({type(e).__name__})"
        ) from None
    node = _add(tx, fn, [a.node if isinstance(a, ScalarV) else a.value for a in args], example)
    return _scalar(tx, node, type(example))


_SYMBOLIC = (SymIntV, SymFloatV)


def _data_scalar(a) -> bool:
    return isinstance(a, ScalarV) and not isinstance(a, _SYMBOLIC)


def _stand_in(a):
    """What a fake computation of Python arithmetic on a number read from a tensor takes for
    operand `a`: the scalar's stand-in, a symbolic number's type's, a constant itself."""
    if isinstance(a, _SYMBOLIC):
        return _EXAMPLES[a.ptype]
    return a.example if isinstance(a, ScalarV) else a.value


# the symbolic counterparts of conversions that would specialize a SymInt / SymFloat
_SYMBOLIC_FNS = {float: torch.sym_float}


def _sym_op(tx, fn, args: list) -> Value:
    """`fn` on symbolic ints and floats (and constants): a node computing the number when
    the result is a symbolic int or float; a comparison is answered (its outcome guarded),
    anything else is computed on the specialized values."""
    if fn not in _PYTHON_OPS or (fn in (int, float) and len(args) != 1):
        return _on_constants(fn, specialize_all(args))
    for a in args:
        if not (isinstance(a, _SYMBOLIC) or (isinstance(a, Const) and type(a.value) in _EXAMPLES)):
            return _on_constants(fn, specialize_all(args))
    if fn is operator.pos or (fn is args[0].python_type() and fn in (int, float)):
        return args[0]
    examples = [a.example if isinstance(a, _SYMBOLIC) else a.value for a in args]
    try:
        example = _SYMBOLIC_FNS.get(fn, fn)(*examples)
    except Exception:  # noqa: BLE001 - what Python raises for these values: on the constants
        return _on_constants(fn, specialize_all(args))
    if not isinstance(example, (torch.SymInt, torch.SymFloat)) or not is_symbolic(example):
        return Const(concrete(example))  # a comparison, a constant: specialized
    node = _add(tx, fn, [a.node if isinstance(a, _SYMBOLIC) else a.value for a in args], example)
    return number_value(tx, node, example)


def _on_constants(fn, args: list) -> Value:
    from .folding import fold

    return fold(fn, *[a.value for a in args])


# -- scalars as operands of tensor ops -----------------------------------------------------

# torch functions and Tensor methods where a Python number is a value operand: its type
# (bool/int/float/complex) decides the promotion, never its value the result's metadata
VALUE_OPERAND_OPS = frozenset(
    {
        *(
            f"{n}{s}"
            for n in (
                "add",
                "sub",
                "subtract",
                "mul",
                "multiply",
                "div",
                "divide",
                "true_divide",
                "floor_divide",
                "remainder",
                "fmod",
                "pow",
                "float_power",
                "clamp",
                "clip",
                "clamp_min",
                "clamp_max",
                "masked_fill",
                "lerp",
                "addcmul",
                "addcdiv",
                "eq",
                "ne",
                "lt",
                "le",
                "gt",
                "ge",
                "bitwise_and",
                "bitwise_or",
                "bitwise_xor",
                "xlogy",
                "copysign",
                "atan2",
                "hypot",
                "logaddexp",
                "fill",
            )
            for s in ("", "_")
        ),
        "rsub",
        "where",
        "full",
        "full_like",
        "new_full",
        "threshold",
        "scalar_tensor",
    }
)
# a list of numbers as the data of a new tensor: its shape is the list's, which is known
_DATA_OPS = frozenset({"tensor", "as_tensor"})
_OPERATOR_OPERANDS = {operator.setitem: (2,)}  # x[k] = s: the value, never the key


def check_tensor_use(op: str, target, args: list, kwargs: dict) -> None:
    """Break unless every scalar in a tensor call is a value operand (see module doc)."""
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    allowed: Iterable[int] | None
    if op == "call" and getattr(target, "__module__", None) in ("_operator", "operator"):
        allowed = _OPERATOR_OPERANDS.get(target)
        if allowed is None and target not in (operator.getitem, operator.delitem):
            allowed = range(len(args))
        nested_ok = False
    elif op in ("call", "method") and name in VALUE_OPERAND_OPS | _DATA_OPS:
        allowed = range(1 if op == "method" else 0, len(args))
        nested_ok = name in _DATA_OPS
    else:
        allowed = ()
        nested_ok = False
    operands = set(allowed or ())
    for i, a in enumerate(args):
        _check_arg(name, a, i in operands, nested_ok)
    for a in kwargs.values():
        _check_arg(name, a, name in VALUE_OPERAND_OPS | _DATA_OPS, nested_ok)


def _check_arg(name, a, direct_ok: bool, nested_ok: bool) -> None:
    if isinstance(a, _SYMBOLIC):  # a symbolic number: any argument (the fake run takes it)
        return
    if isinstance(a, ScalarV):
        if direct_ok:
            return
    elif isinstance(a, (ListV, TupleV)):
        if not any(_holds_scalar(x) for x in a.items):
            return
        if nested_ok:
            return
    else:
        return
    raise UnsupportedError(
        BreakReason.DATA_DEPENDENT,
        f"a number read from a tensor is an argument of {name or 'a torch call'} whose result "
        "may depend on its value",
    )


def _holds_scalar(v) -> bool:
    if isinstance(v, _SYMBOLIC):
        return False
    if isinstance(v, ScalarV):
        return True
    if isinstance(v, (ListV, TupleV)):
        return any(_holds_scalar(x) for x in v.items)
    return False


def holds_scalar(args, kwargs) -> bool:
    return any(_holds_scalar(a) for a in args) or any(_holds_scalar(a) for a in kwargs.values())
