"""Models of Python builtins, builtin-type methods, `operator`, `math` and `functools`.

`registry.MODELS` maps a real callable to ``model(tx, args, kwargs) -> Value``;
`registry.CONSTRUCTORS` maps builtin classes to their construction model.  Methods of
immutable builtin types (str, int, float, bytes, tuple, ...) and functions of
`math`/`operator` fold when every argument is constant; a tensor argument
goes to the graph where Python would dispatch to torch, and is a graph break
where Python would read the tensor's data (``int(t)``, ``math.sqrt(t)``).
"""

from __future__ import annotations

import collections
import functools
import math
import operator
import sys
import types

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import guard_class_lookup, wrap
from ..model.guard_kinds import GuardKind
from ..model.sources import ConstSource, Ref
from ..model.tracer import SymbolicRaise
from ..model.values import (
    Const,
    DictV,
    ExceptionV,
    IterV,
    ListV,
    MadeFunctionV,
    MethodV,
    NewObjectV,
    ObjectV,
    PartialV,
    SetV,
    SuperV,
    SymFloatV,
    SymIntV,
    TensorV,
    TupleV,
    Value,
    specialized,
    symbolic_slice,
)
from . import (
    builtins_iter,  # noqa: F401  (its models register in `registry` when imported)
    compare,
    containers,
    context_vars,  # noqa: F401  (likewise)
    deques,  # noqa: F401  (likewise)
    dispatch,
    instancecheck,
    lazy_itertools,  # noqa: F401  (likewise)
    mapping_kinds,  # noqa: F401  (likewise)
    ops,
    pure_c,
    py_twins,
    set_order,
    string_io,
)
from .attrs import delattr_, getattr_, has_attr, setattr_, written_by_trace
from .classes import MISS, index_of, is_heap_type, is_plain_enum_member, lookup_dunder, mro_lookup
from .folding import (
    NotConst,
    arity,
    as_python,
    fold,
    fold_model,
    from_python,
    python_args,
    raise_,
    value_needed,
)
from .identity import identity_of
from .iteration import to_list
from .lru_calls import lru_cached
from .object_slots import as_class, exc_init, object_vars
from .ops import truth
from .registry import CONSTRUCTORS, MODELS, ctor, model

PURE_TYPES = (str, bytes, int, float, complex, bool, tuple, frozenset, range, slice, type(None))


def model_for(obj):
    try:
        m = MODELS.get(obj)
    except TypeError:
        return None
    if m is not None:
        return m
    pure = pure_c.lookup(obj)
    if pure is not None:  # the declared table of pure C callables
        return pure_c.fold_pure(pure)
    if isinstance(obj, types.WrapperDescriptorType) and obj in pure_c.SCALAR_SLOTS:  # IntEnum's %...
        return pure_c.scalar_slot_model(obj)
    if isinstance(obj, functools._lru_cache_wrapper):  # its C type
        return lru_cached(obj)
    if isinstance(obj, pure_c.GETTERS):
        return _getter_model(obj)
    if isinstance(obj, types.BuiltinMethodType):
        m = pure_c.bound_model(obj)
        if m is not None:
            return m
    py = py_twins.twin(obj) if isinstance(obj, types.BuiltinFunctionType) else None
    if py is not None:  # a C accelerator (_heapq.heappush): the Python function it replaced
        return py_twins.twin_model(obj, py)
    # only a C descriptor's: on anything else getattr would run a user's __getattr__ here
    owner = getattr(obj, "__objclass__", None) if isinstance(obj, _C_DESCRIPTORS) else None
    if isinstance(owner, type) and issubclass(owner, BaseException):
        if getattr(obj, "__name__", "") == "__init__":
            return exc_init
    if obj in _CONSUMERS:
        return _consuming(fold_model(obj))
    if owner in PURE_TYPES or (
        owner is not None
        and owner.__module__ == "torch"
        and owner.__name__ in ("dtype", "device", "finfo", "iinfo")
    ):
        return fold_model(obj)
    if isinstance(obj, types.BuiltinFunctionType) and getattr(obj, "__module__", None) == "math":
        return fold_model(obj)
    return None


