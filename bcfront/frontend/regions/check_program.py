"""An exact link's checks compiled to a program the C call runs (`bcfront/_cchecks.c`).

An exact link (`links.py`) is a Python function: its guard's checks, then the region's code.
On a cached call of a function that does little, evaluating those checks as Python bytecode
is most of the call: ``type(x) is int and x == 4`` is some fifteen instructions and two
global reads.  `compile_checks` translates the link's own check statements -- the text the
link was compiled from, parsed with `ast` -- into a small stack program for
`_cfast.CheckedLink`, whose ops do what the Python they stand for does, in the same order,
calling the same functions; the conjuncts of ``if not (a and b ...): miss`` become single
ops (``type(x) is K``, ``x == K``, ``len(x) == n``, ``'k' not in d``).  The Python link
stays the reference: anything this does not translate exactly -- a name the link would
look up in builtins, a chained comparison, a statement of another kind -- gives no program
(`Untranslatable`), and the link serves as before.

Names are resolved as the link's code resolves them: its parameters (read from the call's
arguments, their defaults, ``*args`` items), its other locals (the ones the checks assign;
a local the checks read and do not assign gives no program) and its globals, which are the
namespace's constants, fixed once the link is made -- read here once.  (What the region's
code returns, where the C call can make it itself: `result_recipes`.)

Two liberties, each with its reference (`check_shortcuts`): a read the checks spell again
is made once (`REUSE_READS`), and a check of the link's immutable constants alone, true
when the link is made, is left out (`FOLD_CONSTANT_CHECKS`).
"""

from __future__ import annotations

import ast
import sys
import types
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from ...cfast import C
from .check_fusion import FIELDS, fuse, pack, retarget, unpack
from .check_shortcuts import SCALARS, Shortcuts, folded_constant

# the ops of `_cchecks.c`, in its enum's order (tests/frontend/test_check_program.py compares)
OPS = (
    "END", "MISS", "PARAM", "STAR_ITEM", "STAR_LEN", "STAR", "DSTAR", "KWONLY", "CONST", "LOCAL",
    "STORE", "DUP", "POP", "ATTR", "ITEM", "SUBSCR", "STORE_SUBSCR", "CALL", "TYPE", "LEN",
    "COMPARE", "NOT", "NEG", "BUILD_TUPLE", "JUMP", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP",
    "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "ASSERT_TRUE", "ASSERT_TYPE", "ASSERT_IS",
    "ASSERT_IS_NOT", "ASSERT_EQ", "ASSERT_LEN", "ASSERT_IN", "ASSERT_NOT_IN", "MODULE_ATTR",
    "CELL_CONTENTS", "BINARY", "ASSERT_ITEMS", "ASSERT_ITEMS_TYPE",
    # fused (`check_fusion`)
    "PARAM_TYPE", "PARAM_IS", "PARAM_EQ", "PARAM_LEN", "ITEM_TYPE", "ITEM_IS", "ITEM_EQ",
    "MODULE_ATTR_IS", "CONST_ITEM", "LOCAL_ITEM", "CONST_NOT_IN", "CONST_ITEM_IS", "LOCAL_ITEM_IS",
    "CONST_ITEM_TYPE", "CONST_ITEM_EQ", "LOCAL_ITEM_TYPE", "LOCAL_ITEM_EQ", "CONST_ATTR", "PARAM_TYPE_EQ",
    "PARAM_ITEM", "KEEP", "LOCAL_TYPE", "LOCAL_LEN", "PARAM_ITEMS", "PARAM_ITEMS_TYPE",
    "CONST_MODULE_ATTR_IS", "STAR_LEN_EQ", "STAR_ITEM_TYPE", "STAR_ITEM_IS", "STAR_ITEM_EQ",
    "STAR_ITEM_TYPE_EQ",
    # the guard memo (`memo_block`)
    "DICTS_SAME", "DICTS_PASSED",
    "ASSERT_CODES",
)  # fmt: skip
OP = {name: i for i, name in enumerate(OPS)}
FUSED_NAMES = frozenset(FIELDS)
# ops whose argument is fields too, not being fused ones: how many (the listing shows them)
_PACKED = {**FIELDS, "DICTS_SAME": 2}

