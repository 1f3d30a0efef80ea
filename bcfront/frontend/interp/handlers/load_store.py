"""Loads and stores: constants, locals, globals, cells, attributes, stack shuffles, imports."""

from __future__ import annotations

import importlib.util
import sys

from ....errors import UnsupportedError
from ....reasons import BreakReason
from ...model.builder import wrap
from ...model.frame import push_null_pair
from ...model.guard_kinds import GuardKind
from ...model.sources import BuiltinSource, GlobalSource
from ...model.tracer import SymbolicRaise
from ...model.values import DELETED, NULL, CellV, Const, DictV, ExceptionV, ObjectV, SuperV, Value
from ...semantics import attrs, module_attrs
from ...semantics.cells import load_cell, store_cell
from ...semantics.ops import hkey
from ...semantics.own_code import OWN_BUILTINS, owns_globals
from ..generators import dropping_pending_generator

NULL_FIRST = sys.version_info < (3, 13)  # 3.13 pushes NULL after the callable


def _nop(tx, f, ins):
    return None


def load_const(tx, f, ins):
    f.push(Const(ins.argval))


def _unbound(name):
    raise SymbolicRaise(
        ExceptionV(
            UnboundLocalError,
            [Const(f"cannot access local variable '{name}' where it is not associated with a value")],
        )
    )


def load_fast(tx, f, ins):
    v = f.locals.get(ins.argval)
    if v is None:
        _unbound(ins.argval)
    f.push(v)


def load_fast_and_clear(tx, f, ins):
    v = f.locals.pop(ins.argval, None)
    f.push(NULL if v is None else v)


def load_fast_load_fast(tx, f, ins):
    for name in ins.argval:
        v = f.locals.get(name)
        if v is None:
            _unbound(name)
        f.push(v)


def _dropping(tx, f, name):
    """Rebinding or deleting the name of a generator suspended inside try/with may close it
    (its finally runs): that instruction runs natively (O54)."""
    if tx.suspended_in_try:
        if dropping_pending_generator(tx, f.locals.get(name)):
            raise UnsupportedError(
                BreakReason.GENERATOR_CLEANUP, f"dropping {name}, a generator suspended inside try/with"
            )


def store_fast(tx, f, ins):
    _dropping(tx, f, ins.argval)
    v = f.pop()
    if v is NULL:
        f.locals.pop(ins.argval, None)  # STORE_FAST_MAYBE_NULL restoring an unbound name
    else:
        f.locals[ins.argval] = v


def store_fast_load_fast(tx, f, ins):
    store_name, load_name = ins.argval
    f.locals[store_name] = f.pop()
    v = f.locals.get(load_name)
    if v is None:
        _unbound(load_name)
    f.push(v)


def store_fast_store_fast(tx, f, ins):
    first, second = ins.argval
    f.locals[first] = f.pop()
    f.locals[second] = f.pop()


def delete_fast(tx, f, ins):
    _dropping(tx, f, ins.argval)
    if ins.argval not in f.locals:
        _unbound(ins.argval)
    del f.locals[ins.argval]


# -- globals -------------------------------------------------------------------------------


def read_global(tx, f, name: str) -> Value:
    gv = module_attrs.globals_value(tx, f.globals)
    if name in gv.overlay:
        val = gv.overlay[name]
        if val is not DELETED:
            return val
        raise SymbolicRaise(ExceptionV(NameError, [Const(f"name '{name}' is not defined")]))
    if owns_globals(f.globals) and (name in f.globals or name in OWN_BUILTINS):
        # bcfront's own model of C code: nothing to guard, builtins as they were (`own_code`)
        return wrap(tx, f.globals[name] if name in f.globals else OWN_BUILTINS[name], None)
    ref = tx.globals_ref(f.globals)
    if name in f.globals:
        return wrap(tx, f.globals[name], GlobalSource(name, ref))
    if name in f.builtins:
        tx.guard(GuardKind.NOT_PRESENT, _globals_dict_source(tx, f.globals), None, name)
        bref = tx.globals_ref(f.builtins)
        # guarded like a global: patching the builtins module (mocks of open/print, import
        # hooks) must recompile (O28)
        return wrap(tx, f.builtins[name], BuiltinSource(name, bref))
    tx.guard(GuardKind.NOT_PRESENT, _globals_dict_source(tx, f.globals), None, name)
    # nor a builtin by the next call (builtins.NAME = ... also defines it, O49)
    tx.guard(GuardKind.NOT_PRESENT, _globals_dict_source(tx, f.builtins), None, name)
    raise SymbolicRaise(ExceptionV(NameError, [Const(f"name '{name}' is not defined")]))


def load_build_class(tx, f, ins):
    """``builtins.__build_class__``, read from the frame's builtins (guarded like a global):
    its call (a class statement) runs natively, at a graph break, and the code after it
    continues captured with the class it made."""
    bref = tx.globals_ref(f.builtins)
    if "__build_class__" not in f.builtins:
        raise SymbolicRaise(ExceptionV(NameError, [Const("__build_class__ not found")]))
    f.push(wrap(tx, f.builtins["__build_class__"], BuiltinSource("__build_class__", bref)))


