"""The import structure of `bcfront/`: layers, no cycles, no private imports.

AST only (no torch, nothing imported): every `import` and `from ... import`
anywhere in a module (function bodies and `if TYPE_CHECKING:` blocks too, since
either can run) is resolved to the module it loads.  Three rules:

  (a) a module imports only from its own layer or the layers below it
      (`LAYERS`, lowest first, as in `docs/architecture.md`);
  (b) no import cycle between modules;
  (c) no module imports another module's private (`_name`) names, neither as
      `from m import _x` nor as `m._x` on a module it imported.

Each rule is also run on a tiny synthetic package with one planted violation,
so a checker that stopped catching its case fails here too.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lowest first; a module belongs to the layer of its longest matching prefix.
LAYERS: list[tuple[str, ...]] = [
    (
        "bcfront.cfast",
        "bcfront.described",
        "bcfront.errors",
        "bcfront.html",
        "bcfront.options",
        "bcfront.reasons",
        "bcfront.report",
        "bcfront.timing",
    ),
    ("bcfront.analysis",),
    ("bcfront.ir",),
    ("bcfront.backends",),
    ("bcfront.frontend.model", "bcfront.frontend"),
    ("bcfront.frontend.semantics",),
    ("bcfront.frontend.interp",),
    ("bcfront.frontend.regions",),
    (
        "bcfront.capture",
        "bcfront.explain",
        "bcfront.fast_call",
        "bcfront.keyed_dispatch",
        "bcfront.chain_order",
        "bcfront.shapes",
    ),
    ("bcfront.cli", "bcfront.testing", "bcfront"),
]


# --- the checker -----------------------------------------------------------


def find_modules(root: Path, package: str) -> dict[str, Path]:
    """Every module under `root/package` by dotted name (packages by their name)."""
    mods = {}
    for dirpath, _, files in os.walk(root / package):
        for f in files:
            if f.endswith(".py"):
                path = Path(dirpath) / f
                name = ".".join(path.relative_to(root).with_suffix("").parts)
                mods[name.removesuffix(".__init__")] = path
    return mods


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


class Imports:
    """The imports of one module: edges to modules, private names reached."""

    def __init__(self, module: str, path: Path, mods: dict[str, Path]):
        self.module = module
        self.mods = mods
        self.package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.edges: dict[str, int] = {}  # target module -> first line
        self.private: list[tuple[str, str, int]] = []  # (module, name, line)
        self.bound: dict[str, str] = {}  # local name -> module it holds
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self._import(node)
            elif isinstance(node, ast.ImportFrom):
                self._import_from(node)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and is_private(node.attr):
                target = self._module_of(node.value)
                if target is not None and target != module:
                    self.private.append((target, node.attr, node.lineno))

    def _edge(self, target: str, line: int) -> None:
        if target in self.mods and target != self.module:
            self.edges.setdefault(target, line)

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name in self.mods:
                self._edge(alias.name, node.lineno)
                if alias.asname:
                    self.bound[alias.asname] = alias.name

    def _import_from(self, node: ast.ImportFrom) -> None:
        if node.level:
            parts = self.package.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        if base not in self.mods:
            return
        for alias in node.names:
            full = f"{base}.{alias.name}"
            if full in self.mods:
                self._edge(full, node.lineno)
                self.bound[alias.asname or alias.name] = full
            else:
                self._edge(base, node.lineno)
                if is_private(alias.name) and base != self.module:
                    self.private.append((base, alias.name, node.lineno))

    def _module_of(self, expr: ast.expr) -> str | None:
        """The module `expr` names: a bound import, or a dotted path `a.b.c`."""
        if isinstance(expr, ast.Name):
            return self.bound.get(expr.id)
        dotted = []
        while isinstance(expr, ast.Attribute):
            dotted.append(expr.attr)
            expr = expr.value
        if isinstance(expr, ast.Name):
            head = self.bound.get(expr.id, expr.id)
            name = ".".join([head, *reversed(dotted)])
            return name if name in self.mods else None
        return None


def layer_of(module: str, layers: list[tuple[str, ...]]) -> int:
    best, best_len = -1, -1
    for i, prefixes in enumerate(layers):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def scan(root: Path, package: str) -> dict[str, Imports]:
    mods = find_modules(root, package)
    return {m: Imports(m, p, mods) for m, p in sorted(mods.items())}


def upward_imports(imports: dict[str, Imports], layers) -> list[str]:
    out = []
    for m, imp in imports.items():
        lm = layer_of(m, layers)
        for t, line in imp.edges.items():
            lt = layer_of(t, layers)
            if lm < 0 or lt < 0:
                out.append(f"{m}:{line} -> {t}: module in no layer")
            elif lt > lm:
                out.append(f"{m}:{line} (layer {lm}) imports {t} (layer {lt})")
    return out


def cycles(imports: dict[str, Imports], allowed=frozenset()) -> list[list[str]]:
    """One cycle (as a module path a -> ... -> a) per strongly connected component."""
    graph = {m: sorted(t for t in imp.edges if (m, t) not in allowed) for m, imp in imports.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[set[str]] = []

    def connect(v: str) -> None:  # Tarjan, recursive: the graph is small
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in graph:
        if v not in index:
            connect(v)
    return [_cycle_in(comp, graph) for comp in comps]


def _cycle_in(comp: set[str], graph: dict[str, list[str]]) -> list[str]:
    """A shortest cycle through the component's first module (breadth first)."""
    start = min(comp)
    prev = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in graph[v]:
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w in comp and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("a strongly connected component without a cycle")


