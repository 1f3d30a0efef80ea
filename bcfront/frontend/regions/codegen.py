"""Generated source: the guard function and the region function of a cache entry.

Both take the captured function's own parameters.  The region function

1. fetches the graph inputs from their sources (``L_x = x``,
   ``L_self_fc1_weight = self._modules['fc1']._parameters['weight']``);
2. runs the graph through the backend: straight-line torch calls (eager) or
   one call of a compiled callable (fx/triton);
3. rebuilds every value the outside world will see (the return value, the
   new contents of mutated objects) into temporaries *before* any write, so
   a replayed write can never change what another rebuilt value reads;
4. replays the writes in first-write order and returns.

`Rebuilder` turns symbolic values into Python expressions: constants become
literals or reserved names, values with a source become the source
expression, values created during the trace are rebuilt from their parts
(memoized, so a list referenced twice is built once and identity holds).
"""

from __future__ import annotations

import sys
import types

from ...errors import UnsupportedError
from ...ir.graph import is_literal
from ...reasons import BreakReason
from ..model.hash_iters import HashIterator
from ..model.mapping_proxies import ProxyDictV
from ..model.namespace import Namespace
from ..model.values import (
    NULL,
    CellV,
    Const,
    DictV,
    DictViewV,
    EnumerateIterV,
    ExceptionV,
    FilterIterV,
    GeneratorV,
    HashIterV,
    IterV,
    ListV,
    MadeFunctionV,
    MapIterV,
    MethodV,
    NewObjectV,
    ObjectDictV,
    ObjectV,
    PartialV,
    RangeIterV,
    SeqIterV,
    SetV,
    SliceV,
    StateCMV,
    TensorV,
    TupleV,
    Value,
    ZipIterV,
    is_unread,
)
from ..semantics import set_order
from ..semantics.class_build import stand_in_value
from ..semantics.classes import dict_base, fill_dict_object, new_dict_object, new_list_object
from .rebuild_gen import rebuild_generator
from .tracebacks import attach as attach_traceback
from .tracebacks import cached_frames
from .write_replay import HEAP_TYPE, WriteReplay, changed


def _make_exception(cls, args, attrs, tb=(), ctor=None):
    ctor = args if ctor is None else ctor  # what the class is called with, if not its args
    if cls.__module__ != "builtins":
        exc = _exception_of_class(cls, ctor)
    else:  # __new__ and the C fields' __init__ (StopIteration.value) in one call
        try:
            exc = cls(*ctor)
        except TypeError:  # arguments its __init__ does not take
            exc = _exception_of_class(cls, ctor)
    exc.args = args
    if tb:
        attach_traceback(exc, tb)  # before the chaining attrs (the plain attach raises)
    for k, v in attrs.items():
        setattr(exc, k, v)
    return exc


def _exception_of_class(cls, args):
    exc = cls.__new__(cls, *args)
    # the C fields a built-in base sets from the arguments (StopIteration.value, OSError.errno)
    # come from its __init__; a user class's own __init__ ran in the trace (its attrs follow)
    for base in cls.__mro__:
        if base.__module__ == "builtins":
            break
    try:
        base.__init__(exc, *args)
    except TypeError:  # arguments the base does not take: only `args` is known then
        pass
    return exc


# built-in exception classes whose __init__ sets `args` to other than what they were
# called with (an OSError keeps errno and strerror): their `args` are stored after
_ARGS_FROM_INIT = (OSError,)
# a new exception's chaining attributes: the trace's constants equal to them need no store
_FRESH_EXCEPTION = {"__context__": None, "__cause__": None, "__suppress_context__": False}


def _is_const(v, value) -> bool:
    return isinstance(v, Const) and not is_unread(v) and v.value is value


def _literal_value(v: Value) -> bool:
    """A constant spelled as a literal (a runtime value the trace never read is not one)."""
    return isinstance(v, Const) and not is_unread(v) and is_literal(v.value)