def _getter_model(obj):
    """A call of an `operator.itemgetter`/`attrgetter`/`methodcaller` (made from constants):
    the item reads, attribute reads or method call it stands for."""
    maker, made = obj.__reduce__()

    def model(tx, args, kwargs):
        if len(args) != 1 or kwargs:  # C checks the arity first: its own TypeError
            return fold(obj, *[None] * len(args), **dict.fromkeys(kwargs))
        v = args[0]
        if isinstance(obj, operator.itemgetter):
            got = [ops.getitem(tx, v, from_python(k)) for k in made]
        elif isinstance(obj, operator.attrgetter):
            got = [functools.reduce(lambda o, n: getattr_(tx, o, n), path.split("."), v) for path in made]
        else:
            name, margs, kw = (
                (made[0], made[1:], {})
                if maker is operator.methodcaller
                else (maker.args[0], made, maker.keywords)
            )
            m = getattr_(tx, v, name)
            return dispatch.call(
                tx, m, [from_python(a) for a in margs], {k: from_python(a) for k, a in kw.items()}
            )
        return got[0] if len(got) == 1 else TupleV(got)

    return model


def _consuming(fold):
    """A fold of a C function that consumes an iterable argument (``sep.join(gen)``,
    ``math.fsum(x for ...)``): the iterable's items first, so a generator of constants folds."""

    def model(tx, args, kwargs):
        args = [ListV(to_list(tx, a)) if isinstance(a, IterV) else a for a in args]
        return fold(tx, args, kwargs)

    return model


def _qualified(fn) -> str:
    return f"{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', fn)}"


_CONSUMERS = frozenset({str.join, bytes.join, math.fsum, math.prod})
if hasattr(math, "sumprod"):  # 3.12+: statistics.correlation's and linear_regression's
    _CONSUMERS |= {math.sumprod}

_C_DESCRIPTORS = (
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
    types.MethodWrapperType,
    types.BuiltinMethodType,
)


def constructor_for(cls):
    c = CONSTRUCTORS.get(cls)
    if c is None:
        pure = pure_c.lookup(cls)
        if pure is not None:  # an immutable C class whose construction is declared pure
            model = pure_c.fold_pure(pure)
            return lambda tx, clsv, args, kwargs: model(tx, args, kwargs)
        py = py_twins.CLASS_TWINS.get(cls)
        if py is not None:  # an itertools iterator: its Python generator twin
            return lambda tx, clsv, args, kwargs: dispatch.inline_call(tx, ObjectV(py), args, kwargs)
    if c is not None or not (getattr(cls, "__module__", "") or "").startswith("torch"):
        return c
    from . import torch_calls

    return torch_calls.constructor_for(cls)


# -- introspection ----------------------------------------------------------------------


@model(len)
def _len(tx, args, kwargs):
    arity("len", args, 1)
    v = args[0]
    if isinstance(v, ObjectV) and v.source is not None and _builtin_len(type(v.obj)):
        # an outside instance of a Python subclass of list/tuple/str...: its C length, guarded
        # (the trace cannot change it: the builtin's methods on it are not modelled)
        n = len(v.obj)
        tx.guard(GuardKind.LENGTH, v.source, n)
        return Const(n)
    return Const(ops.length(tx, v))


_BUILTIN_LENS = frozenset(
    t.__dict__["__len__"] for t in (list, tuple, str, bytes, bytearray, set, frozenset, collections.deque)
)


def _builtin_len(cls) -> bool:
    """A Python subclass whose ``__len__`` is a builtin sequence's or set's C slot."""
    raw = next((c.__dict__["__len__"] for c in cls.__mro__ if "__len__" in c.__dict__), None)
    return is_heap_type(cls) and raw in _BUILTIN_LENS


@model(isinstance)
def _isinstance(tx, args, kwargs):
    arity("isinstance", args, 2)
    return Const(instancecheck.instance_of(tx, args[0], args[1]))


@model(issubclass)
def _issubclass(tx, args, kwargs):
    arity("issubclass", args, 2)
    return Const(instancecheck.subclass_of(tx, args[0], args[1]))


