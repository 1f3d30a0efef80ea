"""Graph nodes that are Python int arithmetic raising on no ints, and the unused ones dropped.

A symbolic int (a size, an int argument that changes between calls) reaches Python as a
graph node computing it.  Much of that arithmetic is only compared (``year % 4 == 0``): the
comparison is answered at capture and guarded, and the node's value is used by nothing.
`drop_unused_int_arith` removes such nodes at the body's end -- only those that cannot raise on any ints
(`is_total`: ``+ - * & | ^ ~``, unary ``- + abs``, and ``//`` / ``%`` by a nonzero constant,
shifts by a constant in range), since dropping a node that may raise (``n // m``) would drop
the exception the native call raises.  `only_total_int_arith` says a graph is all such
nodes over int inputs: its code needs no native rerun (`frontend.regions.region_errors`).
"""

from __future__ import annotations

import operator

from .graph import Graph, Node, iter_nodes

_TOTAL = frozenset((operator.add, operator.sub, operator.mul, operator.neg, operator.pos, operator.abs))
_TOTAL |= {operator.and_, operator.or_, operator.xor, operator.invert}
_BY_NONZERO = frozenset((operator.floordiv, operator.mod))  # total when the divisor is a nonzero constant
_SHIFTS = frozenset((operator.lshift, operator.rshift))  # total for a constant count in 0..64
_INT_METAS = ("SymInt", "int")  # torch.SymInt (no torch import here: the ir stays torch-free)


def _int_meta(meta: object) -> bool:
    return type(meta).__name__ in _INT_METAS and type(meta).__module__ in ("torch", "builtins")


def is_total(n: Node) -> bool:
    """`n` is int arithmetic that raises on no ints (memory aside)."""
    if n.op != "call" or n.kwargs or n.mutates or not _int_meta(n.meta):
        return False
    if n.target in _TOTAL:
        return True
    if len(n.args) != 2 or isinstance(n.args[1], Node) or type(n.args[1]) is not int:
        return False
    if n.target in _BY_NONZERO:
        return n.args[1] != 0
    return n.target in _SHIFTS and 0 <= n.args[1] <= 64


def drop_unused_int_arith(graph: Graph) -> int:
    """Remove the total int nodes at the end of the body that no later node and no output
    uses (a chain of them goes at once); returns how many.  Only at the end: the positions
    the trace recorded in the body (a write's, the last node under a handler:
    `frontend.regions.region_errors`) stay the positions of the same nodes."""
    used = {id(o) for o in iter_nodes(list(graph.outputs))}
    body = graph.body
    end = len(body)
    while end and id(body[end - 1]) not in used and is_total(body[end - 1]):
        end -= 1
    dropped = len(body) - end
    del body[end:]
    return dropped


def is_int_input(n: Node) -> bool:
    """`n` is a graph input that is an int (a symbolic int argument)."""
    return n.op == "input" and _int_meta(n.meta)


def only_total_int_arith(graph: Graph) -> bool:
    """Every input is an int and every node total int arithmetic (and there is one)."""
    inputs_ints = all(map(is_int_input, graph.inputs))
    return bool(graph.body) and inputs_ints and all(map(is_total, graph.body))