# OP_COMPARE's argument: Python's rich comparisons (Py_LT..Py_GE), then identity and membership
COMPARISONS = {ast.Lt: 0, ast.LtE: 1, ast.Eq: 2, ast.NotEq: 3, ast.Gt: 4, ast.GtE: 5}
COMPARISONS.update({ast.Is: 6, ast.IsNot: 7, ast.In: 8, ast.NotIn: 9})
# OP_BINARY's argument: Python's binary operators, in `_cchecks.c`'s BINARY_* order (a shape
# guard's arithmetic on an int argument: ``(n % 4) == 0``)
BINARY: tuple[type[ast.operator], ...] = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div)
BINARY += (ast.Pow, ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)

# the stack effect of each op with argument `a` (jumps: on falling through)
_EFFECT = {
    "END": 0, "MISS": 0, "PARAM": 1, "STAR_ITEM": 1, "STAR_LEN": 1, "STAR": 1, "DSTAR": 1,
    "KWONLY": 1, "CONST": 1, "LOCAL": 1, "STORE": -1, "DUP": 1, "POP": -1, "ATTR": 0, "ITEM": 0,
    "SUBSCR": -1, "STORE_SUBSCR": -3, "TYPE": 0, "LEN": 0, "COMPARE": -1, "NOT": 0, "NEG": 0,
    "JUMP": 0, "JUMP_IF_FALSE_OR_POP": -1, "JUMP_IF_TRUE_OR_POP": -1, "POP_JUMP_IF_FALSE": -1,
    "POP_JUMP_IF_TRUE": -1, "ASSERT_TRUE": -1, "ASSERT_TYPE": -1, "ASSERT_IS": -1,
    "ASSERT_IS_NOT": -1, "ASSERT_EQ": -1, "ASSERT_LEN": -1, "ASSERT_IN": -1, "ASSERT_NOT_IN": -1,
    "MODULE_ATTR": 0, "CELL_CONTENTS": 0, "BINARY": -1, "ASSERT_ITEMS": -1, "ASSERT_ITEMS_TYPE": -1,
    "DICTS_PASSED": 0, "ASSERT_CODES": 0,
}  # fmt: skip

# The most text of checks translated (characters).  Translating costs the first call about a
# microsecond a character (a model's guard, 90,000-170,000 characters: 30-80 ms); the
# program pays back where the checks are most of a cached call -- a small function's, a few
# hundred to a few thousand characters (the stdlib corpus: 95% under 4,800) -- not where a
# model's forward is.  A larger guard keeps its Python link.
LARGEST_TRANSLATED = 20_000

REUSE_READS = True  # a read spelled again reuses the first's value (off: the exact reference)
FOLD_CONSTANT_CHECKS = True  # a check true of constants alone is left out (off: the reference)
FUSE_OPS = True  # runs of ops made one op (`check_fusion`; off: the reference)


class Untranslatable(Exception):
    """The checks use something the program cannot do exactly as the link does."""


@dataclass(frozen=True)
class CheckProgram:
    """`CheckedLink`'s program: (op, argument) pairs, flat; the constants they index; how
    many locals and stack slots it needs; whether an Exception in it is a miss."""

    code: tuple[int, ...]
    consts: tuple
    nlocals: int
    depth: int
    guarded: bool
    kept_result: int = -1  # >= 0: the local holding what the region returns (`compile_checks`)

    def listing(self) -> list[str]:
        """The program, one op a line (for tests and reading)."""
        pairs = zip(self.code[::2], self.code[1::2])
        return [f"{i:3} {OPS[op]} {_shown(OPS[op], arg)}" for i, (op, arg) in enumerate(pairs)]


def _shown(op: str, arg: int) -> str:
    """An op's argument as the listing shows it: a fused op's fields apart (``0,1``)."""
    return ",".join(map(str, unpack(arg, _PACKED[op]))) if op in _PACKED else str(arg)