@model(callable)
def _callable(tx, args, kwargs):
    """``callable(v)``: whether v's class has a call slot, as CPython's tp_call test -- in the
    class's MRO, not through its metaclass.  A class statement's class can gain or lose
    ``__call__`` before the next call (its dict changes, and CPython updates the slot), a
    builtin or C class cannot: the lookup is guarded on the MRO's Python classes
    (`guard_class_lookup`, which leaves the others out)."""
    v = args[0]
    if isinstance(v, (MadeFunctionV, MethodV, PartialV)):
        return Const(True)
    if isinstance(v, ObjectV):
        cls = type(v.obj)
    elif isinstance(v, NewObjectV):
        cls = v.cls
    else:  # any other value: an Encoder, a cached memo's lookup, a dict of a subclass...
        try:
            cls = v.python_type()
        except NotImplementedError:  # a value with no class to ask
            raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"callable() of {v.describe()}") from None
    guard_class_lookup(tx, cls, "__call__")
    return Const(mro_lookup(cls, "__call__") is not MISS)


@model(getattr)
def _getattr(tx, args, kwargs):
    arity("getattr", args, 2, 3)
    name = as_python(args[1])
    if len(args) == 2:
        return getattr_(tx, args[0], name)
    try:  # one lookup: a property or __getattr__ runs once, as natively (O35)
        return getattr_(tx, args[0], name)
    except SymbolicRaise as e:
        if isinstance(e.exc, ExceptionV) and issubclass(e.exc.cls, AttributeError):
            return args[2]
        raise


@model(hasattr)
def _hasattr(tx, args, kwargs):
    arity("hasattr", args, 2)
    name = as_python(args[1])
    found = has_attr(tx, args[0], name)
    v = args[0]
    if not found and isinstance(v, ObjectV) and v.source is not None and not written_by_trace(tx, v, name):
        tx.guard(GuardKind.HASATTR, v.source, False, name)
    return Const(found)


@model(setattr, object.__setattr__)
def _setattr(tx, args, kwargs):
    arity("setattr", args, 3)
    setattr_(tx, args[0], as_python(args[1]), args[2], raw=False)
    return Const(None)


def _raw_setattr(tx, args, kwargs):
    setattr_(tx, args[0], as_python(args[1]), args[2], raw=True)
    return Const(None)


MODELS[object.__setattr__] = _raw_setattr


@model(delattr)
def _delattr(tx, args, kwargs):
    delattr_(tx, args[0], as_python(args[1]))
    return Const(None)


@model(id)
def _id(tx, args, kwargs):
    v = args[0]
    if isinstance(v, ObjectV) and v.source is not None:
        tx.guard(GuardKind.ID_MATCH, v.source, v.obj)
        return Const(id(v.obj))
    if isinstance(v, ObjectV) and not isinstance(v.obj, dict):
        # held by identity (a function found through a guarded class, a bound method's
        # __func__): the trace's constant, kept alive with it; a globals dict is not one
        tx.keepalive.append(v.obj)
        return Const(id(v.obj))
    return identity_of(v)  # one made in the trace: its run-time number, by identity


@model(hash)
def _hash(tx, args, kwargs):
    k = ops.hkey(tx, args[0])
    if isinstance(args[0], (Const, TupleV, SymIntV, SymFloatV)):  # a symbolic number: its value
        return Const(hash(k))
    if isinstance(args[0], ObjectV) and is_plain_enum_member(args[0].obj, tx):
        return Const(hash(k))  # the enum module's hash of its name, or the mixin's (identity-guarded)
    raise UnsupportedError(BreakReason.UNSUPPORTED_HASH, f"hash() of {args[0].describe()}")


def _io_builtin(fn):
    def m(tx, args, kwargs):
        if fn is print:  # to a StringIO made in the trace: a write to it
            done = string_io.print_to(tx, args, kwargs)
            if done is not None:
                return done
        raise UnsupportedError(BreakReason.IO, f"call to {fn.__name__}() (I/O) runs natively")

    return m


def _frame_builtin(fn):
    """Calls that look at the calling frame: the whole function must run in its own frame."""

    def m(tx, args, kwargs):
        if fn is vars and len(args) == 1 and not kwargs:
            return object_vars(tx, args[0])
        if fn in (vars, dir) and args:
            raise UnsupportedError(
                BreakReason.CALL_TO_C_FUNCTION, f"{fn.__name__}() of an object runs natively"
            )
        raise UnsupportedError(
            BreakReason.FRAME_INTROSPECTION,
            f"{getattr(fn, '__qualname__', fn)}() needs the function's real frame; "
            "the function runs natively",
        )

    return m


