"""Graph-break reasons: one enum (`bcfront.reasons.BreakReason`), used everywhere.

The doc's table equals the enum; no code passes or compares a bare string as a
reason (AST scan); `UnsupportedError` refuses an unknown reason; the JSON
report still shows today's strings.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from bcfront.errors import UnsupportedError
from bcfront.reasons import BreakReason
from bcfront.report import FunctionReport, GraphBreak, Report

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DOC = ROOT / "docs" / "explain-schema.md"

# Callables whose first argument is a reason.
REASON_TAKERS = {
    "UnsupportedError",
    "unsupported",
    "_unsupported",
    "_unsupported_ctor",
    "predict",
    "GraphBreakError",
    "GraphBreak",
}


def doc_reasons() -> list[tuple[str, str]]:
    section = SCHEMA_DOC.read_text().split("### graph-break reasons", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \| (.*) \|$", section, re.M)


def test_doc_table_is_the_enum():
    assert doc_reasons() == [(r.value, r.meaning) for r in BreakReason]


def test_every_member_has_a_one_line_meaning():
    for r in BreakReason:
        assert r.meaning and "\n" not in r.meaning, r
    assert len({r.value for r in BreakReason}) == len(BreakReason)


def _literals(node: ast.AST):
    """String constants an expression can evaluate to directly (through `a if c else b`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, ast.IfExp):
        yield from _literals(node.body)
        yield from _literals(node.orelse)


def _is_reason(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Name)
        and node.id == "reason"
        or isinstance(node, ast.Attribute)
        and node.attr == "reason"
    )


def bare_reasons(source: str) -> list[tuple[int, str]]:
    """(line, string) for each string literal used as a reason: passed to a reason
    taker, compared (==, !=) with a `.reason`, or assigned to a variable named `reason`.
    (`in` is left out: `Recompile.reason` is a sentence searched for words.)"""
    found = []
    tree = ast.parse(source)
    # super().__init__(reason, ...) inside a subclass of UnsupportedError
    subclass_inits = {
        id(n)
        for c in ast.walk(tree)
        if isinstance(c, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "UnsupportedError" for b in c.bases)
        for n in ast.walk(c)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
    }
    for node in ast.walk(tree):
        exprs = []
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if id(node) in subclass_inits and node.args:
                exprs.append(node.args[0])
            elif name in REASON_TAKERS:
                if name == "predict" and len(node.args) > 1:
                    exprs.append(node.args[1])
                elif name != "predict" and node.args:
                    exprs.append(node.args[0])
            exprs += [k.value for k in node.keywords if k.arg == "reason"]
        elif (
            isinstance(node, ast.Compare)
            and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)
            and any(map(_is_reason, [node.left, *node.comparators]))
        ):
            exprs += [node.left, *node.comparators]
        elif isinstance(node, ast.Assign) and any(map(_is_reason, node.targets)):
            exprs.append(node.value)
        found += [(c.lineno, c.value) for e in exprs for c in _literals(e)]
    return found


def test_no_bare_string_is_used_as_a_reason():
    offenders = []
    for path in sorted((ROOT / "bcfront").rglob("*.py")):
        if path.name == "reasons.py":
            continue
        offenders += [f"{path.relative_to(ROOT)}:{line}: {s!r}" for line, s in bare_reasons(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize(
    "planted",
    [
        'raise UnsupportedError("io", "m")',
        'tx.unsupported("data-dependent" if t else "io", "m")',
        'fl.predict(ins, "io", name, True)',
        'if err.reason == "recursion-limit": pass',
        'reason = "io" if x else BreakReason.IO',
        'class E(UnsupportedError):\n    def __init__(self):\n        super().__init__("io", "m")',
    ],
)
def test_scan_finds_a_planted_bare_reason(planted):
    assert bare_reasons(planted)
    assert not bare_reasons(
        planted.replace('"io"', "BreakReason.IO")
        .replace('"data-dependent"', "BreakReason.DATA_DEPENDENT")
        .replace('"recursion-limit"', "R.X")
    )


def test_unsupported_error_takes_members_and_their_values_only():
    assert UnsupportedError("io", "m").reason is BreakReason.IO
    assert UnsupportedError(BreakReason.STEP_LIMIT, "m").reason is BreakReason.STEP_LIMIT
    with pytest.raises(ValueError, match="'no-such-reason' is not a graph-break reason"):
        UnsupportedError("no-such-reason", "m")


def test_reason_is_its_string_in_text_and_json():
    r = BreakReason.DATA_DEPENDENT_BRANCH
    assert r == "data-dependent-branch" and str(r) == f"{r}" == "data-dependent-branch"
    assert hash(r) == hash("data-dependent-branch")
    brk = GraphBreak("data-dependent-branch", "m", "f.py", 3)
    assert brk.reason is BreakReason.DATA_DEPENDENT_BRANCH
    report = Report((FunctionReport("f", "f.py", 1, graph_breaks=(brk,)),))
    assert (
        json.loads(report.to_json())["functions"][0]["graph_breaks"][0]["reason"] == "data-dependent-branch"
    )
    assert '"reason": "data-dependent-branch"' in report.to_json()
    with pytest.raises(ValueError):
        GraphBreak("not-a-reason", "m", None, None)


def test_denied_tensor_methods_name_members():
    pytest.importorskip("torch")  # (torch_calls imports torch; a broken bcfront must fail, not skip)
    from bcfront.frontend.semantics import torch_calls

    assert all(isinstance(r, BreakReason) for r in torch_calls.DENIED_METHODS.values())


def test_explain_json_of_a_known_break_shows_the_string():
    torch = pytest.importorskip("torch")
    import bcfront

    def f(x):
        print("step")
        return x + 1

    report = bcfront.explain(f, torch.ones(2))
    breaks = json.loads(report.to_json())["functions"][0]["graph_breaks"]
    assert [b["reason"] for b in breaks] == ["io"]
    assert type(report.graph_breaks[0].reason) is BreakReason
