"""Shrinking: reduce a mismatching program to a small reproducer, and write it out.

`shrink(program, still_fails)` is greedy delta debugging over the program
tree: it tries, in order, dropping calls, deleting statements (largest first),
replacing a compound statement by one of its clause bodies (a loop by its
body, a try by its try-block), dropping optional clauses (else, elif,
finally) and replacing a statement by a simpler variant the generator
recorded (`Statement.alts`).  A candidate is kept when it still compiles and
`still_fails` holds; passes repeat until none makes progress or the attempt
budget is spent.  Pinned statements (loop counters) are never deleted, so
shrinking cannot create an endless loop.

`shrink_mismatch` wires this to the differential runner, keeping the
mismatch's `signature` (the same part differs, with the same exception
types), so a shrink cannot wander off to a different bug.  `reproducer`
renders the result as a standalone script.
"""

from __future__ import annotations

import ast
import copy
import itertools
import time
from dataclasses import replace

from . import differential
from .program import Program, Suite


def shrink(program: Program, still_fails, *, budget: int = 300, time_limit: float | None = None) -> Program:
    """The smallest program reachable by greedy reductions for which `still_fails` holds.

    `budget` bounds the calls of `still_fails` (candidates that do not compile
    are free), `time_limit` the seconds spent; either way the best program so
    far is returned.
    """
    deadline = None if time_limit is None else time.monotonic() + time_limit
    current, attempts = program, 0

    def spent() -> bool:
        return attempts >= budget or (deadline is not None and time.monotonic() > deadline)

    progress = True
    while progress and not spent():
        progress = False
        position = 0
        while not spent():
            cand = next(itertools.islice(candidates(current), position, None), None)
            if cand is None:
                break
            if not _compiles(cand):
                position += 1
                continue
            attempts += 1
            if still_fails(cand):
                current, progress = cand, True  # stay at this position: the list changed
            else:
                position += 1
    return current


def _compiles(program: Program) -> bool:
    try:
        compile(program.source, "<shrink>", "exec")
    except SyntaxError:
        return False
    return True


def candidates(program: Program):
    """Smaller variants of `program`, the most reducing kinds first."""
    calls = program.calls
    for i in range(len(calls)):
        if len(calls) > 1:
            yield program.with_calls(calls[:i] + calls[i + 1 :])
    body = program.body
    chunk = len(body) // 2
    while chunk >= 2:  # delta debugging: big contiguous chunks first
        for start in range(0, len(body) - chunk + 1, chunk):
            kept = tuple(n for k, n in enumerate(body) if n.pinned or not start <= k < start + chunk)
            if len(kept) < len(body):
                yield program.with_body(kept)
        chunk //= 2
    sites = sorted(_sites(program.body), key=lambda s: -s[1].size())
    for path, node in sites:
        if not node.pinned:
            yield program.with_body(_edit(program.body, path, ()))
    for path, node in sites:
        if node.hoist:
            for suite in node.suites:
                yield program.with_body(_edit(program.body, path, suite.body))
        for k, suite in enumerate(node.suites):
            if suite.optional:
                kept = node.suites[:k] + node.suites[k + 1 :]
                yield program.with_body(_edit(program.body, path, (replace(node, suites=kept),)))
        for alt in node.alts:
            yield program.with_body(_edit(program.body, path, (replace(node, head=alt, alts=()),)))
    for path, node in sites:
        if node.pinned or "while " in node.head:  # `while w < 3` -> `while 3` would never end
            continue
        for head in expression_variants(node.head):
            yield program.with_body(_edit(program.body, path, (replace(node, head=head, alts=()),)))


MAX_VARIANTS = 40
_PASS = "\n    pass"


def expression_variants(head: str) -> list[str]:
    """`head` with one sub-expression replaced by one of its operands, or an element dropped.

    ``x = g(a + b, c)`` gives ``x = a + b``, ``x = g(a, c)``, ``x = g(a + b)``, ...
    Compound headers are parsed with a ``pass`` body; heads that do not parse
    alone (``case 0:``, ``nonlocal n``) have no variants.
    """
    compound = head.rstrip().endswith(":")
    try:
        tree = ast.parse(head + (_PASS if compound else ""))
    except SyntaxError:
        return []
    out: list[str] = []
    nodes = list(ast.walk(tree))
    for index, node in enumerate(nodes):
        if not isinstance(node, ast.expr) or isinstance(node, (ast.JoinedStr, ast.FormattedValue)):
            continue
        for child in _operands(node):
            out.append(_replaced(tree, index, child, compound))
        for field_name in ("elts", "args"):
            items = getattr(node, field_name, None)
            for k in range(len(items) if isinstance(items, list) else 0):
                out.append(_dropped(tree, index, field_name, k, compound))
        if len(out) >= MAX_VARIANTS:
            break
    return [v for v in dict.fromkeys(out) if v and v != head][:MAX_VARIANTS]