for _f in (print, input, open, breakpoint, __import__, compile):
    MODELS[_f] = _io_builtin(_f)
for _f in (exec, eval, locals, globals, vars, dir, sys._getframe):
    MODELS[_f] = _frame_builtin(_f)


@model(abs, operator.abs)
def _abs(tx, args, kwargs):
    return _dunder1(tx, abs, "__abs__", args[0])


def _dunder1(tx, fn, dunder, v):
    if isinstance(v, TensorV):
        from . import torch_calls

        return torch_calls.call_operator(tx, fn, [v])
    if isinstance(v, Const):
        return fold(fn, v.value)
    m = lookup_dunder(v, dunder, tx)
    if m is not None:
        return dispatch.call(tx, m, [v], {})
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{fn.__name__}() of {v.describe()}")


@model(round)
def _round(tx, args, kwargs):
    args = [specialized(a) for a in args]  # a symbolic number: its value, guarded
    if args and isinstance(args[0], TensorV):
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, "round() of a tensor reads its value")
    if args and not kwargs and len(args) <= 2 and not isinstance(args[0], Const):
        # CPython's round: the number's own __round__ (a Fraction's, a user class's), with
        # ndigits only when it is given and not None
        m = lookup_dunder(args[0], "__round__", tx)
        if m is not None:
            ndigits = (
                args[1:]
                if len(args) == 2 and not (isinstance(args[1], Const) and args[1].value is None)
                else []
            )
            return dispatch.call(tx, m, [args[0], *ndigits], {})
    return fold_model(round)(tx, args, kwargs)


for _f in (divmod, pow, chr, ord, bin, hex, oct, ascii, format):
    MODELS[_f] = fold_model(_f)


@model(divmod)
def _divmod(tx, args, kwargs):
    """``divmod(a, b)`` of numbers that are not both constants: ``a.__divmod__(b)``, then
    ``b.__rdivmod__(a)``, as CPython's binary operators (a Fraction's, a user class's)."""
    if len(args) != 2 or kwargs:
        return fold_model(divmod)(tx, args, kwargs)
    a, b = args
    if (isinstance(a, Const) and isinstance(b, Const)) or isinstance(a, TensorV) or isinstance(b, TensorV):
        return fold_model(divmod)(tx, args, kwargs)
    return ops.binary(tx, divmod, a, b)


# -- conversions -----------------------------------------------------------------------------


def _scalar_ctor(cls, dunder):
    def c(tx, clsv, args, kwargs):
        if kwargs or len(args) > 1:  # int(s, base=2), str(b, "utf-8"): on constants only
            what = f"{cls.__name__}() with several non-constant arguments"
            pa, pk = python_args(args, kwargs, BreakReason.UNSUPPORTED_CALL, what)
            return fold(cls, *pa, **pk)
        if not args:
            return Const(cls())
        v = args[0]
        if isinstance(v, (SymIntV, SymFloatV)):  # a symbolic number: int() of a size is itself,
            if cls is v.ptype:  # float() of one a symbolic float, the rest reads its value
                return v
            if cls is float:
                from . import scalars  # imports torch: only once a tensor is here

                return scalars.python_op(tx, float, [v])
            if cls is bool:
                return Const(truth(tx, v))
            v = specialized(v)
            args = [v]
        if isinstance(v, TensorV) and len(args) == 1 and cls is not str and tx.options.capture_scalar_outputs:
            from . import scalars  # imports torch: only once a tensor is here

            return scalars.read(tx, v, cls.__name__)
        if isinstance(v, TensorV):
            raise UnsupportedError(
                BreakReason.DATA_DEPENDENT, f"{cls.__name__}() of a tensor reads its value"
            )
        if isinstance(v, Const) and all(isinstance(a, Const) for a in args):
            return fold(cls, *[a.value for a in args])
        if cls is bool:
            return Const(truth(tx, v))
        if cls is str and isinstance(v, (ListV, TupleV, DictV, SetV)):
            try:
                return fold(str, as_python(v))
            except NotConst:
                pass
        if isinstance(v, ExceptionV) and cls is str:
            return exception_text(tx, v, str)
        for name in (dunder, "__repr__") if cls is str else (dunder,):
            m = lookup_dunder(v, name, tx)
            if m is not None:
                return dispatch.call(tx, m, [v], {})
        if isinstance(v, ObjectV) and cls is str and isinstance(v.obj, (type, BaseException)):
            return Const(str(v.obj))
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{cls.__name__}() of {v.describe()}")

    return c