@dataclass(frozen=True)
class LinkParameters:
    """A link's parameters by kind (the root's, from `signature_params`'s parts): what the
    link's code reads as parameters, for `links` (a link's signature) and the program."""

    positional: tuple[str, ...]  # the names a call's positional arguments bind, in order
    star: str | None  # the ``*args`` name, if the root takes one
    kwonly: tuple[str, ...]
    dstar: str | None  # the ``**kwargs`` name, if the root takes one

    @classmethod
    def of(cls, parts: list[str]) -> LinkParameters:
        positional: list[str] = []
        kwonly: list[str] = []
        star = dstar = None
        after_star = False  # past ``*args`` or ``*``: keyword-only parameters
        for p in parts:
            if p.startswith("**"):
                dstar = p[2:]
            elif p.startswith("*"):
                star, after_star = p[1:] or None, True
            elif p != "/":
                (kwonly if after_star else positional).append(p)
        return cls(tuple(positional), star, tuple(kwonly), dstar)

    @property
    def passing(self) -> str:
        """A link's parameters passed on to the next link, as they were bound."""
        star = [f"*{self.star}"] if self.star else []
        dstar = [f"**{self.dstar}"] if self.dstar else []
        return ", ".join([*self.positional, *star, *(f"{k}={k}" for k in self.kwonly), *dstar])


def compile_checks(
    lines: list[str],
    miss: str,
    globals_: dict,
    params: LinkParameters,
    local_names,
    pure: frozenset[str] = frozenset(),
    result: ast.expr | None = None,
) -> CheckProgram:
    """The program of the check statements `lines` (a link's, ``return <miss>`` where a
    check fails, at one indent level), reading `globals_` (the link's) now; `local_names`:
    the link's local variables (its ``co_varnames``).  Raises `Untranslatable`.

    `pure`: the names of the link's constants that its code calls as pure functions (a
    runtime value's `PureCallSource`), whose calls on the same reads are reads too.
    `result`: the expression the region returns, where that is all it does; where the
    checks make it on every path (a runtime value's call, which the guard computes to
    check its type), the program keeps it (``kept_result``) and the C call returns it
    without the region's frame or a second call."""
    tree = ast.parse("def _():\n" + "\n".join(lines) + "\n    pass\n")
    stmts = tree.body[0].body[:-1]  # type: ignore[attr-defined]
    guarded = False
    if len(stmts) == 1 and type(stmts[0]) is ast.Try:
        stmts, guarded = _guarded_body(stmts[0], miss, globals_), True
    c = _Compiler(miss, globals_, params, set(local_names), pure)
    if REUSE_READS:
        c.count_reads(stmts if result is None else [*stmts, result])
    for s in stmts:
        c.stmt(s)
    kept = c.read_key(result) if REUSE_READS and result is not None else None
    c.emit("END")
    if c.miss_label.jumps:
        c.place(c.miss_label)
        c.emit("MISS")
    program = c.program(guarded)
    if kept is not None and kept in c.kept:
        return replace(program, kept_result=c.kept[kept][0])
    return program


def _guarded_body(node: ast.Try, miss: str, globals_: dict) -> list[ast.stmt]:
    """The statements of ``try: ... except Exception: return <miss>``, or Untranslatable."""
    if node.orelse or node.finalbody or len(node.handlers) != 1:
        raise Untranslatable("a try statement of another form")
    h = node.handlers[0]
    exc = h.type
    if not (
        type(exc) is ast.Name and exc.id == "Exception" and "Exception" not in globals_ and h.name is None
    ):
        raise Untranslatable("a handler of another exception")
    if not (len(h.body) == 1 and _is_miss(h.body[0], miss)):
        raise Untranslatable("a handler that does not miss")
    return node.body


def _is_item(e, name: str, index: int) -> bool:
    """`e` is ``name[index]``."""
    return (
        type(e) is ast.Subscript
        and type(e.value) is ast.Name
        and e.value.id == name
        and type(e.slice) is ast.Constant
        and type(e.slice.value) is int
        and e.slice.value == index
    )


