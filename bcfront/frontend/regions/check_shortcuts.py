"""What a check program does other than translate its link's checks op for op.

`check_program` compiles a link's checks to a `CheckedLink` program that does what the
Python does, in the same order.  Two liberties, each off in its module flag (the exact
reference, which `tests/frontend/test_check_reads.py` compares):

* a read the checks spell more than once (``d['k'].a.b`` in ten checks, a weak reference's
  referent, a runtime value's pure call ``___str_upper(s)``: `Namespace.pure`) is made
  once, where the checks first make it on every path, kept in a local and reused
  (`Shortcuts.read_key`; ``REUSE_READS``).  A guard's sources are reads the
  tracer modelled as plain (a property's or ``__getattr__``'s code is traced as a call, not
  guarded as a source), and nothing runs between two reads of one guard's run but those
  reads and comparisons of what they found: the second read finds what the first did;
* a check of the link's constants alone that holds when the link is made is left out
  (`Shortcuts.always_true`; ``FOLD_CONSTANT_CHECKS``): ``type(K) is T`` of a constant whose
  class cannot be assigned, ``len(K) == n`` and ``K[i] is X`` of an immutable ``K``,
  identities and scalar equalities of those -- the link's constants are fixed once it is
  made, and these facts of them cannot change (the guard's own checks of a function's
  ``__defaults__`` tuple, once it is identity-checked, are such).
"""

from __future__ import annotations

import ast
import types
import weakref
from typing import Any

SCALARS = (int, float, complex, str, bytes, bool, type(None))  # immutable literals (and results)

_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: its instances' __class__ cannot be assigned
_IMMUTABLE_SIZED = (tuple, str, bytes, frozenset)


def folded_constant(node) -> tuple[bool, Any]:
    """(True, value) where `node` is a literal Python folds at compile time: a constant, a
    negated number, a tuple of those."""
    if type(node) is ast.Constant:
        return True, node.value
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant:
        v = node.operand.value
        if isinstance(v, (int, float, complex)) and type(v) is not bool:
            return True, -v
    if type(node) is ast.Tuple and type(node.ctx) is ast.Load:
        parts = [folded_constant(e) for e in node.elts]
        if all(ok for ok, _ in parts):
            return True, tuple(v for _, v in parts)
    return False, None


def _fixed_class(t: type) -> bool:
    """Instances of `t` keep their class (``__class__`` assignment refuses an immutable
    type, a static one included; a module's can change)."""
    return bool(t.__flags__ & _IMMUTABLE_TYPE) and not issubclass(t, types.ModuleType)


class Shortcuts:
    """The liberties, as methods of `check_program`'s compiler (which has `reads`, `kept`,
    `constant`, `global_value` and `one_argument_call`)."""

    reads: Any
    kept: dict[str, tuple[int, frozenset[str]]]
    pure: frozenset[str]

    # -- reads made once ----------------------------------------------------------------

    def read_key(self, e) -> str | None:
        """The key of `e` where it is a read the program may make once and reuse: an
        attribute, an item at a literal key, the referent of a weak reference the link
        holds (``___C()``), or a call of a pure function the link holds (`pure`: a runtime
        value's ``___str_upper(s)``) on literals and such operands, of a name or such a
        read; else None."""
        t = type(e)
        if t is ast.Attribute or (
            t is ast.Subscript and type(e.slice) is not ast.Slice and folded_constant(e.slice)[0]
        ):
            inner = e.value
        elif t is ast.Call and not e.keywords and type(e.func) is ast.Name:
            ok, v = self.global_value(e.func.id)  # type: ignore[attr-defined]
            if ok and e.func.id in self.pure and all(map(self._operand, e.args)):
                return ast.dump(e)
            return ast.dump(e) if ok and not e.args and type(v) is weakref.ref else None
        else:
            return None
        if type(inner) is not ast.Name and self.read_key(inner) is None:
            return None
        return ast.dump(e)

    def _operand(self, e) -> bool:
        """`e` is a pure call's operand whose value a second evaluation would find again."""
        return type(e) is ast.Name or folded_constant(e)[0] or self.read_key(e) is not None

    def count_reads(self, stmts) -> None:
        for s in stmts:
            for node in ast.walk(s):
                key = self.read_key(node)
                if key is not None:
                    self.reads[key] += 1

    def worth_keeping(self, e, key: str) -> bool:
        """Keeping costs two cheap ops (DUP, STORE); each reuse makes one (LOCAL) instead of
        the read's (a name's, an attribute's, an item's, a call's: one each)."""
        ops = sum(1 for n in ast.walk(e) if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)))
        return (self.reads[key] - 1) * (ops - 1) >= 2

    def forget(self, name: str) -> None:
        """A store to `name` (or into what it holds): the reads of it are made anew."""
        self.kept = {k: v for k, v in self.kept.items() if name not in v[1]}

    # -- checks of constants ------------------------------------------------------------

    def stable_value(self, node) -> tuple[bool, Any]:
        """(True, value) where `node` has the same value on every run of the program: a
        literal, a constant of the link, an item at a literal index of such an exact tuple,
        the type of such a constant whose class is fixed, the length of such an immutable
        one."""
        ok, v = self.constant(node)  # type: ignore[attr-defined]
        if ok:
            return True, v
        if type(node) is ast.Subscript and type(node.slice) is not ast.Slice:
            ok, seq = self.stable_value(node.value)
            known, i = folded_constant(node.slice)
            if ok and known and type(seq) is tuple and type(i) is int and -len(seq) <= i < len(seq):
                return True, seq[i]
        elif self.one_argument_call(node, type):  # type: ignore[attr-defined]
            ok, v = self.stable_value(node.args[0])
            if ok and _fixed_class(type(v)):
                return True, type(v)
        elif self.one_argument_call(node, len):  # type: ignore[attr-defined]
            ok, v = self.stable_value(node.args[0])
            if ok and type(v) in _IMMUTABLE_SIZED:
                return True, len(v)
        return False, None

    def always_true(self, e: ast.Compare) -> bool:
        """`e` (one comparison) holds now and on every run: an identity of stable values, or
        an equality of stable scalars (whose == runs no code of the user's)."""
        op = type(e.ops[0])
        if op not in (ast.Is, ast.IsNot, ast.Eq, ast.NotEq):
            return False
        ok, a = self.stable_value(e.left)
        ok2, b = self.stable_value(e.comparators[0]) if ok else (False, None)
        if not ok2:
            return False
        if op is ast.Is or op is ast.IsNot:
            return (a is b) == (op is ast.Is)
        if type(a) not in SCALARS or type(b) not in SCALARS:
            return False
        return bool(a == b) == (op is ast.Eq)
