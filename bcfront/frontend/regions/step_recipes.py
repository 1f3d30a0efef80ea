"""Step recipes: a checked link's region that stores into items and calls built-in functions
before it returns a value, done by the C call itself (`bcfront/_crecipes.c`), without the
region's frame.

A region that changes a list it was given ends writing what changed in it back
(``xs[1] = 2; xs[3:] = [5]`` for a heappush); one whose result an opaque built-in makes calls it
(``r = _path_normpath(path)``, ``t = tuple.__new__(SplitResult, (...))``).  Neither is a
value made of constants (`result_recipes`), so each cached call paid the region's Python
frame for a statement or two -- most of the call, for a small function.  `region_steps`
reads the region's code (the text its function is compiled from, parsed with `ast`, as the
other recipes do) and, where every statement is one of these forms, gives a recipe of steps
(`_crecipes.c`'s STEP_* kinds) that the C call follows, in the same order:

- ``name = value``: STEP_SET (a constant, a parameter, a local bound before, displays of them);
- ``name = fn(a, b)`` and ``fn(a, b)``: STEP_APPLY, where `fn` is a global of the link that
  is a built-in function reading no Python frame (`frameless`: not ``locals``, ``eval``,
  ``sys._getframe``, ``warnings.warn`` ...: called from C, the caller's frame is not the
  region's);
- ``x[k] = value``, ``x[a:b] = value``: STEP_SETITEM (``x`` and ``k`` names or constants,
  ``a`` and ``b`` int constants; a slice is made once: an equal slice, where the code makes
  a new one each time);
- ``return value``: STEP_RETURN.

Anything else -- an attribute, an operator, a call of a Python function -- gives no recipe, and
the region's function runs as before (the reference: `tests/frontend/test_step_recipes.py`
compares the two, and plain Python).
"""

from __future__ import annotations

import ast
import builtins
import sys
import types

from ..semantics.classes import is_heap_type
from .check_program import folded_constant
from .raise_recipes import (
    MADE_PARAM,
    MADE_SLOT,
    MADE_STEPS,
    MAX_PARAMS,
    STEP_APPLY,
    STEP_RETURN,
    STEP_SET,
    STEP_SETITEM,
    NoRecipe,
    StepReader,
    region_recipe,
)
from .result_recipes import MADE_OBJECT

MAX_ARGS = 16  # `_crecipes.c`'s: the most arguments a STEP_APPLY passes
# a STEP_APPLY's target where the code drops the call's result (``fn(a)`` alone): the C call
# lets it go at once, as the statement's POP_TOP does, and no local holds it
DISCARDED = -1

# built-ins that read the calling Python frame (its locals, globals, code, or the stack)
_FRAME_READING_BUILTINS = frozenset(
    {"locals", "vars", "globals", "dir", "eval", "exec", "compile", "__import__", "breakpoint", "input"}
)
_FRAME_READING_MODULES = frozenset({"sys", "_warnings", "gc", "faulthandler", "_tracemalloc", "_thread"})


def frameless(fn) -> bool:
    """`fn` is a built-in function (C code) that reads no Python frame: called by the C call
    it does what it does called from the region's frame."""
    if type(fn) is types.MethodDescriptorType:  # a built-in type's method (``list.append``)
        return not is_heap_type(fn.__objclass__)
    if type(fn) is not types.BuiltinFunctionType:
        return False
    owner = fn.__self__
    if type(owner) is types.ModuleType:
        if owner is builtins:
            return fn.__name__ not in _FRAME_READING_BUILTINS
        return getattr(owner, "__name__", None) not in _FRAME_READING_MODULES and owner is not sys
    return True  # a built-in method of an object (``tuple.__new__``, ``[].append``)


def region_steps(
    lines: list[str], globals_: dict, local_names=(), params=(), star=None, temp_prefix: str | None = None
) -> tuple:
    """``((MADE_STEPS, (nslots, steps)),)`` where the region's code `lines` only does what
    the module docstring lists and returns, else ().  `globals_`, `local_names`, `params`:
    as `raise_recipes.region_raise` takes them; `star`: the ``*args`` parameter's name, whose
    constant items the steps read (where all `params` fit a recipe's); `temp_prefix`: the
    prefix of the names bcfront's code makes (`Namespace.prefix`), not the user's locals."""
    star = star if len(params) < MAX_PARAMS else None
    reader = _Effects(globals_, set(local_names), list(params)[:MAX_PARAMS], star)
    recipe = region_recipe(lines, reader)
    if not FORWARD_FIXED_SETS:
        return recipe
    temps = frozenset(i for name, i in reader.slots.items() if temp_prefix and name.startswith(temp_prefix))
    return forwarded(recipe, temps)


FORWARD_FIXED_SETS = True  # off: each ``name = value`` a step of its own (the reference)


def forwarded(recipe: tuple, temps: frozenset = frozenset()) -> tuple:
    """`recipe` (`region_steps`') with each STEP_SET of a constant, a parameter or a local
    set once into a local no other step sets left out, its reads made of that value itself:
    the two are the same object wherever the local is read (a parameter the steps rebind is
    a local, not a MADE_PARAM).  Steps that end up only returning a value are that value's recipe.  The
    region's ``___result0 = xs`` ... ``return ___result0`` then costs no step, nor a local.
    `temps`: the locals that are bcfront's names (`_numbered`)."""
    (kind, (_, steps)) = recipe[0] if recipe else (None, (0, ()))
    if kind != MADE_STEPS:
        return recipe
    sets = [s[1] for s in steps if s[0] in (STEP_SET, STEP_APPLY)]
    fixed: dict = {}
    for s in steps:  # (in order: a local set from one forwarded before reads its value)
        if s[0] != STEP_SET or sets.count(s[1]) != 1:
            continue
        v = _read_fixed(s, fixed)[2]
        # a constant, a parameter, or another local set once (before this step: its reads
        # come after their sets), which holds the same object from then on
        if v[0] in (MADE_OBJECT, MADE_PARAM) or (v[0] == MADE_SLOT and sets.count(v[1]) == 1):
            fixed[s[1]] = v
    kept = tuple(_read_fixed(s, fixed) for s in steps if not (s[0] == STEP_SET and s[1] in fixed))
    if len(kept) == 1:  # (the STEP_RETURN, last)
        return (kept[0][1],)
    return ((MADE_STEPS, _numbered(kept, temps)),)


