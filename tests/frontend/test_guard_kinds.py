"""Guard kinds: one enum (`GuardKind`), named fields for multi-part expected values.

Every kind has a row in `guards.KINDS` and a meaning; no code passes or compares a
bare string as a guard kind (AST scan); the generated check and the readable text
read the named fields and come out as they did with plain tuples.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bcfront.frontend.model.guard_kinds import GuardKind, StorageLayout, TensorMatch
from bcfront.frontend.model.guards import KINDS, Guard, GuardSet, single_check_source
from bcfront.frontend.model.namespace import Namespace
from bcfront.frontend.model.sources import LocalSource

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_has_a_row_and_a_meaning():
    assert set(KINDS) == set(GuardKind)
    assert all(k.meaning and k.value == k.name for k in GuardKind)


def bare_kinds(source: str) -> list[tuple[int, str]]:
    """(line, string) for each string literal naming a guard kind where a kind is expected:
    the first argument of `guard(...)`, `Guard(...)` or `g(...)` (builder's alias of
    tx.guard), or compared with `g.kind` / `guard.kind`."""
    kinds = {k.value for k in GuardKind}
    found = []

    def literals(node):
        if isinstance(node, ast.Constant) and node.value in kinds:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.IfExp):
            literals(node.body)
            literals(node.orelse)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for e in node.elts:
                literals(e)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ("guard", "Guard", "g"):
                literals(node.args[0])
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(
                isinstance(x, ast.Attribute)
                and x.attr == "kind"
                and isinstance(x.value, ast.Name)
                and x.value.id in ("g", "guard")
                for x in sides
            ):
                for x in sides:
                    literals(x)
    return found


def test_no_bare_string_is_used_as_a_guard_kind():
    offenders = []
    # the CLI reads the report, whose kinds are plain strings (and hand-written reports'
    # kinds need not be members): it is not scanned
    for path in sorted((ROOT / "bcfront").rglob("*.py")):
        if "cli" in path.parts or path.name == "guard_kinds.py":
            continue
        offenders += [f"{path.relative_to(ROOT)}:{line}: {s!r}" for line, s in bare_kinds(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize(
    "planted",
    [
        'tx.guard("ID_MATCH", src, obj)',
        'g("TYPE_MATCH" if x else GuardKind.LENGTH, src, t)',
        'Guard("LENGTH", src, 0)',
        'if g.kind in ("ID_MATCH", GuardKind.TYPE_MATCH): pass',
    ],
)
def test_scan_finds_a_planted_bare_kind(planted):
    assert bare_kinds(planted)


def test_expected_values_have_named_fields_and_stay_tuples():
    t = TensorMatch(object, "f32", "cpu", (2, 3), (3, 1), False)
    assert (t.shape, t.stride, t.requires_grad) == ((2, 3), (3, 1), False)
    assert t == (object, "f32", "cpu", (2, 3), (3, 1), False)  # equality and hashing as before
    assert hash(StorageLayout((1,), (None,))) == hash(((1,), (None,)))


def test_tensor_check_text_reads_the_fields():
    torch = pytest.importorskip("torch")
    src = LocalSource("x")
    exp = TensorMatch(torch.Tensor, torch.float32, torch.device("cpu"), (2, 3), (3, 1), True)
    g = Guard(GuardKind.TENSOR_MATCH, src, exp)
    assert g.readable() == (
        "check_tensor(L['x'], torch.Tensor, torch.float32, device='cpu', "
        "shape=[2, 3], stride=[3, 1], requires_grad=True)"
    )
    ns = Namespace({"x": "x"})
    code = single_check_source(g, ns)
    assert ".shape == (2, 3) and x.stride() == (3, 1) and x.requires_grad is True" in code


def test_storage_guard_reads_the_fields():
    gs = GuardSet()
    a, b = LocalSource("a"), LocalSource("b")
    g = Guard(GuardKind.TENSOR_STORAGE, a, StorageLayout((a, b), ((0, 0), (0, 4))))
    gs.add(g)
    assert g.readable() == "storage shared among L['a'], L['b'] as captured: ((0, 0), (0, 4))"
    body = "\n".join(gs.function_body(Namespace({"a": "a", "b": "b"})))
    assert "(a, b) == ((0, 0), (0, 4))" in body


def test_recompile_shows_the_storage_layout_as_the_plain_pair():
    pytest.importorskip("torch")  # (diagnose imports torch; a broken bcfront must fail, not skip)
    from bcfront.frontend.regions import diagnose

    a = LocalSource("a")
    g = Guard(GuardKind.TENSOR_STORAGE, a, StorageLayout((a,), (None,)))
    assert diagnose._expected(g) == repr(((a,), (None,)))
