"""Tensors made from constants in the trace: their value is known while tracing.

``torch.tensor(config.eos_token_id)`` and what is computed from it alone
(``torch.isin(eos, pad).any()``, ``(eos < 0).any()``: HF ``generate()``'s
validation of its special tokens) read no input: the graph nodes that make
them take only constants the trace already depends on (guarded where they
were read).  So the truth value of such a tensor is the same on every call the
entry runs for, and the trace can compute it now -- running those nodes on
real tensors -- instead of breaking the graph.  `known_value` answers only when
that is sound: every node it runs is a deterministic torch call on constants
and nodes of the same kind (no input, no random op, no uninitialized memory,
no real tensor held as a constant), and no node of the graph writes in place
to any tensor computed from them (a later write could depend on an input).
The nodes stay in the graph: the region still computes the tensors.
"""

from __future__ import annotations

from ...ir.graph import Node, iter_nodes, run_node
from ..model.values import ScalarV, TensorV

_OPS = ("call", "method")
# names of ops whose result is not a function of their arguments (random draws, memory
# left uninitialized); a node whose name contains one is never run here
_NOT_A_FUNCTION = (
    *("rand", "bernoulli", "multinomial", "normal", "uniform", "dropout", "empty"),
    *("poisson", "exponential", "geometric", "cauchy", "random", "seed", "rrelu"),
)
# where the functions it runs come from: torch's own tensor functions and operators (not
# torch.distributed: a functional collective on a constant must not run while tracing)
_MODULES = frozenset({"torch", "torch.functional", "torch.nn.functional", "operator", "_operator"})
_LIMIT = 64  # nodes run at most (the validation checks are a handful)
_MAX_ELEMENTS = 4096  # elements of any tensor they make


def known_value(tx, v):
    """The real tensor `v` holds, when it is computed from constants only (module
    docstring); None otherwise."""
    if not isinstance(v, TensorV) or isinstance(v, ScalarV):
        return None
    needed = _ancestry(v.node)
    if needed is None or _written_later(tx.graph.body, needed):
        return None
    env: dict = {}
    try:
        for n in sorted(needed, key=lambda n: n.index):
            if n.state is not None:
                with n.state.context():
                    env[n] = run_node(n, env)
            else:
                env[n] = run_node(n, env)
    except Exception:  # noqa: BLE001 - it failed here: the break runs it natively, raising there
        return None
    out = env[v.node]
    return out if _is_tensor(out) else None


def _ancestry(node) -> set | None:
    """`node` and the nodes it reads, when all are deterministic torch ops on constants."""
    seen: set = set()
    work = [node]
    while work:
        n = work.pop()
        if n in seen:
            continue
        if len(seen) >= _LIMIT or n.op not in _OPS or n.mutates or not _deterministic(n):
            return None
        size = n.meta.numel() if _is_tensor(n.meta) else 0
        if type(size) is not int or size > _MAX_ELEMENTS:
            return None  # a symbolic size (an input's), or too big to compute while tracing
        if any(_is_tensor(a) for a in _constants(n.args) + _constants(list(n.kwargs.values()))):
            return None  # a real tensor from outside, held as a constant: it may change
        seen.add(n)
        work.extend(iter_nodes(n.args) + iter_nodes(n.kwargs))
    return seen


def _deterministic(n) -> bool:
    target = n.target
    if n.op == "method":
        name = target if isinstance(target, str) else ""
    else:
        if getattr(target, "__module__", None) not in _MODULES:
            return False
        name = getattr(target, "__name__", "")
    name = name.lower()
    return bool(name) and not any(word in name for word in _NOT_A_FUNCTION)


def _written_later(body, needed: set) -> bool:
    """Whether a node writes in place to a tensor computed (or viewed) from `needed`."""
    tainted = set(needed)
    for n in body:
        if n in tainted:
            continue
        if any(a in tainted for a in iter_nodes(n.args) + iter_nodes(n.kwargs)):
            if n.mutates:
                return True
            tainted.add(n)
    return False


def _constants(arg) -> list:
    """The non-node leaves of a nested argument."""
    out: list = []
    work = [arg]
    while work:
        a = work.pop()
        if isinstance(a, (list, tuple)):
            work.extend(a)
        elif isinstance(a, dict):
            work.extend(a.values())
        elif isinstance(a, slice):
            work.extend((a.start, a.stop, a.step))
        elif not isinstance(a, Node):
            out.append(a)
    return out


def _is_tensor(x) -> bool:
    import torch

    return isinstance(x, torch.Tensor)