def _numbered(steps: tuple, temps: frozenset) -> tuple:
    """``(nslots, steps)``: `steps` with the locals they still set numbered 0, 1, ... in the
    order they are first set (a local whose sets were all forwarded is no longer any step's:
    the C call clears and drops only the ones left, none where the steps set none).  A call's
    result in one of bcfront's `temps` that no step reads is DISCARDED: let go at once, as the
    user's own call statement lets it go (the region's ``___early0 = heappush(xs, x)`` is
    ``heappush(xs, x)``); a user's local holds its value to the end, as the user's frame does."""
    unread = temps - _slots_read(steps)
    steps = tuple((s[0], DISCARDED, *s[2:]) if s[0] == STEP_APPLY and s[1] in unread else s for s in steps)
    number: dict[int, int] = {}
    for s in steps:
        if s[0] in (STEP_SET, STEP_APPLY) and s[1] != DISCARDED:
            number.setdefault(s[1], len(number))
    moved = {old: (MADE_SLOT, new) for old, new in number.items()}
    out = []
    for step in steps:
        step = _read_fixed(step, moved)
        if step[0] in (STEP_SET, STEP_APPLY) and step[1] != DISCARDED:
            step = (step[0], number[step[1]], *step[2:])
        out.append(step)
    return (len(number), tuple(out))


def _slots_read(steps: tuple) -> set:
    """The locals some step's value reads (a step's own values, their displays' parts)."""
    read: set[int] = set()

    def seen(v):
        read.add(v[1])
        return v

    for s in steps:
        _slot_reads_mapped(s, seen)
    return read


def _read_fixed(step: tuple, fixed: dict) -> tuple:
    """`step` with its values' reads of the `fixed` locals made of their values."""
    return _slot_reads_mapped(step, lambda v: fixed.get(v[1], v))


def _slot_reads_mapped(step: tuple, slot_read) -> tuple:
    """`step` with each read of a local among its values (their displays' parts too) made
    ``slot_read((MADE_SLOT, i))``: the one place that says where a step's values are."""

    def value(v):
        if v[0] == MADE_SLOT:
            return slot_read(v)
        if v[0] in (MADE_OBJECT, MADE_PARAM):
            return v
        return (v[0], tuple(value(p) for p in v[1]))  # a display of parts

    kind = step[0]
    if kind == STEP_SET:
        return (kind, step[1], value(step[2]))
    if kind == STEP_SETITEM:
        return (kind, *map(value, step[1:]))
    if kind == STEP_APPLY:
        return (kind, step[1], step[2], tuple(map(value, step[3])))
    return (kind, value(step[1]))  # STEP_RETURN


class _Effects(StepReader):
    """`region_steps`'s reading of the statements, one step each, and of the ``return``."""

    def statement(self, s) -> None:
        if type(s) is ast.Expr and type(s.value) is ast.Call:
            self.apply(s.value, DISCARDED)
        elif type(s) is not ast.Assign or len(s.targets) != 1:
            raise NoRecipe(f"a {type(s).__name__} statement")
        elif type(s.targets[0]) is ast.Subscript:
            self.setitem(s.targets[0], s.value)
        elif type(s.value) is ast.Call:
            self.apply(s.value, None, s.targets[0])
        else:
            v = self.value(s.value)
            self.steps.append((STEP_SET, self.target(s.targets[0], v), v))

    def ending(self, s) -> None:
        """``return value``: STEP_RETURN (a bare ``return``: None)."""
        value = self.value(s.value) if s.value is not None else (MADE_OBJECT, None)
        self.steps.append((STEP_RETURN, value))

    def apply(self, call: ast.Call, slot: int | None, target=None) -> None:
        """``target = fn(args)`` (or the call alone, into `slot`)."""
        if call.keywords or len(call.args) > MAX_ARGS or any(type(a) is ast.Starred for a in call.args):
            raise NoRecipe("a call with keywords or unpacking")
        fn = self.constant(call.func)
        if not frameless(fn):
            raise NoRecipe("a call of other than a built-in function")
        parts = tuple(self.value(a) for a in call.args)
        self.steps.append((STEP_APPLY, self.target(target) if slot is None else slot, fn, parts))

    def setitem(self, target: ast.Subscript, value) -> None:
        """``x[k] = value``: the value, then the object, then the key, as Python makes them."""
        if type(target.value) is not ast.Name:
            raise NoRecipe("a store into other than a name's item")
        v = self.value(value)
        x = self.value(target.value)
        key = target.slice
        if type(key) is ast.Slice:
            bounds = [
                folded_constant(b) if b is not None else (True, None)
                for b in (key.lower, key.upper, key.step)
            ]
            if not all(ok and (b is None or type(b) is int) for ok, b in bounds):
                raise NoRecipe("a slice of other than constant ints")
            k = (MADE_OBJECT, slice(*(b for _, b in bounds)))
        else:
            k = self.value(key)
        self.steps.append((STEP_SETITEM, x, k, v))
