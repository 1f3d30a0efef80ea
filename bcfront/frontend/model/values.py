"""Symbolic values: what the symbolic stack, locals and containers hold.

Each value may carry a `source` (how to fetch the same object at run time
from the inputs); values without one are rebuilt from their parts
(`regions.codegen.Rebuilder`).  Values are plain slotted classes holding data;
the semantics of operations on them live in `frontend/semantics/` (`ops`,
`objects`, `builtins`, `torch_calls`, ...).

Mutable symbolic state (list items, dict entries, object attributes written
during the trace, cell contents, iterator positions) is only ever changed
through `Journal.set`, so that an inlined call that ends in a graph break can
be rolled back exactly (no retracing of the caller).
"""

from __future__ import annotations

from .sources import Ref


class Value:
    __slots__ = ("source",)

    def __init__(self, source=None):
        self.source = source

    def python_type(self) -> type:
        raise NotImplementedError(type(self).__name__)

    def describe(self) -> str:
        return type(self).__name__


class Const(Value):
    """An immutable Python value specialized at capture time (int, str, None, dtype, ...)."""

    __slots__ = ("value",)

    def __init__(self, value, source=None):
        super().__init__(source)
        self.value = value

    def python_type(self):
        return type(self.value)

    def describe(self):
        return f"Const({self.value!r:.40})"

    def __repr__(self):
        return self.describe()


class RuntimeV(Const):
    """A str, bytes, float or int known only at run time (`semantics.runtime_values`): an
    argument that has varied between captures, or a pure builtin's result on such values.  `source`
    fetches or computes it from the call's inputs; its type is guarded, its value is not,
    until the trace reads `value` (a branch, a dict key, a loop over its characters): that
    read guards it equal to `example` there (a lazy guard), through `tx`, and it is a
    constant from then on.  A read once the entry's guards are built would be a check
    the entry never makes: it fails loudly instead."""

    __slots__ = ("example", "tx", "pinned")

    def __init__(self, example, source, tx):
        Value.__init__(self, source)
        self.example = example
        self.tx = tx
        self.pinned = False

    @property  # type: ignore[override]
    def value(self):
        if not self.pinned:
            self.pin()
        return self.example

    def pin(self) -> None:
        """Guard the value equal to the example: the trace now depends on it."""
        from .guard_kinds import GuardKind

        if self.tx.guards.sealed:
            raise AssertionError(f"the value of {self.source} was read after its entry's guards were built")
        if not self.source.guardable:  # the region's call with an effect: no guard makes it
            from ...errors import UnsupportedError
            from ...reasons import BreakReason

            raise UnsupportedError(BreakReason.UNREAD_ITEMS, f"the value of {self.source.readable()}")
        self.pinned = True
        self.tx.guard(GuardKind.CONSTANT_MATCH, self.source, self.example)
        self.tx.guards.discard(GuardKind.TYPE_MATCH, self.source)  # the value's check says it

    def python_type(self):
        return type(self.example)

    def describe(self):
        return f"Runtime({type(self.example).__name__})"

    def __repr__(self):
        return f"RuntimeV({self.source})"


def is_unread(v) -> bool:
    """Whether `v` is a runtime value whose value the trace has not read (unguarded): code
    made from it must fetch or compute it (`RuntimeV.source`), never spell its example."""
    return type(v) is RuntimeV and not v.pinned


class NullV(Value):
    """The NULL CPython pushes below (3.11/3.12) or above (3.13) a callable."""

    __slots__ = ()

    def python_type(self):
        return type(None)

    def __repr__(self):
        return "NULL"


NULL = NullV()


class TensorV(Value):
    """A tensor proxy: the graph node that produces it and its fake-tensor example value."""

    __slots__ = ("node", "fake", "ptype")

    def __init__(self, node, fake, ptype, source=None):
        super().__init__(source)
        self.node = node
        self.fake = fake
        self.ptype = ptype

    def python_type(self):
        return self.ptype

    def describe(self):
        from ...ir.graph import describe_meta

        return f"Tensor({describe_meta(self.fake)})"

    def __repr__(self):
        return self.describe()


class ScalarV(TensorV):
    """A Python number computed in the graph (``t.item()``, ``float(t)`` under the option
    ``capture_scalar_outputs``): `node` yields the real number at run time, `example` is a
    stand-in of the same type for fake runs, `ptype` its type (int, float, bool, complex).
    It is a `TensorV` so every path that would hand a tensor to Python (a branch, a
    rebuild at a break or return) treats it as a graph value; `fake` is a 0-d fake tensor
    only so metadata reads do not crash, its semantics live in `semantics.scalars`."""

    __slots__ = ("example",)

    def __init__(self, node, fake, ptype, example):
        super().__init__(node, fake, ptype)
        self.example = example

    def describe(self):
        return f"Scalar({self.ptype.__name__})"


