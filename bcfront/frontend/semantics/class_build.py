"""Class statements in captured code: ``builtins.__build_class__`` modelled.

The class body runs as a nested trace (`dispatch.run_class_body`: STORE_NAME and
LOAD_NAME act on a namespace of its own).  From that namespace a real class is made
at capture time, the *template*: what the trace reads when it looks attributes up,
binds methods, checks ``isinstance``.  Its functions are stand-ins (each method's
code with empty cells) that never run: every real object put in the template maps
back to the symbolic value it was made from (`Tracer.by_id`), so a call of a method
inlines the method's value, whose cells are this call's.  The template is private to
the trace (`Tracer.private`): a guard on it would check nothing, since only the
trace reaches it and a write to a class breaks (`class-mutation`).

Python makes a new class each time the statement runs.  Where nothing of the class
leaves the call, its identity cannot be observed and no class is made at run time.
Where the class, an instance or one of its functions leaves the region, the region
rebuilds it (`MadeClassV.rebuild`): ``type(name, bases, namespace)`` over the
namespace rebuilt (fresh functions closing over the call's cells), once per call,
and the instances rebuilt after it are of that class; decorators applied at capture
(`dataclasses.dataclass`) are applied again.

A write to the class (``C.count += 1``) changes the template (journaled) and the
namespace a rebuild uses; an object made in the trace stored on it is a `Placeholder`
in the template that maps back to its value.

A class the model cannot make the same way CPython would is refused, and the
statement runs natively as one call (`call-to-c-function`): a metaclass other than
``type`` (named or inherited), class keywords, a base's ``__init_subclass__`` of its
own, ``__mro_entries__``, a namespace value with a ``__set_name__``, or values that
are not constants, functions, outside objects, or property / staticmethod /
classmethod wrappers of them.
"""

from __future__ import annotations

import builtins
import dataclasses
import types
import weakref

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.builder import guard_class_lookup
from ..model.values import (
    CellV,
    Const,
    DictV,
    ListV,
    MadeFunctionV,
    NewObjectV,
    ObjectV,
    PartialV,
    TensorV,
    TupleV,
)
from . import dispatch, made_function_attrs
from .classes import MISS, mro_lookup
from .folding import raise_
from .registry import CONSTRUCTORS, MODELS, model

# template class or stand-in function -> the value it was made from, for the region's
# rebuild (which has no tracer); weak: a template lives as long as an entry holds it
STAND_INS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def stand_in_value(obj):
    """The symbolic value a template class or stand-in function was made from, or None."""
    try:
        return STAND_INS.get(obj)
    except TypeError:  # not weakly referenceable: no stand-in
        return None


class MadeClassV(ObjectV):
    """A class made by a class statement in the trace: `obj` is its template; `bases`,
    `namespace` (name -> value, as the body left it) and `decorators` ((callable, kwargs)
    applied since) are what a rebuild makes it from."""

    __slots__ = ("name", "bases", "namespace", "decorators")

    def __init__(self, template, name, bases, namespace):
        super().__init__(template)
        self.name = name
        self.bases = tuple(bases)
        self.namespace = dict(namespace)
        self.decorators: tuple = ()

    def describe(self):
        return f"class {self.name} (made in the function)"

    def rebuild(self, rb) -> str:
        ns = rb.ns
        cell = self.namespace.get("__classcell__")
        if isinstance(cell, CellV):  # made empty first: the methods close over it, type() fills it
            rb.temp(f"{ns.const(types.CellType, 'CellType')}()", cell, "cell")
        bases = "".join(f"{rb.expr(b)}, " for b in self.bases)
        items = ", ".join(f"{k!r}: {rb.expr(v)}" for k, v in self.namespace.items())
        decorators = ns.const(self.decorators) if self.decorators else "()"
        return rb.temp(
            f"{ns.const(make_class)}({self.name!r}, ({bases}), {{{items}}}, {decorators})", self, "cls"
        )


class _ClassSlot:
    """`name` in a template's own dict, as one attribute the journal can set and undo
    (a rolled-back trace takes its writes to the template back too)."""

    __slots__ = ("cls", "name")

    def __init__(self, cls, name):
        self.cls, self.name = cls, name

    @property
    def value(self):
        return self.cls.__dict__.get(self.name, _ABSENT)

    @value.setter
    def value(self, v):
        if v is _ABSENT:
            delattr(self.cls, self.name)
        else:
            setattr(self.cls, self.name, v)


_ABSENT = object()


