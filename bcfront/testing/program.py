"""The program IR of the fuzzer: a statement tree, its call specs, and rendering to source.

A generated program is a module: a prelude (imports, globals, helper classes)
and one function ``f``.  The function body is a tree of `Statement`s; a compound
statement (if, while, for, try, def, with, match) is a header plus `Suite`s
(its clauses).  Keeping the tree, not just text, is what lets the shrinker
delete a statement, hoist a loop body or drop an ``else:`` and still emit
valid Python.

Inputs are `CallSpec`s: Python expressions (strings) evaluated in the
program's own module namespace, so each side of a differential run gets
fresh, equal arguments, and a reproducer is plain source text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

INDENT = "    "


@dataclass(frozen=True, slots=True)
class Suite:
    """One clause of a compound statement: its header (None: the statement's own body)."""

    head: str | None
    body: tuple[Statement, ...]
    optional: bool = False  # the shrinker may drop this clause (else:, finally:, ...)


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement: a simple line, or a compound header with suites.

    `alts` are simpler replacements for `head` the shrinker may try.
    `pinned` statements are never deleted (a while loop's counter increment:
    without it the loop would not end).  `hoist` says whether a suite's body
    may replace the whole statement (False for def, whose body uses `return`).
    """

    head: str
    suites: tuple[Suite, ...] = ()
    alts: tuple[str, ...] = ()
    pinned: bool = False
    hoist: bool = True

    def lines(self, depth: int) -> list[str]:
        pad = INDENT * depth
        out = [pad + line for line in self.head.split("\n")]
        for s in self.suites:
            if s.head is not None:
                out.append(pad + s.head)
            out.extend(render_body(s.body, depth + 1))
        return out

    def size(self) -> int:
        return 1 + sum(n.size() for s in self.suites for n in s.body)


def render_body(body, depth: int) -> list[str]:
    if not body:
        return [INDENT * depth + "pass"]
    return [line for n in body for line in n.lines(depth)]


@dataclass(frozen=True, slots=True)
class CallSpec:
    """One call: argument expressions (evaluated in the program's namespace) and grad mode.

    An item ``"name=expr"`` is a keyword argument, ``"*expr"`` / ``"**expr"``
    unpack, exactly as in a call.  `before` is a statement run in the
    program's namespace just before the call (on each side): a change of
    state between calls, such as ``G = 3`` or ``MOD.eval()``.
    """

    args: tuple[str, ...]
    grad: bool = True
    before: str = ""

    def source(self) -> str:
        """An expression whose value is ``(positional args tuple, keyword args dict)``."""
        return f"(lambda *a, **k: (a, k))({', '.join(self.args)})"

    def build(self, ns: dict) -> tuple[tuple, dict]:
        return eval(self.source(), ns)  # noqa: S307 - the fuzzer's own argument expressions


@dataclass(frozen=True, slots=True)
class Program:
    """A generated module with one function `f` and the calls to run it with.

    `entry` names what is captured and called: ``f`` itself, or an object the
    `postlude` (source after ``f``) builds from it, e.g. a module whose
    ``forward`` is ``f``.
    """

    name: str
    mode: str  # "py" (no torch), "tensor" or "module"
    prelude: str
    params: str  # the parameter list of f, as source
    body: tuple[Statement, ...]
    calls: tuple[CallSpec, ...]
    seed: int = 0
    postlude: str = ""
    entry: str = "f"
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def source(self) -> str:
        lines = [self.prelude.rstrip(), "", "", f"def f({self.params}):"]
        lines.extend(render_body(self.body, 1))
        if self.postlude:
            lines += ["", "", self.postlude.strip("\n")]
        return "\n".join(lines) + "\n"

    def size(self) -> int:
        return sum(n.size() for n in self.body)

    def with_body(self, body) -> Program:
        return replace(self, body=tuple(body))

    def with_calls(self, calls) -> Program:
        return replace(self, calls=tuple(calls))

    @property
    def needs_torch(self) -> bool:
        return self.mode != "py"


def from_source(
    source: str, calls, *, name: str = "repro", mode: str | None = None, entry: str = "f"
) -> Program:
    """A program made from hand-written module source (regression tests, reproducers).

    The module must define a top-level ``def f(...)``; what comes before it is
    the prelude, what comes after it the postlude.  The body is parsed into a
    statement tree (`parse_body`), so a hand-written program shrinks like a
    generated one.  `calls` items are `CallSpec`s, sequences of argument
    expressions, or one string holding them all ("1, [2, 3]").
    """
    head, sep, rest = ("\n" + source).partition("\ndef f(")
    if not sep:
        raise ValueError("the source must define a top-level function `f`")
    tree = ast.parse("def f(" + rest)
    fn = tree.body[0]
    tail = "\n".join(("def f(" + rest).split("\n")[fn.end_lineno :])
    params = ast.unparse(fn.args)
    specs = tuple(
        c if isinstance(c, CallSpec) else CallSpec((c,)) if isinstance(c, str) else CallSpec(tuple(c))
        for c in calls
    )
    if mode is None:
        mode = "tensor" if "torch" in source else "py"
    return Program(
        name,
        mode,
        head.strip("\n"),
        params,
        parse_body(fn.body),
        specs,
        postlude=tail.strip("\n"),
        entry=entry,
    )


def parse_body(stmts) -> tuple[Statement, ...]:
    """Statement tree of a list of `ast` statements (heads re-rendered with `ast.unparse`)."""
    return tuple(_node(s) for s in stmts)


def _node(s) -> Statement:
    kind = type(s).__name__
    rule = _COMPOUND.get(kind)
    if rule is None:
        return Statement(ast.unparse(s))
    head, suites = rule(s)
    return Statement(head, tuple(suites), hoist=kind not in ("FunctionDef", "Match"))


def _if(s):
    suites = [Suite(None, parse_body(s.body))]
    if s.orelse:
        suites.append(Suite("else:", parse_body(s.orelse), optional=True))
    return f"if {ast.unparse(s.test)}:", suites


def _loop(s):
    head = (
        f"for {ast.unparse(s.target)} in {ast.unparse(s.iter)}:"
        if isinstance(s, ast.For)
        else f"while {ast.unparse(s.test)}:"
    )
    suites = [Suite(None, parse_body(s.body))]
    if s.orelse:
        suites.append(Suite("else:", parse_body(s.orelse), optional=True))
    return head, suites


def _try(s):
    suites = [Suite(None, parse_body(s.body))]
    for h in s.handlers:
        what = f" {ast.unparse(h.type)}" if h.type is not None else ""
        name = f" as {h.name}" if h.name else ""
        suites.append(
            Suite(
                f"except{what}{name}:", parse_body(h.body), optional=len(s.handlers) > 1 or bool(s.finalbody)
            )
        )
    if s.orelse:
        suites.append(Suite("else:", parse_body(s.orelse), optional=True))
    if s.finalbody:
        suites.append(Suite("finally:", parse_body(s.finalbody), optional=bool(s.handlers)))
    return "try:", suites


def _with(s):
    return f"with {', '.join(ast.unparse(i) for i in s.items)}:", [Suite(None, parse_body(s.body))]


def _def(s):
    decorators = "".join(f"@{ast.unparse(d)}\n" for d in s.decorator_list)
    return f"{decorators}def {s.name}({ast.unparse(s.args)}):", [Suite(None, parse_body(s.body))]


def _match(s):
    cases = []
    for c in s.cases:
        guard = f" if {ast.unparse(c.guard)}" if c.guard is not None else ""
        cases.append(Statement(f"case {ast.unparse(c.pattern)}{guard}:", (Suite(None, parse_body(c.body)),)))
    return f"match {ast.unparse(s.subject)}:", [Suite(None, tuple(cases))]


_COMPOUND = {
    "If": _if,
    "For": _loop,
    "While": _loop,
    "Try": _try,
    "With": _with,
    "FunctionDef": _def,
    "Match": _match,
}