class SymIntV(ScalarV):
    """A Python int that is a symbolic size: a dynamic size of an input tensor read in the
    trace, an int input made dynamic (`shape_policy`), or arithmetic on them.  `node`
    yields the real int at run time; `example` is the torch SymInt of the capture's
    ShapeEnv, which the fake runs of tensor ops take as a size.  Where Python needs the
    value itself (an index, a loop bound, a branch), the trace specializes it: the int
    its hint holds, under a ShapeEnv guard (`semantics.symbolic`)."""

    __slots__ = ()

    def describe(self):
        return f"SymInt({self.example})"


class SymFloatV(ScalarV):
    """A Python float computed from symbolic sizes (``cur_len ** 0.5``, ``n / 2``,
    ``float(n)``): `node` yields the real float at run time; `example` is the torch
    SymFloat of the capture's ShapeEnv.  A value operand of a tensor op (``x / f``) and
    more arithmetic keep it symbolic, as torch.compile does; anything that needs the value
    itself (a branch, a C function, a key, text) specializes it: the float its hint holds,
    under a ShapeEnv guard (`semantics.symbolic`)."""

    __slots__ = ()

    def describe(self):
        return f"SymFloat({self.example})"


class SliceV(Value):
    """A slice whose bounds include a symbolic int (``x[:, :T]``): a tensor index takes
    it as is; anything else specializes it (`specialized`).  Or a bound that is a tensor
    (``seqs[:, :n]``, n a 0-d tensor; `tensor_bound_slice`): its value decides what the
    subscript gives, so the subscript breaks (`tensor_bound`), where the native step runs
    it on the real slice (the tensor a graph output), and the code after it continues."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step):
        super().__init__(None)
        self.start, self.stop, self.step = start, stop, step

    def python_type(self):
        return slice

    def describe(self):
        return f"slice({self.start.describe()}, {self.stop.describe()}, {self.step.describe()})"


def specialized(v: Value) -> Value:
    """`v` with its symbolic sizes (and floats computed from them) as the constants their
    hints hold (each guarded equal by the ShapeEnv): for the uses that need the value itself."""
    if isinstance(v, SymIntV):
        return Const(int(v.example))
    if isinstance(v, SymFloatV):
        return Const(float(v.example))
    if isinstance(v, SliceV):
        parts = [specialized(p) for p in (v.start, v.stop, v.step)]
        if not all(isinstance(p, Const) for p in parts):
            return v  # a tensor bound (`tensor_bound`)
        return Const(slice(*(p.value for p in parts)))  # type: ignore[attr-defined]
    return v


def specialized_deep(v: Value) -> Value:
    """`specialized` through tuples and lists too (a shape handed to a pure C function):
    a copy when something in it was symbolic, else `v` itself."""
    if isinstance(v, (TupleV, ListV)):
        items = [specialized_deep(x) for x in v.items]
        if all(a is b for a, b in zip(items, v.items)):
            return v
        return TupleV(items, v.cls) if isinstance(v, TupleV) else ListV(items)
    return specialized(v)


def symbolic_slice(parts: list) -> Value | None:
    """A `SliceV` when the bounds are constants and symbolic ints (at least one), else None."""
    if not any(isinstance(p, SymIntV) for p in parts):
        return None
    if not all(isinstance(p, (SymIntV, Const)) for p in parts):
        return None
    return _slice_of(parts)


def _tensor_bound(p: Value) -> bool:
    return isinstance(p, TensorV) and not isinstance(p, SymIntV)


def tensor_bound_slice(parts: list) -> Value | None:
    """A `SliceV` when a bound is a tensor (or a number read from one) and the others are
    constants or symbolic ints, else None."""
    if not any(_tensor_bound(p) for p in parts):
        return None
    if not all(isinstance(p, (TensorV, Const)) for p in parts):
        return None
    return _slice_of(parts)


def tensor_bound(key: Value) -> bool:
    """Whether subscript `key` (or an item of a tuple key) is a slice with a tensor bound."""
    parts = key.items if isinstance(key, TupleV) and key.cls is tuple else [key]
    return any(
        isinstance(p, SliceV) and any(_tensor_bound(b) for b in (p.start, p.stop, p.step)) for p in parts
    )


def _slice_of(parts: list) -> SliceV:
    if len(parts) == 1:  # slice(stop)
        return SliceV(Const(None), parts[0], Const(None))
    start, stop, step = (list(parts) + [Const(None)])[:3]
    return SliceV(start, stop, step)


class ListV(Value):
    """A list.  An instance of a Python subclass of list made in the trace
    (``LogitsProcessorList()``) has its class in `cls` and its ``__dict__`` in `attrs` (a
    DictV of str keys; None for list itself or a subclass without ``__dict__``); its
    items are list's own storage (see `semantics.list_objects`)."""

    __slots__ = ("_items", "mutated", "cls", "attrs", "unread", "calls", "read_length")

    def __init__(self, items, source=None, cls=list, attrs=None):
        super().__init__(source)
        self._items = list(items)
        self.mutated = False
        self.cls = cls
        self.attrs = attrs
        # A list from outside whose items the trace has not read yet (`builder`): a
        # callable that guards its length and wraps its items (ahead of `_items`, which
        # holds what the trace appended meanwhile) on the first read of `items`.
        self.unread = None
        # C calls that change such a list's unread items (`semantics.whole_lists`), in order:
        # ``(items appended before it, fn, args, keywords, made)`` each, `made` the source
        # of the call the region makes first, or None: made after the graph (`codegen`)
        self.calls: tuple = ()
        # the length of an outside list when its items were read (guarded): its first
        # `read_length` items then are those of its item sources, which a write-back of
        # its new contents leaves in place where they stay (`codegen`); None: not known
        self.read_length: int | None = None

    @property
    def items(self) -> list:
        if self.unread is not None:
            self.unread()
        return self._items

    @items.setter
    def items(self, value) -> None:
        if self.unread is not None:
            self.unread()
        self._items = value

    def append_unread(self, tx, *values) -> bool:
        """Append `values` without reading the items where they are unread (through the
        journal, as every write); False where they are read."""
        if self.unread is None:
            return False
        tx.set(self, "_items", [*self._items, *values])
        return True

    def python_type(self):
        return self.cls