def _builtin_construction(cls, base) -> bool:
    """Calling `cls` runs only `base`'s ``__new__`` and ``__init__``: no class between them
    in the MRO defines either, nor does a metaclass define ``__call__`` (so ``cls(*args)``
    is ``_exception_of_class``'s two steps)."""
    if type(cls) is not type:
        return False
    for k in cls.__mro__:
        if k is base:
            return True
        if "__new__" in k.__dict__ or "__init__" in k.__dict__:
            return False
    return False


def _bind(func, obj):
    # Always pass the owner type: method_descriptor.__get__(obj) alone crashes CPython 3.11
    # for methods of some C types (re.Pattern.sub).
    return func.__get__(obj, type(obj))


def _make_function(code, fn_globals, qualname, defaults, kwdefaults, closure, annotations=None):
    """A function the trace made (MAKE_FUNCTION), made again; its `annotations` as
    MAKE_FUNCTION takes them (names and values in one tuple) or the dict read from them."""
    fn = types.FunctionType(code, fn_globals, code.co_name, defaults, closure)
    fn.__qualname__ = qualname
    if kwdefaults:
        fn.__kwdefaults__ = kwdefaults
    if annotations is not None:
        if type(annotations) is tuple:
            annotations = dict(zip(annotations[::2], annotations[1::2]))
        fn.__annotations__ = annotations
    return fn


class _Cycle(UnsupportedError):
    """A container reached again while its items are being rendered (caught by that
    container's rendering; one escaping is an honest "cannot rebuild")."""

    def __init__(self, value):
        super().__init__(BreakReason.UNRECONSTRUCTABLE, f"{value.describe()} contains itself")
        self.value = value