def _items_shape(indices, types, values) -> bool:
    """``items_are``'s arguments after the sequence are what it takes (`_cfast.c`
    `cfast_items_shape`): three tuples of one length."""
    shaped = all(type(t) is tuple for t in (indices, types, values))
    return shaped and len(indices) == len(types) == len(values)


def _true_only_as_bool(e) -> bool:
    """Whether `e`, where its value is true, is True itself: then ``e is True`` is `e`'s
    truth, tested as a condition (each operand's truth once, as ``and``/``or`` test it
    anyway) with no value made.  An identity or membership test and ``not`` give a bool;
    ``a and b`` is `a` only where `a` is false; ``a or b`` is any operand where true."""
    t = type(e)
    if t is ast.Compare:
        return len(e.ops) == 1 and type(e.ops[0]) in (ast.Is, ast.IsNot, ast.In, ast.NotIn)
    if t is ast.UnaryOp:
        return type(e.op) is ast.Not
    if t is ast.BoolOp:
        values = e.values[-1:] if type(e.op) is ast.And else e.values
        return all(_true_only_as_bool(v) for v in values)
    return t is ast.Constant and type(e.value) is bool


def _is_miss(s, miss: str) -> bool:
    return type(s) is ast.Return and type(s.value) is ast.Name and s.value.id == miss


class _Label:
    """A place jumps go to, placed later."""

    __slots__ = ("jumps",)

    def __init__(self):
        self.jumps: list[int] = []