def _globals_dict_source(tx, g):
    from ...model.sources import ConstSource

    ref = tx.globals_ref(g)
    return ConstSource(ref)


def load_global(tx, f, ins):
    v = read_global(tx, f, ins.argval)
    if ins.arg & 1:
        push_null_pair(f, v, NULL_FIRST)
    else:
        f.push(v)


def store_global(tx, f, ins):
    gv = module_attrs.globals_value(tx, f.globals)
    tx.set(gv, "overlay", {**gv.overlay, ins.argval: f.pop()})
    tx.mark_mutated(gv)


def delete_global(tx, f, ins):
    gv = module_attrs.globals_value(tx, f.globals)
    read_global(tx, f, ins.argval)  # NameError when missing
    tx.set(gv, "overlay", {**gv.overlay, ins.argval: DELETED})
    tx.mark_mutated(gv)


# -- class bodies: the *_NAME family reads and writes the frame's namespace -------------------


def _namespace(f, ins) -> dict:
    ns = f.namespace
    if ns is None:
        raise UnsupportedError(
            BreakReason.UNSUPPORTED_OPCODE, f"opcode {ins.opname} is not supported: module-level code"
        )
    return ns


def _not_defined(name):
    raise SymbolicRaise(ExceptionV(NameError, [Const(f"name '{name}' is not defined")]))


def store_name(tx, f, ins):
    _namespace(f, ins)[ins.argval] = f.pop()


def load_name(tx, f, ins):
    v = _namespace(f, ins).get(ins.argval)
    f.push(v if v is not None else read_global(tx, f, ins.argval))


def delete_name(tx, f, ins):
    if _namespace(f, ins).pop(ins.argval, None) is None:
        _not_defined(ins.argval)


def load_classderef(tx, f, ins):
    """3.11: a free variable read in a class body, the namespace first."""
    v = _namespace(f, ins).get(ins.argval)
    f.push(v if v is not None else load_cell(tx, _cell(f, ins.argval)))


def load_locals(tx, f, ins):
    """3.12+: the namespace as a mapping, for the LOAD_FROM_DICT_OR_DEREF after it."""
    ns = _namespace(f, ins)
    f.push(DictV({hkey(tx, Const(k)): (Const(k), v) for k, v in ns.items()}))


def load_from_dict_or_deref(tx, f, ins):
    m = f.pop()
    hit = m.entries.get(hkey(tx, Const(ins.argval))) if isinstance(m, DictV) else None
    if hit is None and not isinstance(m, DictV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_OPCODE, "LOAD_FROM_DICT_OR_DEREF on this mapping")
    f.push(hit[1] if hit is not None else load_cell(tx, _cell(f, ins.argval)))


def setup_annotations(tx, f, ins):
    ns = _namespace(f, ins)
    if "__annotations__" not in ns:
        ns["__annotations__"] = DictV({})


# -- cells -----------------------------------------------------------------------------------


def make_cell(tx, f, ins):
    name = ins.argval
    f.locals[name] = CellV(f.locals.get(name), name=name)


def copy_free_vars(tx, f, ins):
    return None  # inline_call already placed the closure's cells in the frame


def load_closure(tx, f, ins):
    f.push(f.locals[ins.argval])


def _cell(f, name) -> CellV:
    c = f.locals.get(name)
    if not isinstance(c, CellV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CLOSURE, f"cell variable {name!r} has no cell")
    return c


def load_deref(tx, f, ins):
    f.push(load_cell(tx, _cell(f, ins.argval)))


def store_deref(tx, f, ins):
    store_cell(tx, _cell(f, ins.argval), f.pop())


def delete_deref(tx, f, ins):
    c = _cell(f, ins.argval)
    load_cell(tx, c)
    tx.set(c, "contents", None)
    if c.real is not None:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CLOSURE, "deleting an outside closure variable")


# -- attributes ------------------------------------------------------------------------------


def load_attr(tx, f, ins):
    name = ins.argval
    obj = f.pop()
    f.push(attrs.getattr_(tx, obj, name))


def load_method(tx, f, ins):
    obj = f.pop()
    push_null_pair(f, attrs.getattr_(tx, obj, ins.argval), NULL_FIRST)


def store_attr(tx, f, ins):
    obj = f.pop()
    value = f.pop()
    attrs.setattr_(tx, obj, ins.argval, value)


def delete_attr(tx, f, ins):
    attrs.delattr_(tx, f.pop(), ins.argval)


def load_super_attr(tx, f, ins):
    self_v = f.pop()
    cls_v = f.pop()
    f.pop()  # the global `super`
    if not (isinstance(cls_v, ObjectV) and isinstance(cls_v.obj, type)):
        raise UnsupportedError(BreakReason.UNSUPPORTED_SUPER, "super() with an unusual class cell")
    v = attrs.getattr_(tx, SuperV(cls_v.obj, self_v), ins.argval)
    if ins.arg & 1:
        push_null_pair(f, v, NULL_FIRST)
    else:
        f.push(v)


