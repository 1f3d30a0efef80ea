"""Result recipes: what a checked link's region returns, where the C call makes it itself.

An exact link's region often does nothing but return a value made of constants -- a
scalar, a tuple Python folds into one constant, a tuple or list display of such parts
(``return (n % 7, n * 2)`` traced with ``n == 3``).  `region_result` reads the region's
code (the text its function is compiled from, parsed with `ast`) and, where that is all it
does, gives a recipe the C call follows (`_crecipes.c`) to make the value as the code would --
the very constant object, or a new tuple or list per call -- without calling the region
(no frame).  Anything else gives no recipe, and the region's function runs as before.
"""

from __future__ import annotations

import ast

from .check_program import SCALARS, folded_constant


class _NoRecipe(Exception):
    """The region's code does something else than return a value made of constants."""


MADE_OBJECT, MADE_TUPLE, MADE_LIST = 0, 1, 2  # a result recipe's kinds (`_crecipes.c`)


def region_result(lines: list[str], globals_: dict, local_names=()) -> tuple:
    """``(recipe,)`` where the region's code `lines` only returns a value made of constants
    (bound to locals first, as generated code does: ``r = 2; return r``), else ().  The
    recipe makes it as the code would: ``(MADE_OBJECT, v)`` the very object (a constant of
    the code: an immutable scalar, or a tuple Python folds into one), ``(MADE_TUPLE,
    parts)`` / ``(MADE_LIST, parts)`` a new tuple or list per call (a display that is not
    all constants: ``(___x := 3, 29)``).  `local_names`: the function's locals (a name of
    them not bound before is no constant).  A local used twice gives () (one object
    made once, which two recipes would make twice)."""
    try:
        stmts = ast.parse("def _():\n" + "\n".join(lines) + "\n").body[0].body  # type: ignore[attr-defined]
    except SyntaxError:
        return ()
    maker = _ResultRecipe(globals_, set(local_names))
    try:
        for s in stmts:
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                maker.bound[s.targets[0].id] = maker.recipe(s.value)
            elif isinstance(s, ast.Return):
                return (maker.recipe(s.value) if s.value is not None else (MADE_OBJECT, None),)
            else:
                return ()
    except _NoRecipe:
        return ()
    return ()


class _ResultRecipe:
    """`region_result`'s reading of the region's expressions."""

    def __init__(self, globals_: dict, locals_: set):
        self.globals, self.locals = globals_, locals_
        self.bound: dict[str, tuple] = {}
        self.used: set[str] = set()

    def recipe(self, node) -> tuple:
        ok, v = folded_constant(node)
        if ok and immutable_constant(v):
            return (MADE_OBJECT, v)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.NamedExpr):
            made = self.recipe(node.value)
            self.bound[node.target.id] = made
            self.used.add(node.target.id)  # the display holds the one object the name does
            return made
        if isinstance(node, (ast.Tuple, ast.List)) and isinstance(node.ctx, ast.Load):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise _NoRecipe("an unpacking display")
            kind = MADE_TUPLE if isinstance(node, ast.Tuple) else MADE_LIST
            return (kind, tuple(self.recipe(e) for e in node.elts))
        raise _NoRecipe(f"a {type(node).__name__} result")

    def name(self, name: str) -> tuple:
        if name in self.bound:
            if name in self.used:
                raise _NoRecipe(f"{name} used twice")
            self.used.add(name)
            return self.bound[name]
        if name not in self.locals and name in self.globals and type(self.globals[name]) in SCALARS:
            return (MADE_OBJECT, self.globals[name])
        raise _NoRecipe(f"{name} is not a constant")


def returned_expression(lines: list[str]) -> ast.expr | None:
    """The expression the region's code `lines` returns where that is all it does
    (``return e``, or ``r = e`` then ``return r``, as generated code binds a result), else
    None: what the checks may have made already (`check_program.compile_checks`)."""
    try:
        stmts = ast.parse("def _():\n" + "\n".join(lines) + "\n").body[0].body  # type: ignore[attr-defined]
    except SyntaxError:
        return None
    first = stmts[0] if stmts else None
    if type(first) is ast.Return:
        return first.value
    if (
        len(stmts) >= 2
        and type(first) is ast.Assign
        and len(first.targets) == 1
        and type(first.targets[0]) is ast.Name
        and type(stmts[1]) is ast.Return
        and type(stmts[1].value) is ast.Name
        and stmts[1].value.id == first.targets[0].id
    ):
        return first.value
    return None


def immutable_constant(v) -> bool:
    return type(v) in SCALARS or (type(v) is tuple and all(immutable_constant(x) for x in v))