def _operands(node) -> list[int]:
    """Indices (in `ast.iter_child_nodes` order) of the expression children of `node`."""
    return [
        i
        for i, c in enumerate(ast.iter_child_nodes(node))
        if isinstance(c, ast.expr) and not isinstance(node, (ast.Lambda, ast.comprehension))
    ]


def _copy_at(tree, index):
    twin = copy.deepcopy(tree)
    return twin, list(ast.walk(twin))[index]


def _unparse(tree, compound: bool) -> str:
    try:
        text = ast.unparse(tree)
    except Exception:  # noqa: BLE001 - a replacement the unparser rejects (e.g. inside an f-string)
        return ""
    return text[: -len(_PASS)] if compound and text.endswith(_PASS) else text


def _replaced(tree, index, child_pos, compound) -> str:
    twin, target = _copy_at(tree, index)
    child = list(ast.iter_child_nodes(target))[child_pos]
    for parent in ast.walk(twin):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, child)
                return _unparse(twin, compound)
            if isinstance(value, list) and any(v is target for v in value):
                value[next(i for i, v in enumerate(value) if v is target)] = child
                return _unparse(twin, compound)
    return ""


def _dropped(tree, index, field_name, k, compound) -> str:
    twin, target = _copy_at(tree, index)
    del getattr(target, field_name)[k]
    return _unparse(twin, compound)


def _sites(body, prefix=()):
    """(path, node) for every node; a path alternates node index and suite index."""
    out, work = [], [(body, prefix)]
    while work:
        nodes, pre = work.pop()
        for i, node in enumerate(nodes):
            out.append((pre + (i,), node))
            for k, suite in enumerate(node.suites):
                work.append((suite.body, pre + (i, k)))
    return out


def _edit(body: tuple, path: tuple, new: tuple) -> tuple:
    """`body` with the node at `path` replaced by the nodes `new` (recursion depth = nesting)."""
    i = path[0]
    if len(path) == 1:
        return body[:i] + tuple(new) + body[i + 1 :]
    node = body[i]
    k = path[1]
    suite = node.suites[k]
    suites = (
        node.suites[:k]
        + (Suite(suite.head, _edit(suite.body, path[2:], new), suite.optional),)
        + node.suites[k + 1 :]
    )
    return body[:i] + (replace(node, suites=suites),) + body[i + 1 :]


def shrink_mismatch(
    program: Program,
    capture=None,
    *,
    budget: int = 300,
    time_limit: float | None = None,
    signature=None,
    run=None,
):
    """Shrink while the differential run keeps failing the same way; returns (program, verdict).

    `run(program, capture)` defaults to `differential.run`; a caller may wrap it
    (with a timeout, say) and return None for "no verdict", which counts as passing.
    """
    run = run or differential.run
    first = run(program, capture)
    if first is None or first.ok:
        return program, first
    signature = signature or first.mismatch.signature
    last = {"verdict": first}

    def still_fails(cand: Program) -> bool:
        try:
            verdict = run(cand, capture)
        except Exception:  # noqa: BLE001 - e.g. an argument expression no longer evaluates
            return False
        if verdict is None or verdict.ok or verdict.mismatch.signature != signature:
            return False
        last["verdict"] = verdict
        return True

    small = shrink(program, still_fails, budget=budget, time_limit=time_limit)
    return small, last["verdict"]


REPRO_TEMPLATE = '''\
"""Fuzz reproducer {name} (mode {mode}, seed {seed}).

{description}

Run:  python {filename}     (exit status 1 while the mismatch persists)
"""
import sys

from bcfront.testing.differential import run
from bcfront.testing.program import CallSpec, from_source

SOURCE = {source}

CALLS = {calls}

if __name__ == "__main__":
    verdict = run(from_source(SOURCE, CALLS, name={name!r}, entry={entry!r}))
    print("ok" if verdict.ok else verdict.mismatch.describe())
    sys.exit(0 if verdict.ok else 1)
'''


def reproducer(program: Program, verdict, filename: str = "repro.py") -> str:
    """A standalone script that reruns `program` differentially and reports the mismatch."""
    calls = (
        "[\n"
        + "".join(
            f"    CallSpec({c.args!r}{'' if c.grad else ', grad=False'}"
            f"{f', before={c.before!r}' if c.before else ''}),\n"
            for c in program.calls
        )
        + "]"
    )
    description = verdict.mismatch.describe() if verdict.mismatch else "no mismatch"
    description = description.replace('"""', "'''").replace("\\", "\\\\")
    return REPRO_TEMPLATE.format(
        name=program.name,
        mode=program.mode,
        seed=program.seed,
        description=description,
        filename=filename,
        source=source_literal(program.source),
        calls=calls,
        entry=program.entry,
    )


def source_literal(text: str) -> str:
    """`text` as a readable Python literal: a raw triple-quoted string when that is exact."""
    if "'''" not in text and not text.endswith("\\"):
        return "r'''" + text + "'''"
    return repr(text)