class TupleV(Value):
    """A tuple, namedtuple (cls), torch.Size or torch.return_types structseq."""

    __slots__ = ("items", "cls")

    def __init__(self, items, cls=tuple, source=None):
        super().__init__(source)
        self.items = tuple(items)
        self.cls = cls

    def python_type(self):
        return self.cls


class DictV(Value):
    """A dict; `entries` maps a hashable key (see `semantics.ops.hkey`) to (key value, value).
    An instance of a Python subclass of dict (`cls`) also has `attrs`: its ``__dict__``, a
    DictV of str keys (None for dict, OrderedDict, or a subclass without ``__dict__``)."""

    __slots__ = ("_entries", "cls", "mutated", "attrs", "unread", "known", "writes")

    def __init__(self, entries, cls=dict, source=None, attrs=None):
        super().__init__(source)
        # A big dict from outside read key by key (`unread_dicts`): a callable that guards
        # its keys and wraps its items on the first read of `entries`; till then `known`
        # holds the keys read (hashable key -> entry, or `unread_dicts.ABSENT`) and
        # `writes` the trace's writes in order ((real key, key value, value or DELETED), ...).
        self.unread = None
        self.known: dict = {}
        self.writes: tuple = ()
        self._entries = dict(entries)
        self.cls = cls
        self.mutated = False
        self.attrs = attrs

    @property
    def entries(self) -> dict:
        if self.unread is not None:
            self.unread()
        return self._entries

    @entries.setter
    def entries(self, value) -> None:
        if self.unread is not None:
            self.unread()
        self._entries = value

    def python_type(self):
        return self.cls


class ObjectDictV(DictV):
    """``o.__dict__`` of an object made in the trace (`owner`): its attributes as a dict.
    In Python the two are one store; here every write of either side (journal rollbacks
    included) is mirrored into the other, so neither goes stale."""

    __slots__ = ("owner",)

    def __init__(self, entries, owner):
        super().__init__(entries)
        self.owner = owner

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name == "entries" and hasattr(self, "owner"):
            attrs = {}
            for key, item in value.values():
                if not (isinstance(key, Const) and type(key.value) is str):
                    from ...errors import UnsupportedError
                    from ...reasons import BreakReason

                    raise UnsupportedError(
                        BreakReason.UNSUPPORTED_ATTRIBUTE, "a key that is not a str in an object's __dict__"
                    )
                attrs[key.value] = item
            object.__setattr__(self.owner, "attrs", attrs)


