"""Raise recipes: a checked link's region that only makes an exception and raises it, done by
the C call itself (`bcfront/_crecipes.c`), without the region's frame.

An exact link's region that ends raising (`links._exact_ending`) most often does nothing
else than make the exception as `codegen.Rebuilder._exception` spells it -- its arguments
(constants), the class's ``__new__`` and its built-in base's ``__init__`` or one call of the
class, its traceback entries (``TracebackType(...)`` over the frames `regions/tracebacks.py`
keeps), its attributes and chaining -- and return ``raised(exc, chain)``.  A cached call
that raises paid a Python frame and each statement's bytecode for that: about as much as
the native call.  `region_raise` reads the region's code (the text its function is compiled
from, parsed with `ast`, as `result_recipes.region_result` does) and, where every statement
is one of those forms, gives a recipe of steps (`_crecipes.c`'s STEP_* kinds) that the C
call follows: the same calls, in the same order, with the same fallbacks.  Anything else --
a parameter read, another statement, a name this cannot resolve to a constant -- gives no
recipe, and the region's function runs as before (the reference:
`tests/frontend/test_raise_recipes.py` compares the two, and plain Python).
"""

from __future__ import annotations

import ast
import builtins
from typing import TypeGuard

from ...cfast import C
from .check_program import folded_constant
from .result_recipes import MADE_LIST, MADE_OBJECT, MADE_TUPLE, immutable_constant

MADE_SLOT, MADE_STEPS, MADE_PARAM, MADE_DICT = 3, 4, 5, 6  # `_crecipes.c`'s further kinds
STEP_SET, STEP_NEW, STEP_CALL, STEP_INIT, STEP_SETATTR, STEP_TRACEBACK, STEP_HANDLED, STEP_RAISE = range(8)
STEP_SETITEM, STEP_APPLY, STEP_RETURN = range(8, 11)  # `step_recipes`' (a region returning)
MAX_SLOTS, MAX_PARAMS = 64, 16  # `_crecipes.c`'s bounds


class NoRecipe(Exception):
    """The region's code does something a recipe of steps does not."""


def region_raise(lines: list[str], globals_: dict, local_names=(), params=()) -> tuple:
    """``((MADE_STEPS, (nslots, steps)),)`` where the region's code `lines` only makes
    exceptions (the forms of `codegen.Rebuilder._exception`) and returns
    ``raised(exc, chain)``, else ().  `globals_`: the link's globals (read now, as the check
    program reads them: the region reads none that the chain rebinds); `local_names`: the
    function's locals (one not bound by the lines before it is read is a parameter);
    `params`: the link's positional parameters, in order (the ones a recipe may read: the
    checked link passes them, the call's arguments or their defaults)."""
    if C is None or getattr(C, "raised", None) is None:
        return ()
    return region_recipe(lines, StepReader(globals_, set(local_names), list(params)[:MAX_PARAMS]))


def region_recipe(lines: list[str], reader: StepReader) -> tuple:
    """``((MADE_STEPS, (nslots, steps)),)`` of the region's code `lines` as `reader` reads it:
    each statement before the first ``return`` by ``reader.statement``, that ``return`` by
    ``reader.ending`` (`StepReader`'s: ``return raised(exc, chain)``; `step_recipes`': a
    value returned), within `MAX_SLOTS` locals; () where one of them is not a recipe's
    (`NoRecipe`), the code does not parse, or it never returns."""
    try:
        stmts = ast.parse("def _():\n" + "\n".join(lines) + "\n").body[0].body  # type: ignore[attr-defined]
    except SyntaxError:
        return ()
    try:
        for s in stmts:
            if type(s) is ast.Return:
                reader.ending(s)
                if len(reader.slots) > MAX_SLOTS:
                    return ()
                return ((MADE_STEPS, (len(reader.slots), tuple(reader.steps))),)
            reader.statement(s)
    except NoRecipe:
        return ()
    return ()


def _is(node, kind, **fields) -> bool:
    return type(node) is kind and all(getattr(node, k) == v for k, v in fields.items())