class Rebuilder(WriteReplay):
    """Emits statements that rebuild symbolic values; `expr(v)` returns an expression."""

    def __init__(
        self,
        ns: Namespace,
        tensor_name,
        lines: list[str],
        indent: str = "    ",
        globals_values: dict | None = None,
    ):
        self.ns = ns
        self.tensor_name = tensor_name  # TensorV -> variable name
        self.lines = lines
        self.indent = indent
        self.memo: dict[int, str] = {}
        self.open: set[int] = set()  # containers whose items are being rendered
        self.defer = False  # make lists/dicts empty, fill them later (O53)
        self.pending: list = []
        self.globals_values = globals_values or {}
        # list-iterator positions, set after the replayed writes: __setstate__ clamps the
        # index to the list's length at that moment, which must be its final length
        self.positions: list[str] = []
        self.raising = None  # the exception the region raises at its end (`_outer_context`)

    def emit(self, line: str) -> None:
        self.lines.append(self.indent + line)

    def temp(self, expr: str, v: Value, hint: str = "v") -> str:
        name = self.ns.fresh(hint)
        self.emit(f"{name} = {expr}")
        self.memo[id(v)] = name
        return name

    def _closed(self, v: Value, render) -> str:
        """`render()` the items of `v` while it is open: an `expr(v)` reached from them (a
        cycle) raises `_Cycle` before its own try, so this outer rendering catches it."""
        self.open.add(id(v))
        try:
            return render()
        finally:
            self.open.discard(id(v))

    def _fillable(self, v: Value, hint: str, whole, empty: str, fill: str, render) -> str:
        """A mutable container as one expression `whole(items)`, or -- when it contains
        itself (O53) -- made `empty` under its name first and filled after, so its items
        can name it."""
        if self.defer:  # filled once the tuple holding it exists
            name = self.temp(empty, v, hint)
            self.pending.append(lambda: self.emit(fill.format(name, render())))
            return name
        if id(v) in self.open:
            raise _Cycle(v)
        try:
            items = self._closed(v, render)
        except _Cycle as c:
            if c.value is not v:
                raise
            name = self.temp(empty, v, hint)
            self.emit(fill.format(name, render()))
            return name
        return self.temp(whole(items), v, hint)

    def _tuple(self, v: TupleV, inner: str) -> str:
        ns = self.ns
        tup = f"({inner},)" if len(v.items) == 1 else f"({inner})"
        if v.cls is tuple:
            if v.items and all(_literal_value(x) for x in v.items):
                # a literal would be folded into one constant shared by every equal tuple of
                # the code object; with a local in it, it is built at run time, each call's
                # its own (O34)
                # (the items are literals: spelled again, nothing emitted)
                rest = "".join(f", {self.expr(x)}" for x in v.items[1:])
                tup = f"(({ns.fresh('item')} := {self.expr(v.items[0])}){rest},)"
            return self.temp(tup, v, "tup")  # built once: identity holds (`x, x`)
        if v.cls.__flags__ & HEAP_TYPE:
            # a Python subclass (a namedtuple): the object the trace made, its items as they
            # are -- calling the class would run its __new__ (a Python frame; a subclass's
            # own would transform the items twice) and a metaclass's __call__ again
            new = ns.const(tuple.__new__, "tuple_new")
            return self.temp(f"{new}({ns.const(v.cls)}, {tup})", v, "tup")
        if hasattr(v.cls, "_fields"):
            return self.temp(f"{ns.const(v.cls)}({inner})", v, "tup")
        return self.temp(f"{ns.const(v.cls)}({tup})", v, "tup")

    def expr(self, v: Value) -> str:
        hit = self.memo.get(id(v))
        if hit is not None:
            return hit
        ns = self.ns
        if is_unread(v):  # text known at run time: fetched or computed (read first: rebased)
            return ns.spell(v.source)
        if isinstance(v, Const):
            return repr(v.value) if is_literal(v.value) else ns.const(v.value)
        if isinstance(v, TensorV):
            return self.tensor_name(v)
        if v.source is not None and not isinstance(v, (TupleV,)) and not changed(v):
            return v.source.expr(ns)
        if isinstance(v, ObjectV):
            if v.source is not None:
                return v.source.expr(ns)
            rebuild = getattr(v, "rebuild", None)  # an object made in the trace (a work handle)
            if rebuild is None:
                made = stand_in_value(v.obj)  # a class statement's template, or a method of it
                return ns.const(v.obj) if made is None else self.expr(made)
            return rebuild(self)
        if isinstance(v, ListV):
            if v.source is not None:
                return v.source.expr(ns)
            if v.cls is not list:
                return self._list_object(v)
            return self._fillable(
                v,
                "list",
                lambda items: f"[{items}]",
                "[]",
                "{}.extend([{}])",
                lambda: ", ".join(self.expr(x) for x in v.items),
            )
        if isinstance(v, TupleV):
            if v.source is not None:
                # a tuple cannot change, and writes to its items land in those same objects
                # (replayed effects, tensor write-back): the original is still right, and
                # returning it keeps its identity (O13)
                return v.source.expr(ns)
            render = lambda: ", ".join(self.expr(x) for x in v.items)  # noqa: E731
            if id(v) in self.open:
                raise _Cycle(v)
            try:
                return self._tuple(v, self._closed(v, render))
            except _Cycle as c:
                if c.value is not v:
                    raise
            # it holds a list or dict that holds it: those are made empty first, the tuple
            # from them, then they are filled (O53)
            self.defer, pending, self.pending = True, self.pending, []
            try:
                inner = render()
            finally:
                self.defer, fills, self.pending = False, self.pending, pending
            name = self._tuple(v, inner)
            for fill in fills:
                fill()
            return name
        if isinstance(v, ObjectDictV):  # o.__dict__ of an object made in the trace: that dict
            return f"{self.expr(v.owner)}.__dict__"
        if isinstance(v, ProxyDictV) and v.source is None:  # a view of that very dict
            return self.temp(f"{ns.const(types.MappingProxyType)}({self.expr(v.mapping)})", v, "proxy")
        if isinstance(v, DictV):
            if v.source is not None:
                return v.source.expr(ns)
            if dict_base(v.cls) is not None:
                return self._dict_object(v)
            if hasattr(v, "rebuild"):  # a defaultdict: its factory first (`c_instances`)
                return v.rebuild(self)
            cls = "" if v.cls is dict else ns.const(v.cls)
            return self._fillable(
                v,
                "dict",
                lambda items: f"{cls}({{{items}}})" if cls else f"{{{items}}}",
                f"{cls}()" if cls else "{}",
                "{}.update({{{}}})",
                lambda: ", ".join(f"{self.expr(k)}: {self.expr(x)}" for k, x in v.entries.values()),
            )
        if isinstance(v, SetV):
            if v.source is not None:
                return v.source.expr(ns)
            ordered = set_order.ordered_entries(v)
            if v.history is not None and ordered is not v.entries and set_order.plain_history(v.history):
                # made as the trace made it: the native set's hash table, so its order
                text = f"{ns.const(set_order.replay, 'replay_set')}({ns.const(v.history, 'set_history')})"
                return self.temp(text, v, "set")
            items = ", ".join(self.expr(x) for x in ordered.values())
            text = f"{{{items}}}" if items else f"{ns.helper('set')}()"
            if v.frozen:
                text = f"{ns.helper('frozenset')}({text})"
            return self.temp(text, v, "set")
        if isinstance(v, NewObjectV):
            # made as ``object.__new__`` makes it, then set as it was: nothing else is read
            # (a ``__dict__`` read would call a class's ``__getattr__`` where it has none)
            name = self.temp(f"{ns.const(object.__new__, 'object_new')}({self.class_expr(v.cls)})", v, "obj")
            for k, x in v.attrs.items():
                self.emit(f"{ns.const(object.__setattr__, 'object_setattr')}({name}, {k!r}, {self.expr(x)})")
            return name
        if isinstance(v, ExceptionV):
            return self._exception(v)
        if isinstance(v, CellV):
            if v.real is not None:
                return ns.const(v.real)
            # made empty first, filled after: its contents may be a closure holding it
            name = self.temp(f"{ns.const(types.CellType, 'CellType')}()", v, "cell")
            if v.contents is not None:
                self.emit(f"{name}.cell_contents = {self.expr(v.contents)}")
            return name
        if isinstance(v, MadeFunctionV):
            defaults = "None" if not v.defaults else "(" + ", ".join(self.expr(d) for d in v.defaults) + ",)"
            kwd = (
                "None"
                if not v.kwdefaults
                else "{" + ", ".join(f"{k!r}: {self.expr(x)}" for k, x in v.kwdefaults.items()) + "}"
            )
            closure = "None" if not v.closure else "(" + ", ".join(self.expr(c) for c in v.closure) + ",)"
            ann = "" if v.annotations is None else f", {self.expr(v.annotations)}"
            name = self.temp(
                f"{ns.const(_make_function)}({ns.const(v.code)}, {ns.const(v.globals, 'globals')}, "
                f"{v.qualname!r}, {defaults}, {kwd}, {closure}{ann})",
                v,
                "fn",
            )
            # what the trace set on it (`made_function_attrs`): after it exists, as its
            # attributes may hold the function itself
            for attr, x in (*v.specials.items(), ("__dict__", v.attrs)):
                if x is not None:
                    self.emit(f"{name}.{attr} = {self.expr(x)}")
            return name
        if isinstance(v, MethodV):
            attr = getattr(getattr(v.func, "obj", None), "rebuild_attr", None)
            if attr is not None:  # a torch context manager's __enter__/__exit__
                return f"{self.expr(v.obj)}.{attr}"
            return f"{ns.const(_bind)}({self.expr(v.func)}, {self.expr(v.obj)})"
        if isinstance(v, IterV):
            if v.source is not None:
                return v.source.expr(ns)  # an outside iterator; its position is replayed
            return self._iterator(v)
        if isinstance(v, StateCMV):
            from ..semantics.torch_state import rebuild_state_cm

            return rebuild_state_cm(self, v)
        if isinstance(v, PartialV):
            import functools

            args = ", ".join(
                [self.expr(v.func)]
                + [self.expr(a) for a in v.args]
                + [f"**{{{k!r}: {self.expr(x)}}}" for k, x in v.kwargs.items()]
            )
            return self.temp(f"{ns.const(functools.partial)}({args})", v, "partial")
        if isinstance(v, DictViewV):
            return f"{self.expr(v.dict)}.{v.kind}()"
        if isinstance(v, SliceV):  # bounds with a symbolic size: graph outputs, as ints
            parts = ", ".join(self.expr(p) for p in (v.start, v.stop, v.step))
            return f"{ns.helper('slice')}({parts})"
        if v is NULL:
            raise UnsupportedError(BreakReason.UNRECONSTRUCTABLE, "NULL has no Python value")
        rebuild = getattr(v, "rebuild", None)  # a value that rebuilds itself (a ContextVar token)
        if rebuild is not None:
            return rebuild(self)
        raise UnsupportedError(
            BreakReason.UNRECONSTRUCTABLE, f"{v.describe()} cannot be rebuilt outside the trace"
        )

    def _exception(self, v: ExceptionV) -> str:
        """An exception the trace made: its steps spelled inline where its class is a real
        one with a built-in base -- what `_make_exception` (the reference, used otherwise)
        does for it, without the call, the base's lookup in the MRO, the loop over the
        attributes and the lookup of the traceback's frames (`tracebacks.cached_frames`,
        resolved here): a cached region that raises pays this on every call."""
        ns = self.ns
        args = "(" + "".join(f"{self.expr(a)}, " for a in v.args) + ")"
        ctor = None if v.ctor_args is None else "(" + "".join(f"{self.expr(a)}, " for a in v.ctor_args) + ")"
        attrs = {k: self.expr(x) for k, x in v.attrs.items()}
        cls = v.cls
        base = next((b for b in cls.__mro__ if b.__module__ == "builtins"), None)
        frames = cached_frames(v.tb) if v.tb else ()
        if stand_in_value(cls) is not None or base is None or frames is None:
            spelled = ", ".join(f"{k!r}: {x}" for k, x in attrs.items())
            tb = ns.const(v.tb) if v.tb else "()"
            ctor_ = f", {ctor}" if ctor else ""
            made = self.temp(
                f"{ns.const(_make_exception)}({self.class_expr(cls)}, {args}, {{{spelled}}}, {tb}{ctor_})",
                v,
                "exc",
            )
            self._outer_context(v, made)
            return made
        c = ns.const(cls)
        if v.args:  # one tuple, as in `_make_exception`
            tuple_, args = args, ns.fresh("args")
            self.emit(f"{args} = {tuple_}")
        call_args = args
        if ctor is not None:
            call_args = ns.fresh("ctor_args")
            self.emit(f"{call_args} = {ctor}")
        name = ns.fresh("exc")
        if cls is base or _builtin_construction(cls, base):  # __new__ and the C fields' __init__
            self.emit("try:")
            self.emit(f"    {name} = {c}(*{call_args})")
            self.emit("except TypeError:")  # arguments its __init__ does not take
            self.emit(f"    {name} = {ns.const(_exception_of_class)}({c}, {call_args})")
        else:
            self.emit(f"{name} = {c}.__new__({c}, *{call_args})")
            self.emit("try:")  # the C fields a built-in base sets from the arguments
            self.emit(f"    {ns.const(base)}.__init__({name}, *{call_args})")
            self.emit("except TypeError:")
            self.emit("    pass")
        self.memo[id(v)] = name
        if ctor is not None or issubclass(base, _ARGS_FROM_INIT):  # else __new__ made them `args`
            self.emit(f"{name}.args = {args}")
        tb_type = ns.const(types.TracebackType, "TracebackType")
        for frame, lasti, lineno in frames:  # innermost first: each goes over the ones before
            f = ns.const(frame, "frame")
            self.emit(f"{name}.__traceback__ = {tb_type}({name}.__traceback__, {f}, {lasti}, {lineno})")
        setattr_ = ns.helper("setattr")
        for k, x in attrs.items():
            if k in _FRESH_EXCEPTION and _is_const(v.attrs[k], _FRESH_EXCEPTION[k]):
                continue  # what a new exception has
            self.emit(f"{name}.{k} = {x}" if k.isidentifier() else f"{setattr_}({name}, {k!r}, {x})")
        self._outer_context(v, name)
        return name

    def _outer_context(self, v: ExceptionV, name: str) -> None:
        """An exception the function raised outside its own handlers has as ``__context__``
        the exception the caller is handling, if any (CPython's implicit chaining): known
        only at run time.  The exception the region raises gets it from the raise itself."""
        if not v.outer_context or v is self.raising:
            return
        handled = self.ns.fresh("handled")
        self.emit(f"if ({handled} := {self.ns.const(sys.exception, 'handled_exception')}()) is not None:")
        self.emit(f"    {name}.__context__ = {handled}")

    def class_expr(self, cls) -> str:
        """A class of a value made in the trace: a class statement's is made again."""
        made = stand_in_value(cls)
        return self.ns.const(cls) if made is None else self.expr(made)

    def _dict_object(self, v: DictV) -> str:
        """An instance of a Python dict subclass made in the trace: made empty without its
        ``__init__``, then its items stored through the builtin base and its ``__dict__``
        filled (its DictV is that very ``__dict__``)."""
        ns = self.ns
        name = self.temp(f"{ns.const(new_dict_object)}({ns.const(v.cls)})", v, "obj")
        if v.attrs is not None:
            self.memo[id(v.attrs)] = f"{name}.__dict__"

        def fill():
            items = ", ".join(f"({self.expr(k)}, {self.expr(x)})" for k, x in v.entries.values())
            self.emit(f"{ns.const(fill_dict_object)}({name}, [{items}])")
            if v.attrs is not None and v.attrs.entries:
                attrs = ", ".join(f"{self.expr(k)}: {self.expr(x)}" for k, x in v.attrs.entries.values())
                self.emit(f"{name}.__dict__.update({{{attrs}}})")

        if self.defer:
            self.pending.append(fill)
        else:
            fill()
        return name

    def _list_object(self, v: ListV) -> str:
        """An instance of a Python list subclass made in the trace: made without its
        ``__init__``, its items put in list's storage and its ``__dict__`` filled, in one
        call (an instance that holds itself is not rebuilt: `_Cycle` breaks instead)."""
        ns = self.ns

        def render() -> str:
            items = ", ".join(self.expr(x) for x in v.items)
            attrs = ""
            if v.attrs is not None:
                attrs = ", ".join(f"{self.expr(k)}: {self.expr(x)}" for k, x in v.attrs.entries.values())
            return f"{ns.const(new_list_object)}({ns.const(v.cls)}, [{items}], {{{attrs}}})"

        name = self.temp(self._closed(v, render), v, "obj")
        if v.attrs is not None:
            self.memo[id(v.attrs)] = f"{name}.__dict__"
        return name

    def _iterator(self, v) -> str:
        ns = self.ns
        if isinstance(v, GeneratorV):
            return rebuild_generator(self, v)
        if isinstance(v, SeqIterV):
            if isinstance(v.seq, ListV):
                name = self.temp(f"{ns.helper('iter')}({self.expr(v.seq)})", v, "it")
                self.positions.append(f"{name}.__setstate__({v.index})")
                return name
            items = v.seq.items if isinstance(v.seq, TupleV) else v.seq
            rest = ", ".join(self.expr(x) for x in items[v.index :])
            return self.temp(f"{ns.helper('iter')}(({rest}{',' if rest else ''}))", v, "it")
        if isinstance(v, HashIterV):
            return self._hash_iterator(v)
        if isinstance(v, RangeIterV):
            return self.temp(f"{ns.helper('iter')}({ns.const(v.range[v.index :], 'range')})", v, "it")
        if isinstance(v, EnumerateIterV):
            return self.temp(f"{ns.helper('enumerate')}({self.expr(v.it)}, {v.count})", v, "it")
        if isinstance(v, ZipIterV):
            strict = ", strict=True" if v.strict else ""
            return self.temp(
                f"{ns.helper('zip')}({', '.join(self.expr(i) for i in v.iters)}{strict})", v, "it"
            )
        if isinstance(v, MapIterV):
            its = ", ".join(self.expr(i) for i in v.iters)
            return self.temp(f"{ns.helper('map')}({self.expr(v.fn)}, {its})", v, "it")
        if isinstance(v, FilterIterV):
            return self.temp(f"{ns.helper('filter')}({self.expr(v.fn)}, {self.expr(v.it)})", v, "it")
        rebuild = getattr(v, "rebuild", None)  # an iterator that rebuilds itself (`pure_c`)
        if rebuild is not None:
            return rebuild(self)
        raise UnsupportedError(
            BreakReason.UNRECONSTRUCTABLE, f"{v.describe()} cannot be rebuilt outside the trace"
        )

    def _hash_iterator(self, v: HashIterV) -> str:
        """A dict/set iterator at the same step, as a `HashIterator` (a real iterator that
        shows its container, so the continuation can step it in its trace).  Made before
        the replayed writes, so only over a container they leave alone (else the iterator
        would see them change)."""
        ns = self.ns
        c = v.container
        if c is None:
            return self.temp(f"{ns.helper('iter')}(())", v, "it")
        if tuple(c.entries) != v.keys or (c.source is not None and changed(c)):
            raise UnsupportedError(
                BreakReason.UNRECONSTRUCTABLE, "an iterator over a dict or set changed meanwhile"
            )
        return self.temp(f"{ns.const(HashIterator)}({self.expr(c)}, {v.kind!r}, {v.index})", v, "it")

    # -- side effects ----------------------------------------------------------------------
    def pinned(self, text: str) -> str:
        """`text` read now, before any replayed write: a temporary unless it is a bare name."""
        if text.isidentifier():
            return text
        tmp = self.ns.fresh("pin")
        self.emit(f"{tmp} = {text}")
        return tmp

    def pinned_value(self, v: Value) -> str:
        text = self.expr(v)
        return text if isinstance(v, Const) else self.pinned(text)

    def expr_source(self, v: ObjectV) -> str:
        return v.source.expr(self.ns) if v.source is not None else self.ns.const(v.obj)