def set_class_attr(tx, cls: MadeClassV, name: str, value) -> None:
    """``C.name = value`` on a class made in the trace: the template changes (journaled),
    and so does the namespace a rebuild makes the class from.  Special names (slots of
    the type, ``__bases__``...) and values that cannot be made real break."""
    if name.startswith("__") and name.endswith("__"):
        raise UnsupportedError(BreakReason.CLASS_MUTATION, f"setting {cls.name}.{name}")
    try:
        obj = real(tx, value)
    except UnsupportedError:
        raise UnsupportedError(
            BreakReason.CLASS_MUTATION, f"setting {cls.name}.{name} to {value.describe()}"
        ) from None
    tx.set(_ClassSlot(cls.obj, name), "value", obj)
    tx.set(cls, "namespace", {**cls.namespace, name: value})


def make_class(name, bases, namespace, decorators):
    """A class statement's class made again at run time (a region's rebuild)."""
    cls = type(name, bases, namespace)
    for fn, kwargs in decorators:
        cls = fn(cls, **kwargs)
    return cls


class WrapperV(ObjectV):
    """A property, staticmethod or classmethod made in a class body: `obj` is the real one
    over stand-ins, `parts` the values it was made of (``maker(*parts)`` rebuilds it)."""

    __slots__ = ("maker", "parts")

    def __init__(self, obj, maker, parts):
        super().__init__(obj)
        self.maker = maker
        self.parts = tuple(parts)

    def rebuild(self, rb) -> str:
        args = ", ".join(rb.expr(p) for p in self.parts)
        return rb.temp(f"{rb.ns.const(self.maker)}({args})", self, "obj")


def _refuse(why: str):
    raise UnsupportedError(BreakReason.CALL_TO_C_FUNCTION, f"class statement (__build_class__): {why}")


def real(tx, v):
    """The real object standing for `v` in a template (registered to map back to `v`)."""
    if isinstance(v, Const):
        return v.value
    if isinstance(v, ObjectV):
        return v.obj
    if isinstance(v, MadeFunctionV):
        return stand_in(tx, v)
    if isinstance(v, CellV) and v.real is None:
        return types.CellType()  # __classcell__: type() fills it (the trace fills `v`)
    if isinstance(v, TupleV) and v.cls is tuple:
        return tuple(real(tx, x) for x in v.items)
    if isinstance(v, (ListV, DictV)) and v.source is None:
        if isinstance(v, ListV):
            out = [real(tx, x) for x in v.items]
        elif v.cls is dict:
            out = {real(tx, k): real(tx, x) for k, x in v.entries.values()}
        else:
            _refuse(f"a {v.cls.__name__} in the class namespace")
        _register(tx, out, v)  # `C.items.append(...)` mutates the namespace's value
        return out
    if isinstance(v, (NewObjectV, TensorV)) and mro_lookup(v.python_type(), "__get__") is MISS:
        out = Placeholder()  # no descriptor: a lookup finds it and maps it back to `v`
        _register(tx, out, v)
        return out
    _refuse(f"{v.describe()} in the class namespace")


class Placeholder:
    """What a template holds for an object made in the trace (an instance, a tensor): never
    read for real, only mapped back to its value."""

    __slots__ = ("__weakref__",)


def _register(tx, obj, v) -> None:
    tx.by_id[id(obj)] = v
    tx.keepalive.append(obj)


def stand_in(tx, fv: MadeFunctionV):
    """A real function with `fv`'s code and empty cells, mapping back to `fv`."""
    if made_function_attrs.has_own_state(fv):
        _refuse(f"{fv.describe()} with attributes set in the trace")
    memo = ("stand-in", id(fv))  # one per function value (a method stored twice)
    if memo in tx.by_id:
        return tx.by_id[memo].obj
    closure = tuple(types.CellType() for _ in fv.code.co_freevars) or None
    defaults = tuple(d.value if isinstance(d, Const) else None for d in fv.defaults) if fv.defaults else None
    fn = types.FunctionType(fv.code, fv.globals, fv.name, defaults, closure)
    fn.__qualname__ = fv.qualname
    if fv.kwdefaults:
        fn.__kwdefaults__ = {k: d.value if isinstance(d, Const) else None for k, d in fv.kwdefaults.items()}
    _register(tx, fn, fv)
    tx.by_id[memo] = ObjectV(fn)
    STAND_INS[fn] = fv
    return fn


def _wrapper_ctor(tx, clsv, args, kwargs):
    """``property(...)``, ``staticmethod(f)``, ``classmethod(f)`` of functions, constants or
    wrappers: the real one over their real objects (stand-ins for functions made here)."""
    kind = clsv.obj
    if kind is property:
        names = ("fget", "fset", "fdel", "doc")
        if len(args) > 4 or any(k not in names[len(args) :] for k in kwargs):
            _refuse_call(kind)
        args = [*args, *(kwargs.get(n, Const(None)) for n in names[len(args) :])]
        while len(args) > 1 and isinstance(args[-1], Const) and args[-1].value is None:
            args.pop()
    elif kwargs or len(args) != 1:
        _refuse_call(kind)
    return wrapper(tx, kind, args)