class SetV(Value):
    __slots__ = ("entries", "frozen", "mutated", "history")

    def __init__(self, entries, frozen=False, source=None, history=None):
        super().__init__(source)
        self.entries = dict(entries)  # hashable key -> key value
        self.frozen = frozen
        self.mutated = False
        self.history = history  # what made it, for its iteration order (`set_order`)

    def python_type(self):
        return frozenset if self.frozen else set


class DictViewV(Value):
    __slots__ = ("dict", "kind")  # kind: keys / values / items

    def __init__(self, d, kind):
        super().__init__(None)
        self.dict = d
        self.kind = kind

    def python_type(self):
        return type(getattr({}, self.kind)())


class ObjectV(Value):
    """An object that exists outside the trace (argument, global, attribute of one).

    Reads go to the real object (guarded); writes go to `overlay` (attribute
    name -> value, or DELETED) and are replayed after the region.
    """

    __slots__ = ("obj", "overlay", "order")

    def __init__(self, obj, source=None):
        super().__init__(source)
        self.obj = obj
        self.overlay = {}
        self.order = 0

    def python_type(self):
        return type(self.obj)

    def describe(self):
        return f"Object({type(self.obj).__name__})"

    def __repr__(self):
        return f"ObjectV({self.obj!r:.60})"


DELETED = Ref(object(), "<deleted>")


class NewObjectV(Value):
    """An instance of a Python class created during the trace; `attrs` is its __dict__.
    `dict_view` is the `ObjectDictV` handed out for ``o.__dict__``, once it was read: from
    then on every write of `attrs` (journal rollbacks included) is mirrored into it."""

    __slots__ = ("attrs", "cls", "dict_view")

    def __init__(self, cls, attrs=None):
        super().__init__(None)
        self.dict_view = None
        self.cls = cls
        self.attrs = dict(attrs or {})

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name == "attrs" and self.dict_view is not None:
            object.__setattr__(self.dict_view, "entries", {k: (Const(k), x) for k, x in value.items()})

    def python_type(self):
        return self.cls


class ExceptionV(Value):
    """An exception instance created during the trace; `tb` holds the traceback entries
    ((filename, name, positions), outermost first) of the frames it was raised through."""

    __slots__ = ("cls", "args", "attrs", "tb", "ctor_args", "outer_context")

    def __init__(self, cls, args=(), attrs=None):
        super().__init__(None)
        self.cls = cls
        self.args = tuple(args)
        self.attrs = dict(attrs or {})
        self.tb = ()
        # the arguments its class is called with where they differ from `args` (an OSError
        # keeps only errno and strerror as args; its __init__ takes the filename too)
        self.ctor_args: tuple | None = None
        # raised where the function handled no exception: its __context__ is the one the
        # caller handles at the call (None in the trace, which cannot know it)
        self.outer_context = False

    def python_type(self):
        return self.cls

    def __repr__(self):
        return f"ExceptionV({self.cls.__name__}, {self.args})"


class CellV(Value):
    """A closure cell; `real` is the cell object when it exists outside the trace."""

    __slots__ = ("contents", "real", "loaded", "name")

    def __init__(self, contents=None, real=None, name=""):
        super().__init__(None)
        self.contents = contents  # None: empty (or not yet loaded when real)
        self.real = real
        self.loaded = real is None
        self.name = name

    def python_type(self):
        import types

        return types.CellType


class MadeFunctionV(Value):
    """A function created by MAKE_FUNCTION during the trace (closures, lambdas, comprehensions)."""

    # specials, attrs: what the trace set on it (`made_function_attrs`)
    __slots__ = (
        *("code", "globals", "name", "qualname", "defaults", "kwdefaults", "closure", "annotations"),
        *("specials", "attrs"),
    )

    def __init__(
        self, code, fn_globals, qualname, defaults=None, kwdefaults=None, closure=None, annotations=None
    ):
        super().__init__(None)
        self.code = code
        self.globals = fn_globals
        self.name = code.co_name
        self.qualname = qualname
        self.defaults = defaults  # tuple of values or None
        self.kwdefaults = kwdefaults  # dict name -> value or None
        self.closure = closure  # tuple of CellV or None
        self.annotations = annotations
        self.specials = {}  # __doc__, __module__, __type_params__ set in the trace: name -> value
        self.attrs = None  # its __dict__ once used (a DictV)

    def python_type(self):
        import types

        return types.FunctionType