def function_source(name: str, params: list[str], body: list[str]) -> str:
    head = f"def {name}({', '.join(params)}):"
    return "\n".join([head] + (body or ["    pass"])) + "\n"


class GeneratedSource:
    """The loader of generated code, for `linecache.lazycache`: a traceback through a guard
    or region shows its source, read when the traceback asks.  Capturing never writes
    ``linecache.cache``: traced code may have read its keys (``traceback.extract_tb``), and a
    key added between the trace and the first guard check would fail that check."""

    __slots__ = ("source",)

    def __init__(self, source: str):
        self.source = source

    def get_source(self, name: str) -> str:
        return self.source


def compile_function(source: str, ns: Namespace, name: str, filename: str):
    """Exec generated source in the namespace's globals and return the function.  `filename`
    must not be ``<...>``-shaped (linecache reads no source for those)."""
    return DeferredFunction(source, ns, name, filename).compile()


class DeferredFunction:
    """`compile_function`'s work in two steps: the globals now (a copy of the namespace's as
    they are: names added to it later are not seen), compile and exec on `compile`.  For a
    function that may never be called (an entry's `fused`, `regions/entry.py`): compiling
    is most of what generating it costs."""

    __slots__ = ("source", "scope", "name", "filename")

    def __init__(self, source: str, ns: Namespace, name: str, filename: str):
        self.source, self.name, self.filename = source, name, filename
        self.scope = dict(ns.globals)
        self.scope.setdefault("__name__", "bcfront.generated")
        self.scope["__loader__"] = GeneratedSource(source)

    def compile(self):
        code = compile(self.source, self.filename, "exec")
        exec(code, self.scope)  # noqa: S102 - generated guard/region source, names from Namespace
        fn = self.scope[self.name]
        fn.__bcfront_source__ = self.source
        return fn