CONSTRUCTORS[int] = _scalar_ctor(int, "__int__")
CONSTRUCTORS[float] = _scalar_ctor(float, "__float__")
CONSTRUCTORS[bool] = _scalar_ctor(bool, "__bool__")
CONSTRUCTORS[str] = _scalar_ctor(str, "__str__")
CONSTRUCTORS[complex] = _scalar_ctor(complex, "__complex__")


def _callers_exception(what: str):
    """Outside the function's own handlers the exception being handled is its caller's, which
    the trace cannot know (each call may have another): the call runs natively."""
    raise UnsupportedError(
        BreakReason.FRAME_INTROSPECTION, f"{what} outside an except block (the caller's handled exception)"
    )


@model(sys.exception)
def _sys_exception(tx, args, kwargs):
    """The exception being handled, as the trace knows it inside the function's handlers."""
    if tx.exc_info is None:
        _callers_exception("sys.exception()")
    return tx.exc_info


@model(sys.exc_info)
def _sys_exc_info(tx, args, kwargs):
    if tx.exc_info is None:
        _callers_exception("sys.exc_info()")
    # the third item is the traceback: frames only the function's own frame has
    raise UnsupportedError(BreakReason.FRAME_INTROSPECTION, "sys.exc_info() inside an except block")


@model(repr)
def _repr(tx, args, kwargs):
    v = specialized(args[0])  # a symbolic number: its value, guarded
    try:
        return Const(repr(as_python(v)))
    except NotConst:
        pass
    if isinstance(v, ExceptionV):
        return exception_text(tx, v, repr)
    m = lookup_dunder(v, "__repr__", tx)
    if m is not None:
        return dispatch.call(tx, m, [v], {})
    raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"repr() of {v.describe()}")


_C_FIELDS = (types.MemberDescriptorType, types.GetSetDescriptorType)


def exception_text(tx, v: ExceptionV, fn) -> Value:
    """``str(e)`` / ``repr(e)`` of an exception made in the trace: its class's Python
    ``__str__``/``__repr__`` when it has one, else the C one (which reads only `args` and
    the C fields) run on a stand-in: an instance of the same class, made and initialized
    by its builtin base only (no user code), with the same arguments and C fields."""
    m = lookup_dunder(v, "__str__" if fn is str else "__repr__", tx)
    if m is not None:
        return dispatch.call(tx, m, [v], {})
    base = next(c for c in v.cls.__mro__ if not is_heap_type(c))
    try:
        args = [value_needed(a) for a in v.args]  # a symbolic int as text: its value
        fields = {
            k: value_needed(x)
            for k, x in v.attrs.items()
            if not k.startswith("__") and isinstance(getattr(base, k, None), _C_FIELDS)
        }
    except NotConst:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_CALL, f"{fn.__name__}() of an exception with non-constant arguments"
        ) from None
    try:
        real = base.__new__(v.cls, *args)
        base.__init__(real, *args)
        for k, x in fields.items():
            setattr(real, k, x)
        return Const(fn(real))
    except Exception:  # noqa: BLE001 - no stand-in: the real exception's method runs natively
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"{fn.__name__}() of {v.describe()}") from None


@ctor(list)
def _list(tx, clsv, args, kwargs):
    return ListV(to_list(tx, args[0]) if args else [])


@ctor(tuple)
def _tuple(tx, clsv, args, kwargs):
    return TupleV(to_list(tx, args[0]) if args else [])