class StepReader:
    """`region_raise`'s reading of the statements, one step each (`step_recipes._Effects`
    reads other statements and another ending, by the same `region_recipe`)."""

    def __init__(self, globals_: dict, locals_: set, params: list[str], star: str | None = None):
        self.globals, self.locals, self.params = globals_, locals_, params
        self.star_param = star  # the ``*args`` parameter, whose item k is parameter len(params) + k
        self.slots: dict[str, int] = {}
        self.tuples: set[int] = set()  # the slots holding a tuple (``*name`` reads one)
        self.steps: list[tuple] = []

    # -- names and values ----------------------------------------------------------------

    def slot(self, node) -> int:
        """The local `node` names, bound before."""
        if type(node) is not ast.Name or node.id not in self.slots:
            raise NoRecipe("not a local bound before")
        return self.slots[node.id]

    def target(self, node, value=None) -> int:
        """The local `node` names, stored to (`value`: its recipe, where a SET stores it)."""
        if type(node) is not ast.Name:
            raise NoRecipe("a store to other than a name")
        i = self.slots.setdefault(node.id, len(self.slots))
        made_tuple = value is not None and (
            value[0] == MADE_TUPLE or (value[0] == MADE_OBJECT and type(value[1]) is tuple)
        )
        (self.tuples.add if made_tuple else self.tuples.discard)(i)
        return i

    def constant(self, node):
        """The global `node` names (a constant of the namespace)."""
        if type(node) is not ast.Name or node.id in self.slots or node.id in self.locals:
            raise NoRecipe("not a global")
        if node.id not in self.globals:
            raise NoRecipe(f"{node.id}: a builtin's lookup")
        return self.globals[node.id]

    def value(self, node) -> tuple:
        ok, v = folded_constant(node)
        if ok and immutable_constant(v):
            return (MADE_OBJECT, v)
        if type(node) is ast.Name:
            if node.id in self.slots:
                return (MADE_SLOT, self.slots[node.id])
            if node.id in self.params:
                return (MADE_PARAM, self.params.index(node.id))
            return (MADE_OBJECT, self.constant(node))
        if type(node) in (ast.Tuple, ast.List) and type(node.ctx) is ast.Load:
            if any(type(e) is ast.Starred for e in node.elts):
                raise NoRecipe("an unpacking display")
            kind = MADE_TUPLE if type(node) is ast.Tuple else MADE_LIST
            return (kind, tuple(self.value(e) for e in node.elts))
        if (
            type(node) is ast.Subscript
            and type(node.value) is ast.Name
            and node.value.id == self.star_param
            and node.value.id not in self.slots
        ):
            ok, k = folded_constant(node.slice)
            if ok and type(k) is int and 0 <= k and len(self.params) + k < MAX_PARAMS:
                # ``args[k]``: the call's argument after the positional ones (the checks read
                # it too, so the call passed it; where not, the C call runs the region)
                return (MADE_PARAM, len(self.params) + k)
        if type(node) is ast.NamedExpr:  # ``(name := v)`` in a display: bound first (all pure)
            v = self.value(node.value)
            i = self.target(node.target, v)
            self.steps.append((STEP_SET, i, v))
            return (MADE_SLOT, i)
        if type(node) is ast.Dict and None not in node.keys and len(node.keys) <= 32:  # no ``**``
            pairs = zip(node.keys, node.values, strict=True)
            return (MADE_DICT, tuple(self.value(x) for pair in pairs for x in pair))
        raise NoRecipe(f"a {type(node).__name__} value")

    def star(self, node) -> int:
        """``*name``: a local bound to a tuple (the call passes that very tuple)."""
        if type(node) is not ast.Starred or self.slot(node.value) not in self.tuples:
            raise NoRecipe("not *args of a tuple")
        return self.slot(node.value)

    # -- statements ------------------------------------------------------------------------

    def statement(self, s) -> None:
        if type(s) is ast.Assign and len(s.targets) == 1:
            self.assign(s.targets[0], s.value)
        elif type(s) is ast.Try:
            self.trying(s)
        elif type(s) is ast.If:
            self.handled(s)
        elif type(s) is ast.Expr and _call(s.value, 3) and self.constant(s.value.func) is builtins.setattr:
            e, name, v = s.value.args
            if not (type(name) is ast.Constant and type(name.value) is str):
                raise NoRecipe("setattr of a name not a constant")
            self.steps.append((STEP_SETATTR, self.slot(e), name.value, self.value(v)))
        else:
            raise NoRecipe(f"a {type(s).__name__} statement")

    def assign(self, target, value) -> None:
        if type(target) is ast.Attribute:
            e = self.slot(target.value)
            if target.attr == "__traceback__" and self.traceback(e, value):
                return
            self.steps.append((STEP_SETATTR, e, target.attr, self.value(value)))
            return
        if _call(value, 2) and _attribute(value.func, "__new__"):  # C.__new__(C, *args)
            cls = self.constant(value.func.value)
            if self.constant(value.args[0]) is not cls:
                raise NoRecipe("__new__ of another class")
            a = self.star(value.args[1])
            self.steps.append((STEP_NEW, self.target(target), cls, a))
            return
        v = self.value(value)
        self.steps.append((STEP_SET, self.target(target, v), v))

    def traceback(self, e: int, value) -> bool:
        """``e.__traceback__ = TracebackType(e.__traceback__, frame, lasti, lineno)``."""
        if not _call(value, 4):
            return False
        prev, frame, lasti, lineno = value.args
        if not (_attribute(prev, "__traceback__") and self.slot(prev.value) == e):
            return False
        ints = [folded_constant(n) for n in (lasti, lineno)]
        if not all(ok and type(v) is int for ok, v in ints):
            return False
        tbtype, frame_ = self.constant(value.func), self.constant(frame)
        self.steps.append((STEP_TRACEBACK, e, tbtype, frame_, ints[0][1], ints[1][1]))
        return True

    def trying(self, s) -> None:
        """``try: <one statement> except TypeError: <one statement>`` of `_exception`."""
        if s.orelse or s.finalbody or len(s.body) != 1 or len(s.handlers) != 1:
            raise NoRecipe("another try")
        h = s.handlers[0]
        if h.name is not None or len(h.body) != 1 or not self.is_type_error(h.type):
            raise NoRecipe("another handler")
        body, handler = s.body[0], h.body[0]
        if type(body) is ast.Assign and len(body.targets) == 1 and _call(body.value, 1):
            # try: x = C(*args) except TypeError: x = fallback(C, args)
            cls, a = self.constant(body.value.func), self.star(body.value.args[0])
            if not (type(handler) is ast.Assign and len(handler.targets) == 1 and _call(handler.value, 2)):
                raise NoRecipe("another fallback")
            fallback = self.constant(handler.value.func)
            if self.constant(handler.value.args[0]) is not cls or self.slot(handler.value.args[1]) != a:
                raise NoRecipe("a fallback on other arguments")
            x = self.target(body.targets[0])
            if self.target(handler.targets[0]) != x:
                raise NoRecipe("a fallback to another name")
            self.steps.append((STEP_CALL, x, cls, a, fallback))
        elif (
            type(body) is ast.Expr
            and _call(body.value, 2)
            and _attribute(body.value.func, "__init__")
            and type(handler) is ast.Pass
        ):  # try: Base.__init__(x, *args) except TypeError: pass
            base = self.constant(body.value.func.value)
            e, a = self.slot(body.value.args[0]), self.star(body.value.args[1])
            self.steps.append((STEP_INIT, base, e, a))
        else:
            raise NoRecipe("another try")

    def is_type_error(self, node) -> bool:
        """`node` names the builtin TypeError (no global or local of that name)."""
        return (
            type(node) is ast.Name
            and node.id == "TypeError"
            and node.id not in self.globals
            and node.id not in self.locals
        )

    def handled(self, s) -> None:
        """``if (h := fn()) is not None: e.attr = h`` (`codegen`'s `_outer_context`)."""
        test = s.test
        if s.orelse or len(s.body) != 1 or not (type(test) is ast.Compare and len(test.ops) == 1):
            raise NoRecipe("another if")
        walrus, body = test.left, s.body[0]
        if not (
            type(test.ops[0]) is ast.IsNot
            and _is(test.comparators[0], ast.Constant, value=None)
            and type(walrus) is ast.NamedExpr
            and _call(walrus.value, 0)
            and type(body) is ast.Assign
            and len(body.targets) == 1
            and type(body.targets[0]) is ast.Attribute
            and _is(body.value, ast.Name, id=walrus.target.id)
        ):
            raise NoRecipe("another if")
        fn = self.constant(walrus.value.func)
        h = self.target(walrus.target)
        self.steps.append((STEP_HANDLED, h, fn, self.slot(body.targets[0].value), body.targets[0].attr))

    def ending(self, s) -> None:
        """``return raised(exc, chain)`` (`links._exact_ending`): the C call raises it."""
        if not (_call(s.value, 2) and self.constant(s.value.func) is getattr(C, "raised", None)):
            raise NoRecipe("another return")
        exc, chain = s.value.args
        ok, chain_ = folded_constant(chain)
        if not (ok and type(chain_) is bool):
            raise NoRecipe("a chain not a constant")
        self.steps.append((STEP_RAISE, self.value(exc), chain_))


def _attribute(node, attr: str) -> TypeGuard[ast.Attribute]:
    """`node` reads attribute `attr` of something."""
    return type(node) is ast.Attribute and node.attr == attr


def _call(node, nargs: int) -> TypeGuard[ast.Call]:
    """`node` is a call with `nargs` positional arguments and no keywords."""
    return type(node) is ast.Call and len(node.args) == nargs and not node.keywords