class _Compiler(Shortcuts):
    def __init__(
        self, miss: str, globals_: dict, params: LinkParameters, local_names: set[str], pure=frozenset()
    ):
        self.miss, self.globals, self.params, self.pure = miss, globals_, params, pure
        self.local_names = local_names - {*params.positional, *params.kwonly, params.star, params.dstar}
        self.code: list[list[int]] = []
        self.consts: list = []
        self._const_ids: dict[tuple, int] = {}
        self.locals: dict[str, int] = {}
        self.sp = self.depth = 0
        self.miss_label = _Label()  # a MISS after the program's END
        # reads spelled more than once (`read_key`): how often, and the local and names of
        # each one made so far on every path through the checks
        self.reads: Counter[str] = Counter()
        self.kept: dict[str, tuple[int, frozenset[str]]] = {}
        self.conditional = 0  # >0: what is emitted now runs only on some paths
        self.in_memo = False  # emitting a guard memo's checks (`memo_block`)

    # -- emission -----------------------------------------------------------------------

    def emit(self, op: str, arg: int = 0) -> int:
        self.code.append([OP[op], arg])
        if op == "CALL":
            self.sp -= arg
        elif op == "DICTS_SAME":
            self.sp -= unpack(arg, 2)[0]
        elif op == "BUILD_TUPLE":
            self.sp -= arg - 1
        else:
            self.sp += _EFFECT[op]
        self.depth = max(self.depth, self.sp)
        return len(self.code) - 1

    def jump(self, label: _Label, op: str) -> None:
        label.jumps.append(self.emit(op))

    def place(self, label: _Label) -> None:
        """The jumps to `label` go here."""
        for at in label.jumps:
            self.patch(at)
        label.jumps = []

    def patch(self, at: int) -> None:
        """Point the jump at `at` here."""
        self.code[at][1] = retarget(OPS[self.code[at][0]], self.code[at][1], len(self.code))

    def const(self, value) -> int:
        # identity for objects, (type, repr) for literals: 0.0 and -0.0, 1 and True stay apart
        key = ("lit", type(value), repr(value)) if type(value) in SCALARS else ("id", id(value))
        if key not in self._const_ids:
            self._const_ids[key] = len(self.consts)
            # a literal str interned, as the compiler interns a name-like one: the argument
            # it is compared with is often that very object, which `x == k` tests first
            self.consts.append(sys.intern(value) if type(value) is str else value)
        return self._const_ids[key]

    def program(self, guarded: bool) -> CheckProgram:
        code = fuse(self.code, OPS) if FUSE_OPS else self.code
        flat = tuple(x for pair in code for x in pair)
        return CheckProgram(flat, tuple(self.consts), len(self.locals), self.depth + 1, guarded)

    # -- names --------------------------------------------------------------------------

    def global_value(self, name: str) -> tuple[bool, Any]:
        if (
            name in self.params.positional
            or name in self.local_names
            or name in (self.params.star, self.params.dstar)
        ):
            return False, None
        if name in self.params.kwonly or name not in self.globals:
            return False, None  # a builtin's lookup: the program would not see a later patch
        return True, self.globals[name]

    def is_builtin(self, node, fn) -> bool:
        ok, v = self.global_value(node.id) if type(node) is ast.Name else (False, None)
        return ok and v is fn

    def load_name(self, name: str) -> None:
        p = self.params
        if name in p.positional:
            self.emit("PARAM", p.positional.index(name))
        elif name == p.star:
            self.emit("STAR")
        elif name == p.dstar:
            self.emit("DSTAR")
        elif name in p.kwonly:
            self.emit("KWONLY", self.const(name))
        elif name in self.local_names:
            if name not in self.locals:
                raise Untranslatable(f"the local {name} read before the checks assign it")
            self.emit("LOCAL", self.locals[name])
        elif name in self.globals:
            self.emit("CONST", self.const(self.globals[name]))
        else:
            raise Untranslatable(f"{name} is looked up in builtins")

    def store_name(self, name: str) -> None:
        if name not in self.local_names:
            raise Untranslatable(f"a store to {name}, not a local of the checks")
        self.emit("STORE", self.locals.setdefault(name, len(self.locals)))
        self.forget(name)

    # -- statements ---------------------------------------------------------------------

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.If):
            if not self.memo_block(s):
                self.if_stmt(s)
        elif _is_miss(s, self.miss):
            self.emit("MISS")
        elif isinstance(s, ast.Assign) and len(s.targets) == 1:
            self.assign(s.targets[0], s.value)
        elif not isinstance(s, ast.Pass):
            raise Untranslatable(f"a {type(s).__name__} statement")

    def assign(self, target, value) -> None:
        if type(target) is ast.Name:
            self.expr(value)
            self.store_name(target.id)
        elif type(target) is ast.Subscript and type(target.slice) is not ast.Slice:
            self.expr(value)  # Python's order: the value, the object, the key
            self.expr(target.value)
            self.expr(target.slice)
            self.emit("STORE_SUBSCR")
            for node in ast.walk(target.value):  # what the store changes is read anew
                if type(node) is ast.Name:
                    self.forget(node.id)
        else:
            raise Untranslatable("an assignment to something else than a name or an item")

    def memo_block(self, s: ast.If) -> bool:
        """Emit the guard memo's block -- ``if not ___dicts_unchanged(cell, d1, ...): <checks>;
        cell[0] = cell[1]`` (`guard_memo._c_memo`) -- as DICTS_SAME, the checks, DICTS_PASSED:
        the op keeps the tags the cell would (the checks are skipped exactly where the call
        would skip them), without the call, the cell's bytes and its store.  False (nothing
        emitted) where `s` is not that block."""
        test, body = s.test, s.body
        if s.orelse or type(test) is not ast.UnaryOp or type(test.op) is not ast.Not or len(body) < 2:
            return False
        call = test.operand
        if type(call) is not ast.Call or call.keywords or type(call.func) is not ast.Name or not call.args:
            return False
        ok, fn = self.global_value(call.func.id)
        cell = call.args[0]
        if not ok or C is None or fn is not C.dicts_unchanged or type(cell) is not ast.Name:
            return False
        last, name = body[-1], cell.id
        if not (
            type(last) is ast.Assign
            and len(last.targets) == 1
            and _is_item(last.targets[0], name, 0)
            and _is_item(last.value, name, 1)
            and not any(type(a) is ast.Starred for a in call.args)
            and not any(type(n) is ast.Name and n.id == name for b in body[:-1] for n in ast.walk(b))
        ):
            return False
        if self.in_memo:
            raise Untranslatable("a guard memo's block inside another")
        for d in call.args[1:]:
            self.expr(d)
        same = self.emit("DICTS_SAME", pack([len(call.args) - 1, 0]))
        self.conditional += 1  # the checks run on some calls only: no read of theirs is kept
        self.in_memo = True
        for b in body[:-1]:
            self.stmt(b)
        self.in_memo = False
        self.emit("DICTS_PASSED")
        self.conditional -= 1
        self.patch(same)
        return True

    def if_stmt(self, s: ast.If) -> None:
        if len(s.body) == 1 and _is_miss(s.body[0], self.miss) and not s.orelse:
            self.jump_if(s.test, True, self.miss_label)  # ``if not (a and ...): miss``
            return
        to_else = _Label()
        self.jump_if(s.test, False, to_else)
        self.conditional += 1
        for b in s.body:
            self.stmt(b)
        if s.orelse:
            to_end = _Label()
            self.jump(to_end, "JUMP")
            self.place(to_else)
            for b in s.orelse:
                self.stmt(b)
            self.place(to_end)
        else:
            self.place(to_else)
        self.conditional -= 1

    def jump_if(self, e, cond: bool, target: _Label) -> None:
        """Go to `target` where `e`'s truth is `cond`, each operand's truth tested once, as
        CPython's compiler does for a condition (``compiler_jump_if``)."""
        kind = type(e)
        if kind is ast.UnaryOp and type(e.op) is ast.Not:
            self.jump_if(e.operand, not cond, target)
            return
        if kind is ast.BoolOp:
            any_ = type(e.op) is ast.Or  # an ``or`` goes where any operand is true
            # the operands after the first run only where it did not jump: unconditionally
            # still where its jump is a miss (which ends the checks), else on some paths
            later = int(target is not self.miss_label)
            if cond == any_:
                for i, v in enumerate(e.values):
                    self.conditional += later * (i == 1)
                    self.jump_if(v, cond, target)
                self.conditional -= later * (len(e.values) > 1)
                return
            skip = _Label()
            for i, v in enumerate(e.values[:-1]):
                self.conditional += i == 1
                self.jump_if(v, not cond, skip)
            self.conditional += len(e.values) == 2
            self.jump_if(e.values[-1], cond, target)
            self.conditional -= 1
            self.place(skip)
            return
        if target is self.miss_label and not cond and self.assertion(e):
            return
        self.expr(e)
        self.jump(target, "POP_JUMP_IF_TRUE" if cond else "POP_JUMP_IF_FALSE")

    def assertion(self, e) -> bool:
        """Emit one op that misses unless `e` is true, where `e` is a check of a common
        form; False (nothing emitted) otherwise."""
        if type(e) is not ast.Compare or len(e.ops) != 1:
            if not self.items_check(e) and not self.codes_check(e):
                self.expr(e)
                self.emit("ASSERT_TRUE")
            return True
        if FOLD_CONSTANT_CHECKS and self.always_true(e):
            return True  # nothing to check
        op, left, right = type(e.ops[0]), e.left, e.comparators[0]
        ok, value = self.constant(right)
        if ok and op is ast.Is and value is True and self.items_check(left):
            pass  # (the two return a bool: ``is True`` is their truth)
        elif ok and op is ast.Is and value is True and _true_only_as_bool(left):
            self.jump_if(left, False, self.miss_label)  # ``(a or (b and c)) is True``: its truth
        elif ok and op is ast.Is and self.one_argument_call(left, type):
            self.expr(left.args[0])  # type: ignore[attr-defined]
            self.emit("ASSERT_TYPE", self.const(value))
        elif ok and op in (ast.Is, ast.IsNot):
            self.expr(left)
            self.emit("ASSERT_IS" if op is ast.Is else "ASSERT_IS_NOT", self.const(value))
        elif ok and op is ast.Eq and type(value) is int and value >= 0 and self.len_of_object(left):
            self.expr(left.args[0])  # type: ignore[attr-defined]
            self.emit("ASSERT_LEN", value)
        elif ok and op is ast.Eq:
            self.expr(left)
            self.emit("ASSERT_EQ", self.const(value))
        elif op in (ast.In, ast.NotIn) and self.constant(left)[0]:
            self.expr(right)
            self.emit("ASSERT_IN" if op is ast.In else "ASSERT_NOT_IN", self.const(self.constant(left)[1]))
        else:
            self.expr(e)
            self.emit("ASSERT_TRUE")
        return True

    def items_check(self, e) -> bool:
        """Emit the one op that misses unless `e` is true, where `e` is a call of the C
        module's ``items_are(x, indices, types, values)`` or ``items_of_type(x, t)`` (a
        list's items by value, by type: `guard_batches`, `sources`) with constant arguments
        after `x`: ASSERT_ITEMS (its constant the three tuples) or ASSERT_ITEMS_TYPE, which
        call the same C code without the call's stack.  False (nothing emitted) otherwise."""
        if C is None or type(e) is not ast.Call or e.keywords or type(e.func) is not ast.Name:
            return False
        ok, fn = self.global_value(e.func.id)
        takes = 4 if ok and fn is C.items_are else 2 if ok and fn is C.items_of_type else None
        if takes is None or len(e.args) != takes or any(type(a) is ast.Starred for a in e.args):
            return False
        rest = [self.constant(a) for a in e.args[1:]]
        if not all(ok for ok, _ in rest):
            return False
        values = tuple(v for _, v in rest)
        if fn is C.items_are and not _items_shape(*values):
            return False  # (the call: its TypeError, a miss -- the op's constant is checked once)
        self.expr(e.args[0])
        if fn is C.items_are:
            indices = values[0]
            if type(indices) is tuple and all(type(i) is int for i in indices):
                if indices == tuple(range(len(indices))):  # the first ones, in order: the op
                    values = (None, *values[1:])  # reads them without converting an int each
            self.emit("ASSERT_ITEMS", self.const(values))
        else:
            self.emit("ASSERT_ITEMS_TYPE", self.const(values[0]))
        return True

    def codes_check(self, e) -> bool:
        """Emit ASSERT_CODES where `e` is a call of the C module's ``codes_are(functions,
        codes)`` with constant arguments (the functions a trace inlined keep their code):
        the same C test without the call, its arguments or its bool.  False (nothing emitted)
        otherwise."""
        if C is None or type(e) is not ast.Call or e.keywords or type(e.func) is not ast.Name:
            return False
        if len(e.args) != 2:
            return False
        ok, fn = self.global_value(e.func.id)
        args = [self.constant(a) for a in e.args]
        if not ok or fn is not C.codes_are or not all(ok for ok, _ in args):
            return False
        self.emit("ASSERT_CODES", self.const(tuple(v for _, v in args)))
        return True

    def constant(self, node) -> tuple[bool, Any]:
        """(True, value) where `node` is a literal or a name of the link's globals."""
        if type(node) is ast.Name:
            return self.global_value(node.id)
        return folded_constant(node)

    def len_of_object(self, node) -> bool:
        """`node` is ``len(x)`` of something else than the ``*args`` tuple (whose length
        STAR_LEN reads without making it)."""
        if not self.one_argument_call(node, len):
            return False
        arg = node.args[0]
        return not (type(arg) is ast.Name and arg.id == self.params.star)

    def one_argument_call(self, node, fn) -> bool:
        return (
            type(node) is ast.Call
            and self.is_builtin(node.func, fn)
            and len(node.args) == 1
            and not node.keywords
            and type(node.args[0]) is not ast.Starred
        )

    # -- expressions --------------------------------------------------------------------

    def expr(self, e) -> None:
        ok, value = folded_constant(e)
        if ok:
            self.emit("CONST", self.const(value))
            return
        handler: Any = _EXPRESSIONS.get(type(e))
        if handler is None:
            raise Untranslatable(f"a {type(e).__name__} expression")
        key = self.read_key(e) if self.reads else None
        if key is not None and key in self.kept:
            self.emit("LOCAL", self.kept[key][0])
            return
        handler(self, e)
        if key is not None and not self.conditional and self.worth_keeping(e, key):
            slot = self.locals.setdefault("\0" + key, len(self.locals))  # no name of the link's
            self.emit("DUP")
            self.emit("STORE", slot)
            names = frozenset(n.id for n in ast.walk(e) if type(n) is ast.Name)
            self.kept[key] = (slot, names)

    def name(self, e: ast.Name) -> None:
        self.load_name(e.id)

    def attribute(self, e: ast.Attribute) -> None:
        self.expr(e.value)
        if e.attr == "cell_contents":
            self.emit("CELL_CONTENTS")
        elif not hasattr(types.ModuleType, e.attr):  # no descriptor of a module's type has it
            self.emit("MODULE_ATTR", self.const(e.attr))
        else:
            self.emit("ATTR", self.const(e.attr))

    def subscript(self, e: ast.Subscript) -> None:
        if type(e.slice) is ast.Slice:
            raise Untranslatable("a slice")
        ok, key = folded_constant(e.slice)
        star = self.params.star
        if ok and type(key) is int and key >= 0 and type(e.value) is ast.Name and e.value.id == star:
            self.emit("STAR_ITEM", key)
            return
        self.expr(e.value)
        if ok:
            self.emit("ITEM", self.const(key))
        else:
            self.expr(e.slice)
            self.emit("SUBSCR")

    def call(self, e: ast.Call) -> None:
        if e.keywords or any(type(a) is ast.Starred for a in e.args):
            raise Untranslatable("a call with keywords or unpacking")
        if self.one_argument_call(e, type):
            self.expr(e.args[0])
            self.emit("TYPE")
            return
        if self.one_argument_call(e, len):
            arg = e.args[0]
            if type(arg) is ast.Name and arg.id == self.params.star:
                self.emit("STAR_LEN")
            else:
                self.expr(arg)
                self.emit("LEN")
            return
        self.expr(e.func)
        for a in e.args:
            self.expr(a)
        self.emit("CALL", len(e.args))

    def compare(self, e: ast.Compare) -> None:
        if len(e.ops) != 1:
            raise Untranslatable("a chained comparison")
        self.expr(e.left)
        self.expr(e.comparators[0])
        self.emit("COMPARE", COMPARISONS[type(e.ops[0])])

    def bool_op(self, e: ast.BoolOp) -> None:
        jump = "JUMP_IF_FALSE_OR_POP" if type(e.op) is ast.And else "JUMP_IF_TRUE_OR_POP"
        jumps = []
        for v in e.values[:-1]:
            self.expr(v)
            jumps.append(self.emit(jump))
            self.conditional += len(jumps) == 1  # the operands after the first: on some paths
        self.expr(e.values[-1])
        self.conditional -= 1
        for j in jumps:
            self.patch(j)

    def unary(self, e: ast.UnaryOp) -> None:
        op = {ast.Not: "NOT", ast.USub: "NEG"}.get(type(e.op))
        if op is None:
            raise Untranslatable(f"a unary {type(e.op).__name__}")
        self.expr(e.operand)
        self.emit(op)

    def binary(self, e: ast.BinOp) -> None:
        if type(e.op) not in BINARY:
            raise Untranslatable(f"a binary {type(e.op).__name__}")
        self.expr(e.left)
        self.expr(e.right)
        self.emit("BINARY", BINARY.index(type(e.op)))

    def tuple_(self, e: ast.Tuple) -> None:
        if type(e.ctx) is not ast.Load or any(type(x) is ast.Starred for x in e.elts):
            raise Untranslatable("a tuple with unpacking")
        for x in e.elts:
            self.expr(x)
        self.emit("BUILD_TUPLE", len(e.elts))

    def named(self, e: ast.NamedExpr) -> None:
        self.expr(e.value)
        self.emit("DUP")
        self.store_name(e.target.id)


_EXPRESSIONS = {
    ast.Name: _Compiler.name,
    ast.Attribute: _Compiler.attribute,
    ast.Subscript: _Compiler.subscript,
    ast.Call: _Compiler.call,
    ast.Compare: _Compiler.compare,
    ast.BoolOp: _Compiler.bool_op,
    ast.UnaryOp: _Compiler.unary,
    ast.BinOp: _Compiler.binary,
    ast.Tuple: _Compiler.tuple_,
    ast.NamedExpr: _Compiler.named,
}
