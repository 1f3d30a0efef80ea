"""Predict graph breaks from static analysis alone, without running the file.

The file is compiled (never executed) and every code object in it — module
body, class bodies, functions, methods, nested functions — is interpreted
abstractly (`static_flow`) to learn which values are *tensor-derived*: they
come from parameters annotated as tensors, from torch calls, or from
arguments passed by other code in the file (calls seed their callee's
parameters; a few rounds let that settle).  A break is predicted where such a
value meets something a graph cannot hold:

* ``data-dependent-branch`` — ``if``/``while``/``assert``/``and``/``or`` on a tensor;
* ``data-dependent`` — ``.item()``, ``.tolist()``, ``int()``/``float()``/``bool()``,
  ``math.*`` or ``max``/``any`` on tensors (surest when the number then steers
  control flow);
* ``io`` — ``print``, ``open``, ``input``, ``sys.stdout.write``;
* ``numpy`` — numpy (or ``.numpy()``) with tensor arguments: opaque to the interpreter;
* ``numpy-array`` — numpy arrays used afterwards (their methods, torch calls on them).

Predictions are made for the functions that run under capture: those passed to
``bcfront.capture`` (call or decorator) or ``bcfront.explain``, ``forward``
methods, and whatever they call in the file — or every function when the file
captures nothing.  Each prediction has a confidence from `CONFIDENCE`: lower
when the value is a tensor only on some paths or only by guess.
"""

from __future__ import annotations

import ast
import linecache
import os
import types
from dataclasses import dataclass

from bcfront.reasons import BreakReason

from .runner import compile_script
from .static_flow import Facts, Flow, RawPrediction
from .static_values import MAYBE_TENSOR, TENSOR, UNKNOWN, V, join
from .target import is_function, iter_code_objects

MAX_FILE_ROUNDS = 8

# (reason, certain, steers control flow) -> confidence that capture breaks there.
CONFIDENCE = {
    (BreakReason.DATA_DEPENDENT_BRANCH, True, False): 0.9,
    (BreakReason.DATA_DEPENDENT_BRANCH, False, False): 0.5,
    (BreakReason.DATA_DEPENDENT, True, True): 0.9,
    (BreakReason.DATA_DEPENDENT, True, False): 0.7,
    (BreakReason.DATA_DEPENDENT, False, True): 0.6,
    (BreakReason.DATA_DEPENDENT, False, False): 0.45,
    (BreakReason.IO, True, False): 0.85,
    (BreakReason.IO, False, False): 0.85,
    (BreakReason.NUMPY, True, False): 0.85,
    (BreakReason.NUMPY, False, False): 0.5,
    (BreakReason.NUMPY_ARRAY, True, False): 0.6,
    (BreakReason.CALL_TO_C_FUNCTION, True, False): 0.9,  # a class statement with a metaclass
}

MESSAGES = {
    BreakReason.DATA_DEPENDENT_BRANCH: "the condition depends on tensor data: Python needs its value, "
    "so the graph ends here",
    BreakReason.DATA_DEPENDENT: "{detail} turns tensor data into a Python value",
    BreakReason.IO: "{detail} does I/O, which cannot be part of a graph",
    BreakReason.NUMPY: "{detail} gets a tensor: numpy is opaque to the interpreter",
    BreakReason.NUMPY_ARRAY: "{detail} works on a numpy array, which cannot be part of a graph",
    BreakReason.CALL_TO_C_FUNCTION: "a {detail} inside the function runs natively: capture does not "
    "model its metaclass",
}


@dataclass(frozen=True)
class Prediction:
    function: str
    filename: str
    lineno: int | None
    reason: BreakReason
    message: str
    confidence: float
    source_line: str = ""
    instruction: str = ""


@dataclass(frozen=True)
class FunctionPredictions:
    function: str  # qualified name, without "<locals>"
    lineno: int
    captured: bool  # runs under capture (so its predictions count)
    predictions: tuple[Prediction, ...] = ()


@dataclass(frozen=True)
class StaticReport:
    filename: str
    functions: tuple[FunctionPredictions, ...]

    @property
    def predictions(self) -> list[Prediction]:
        return [p for f in self.functions for p in f.predictions]


# -- what the source says about parameters -------------------------------------------


@dataclass(frozen=True)
class ParamInfo:
    annotation: str | None
    default: str | None  # "None", a literal, or "" for another expression


@dataclass(frozen=True)
class DefInfo:
    params: dict  # name -> ParamInfo
    decorators: tuple[str, ...]
    in_class: str | None  # qualname of the enclosing class, for methods