@ctor(set, frozenset)
def _set(tx, clsv, args, kwargs):
    items = to_list(tx, args[0]) if args else []
    keys = [ops.hkey(tx, x) for x in items]
    entries: dict = {}
    for k, x in zip(keys, items):
        entries.setdefault(k, x)  # of equal items (1, True) the first stays, as in CPython
    frozen = clsv.obj is frozenset
    update = set_order.update_step(args[0], keys) if args else ("adds", ())
    return SetV(entries, frozen, history=set_order.started(*update, frozen=frozen))


@ctor(dict, collections.OrderedDict)
def _dict(tx, clsv, args, kwargs):
    d = DictV({}, clsv.obj)
    if args:
        containers.dict_update(tx, [d, args[0]], {})
    if kwargs:
        containers.dict_update(tx, [d], kwargs)
    return d


@ctor(range)
def _range(tx, clsv, args, kwargs):
    args = [specialized(a) for a in args]  # a size as a bound: its value, guarded
    if any(isinstance(a, TensorV) for a in args):
        raise UnsupportedError(BreakReason.DATA_DEPENDENT, "range() of a tensor reads its value")
    return fold(range, *[as_python(a) for a in args])


@ctor(slice)
def _slice(tx, clsv, args, kwargs):
    try:
        return Const(slice(*[as_python(a) for a in args]))
    except NotConst:
        sym = symbolic_slice(list(args))  # a bound that is a symbolic size
        if sym is not None and not kwargs:
            return sym
        raise UnsupportedError(BreakReason.UNSUPPORTED_SLICE, "a slice with non-constant bounds") from None


@ctor(object)
def _object(tx, clsv, args, kwargs):
    return NewObjectV(object)


@ctor(type)
def _type(tx, clsv, args, kwargs):
    if len(args) != 1:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "type() with three arguments")
    cls = args[0].python_type()
    return wrap(tx, cls, ConstSource(Ref(cls, getattr(cls, "__qualname__", "?"))), guard=False)


@ctor(super)
def _super(tx, clsv, args, kwargs):
    if len(args) == 2:
        return SuperV(as_class(args[0]), args[1])
    if args:
        raise UnsupportedError(BreakReason.UNSUPPORTED_SUPER, "super() with one argument")
    from .cells import zero_arg_super

    return zero_arg_super(tx)


@ctor(functools.partial)
def _partial(tx, clsv, args, kwargs):
    return PartialV(args[0], args[1:], kwargs)


# -- operator ------------------------------------------------------------------------------


def _binary_model(fn):
    return lambda tx, args, kwargs: ops.binary(tx, fn, args[0], args[1])


for _f in ops.BINARY_OPS:
    MODELS[_f] = _binary_model(_f)
for _name, _sym in (("lt", "<"), ("le", "<="), ("eq", "=="), ("ne", "!="), ("gt", ">"), ("ge", ">=")):
    MODELS[getattr(operator, _name)] = (
        lambda sym: lambda tx, args, kwargs: compare.compare(tx, sym, args[0], args[1])
    )(_sym)
for _f in (operator.neg, operator.pos, operator.invert, operator.not_):
    MODELS[_f] = (lambda f: lambda tx, args, kwargs: ops.unary(tx, f, args[0]))(_f)
MODELS[operator.truth] = lambda tx, args, kwargs: Const(truth(tx, args[0]))
MODELS[operator.getitem] = lambda tx, args, kwargs: ops.getitem(tx, args[0], args[1])
MODELS[operator.contains] = lambda tx, args, kwargs: Const(compare.contains(tx, args[1], args[0]))


def _is(tx, a, b) -> bool:
    same = compare.is_same(a, b, tx)
    if same is None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_IDENTITY, f"`is` between {a.describe()} and {b.describe()}"
        )
    return same


MODELS[operator.is_] = lambda tx, args, kwargs: Const(_is(tx, args[0], args[1]))
MODELS[operator.is_not] = lambda tx, args, kwargs: Const(not _is(tx, args[0], args[1]))


@model(operator.setitem)
def _op_setitem(tx, args, kwargs):
    ops.setitem(tx, args[0], args[1], args[2])
    return Const(None)


@model(operator.index)
def _op_index(tx, args, kwargs):
    i = index_of(tx, args[0])
    if i is None:
        raise_(TypeError, f"'{args[0].python_type().__name__}' object cannot be interpreted as an integer")
    return Const(i)