def load_assertion_error(tx, f, ins):
    f.push(ObjectV(AssertionError))


# -- stack ---------------------------------------------------------------------------------------


def pop_top(tx, f, ins):
    if tx.suspended_in_try and f.stack:  # `break` out of `for x in gen()` drops gen (O54)
        if dropping_pending_generator(tx, f.stack[-1]):
            raise UnsupportedError(
                BreakReason.GENERATOR_CLEANUP, "dropping a generator suspended inside try/with"
            )
    f.pop()


def push_null(tx, f, ins):
    f.push(NULL)


def copy(tx, f, ins):
    f.push(f.stack[-ins.arg])


def swap(tx, f, ins):
    s = f.stack
    s[-1], s[-ins.arg] = s[-ins.arg], s[-1]


def end_for(tx, f, ins):
    # Reached only by falling through (never: FOR_ITER skips it on exhaustion).
    f.pop()
    if sys.version_info < (3, 13):
        f.pop()


def end_send(tx, f, ins):
    v = f.pop()
    f.pop()
    f.push(v)


# -- imports -----------------------------------------------------------------------------------------


def import_name(tx, f, ins):
    fromlist = f.pop()
    level = f.pop()
    name = ins.argval
    if not (isinstance(level, Const) and isinstance(level.value, int) and level.value >= 0):
        raise UnsupportedError(BreakReason.IMPORT, "an import with a computed level")
    if level.value > 0:  # ``from ..pkg import x``: resolved against the frame's package, as import does
        package = _package_of(f.globals)
        if not package:
            raise UnsupportedError(BreakReason.IMPORT, "relative import outside a package")
        try:
            name = importlib.util.resolve_name("." * level.value + name, package)
        except ImportError:
            raise UnsupportedError(
                BreakReason.IMPORT, "relative import beyond the top-level package"
            ) from None
    mod = sys.modules.get(name)
    if mod is None:
        raise UnsupportedError(BreakReason.IMPORT, f"importing {name!r} (not yet imported) runs module code")
    if level.value == 0 and isinstance(fromlist, Const) and not fromlist.value and "." in name:
        mod = sys.modules.get(name.split(".", 1)[0])
    f.push(wrap(tx, mod, None))


def _package_of(globals_: dict) -> str | None:
    """The package a relative import in code with `globals_` resolves against (what
    ``importlib._bootstrap._calc___package__`` computes)."""
    package = globals_.get("__package__")
    if package is None:
        spec = globals_.get("__spec__")
        if spec is not None:
            return spec.parent
        package = globals_.get("__name__")
        if package is not None and "__path__" not in globals_:
            package = package.rpartition(".")[0]
    return package


def import_from(tx, f, ins):
    mod = f.peek()
    f.push(attrs.getattr_(tx, mod, ins.argval))


HANDLERS = {
    "NOP": _nop,
    "RESUME": _nop,
    "PRECALL": _nop,
    "COPY_FREE_VARS": copy_free_vars,
    "LOAD_CONST": load_const,
    "LOAD_FAST": load_fast,
    "LOAD_FAST_CHECK": load_fast,
    "LOAD_FAST_AND_CLEAR": load_fast_and_clear,
    "LOAD_FAST_LOAD_FAST": load_fast_load_fast,
    "STORE_FAST": store_fast,
    "STORE_FAST_MAYBE_NULL": store_fast,
    "STORE_FAST_LOAD_FAST": store_fast_load_fast,
    "STORE_FAST_STORE_FAST": store_fast_store_fast,
    "DELETE_FAST": delete_fast,
    "LOAD_BUILD_CLASS": load_build_class,
    "LOAD_GLOBAL": load_global,
    "STORE_GLOBAL": store_global,
    "DELETE_GLOBAL": delete_global,
    "MAKE_CELL": make_cell,
    "LOAD_CLOSURE": load_closure,
    "LOAD_DEREF": load_deref,
    "STORE_NAME": store_name,
    "LOAD_NAME": load_name,
    "DELETE_NAME": delete_name,
    "LOAD_CLASSDEREF": load_classderef,
    "LOAD_LOCALS": load_locals,
    "LOAD_FROM_DICT_OR_DEREF": load_from_dict_or_deref,
    "SETUP_ANNOTATIONS": setup_annotations,
    "STORE_DEREF": store_deref,
    "DELETE_DEREF": delete_deref,
    "LOAD_ATTR": load_attr,
    "LOAD_METHOD": load_method,
    "STORE_ATTR": store_attr,
    "DELETE_ATTR": delete_attr,
    "LOAD_SUPER_ATTR": load_super_attr,
    "LOAD_ASSERTION_ERROR": load_assertion_error,
    "POP_TOP": pop_top,
    "PUSH_NULL": push_null,
    "COPY": copy,
    "SWAP": swap,
    "END_FOR": end_for,
    "END_SEND": end_send,
    "IMPORT_NAME": import_name,
    "IMPORT_FROM": import_from,
}