def private_imports(imports: dict[str, Imports], allowed=frozenset()) -> list[str]:
    return [
        f"{m}:{line} uses {t}.{name}"
        for m, imp in imports.items()
        for t, name, line in imp.private
        if (m, t, name) not in allowed
    ]


# --- the rules on bcfront ---------------------------------------------------


@pytest.fixture(scope="module")
def bcfront_imports():
    return scan(ROOT, "bcfront")


def test_every_module_has_a_layer(bcfront_imports):
    assert [m for m in bcfront_imports if layer_of(m, LAYERS) < 0] == []


def test_no_import_from_a_higher_layer(bcfront_imports):
    bad = upward_imports(bcfront_imports, LAYERS)
    assert not bad, "imports against the layer order:\n  " + "\n  ".join(bad)


def test_no_import_cycle(bcfront_imports):
    found = cycles(bcfront_imports)
    assert not found, "import cycles:\n  " + "\n  ".join(" -> ".join(c) for c in found)


def test_no_private_imports(bcfront_imports):
    bad = private_imports(bcfront_imports)
    assert not bad, "imports of other modules' private names:\n  " + "\n  ".join(bad)


# --- each rule catches its planted case --------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Imports]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return scan(tmp_path, "pkg")


TOY_LAYERS = [("pkg.low",), ("pkg.high", "pkg")]


def test_planted_upward_import_in_a_function_is_caught(tmp_path):
    imports = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "def f():\n    from .high import g\n    return g\n",
            "pkg/high.py": "from .low import f\ndef g(): pass\n",
        },
    )
    bad = upward_imports(imports, TOY_LAYERS)
    assert bad == ["pkg.low:2 (layer 0) imports pkg.high (layer 1)"]


def test_planted_type_checking_import_counts(tmp_path):
    imports = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.high\n",
            "pkg/high.py": "",
        },
    )
    assert upward_imports(imports, TOY_LAYERS) == ["pkg.low:3 (layer 0) imports pkg.high (layer 1)"]


def test_planted_cycle_is_caught_and_reported(tmp_path):
    imports = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/a.py": "from . import b\n",
            "pkg/sub/b.py": "def f():\n    from ..sub.c import x\n",
            "pkg/sub/c.py": "import pkg.sub.a\nx = 1\n",
            "pkg/sub/d.py": "from .a import *\n",
        },
    )
    assert cycles(imports) == [["pkg.sub.a", "pkg.sub.b", "pkg.sub.c", "pkg.sub.a"]]
    allowed = frozenset({("pkg.sub.c", "pkg.sub.a")})
    assert cycles(imports, allowed) == []


def test_planted_private_imports_are_caught(tmp_path):
    imports = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "_x = 1\n__all__ = []\ndef _own(): return _x\n",
            "pkg/b.py": "from .a import _x, __all__\n",
            "pkg/c.py": "from . import a\ndef f(): return a._x + a.__all__\n",
            "pkg/d.py": "import pkg.a\nimport pkg.a as mod\ny = pkg.a._own\nz = mod._x\n",
            "pkg/e.py": "from .a import _own as own\n",
        },
    )
    assert private_imports(imports) == [
        "pkg.b:1 uses pkg.a._x",
        "pkg.c:2 uses pkg.a._x",
        "pkg.d:3 uses pkg.a._own",
        "pkg.d:4 uses pkg.a._x",
        "pkg.e:1 uses pkg.a._own",
    ]
    assert private_imports(imports, frozenset({("pkg.b", "pkg.a", "_x")}))[0] == "pkg.c:2 uses pkg.a._x"


def test_planted_module_in_no_layer_is_caught(tmp_path):
    imports = _package(tmp_path, {"pkg/__init__.py": "", "pkg/stray.py": "import pkg\n"})
    assert upward_imports(imports, [("pkg.low",), ("pkg",)]) == []
    assert upward_imports(imports, [("pkg.low",)]) == ["pkg.stray:1 -> pkg: module in no layer"]


# --- the hooks that replace upward imports are filled ----------------------------


def test_dispatch_slots_are_filled_once_the_interpreter_is_imported():
    """`semantics.dispatch` slots are filled by their owners at import; the interpreter
    imports every owner, so none is left raising when a trace runs (no torch needed)."""
    import importlib

    importlib.import_module("bcfront.frontend.interp.interpreter")
    dispatch = importlib.import_module("bcfront.frontend.semantics.dispatch")
    slots = {n: v for n, v in vars(dispatch).items() if not n.startswith("_") and callable(v)}
    assert set(slots) == {"call", "to_list", "inline_call", "resume_generator", "run_class_body"}
    assert {n: v.__module__ for n, v in slots.items()} == {
        "call": "bcfront.frontend.semantics.objects",
        "to_list": "bcfront.frontend.semantics.iteration",
        "inline_call": "bcfront.frontend.interp.interpreter",
        "resume_generator": "bcfront.frontend.interp.interpreter",
        "run_class_body": "bcfront.frontend.interp.interpreter",
    }