class MethodV(Value):
    """A bound method: calling it calls `func` with `obj` prepended."""

    __slots__ = ("func", "obj")

    def __init__(self, func, obj, source=None):
        super().__init__(source)
        self.func = func
        self.obj = obj

    def python_type(self):
        import types

        if isinstance(self.func, ObjectV) and not isinstance(self.func.obj, types.FunctionType):
            return types.BuiltinMethodType
        return types.MethodType


class PartialV(Value):
    __slots__ = ("func", "args", "kwargs")

    def __init__(self, func, args, kwargs, source=None):
        super().__init__(source)
        self.func = func
        self.args = tuple(args)
        self.kwargs = dict(kwargs)

    def python_type(self):
        import functools

        return functools.partial


class SuperV(Value):
    __slots__ = ("cls", "obj")

    def __init__(self, cls, obj):
        super().__init__(None)
        self.cls = cls
        self.obj = obj

    def python_type(self):
        return super


class StateCMV(Value):
    """A torch global-state context manager (no_grad, enable_grad, set_grad_enabled, autocast,
    nullcontext); `kind` selects its semantics in torch_calls, `args` its parameters."""

    __slots__ = ("kind", "args", "cls", "saved")

    def __init__(self, kind, args, cls):
        super().__init__(None)
        self.kind = kind
        self.args = args
        self.cls = cls
        self.saved = []  # state to restore on __exit__ (a stack)

    def python_type(self):
        return self.cls


# -- iterators ----------------------------------------------------------------------


class IterV(Value):
    """Base of symbolic iterators; `semantics.iteration.next_value` advances them."""

    __slots__ = ()


class SeqIterV(IterV):
    """Iterator over a list/tuple value or a Python sequence of values; sees list mutations."""

    __slots__ = ("seq", "index")

    def __init__(self, seq, index=0):
        super().__init__(None)
        self.seq = seq  # ListV / TupleV / tuple of values
        self.index = index

    def python_type(self):
        return type(iter(list() if isinstance(self.seq, ListV) else tuple()))


class RangeIterV(IterV):
    __slots__ = ("range", "index")

    def __init__(self, r, index=0):
        super().__init__(None)
        self.range = r
        self.index = index

    def python_type(self):
        return type(iter(range(0)))


class HashIterV(IterV):
    """Iterator over a dict (or one of its views) or a set, made inside the trace.

    It keeps the key order it started with (`keys`, hash keys) and reads entries from the
    live container, so a value stored meanwhile is seen, and -- as in CPython -- a size
    change makes the next step raise.  `container` is None once exhausted."""

    __slots__ = ("container", "kind", "keys", "index")

    def __init__(self, container, kind, keys, index=0):
        super().__init__(None)
        self.container = container  # DictV / SetV, None when exhausted
        self.kind = kind  # keys / values / items / set
        self.keys = keys  # tuple of hash keys, in iteration order
        self.index = index

    def python_type(self):
        return type(iter(set())) if self.kind == "set" else type(iter(getattr({}, self.kind)()))


class ZipIterV(IterV):
    __slots__ = ("iters", "strict")

    def __init__(self, iters, strict=False):
        super().__init__(None)
        self.iters = tuple(iters)
        self.strict = strict

    def python_type(self):
        return zip


class MapIterV(IterV):
    __slots__ = ("fn", "iters")

    def __init__(self, fn, iters):
        super().__init__(None)
        self.fn = fn
        self.iters = tuple(iters)

    def python_type(self):
        return map


class FilterIterV(IterV):
    __slots__ = ("fn", "it")

    def __init__(self, fn, it):
        super().__init__(None)
        self.fn = fn
        self.it = it

    def python_type(self):
        return filter


class EnumerateIterV(IterV):
    __slots__ = ("it", "count")

    def __init__(self, it, count=0):
        super().__init__(None)
        self.it = it
        self.count = count

    def python_type(self):
        return enumerate


class GeneratorV(IterV):
    """A generator created during the trace: a suspended symbolic frame."""

    __slots__ = ("frame", "done", "started", "steps")

    def __init__(self, frame):
        super().__init__(None)
        self.frame = frame
        self.done = False
        self.started = False
        self.steps = 0  # resumptions so far (rebuild_gen replays them)

    def python_type(self):
        import types

        return types.GeneratorType


def const_value(v: Value):
    """(True, python value) when `v` is fully constant, else (False, None)."""
    if isinstance(v, Const):
        return True, v.value
    if isinstance(v, TupleV) and v.cls is tuple:
        out = []
        for item in v.items:
            ok, x = const_value(item)
            if not ok:
                return False, None
            out.append(x)
        return True, tuple(out)
    return False, None


def is_const(v: Value) -> bool:
    return isinstance(v, Const)