def scan_source(tree: ast.Module) -> tuple[dict[str, DefInfo], set[str], dict[str, V]]:
    """Functions (by CPython qualname), class qualnames, and module-level def/class bindings."""
    defs: dict[str, DefInfo] = {}
    classes: set[str] = set()
    top: dict[str, V] = {}
    todo = [(n, "", None) for n in tree.body]
    while todo:
        node, prefix, klass = todo.pop()
        if isinstance(node, ast.ClassDef):
            q = prefix + node.name
            classes.add(q)
            if not prefix:
                top[node.name] = V("class", name=q)
            todo.extend((n, q + ".", q) for n in node.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            q = prefix + node.name
            defs[q] = DefInfo(_params(node.args), tuple(ast.unparse(d) for d in node.decorator_list), klass)
            if not prefix:
                top[node.name] = V("func", name=q)
            todo.extend((n, q + ".<locals>.", None) for n in node.body)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    todo.append((child, prefix, klass))
    return defs, classes, top


def _params(args: ast.arguments) -> dict[str, ParamInfo]:
    out = {}
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    pairs += [(a, None) for a in (args.vararg, args.kwarg) if a is not None]
    for a, d in pairs:
        ann = ast.unparse(a.annotation) if a.annotation is not None else None
        default = None if d is None else (repr(d.value) if isinstance(d, ast.Constant) else "")
        out[a.arg] = ParamInfo(ann, default)
    return out


def param_values(code: types.CodeType, info: DefInfo | None, facts: Facts, entry: bool) -> dict:
    """The abstract value of each parameter of `code` at entry."""
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
    names = code.co_varnames[:n]
    seeds = facts.seeds.get(code.co_qualname, {})
    decorators = info.decorators if info else ()
    out = {}
    for i, name in enumerate(names):
        p = info.params.get(name) if info else None
        seed = _join_opt(seeds.get(i), seeds.get(name))
        if i == 0 and info and info.in_class and "staticmethod" not in decorators:
            out[name] = V("class" if "classmethod" in decorators else "self", name=info.in_class)
        elif p is not None and p.annotation is not None:
            out[name] = TENSOR if "Tensor" in p.annotation else UNKNOWN
        elif seed is not None:
            out[name] = seed
        elif entry and (p is None or p.default in (None, "None")):
            out[name] = MAYBE_TENSOR  # a guess: captured code is mostly fed tensors
        else:
            out[name] = UNKNOWN
    return out


def _join_opt(a: V | None, b: V | None) -> V | None:
    if a is None or b is None:
        return a or b
    return join(a, b)


# -- the driver ------------------------------------------------------------------------


def _is_forward(q: str, defs: dict[str, DefInfo]) -> bool:
    info = defs.get(q)
    return bool(info and info.in_class and q.endswith(".forward"))


def predict_file(path: str) -> StaticReport:
    """Predicted graph breaks of every function in the file at `path` (not executed)."""
    code = compile_script(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        tree = ast.parse(f.read(), path)
    defs, classes, top = scan_source(tree)
    codes = list(iter_code_objects(code))
    facts = Facts(defs=top, classes=classes)
    for c in codes:
        if is_function(c):
            facts.functions.add(c.co_qualname)
            cls = c.co_qualname.rpartition(".")[0]
            if cls in classes:
                facts.methods.setdefault(cls, set()).add(c.co_name)
    flows: dict[types.CodeType, Flow] = {}
    for _ in range(MAX_FILE_ROUNDS):
        before = _snapshot(facts)
        flows, facts.calls = {}, {}
        for c in codes:
            q = c.co_qualname
            info = defs.get(q)
            fl = Flow(c, facts, q, info.in_class if info else None)
            entry = q in facts.entries or _is_forward(q, defs)
            fl.run(param_values(c, info, facts, entry) if is_function(c) else {})
            if is_function(c):
                old = facts.new_returns.get(q)
                facts.new_returns[q] = fl.returned if old is None else join(old, fl.returned)
            flows[c] = fl
        changed = facts.next_round()
        if not changed and _snapshot(facts) == before:
            break
    captured = _captured(facts, defs)
    out = []
    for c, fl in flows.items():
        if not is_function(c):
            continue
        q = c.co_qualname
        preds = (
            _merge_lines(
                _prediction(path, q, fl, raw)
                for raw in sorted(fl.predictions.values(), key=lambda r: r.offset)
            )
            if q in captured
            else ()
        )
        out.append(FunctionPredictions(q.replace(".<locals>", ""), c.co_firstlineno, q in captured, preds))
    return StaticReport(path, tuple(out))


def _snapshot(facts: Facts):
    """The facts that only grow (seeds and returns are compared by `Facts.next_round`)."""
    return (
        repr(sorted(facts.class_attrs.items(), key=str)),
        repr(sorted(facts.globals.items())),
        tuple(sorted(facts.entries)),
    )


def _captured(facts: Facts, defs: dict[str, DefInfo]) -> set[str]:
    """Functions that run under capture: the entries and everything they call in the file."""
    roots = set(facts.entries) | {q for q in facts.functions if _is_forward(q, defs)}
    if not roots:
        return set(facts.functions)  # nothing is captured explicitly: consider everything
    seen, todo = set(roots), list(roots)
    while todo:
        for callee in facts.calls.get(todo.pop(), ()):
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    # Code nested in a captured function (comprehensions, closures) runs under it too.
    return seen | {q for q in facts.functions if any(q.startswith(s + ".<locals>.") for s in seen)}


def _merge_lines(preds) -> tuple[Prediction, ...]:
    """One prediction per line: the likeliest, the earliest on a tie.

    Capture breaks at most once per line per pass (the rest of the line runs
    in the continuation), and a ``while`` tests its condition in two places.
    """
    out: dict[int | None, Prediction] = {}
    for p in preds:  # in offset order
        if p.lineno not in out or p.confidence > out[p.lineno].confidence:
            out[p.lineno] = p
    return tuple(out.values())


def _prediction(path: str, qualname: str, fl: Flow, raw: RawPrediction) -> Prediction:
    steers = raw.reason == BreakReason.DATA_DEPENDENT and raw.offset in fl.steering
    conf = CONFIDENCE.get(
        (raw.reason, raw.certain, steers), CONFIDENCE.get((raw.reason, raw.certain, False), 0.5)
    )
    message = MESSAGES[raw.reason].format(detail=raw.detail)
    if steers:
        message += ", and that value then steers control flow"
    if not raw.certain:
        message += " (if the value involved is a tensor on this path)"
    line = linecache.getline(os.path.abspath(path), raw.lineno).strip() if raw.lineno else ""
    return Prediction(
        qualname.replace(".<locals>", ""), path, raw.lineno, raw.reason, message, conf, line, raw.instruction
    )