def wrapper(tx, kind, parts):
    if not all(isinstance(p, (MadeFunctionV, ObjectV, Const)) for p in parts):
        _refuse_call(kind)
    obj = kind(*(real(tx, p) for p in parts))
    w = WrapperV(obj, kind, parts)
    _register(tx, obj, w)
    return w


def _refuse_call(kind):
    raise UnsupportedError(
        BreakReason.UNSUPPORTED_CALL, f"constructing the C type {kind.__qualname__} with these arguments"
    )


def _property_with(part: int):
    """``p.getter/setter/deleter(f)``: a copy of property `p` with one accessor replaced."""

    def method(tx, args, kwargs):
        p, f = args if len(args) == 2 and not kwargs else (None, None)
        if not isinstance(p, ObjectV) or type(p.obj) is not property:
            _refuse_call(property)
        parts = (
            list(p.parts)
            if isinstance(p, WrapperV)
            else [ObjectV(x) for x in (p.obj.fget, p.obj.fset, p.obj.fdel)]
        )
        parts += [Const(None)] * (3 - len(parts[:3]))
        parts[part] = f
        return wrapper(tx, property, parts[:3])

    return method


for _i, _name in enumerate(("getter", "setter", "deleter")):
    MODELS[getattr(property, _name)] = _property_with(_i)
for _kind in (property, staticmethod, classmethod):
    CONSTRUCTORS[_kind] = _wrapper_ctor


def build_class(tx, args, kwargs):
    """``__build_class__(body, name, *bases)``: the body traced, the template made."""
    if len(args) < 2:
        raise_(TypeError, "__build_class__: not enough arguments")
    body, namev, *bases = args
    if not isinstance(body, MadeFunctionV):
        raise_(TypeError, "__build_class__: func must be a function")
    if not (isinstance(namev, Const) and isinstance(namev.value, str)):
        raise_(TypeError, "__build_class__: name is not a string")
    if kwargs:
        _refuse("class keywords (metaclass=...)")
    real_bases = []
    for b in bases:
        if not (isinstance(b, ObjectV) and isinstance(b.obj, type)):
            _refuse(f"base {b.describe()}")
        if type(b.obj) is not type:
            _refuse(f"metaclass {type(b.obj).__name__}")
        for name in ("__init_subclass__", "__set_name__"):
            guard_class_lookup(tx, b.obj, name)
        init_sub = next(
            (c.__dict__["__init_subclass__"] for c in b.obj.__mro__ if "__init_subclass__" in c.__dict__),
            None,
        )
        if init_sub is not None and init_sub is not object.__dict__["__init_subclass__"]:
            _refuse(f"{b.obj.__qualname__}.__init_subclass__")
        real_bases.append(b.obj)
    namespace, returned = dispatch.run_class_body(tx, body)
    real_ns = {k: real(tx, v) for k, v in namespace.items()}
    for k, obj in real_ns.items():
        if hasattr(type(obj), "__set_name__") and type(obj) is not property:  # property's names it
            _refuse(f"{k} has a __set_name__")
    try:
        template = type(namev.value, tuple(real_bases), real_ns)
    except TypeError as e:  # CPython's own words (a layout conflict, an MRO it cannot order)
        raise_(TypeError, str(e))
    v = MadeClassV(template, namev.value, bases, namespace)
    _register(tx, template, v)
    tx.private.add(id(template))
    STAND_INS[template] = v
    if isinstance(returned, CellV):
        tx.set(returned, "contents", v)
    return v


@model(dataclasses.dataclass)
def dataclass_call(tx, args, kwargs):
    """``dataclasses.dataclass`` on a class made in the trace: applied to the template for
    real (it runs no user code there: it reads the annotations and defaults and execs new
    methods), and again by a rebuild.  ``dataclass(**options)`` is that call, partial."""
    if not args:
        return PartialV(ObjectV(dataclasses.dataclass), (), kwargs)
    opts = {k: x.value for k, x in kwargs.items() if isinstance(x, Const)}
    if (
        not (len(args) == 1 and isinstance(args[0], MadeClassV))
        or len(opts) != len(kwargs)
        or opts.get("slots")
        # dataclass reads its defaults' types: a placeholder's would not be the instance's
        or any(isinstance(x, (NewObjectV, TensorV)) for x in args[0].namespace.values())
    ):
        return dispatch.inline_call(tx, ObjectV(dataclasses.dataclass), args, kwargs)
    cls = args[0]
    try:
        dataclasses.dataclass(cls.obj, **opts)
    except (TypeError, ValueError) as e:  # a mutable default, a field order error: its words
        raise_(type(e), str(e))
    tx.set(cls, "decorators", (*cls.decorators, (dataclasses.dataclass, opts)))
    return cls


model(builtins.__build_class__)(build_class)
