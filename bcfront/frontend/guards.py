"""Guards: the facts a captured graph relies on, compiled into one Python function.

A `Guard` names a source, a kind and the expected value.  `GuardSet` keeps
them deduplicated and in the order they were discovered (that order is the
"first use" order explain shows).  `GuardSet.expressions(ns)` turns them into
boolean Python expressions, cheapest kinds first; codegen joins them with
``and`` into one generated function.  Tensor checks are batched into a single
call to torch's C++ ``TensorGuards`` when it is available (dtype, device,
shape, stride, requires_grad and dispatch keys in one call), with an
equivalent pure-Python expression otherwise.

The kinds, their cost class and their readable form live in one table,
`KINDS`.  On a miss, `first_failure` evaluates the guards one at a time to say
which one failed, with the expected and the actual value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .graph import is_literal, qualified_name
from .namespace import Namespace


@dataclass(frozen=True, slots=True)
class Guard:
    kind: str
    source: object                  # a Source, or None for global state
    expected: object = None         # what the check compares with
    extra: object = None            # kind-specific (an attribute name, a state name, ...)
    first_use: object = None        # report.Frame where the value was first used
    # Example value used to build C++ tensor checks; not part of identity.
    example: object = field(default=None, compare=False, hash=False)

    @property
    def key(self):
        return (self.kind, self.source, self.extra)

    def readable(self) -> str:
        return KINDS[self.kind][1](self)


def _type_name(t) -> str:
    return qualified_name(t) or repr(t)


def _const_check(g: Guard, s: str, ns: Namespace) -> str:
    v = g.expected
    if v is None or v is True or v is False or v is Ellipsis:
        return f"{s} is {v!r}"
    t = type(v)
    tn = ns.const(t, hint=t.__name__)
    if t is float and math.isnan(v):
        return f"{ns.helper('type')}({s}) is {tn} and {s} != {s}"
    lit = repr(v) if is_literal(v) else ns.const(v)
    return f"{ns.helper('type')}({s}) is {tn} and {s} == {lit}"


def _tensor_py(g: Guard, s: str, ns: Namespace) -> str:
    ptype, dtype, device, shape, stride, rg = g.expected
    return (f"{ns.helper('type')}({s}) is {ns.const(ptype)} and {s}.dtype is {ns.const(dtype)} "
            f"and {s}.device == {ns.const(device)} and {s}.shape == {shape!r} "
            f"and {s}.stride() == {stride!r} and {s}.requires_grad is {rg!r}")


def _tensor_readable(g: Guard) -> str:
    ptype, dtype, device, shape, stride, rg = g.expected
    s = g.source.readable()
    return (f"check_tensor({s}, {_type_name(ptype)}, {dtype}, device={str(device)!r}, "
            f"shape={list(shape)}, stride={list(stride)}, requires_grad={rg})")


def _state_check(g: Guard, s: str, ns: Namespace) -> str:
    fn = ns.const(STATE_READERS[g.extra](), hint=f"state_{g.extra}")
    v = g.expected
    lit = repr(v) if is_literal(v) else ns.const(v)
    op = "is" if v is None or isinstance(v, bool) else "=="
    if not is_literal(v):
        op = "is"
    return f"{fn}() {op} {lit}"


def _distinct_check(g: Guard, ns: Namespace) -> str:
    ids = ", ".join(f"{ns.helper('id')}({ns.spell(x)})" for x in g.expected)
    return f"{ns.helper('len')}({{{ids}}}) == {len(g.expected)}"


def storage_signature(*tensors) -> tuple:
    """Which tensors share a storage, and at which offsets: for each, None when its
    storage is its own, else (index of the first tensor on that storage, storage_offset)."""
    first: dict = {}
    out = []
    for i, t in enumerate(tensors):
        s = t.untyped_storage()
        key = (str(t.device), s.data_ptr()) if s.nbytes() else ("empty", i)
        j = first.setdefault(key, i)
        out.append((j, t.storage_offset()))
    leaders = {j for j, _ in out}
    shared = {j for j in leaders if sum(1 for k, _ in out if k == j) > 1}
    return tuple(x if x[0] in shared else None for x in out)


def _storage_check(g: Guard, ns: Namespace) -> str:
    srcs = ", ".join(ns.spell(x) for x in g.expected[0])
    return f"{ns.const(storage_signature)}({srcs}) == {g.expected[1]!r}"


def _hooks_check(g: Guard, s: str, ns: Namespace) -> str:
    return " and ".join(f"not {s}.{name}" for name in g.extra)


# kind -> (cost class, readable(g), code(g, source_expr, ns))
KINDS = {
    "ID_MATCH": (0, lambda g: f"{g.source.readable()} is {_describe(g.expected)}",
                 lambda g, s, ns: f"{s} is {ns.const(g.expected)}"),
    "TYPE_MATCH": (0, lambda g: f"type({g.source.readable()}) is {_type_name(g.expected)}",
                   lambda g, s, ns: f"{ns.helper('type')}({s}) is {ns.const(g.expected)}"),
    "CONSTANT_MATCH": (1, lambda g: f"{g.source.readable()} == {g.expected!r:.80}",
                       _const_check),
    "LENGTH": (1, lambda g: f"len({g.source.readable()}) == {g.expected}",
               lambda g, s, ns: f"{ns.helper('len')}({s}) == {g.expected}"),
    "DICT_KEYS": (2, lambda g: f"list({g.source.readable()}.keys()) == {list(g.expected)!r:.120}",
                  lambda g, s, ns: f"{ns.helper('list')}({s}) == {ns.const(list(g.expected), 'keys')}"),
    "NOT_PRESENT": (1, lambda g: f"{g.extra!r} not in {g.source.readable()}",
                    lambda g, s, ns: f"{g.extra!r} not in {s}"),
    "HASATTR": (1, lambda g: f"hasattr({g.source.readable()}, {g.extra!r}) is {g.expected}",
                lambda g, s, ns: f"{ns.helper('hasattr')}({s}, {g.extra!r}) is {g.expected!r}"),
    "NO_HOOKS": (1, lambda g: " and ".join(f"not {g.source.readable()}.{n}" for n in g.extra),
                 _hooks_check),
    "GLOBAL_STATE": (2, lambda g: f"{STATE_NAMES[g.extra]}() == {_describe(g.expected)}",
                     _state_check),
    "TENSOR_MATCH": (3, _tensor_readable, _tensor_py),
    "TENSOR_ALIAS": (4, lambda g: f"{g.source.readable()} is {g.expected.readable()}",
                     lambda g, s, ns: f"{s} is {ns.spell(g.expected)}"),
    "TENSOR_DISTINCT": (4, lambda g: "no two of " + ", ".join(x.readable() for x in g.expected)
                        + " are the same tensor",
                        lambda g, s, ns: _distinct_check(g, ns)),
    # inputs of a graph that writes input storage share storage exactly as when captured
    "TENSOR_STORAGE": (4, lambda g: "storage shared among " + ", ".join(x.readable() for x in g.expected[0])
                       + f" as captured: {g.expected[1]}",
                       lambda g, s, ns: _storage_check(g, ns)),
}


def _describe(v) -> str:
    name = qualified_name(v) if (callable(v) or isinstance(v, type)) else None
    if name:
        return name
    if type(v).__name__ == "module":
        return f"<module {v.__name__}>"
    text = repr(v)
    return text if len(text) < 80 else f"<{type(v).__name__} object>"


STATE_NAMES = {
    "grad": "torch.is_grad_enabled",
    "dtype": "torch.get_default_dtype",
    "autocast": "torch._C._is_any_autocast_enabled",
    "torch_function_mode": "torch._C._is_torch_function_mode_enabled",
    "inference": "torch.is_inference_mode_enabled",
    "dispatch_mode": "torch._C._len_torch_dispatch_stack",
}


def _torch_reader(path):
    def get():
        import torch
        obj = torch
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
        return obj
    return get


STATE_READERS = {k: _torch_reader(v) for k, v in STATE_NAMES.items()}


_AFTER_TENSOR_CHECKS = ("TENSOR_ALIAS", "TENSOR_DISTINCT", "TENSOR_STORAGE")


class GuardSet:
    """Guards of one capture, deduplicated, in discovery order."""

    def __init__(self):
        self._guards: dict = {}

    def add(self, guard: Guard) -> None:
        if guard.key not in self._guards:
            self._guards[guard.key] = guard

    def __iter__(self):
        return iter(self._guards.values())

    def __len__(self):
        return len(self._guards)

    def __contains__(self, key):
        return key in self._guards

    def ordered(self) -> list[Guard]:
        """Cheapest kinds first; discovery order within a kind (parents before children)."""
        return sorted(self._guards.values(), key=lambda g: KINDS[g.kind][0])

    def identity_checks(self, ns: Namespace, emit: bool = True) -> list[str]:
        """ID_MATCH checks, outermost sources first; each checked source is rebased in `ns`
        so later expressions reach through it from the constant (one lookup, not a chain)."""
        out = []
        ids = [g for g in self._guards.values() if g.kind == "ID_MATCH"]
        for g in sorted(ids, key=lambda g: source_depth(g.source)):
            name = ns.const(g.expected)
            if emit:
                out.append(f"{ns.spell(g.source)} is {name}")
            ns.rebased.setdefault(g.source, name)
        return out

    def expressions(self, ns: Namespace) -> list[str]:
        """Boolean expressions whose conjunction is the guard (cheapest first)."""
        out = self.identity_checks(ns)
        tensors, hooks = [], []
        for g in self.ordered():
            if g.kind == "ID_MATCH":
                continue
            if g.kind == "TENSOR_MATCH":
                tensors.append(g)
                continue
            if g.kind == "NO_HOOKS" and g.example is not None:
                hooks.append(g)
                continue
            if g.kind in _AFTER_TENSOR_CHECKS:
                continue
            out.append(KINDS[g.kind][2](g, ns.spell(g.source) if g.source else "", ns))
        if hooks:
            out.append(_hooks_batched(hooks, ns))
        if tensors:
            out.append(_batched_tensor_check(tensors, ns))
        for g in self.ordered():
            if g.kind in _AFTER_TENSOR_CHECKS:
                out.append(KINDS[g.kind][2](g, ns.spell(g.source) if g.source else "", ns))
        return out


# nn.Module.__call__ runs forward directly when these four are empty (the keyword and
# always-called dicts only refine hooks registered in them).
_HOOK_GATES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def _hooks_batched(hooks: list[Guard], ns: Namespace) -> str:
    """All NO_HOOKS guards as one C-level ``any(map(getattr, modules, names))``.

    The attributes are read afresh on every call: register_*_hook changes the dicts in
    place, but a user may also replace one wholesale (``m._forward_hooks = OrderedDict(...)``),
    which a check over the dict objects seen at capture would miss.  The modules are
    identity-guarded, so the example module is the one the source reaches."""
    mods, names = [], []
    for g in hooks:
        gates = [n for n in g.extra if n in _HOOK_GATES]
        picked = gates if len(gates) == len(_HOOK_GATES) else list(g.extra)
        mods += [g.example] * len(picked)
        names += picked
    return (f"not {ns.helper('any')}({ns.helper('map')}({ns.helper('getattr')}, "
            f"{ns.const(tuple(mods), 'hooked_modules')}, {ns.const(tuple(names), 'hook_names')}))")


def source_depth(src) -> int:
    n = 0
    while getattr(src, "base", None) is not None:
        src, n = src.base, n + 1
    return n


def _batched_tensor_check(guards: list[Guard], ns: Namespace) -> str:
    checker = _cxx_tensor_guards(guards)
    if checker is None:
        return " and ".join(f"({_tensor_py(g, ns.spell(g.source), ns)})" for g in guards)
    name = ns.const(checker.check, hint="check_tensors")
    return f"{name}({', '.join(ns.spell(g.source) for g in guards)})"


def _cxx_tensor_guards(guards: list[Guard]):
    """torch's C++ TensorGuards over the example tensors, or None if unavailable."""
    if any(g.example is None for g in guards):
        return None
    try:
        from torch._C._dynamo.guards import TensorGuards
        ex = [g.example for g in guards]
        return TensorGuards(*ex, dynamic_dims_sizes=[list(t.shape) for t in ex],
                            dynamic_dims_strides=[list(t.stride()) for t in ex])
    except Exception:  # an older/newer torch without this API: fall back to Python checks
        return None


def single_check_source(g: Guard, ns: Namespace) -> str:
    """One guard as a standalone expression (used to diagnose misses)."""
    return KINDS[g.kind][2](g, g.source.expr(ns) if g.source else "", ns)
